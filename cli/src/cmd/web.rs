//! `hookline web [--listen ADDR:PORT] [--token-file F] [--daemon SOCKET]`: a read-only web
//! view of a daemon's sessions for a browser or a phone. Server-rendered HTML, a few lines of
//! plain JS for the live feed (server-sent events), no build step, nothing fetched from
//! elsewhere. It answers GET and HEAD only: nothing it serves can act on a session.
//!
//! Loopback by default; any other address needs `--token-file` (mode 0600), and then every
//! request needs the token: `Authorization: Bearer TOKEN`, or `?token=TOKEN` once, which sets
//! an HttpOnly cookie (so that the live feed works in a browser). Tokens are compared in
//! constant time. Everything a session wrote is escaped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hookline::daemon::Client;
use hookline::daemon::follow::Follower;
use hookline::state::{StateKind, View};

use super::{Outcome, catch_signals, stopping};
use crate::cli::WebArgs;

/// The most connections served at once (each live feed holds one).
const MAX_CONNECTIONS: usize = 64;
/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// How often a live feed is sent again without a change (ages move on).
const REFRESH: Duration = Duration::from_secs(2);
const COOKIE: &str = "hookline_token";

pub fn run(args: &WebArgs) -> Outcome {
    let token = match &args.token_file {
        Some(path) => Some(read_token(path)?),
        None if !args.listen.ip().is_loopback() => {
            return Err(format!(
                "hookline web listens on {} (not loopback) only with --token-file FILE (mode \
                 0600): anyone who can reach it would see every session",
                args.listen
            )
            .into());
        }
        None => None,
    };
    let daemon = super::connect_daemon(&args.dir, &args.daemon)?.ok_or(
        "no daemon answers: hookline web shows a daemon's sessions (start `hookline daemon`, \
         or name one with --daemon SOCKET)",
    )?;
    let explain = Client::connect_socket(daemon.socket())?;
    let (follower, views) = Follower::new(daemon)?;
    let shared = Arc::new(Shared {
        state: Mutex::new(Feed { views, version: 1, note: None }),
        changed: Condvar::new(),
        explain: Mutex::new(explain),
        token,
        port: args.listen.port(),
    });
    let listener = TcpListener::bind(args.listen)?;
    listener.set_nonblocking(true)?;
    catch_signals();
    follow(Arc::clone(&shared), follower);
    let local = listener.local_addr()?;
    eprintln!("hookline: web: http://{local}/ (read-only; Ctrl-C stops it)");
    let open = Arc::new(AtomicUsize::new(0));
    while !stopping() {
        match listener.accept() {
            Ok((stream, _)) => {
                if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                    drop(stream);
                    continue;
                }
                open.fetch_add(1, Ordering::SeqCst);
                let (shared, open) = (Arc::clone(&shared), Arc::clone(&open));
                std::thread::spawn(move || {
                    let _ = serve(&shared, stream);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The token in `path`, a file only its owner can read.
fn read_token(path: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{}: mode {:o} lets others read the token: chmod 600 it",
            path.display(),
            meta.permissions().mode() & 0o777
        )
        .into());
    }
    let token = std::fs::read_to_string(path)?.trim().to_owned();
    if token.len() < 16 {
        return Err(format!("{}: a token of at least 16 characters, please", path.display()).into());
    }
    Ok(token)
}

struct Feed {
    views: Vec<View>,
    version: u64,
    note: Option<String>,
}

struct Shared {
    state: Mutex<Feed>,
    changed: Condvar,
    explain: Mutex<Client>,
    token: Option<String>,
    port: u16,
}

/// Follows the daemon on a thread of its own, bumping the version on each change and every
/// [`REFRESH`]; reconnects when the daemon comes back.
fn follow(shared: Arc<Shared>, mut follower: Follower) {
    std::thread::spawn(move || {
        let socket = follower.client().socket().to_owned();
        loop {
            let read = follower.next(REFRESH);
            let mut feed = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            match read {
                Ok(update) => {
                    feed.views = update.sessions;
                    feed.note = None;
                }
                Err(e) => {
                    feed.note =
                        Some(format!("the daemon does not answer ({e}): states as last seen"));
                    drop(feed);
                    std::thread::sleep(REFRESH);
                    if let Ok((again, views)) =
                        Client::connect_socket(&socket).and_then(Follower::new)
                    {
                        follower = again;
                        shared.state.lock().unwrap_or_else(|p| p.into_inner()).views = views;
                    }
                    feed = shared.state.lock().unwrap_or_else(|p| p.into_inner());
                }
            }
            feed.version += 1;
            drop(feed);
            shared.changed.notify_all();
        }
    });
}

/// A request: its method, path, query and headers (names lowercased).
struct Request {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut reader = BufReader::new(stream.take(MAX_HEAD as u64));
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect();
    Some(Request { method, path: decode(path), query, headers })
}

/// Percent-decoding (`+` is not a space in a path).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encoding of one path segment.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~@".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// Whether two strings are equal, in a time that depends on their lengths only.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Text as HTML: every character a session wrote that means something there, escaped.
fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

const SECURITY: &str = "Content-Security-Policy: default-src 'none'; script-src 'self'; \
    style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\
    Cache-Control: no-store\r\n";

fn respond(stream: &mut TcpStream, status: &str, kind: &str, extra: &str, body: &str, head: bool) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{SECURITY}{extra}\
         Connection: close\r\n\r\n",
        body.len()
    );
    if !head {
        let _ = stream.write_all(body.as_bytes());
    }
}

fn serve(shared: &Shared, mut stream: TcpStream) -> std::io::Result<()> {
    let Some(request) = read_request(&stream) else {
        respond(&mut stream, "400 Bad Request", "text/plain", "", "bad request\n", false);
        return Ok(());
    };
    let head = request.method == "HEAD";
    if request.method != "GET" && !head {
        // Nothing here acts on a session: no POST, no PUT, nothing.
        let allow = "Allow: GET, HEAD\r\n";
        respond(&mut stream, "405 Method Not Allowed", "text/plain", allow, "read-only\n", false);
        return Ok(());
    }
    match &shared.token {
        Some(token) => {
            let bearer =
                request.headers.get("authorization").and_then(|a| a.strip_prefix("Bearer "));
            let cookie = request.headers.get("cookie").and_then(|c| {
                c.split(';').filter_map(|p| p.trim().split_once('=')).find(|(k, _)| *k == COOKIE)
            });
            if let Some(given) = request.query.get("token") {
                if same(given, token) {
                    // Once: into an HttpOnly cookie, and out of the address bar.
                    let extra = format!(
                        "Set-Cookie: {COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/\r\n\
                         Location: {}\r\n",
                        encode_path(&request.path)
                    );
                    respond(&mut stream, "303 See Other", "text/plain", &extra, "", head);
                    return Ok(());
                }
            } else if bearer.is_some_and(|b| same(b, token))
                || cookie.is_some_and(|(_, v)| same(v, token))
            {
                return route(shared, &request, stream, head);
            }
            let extra = "WWW-Authenticate: Bearer\r\n";
            respond(
                &mut stream,
                "401 Unauthorized",
                "text/plain",
                extra,
                "a token, please\n",
                head,
            );
            Ok(())
        }
        None => {
            // Loopback without a token: only a page asked for by a loopback name, so that a
            // web page elsewhere cannot read it through a name it points at 127.0.0.1.
            let host = request.headers.get("host").map(String::as_str).unwrap_or_default();
            let port = shared.port;
            let allowed =
                [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
            if !allowed.iter().any(|a| a == host) {
                respond(
                    &mut stream,
                    "421 Misdirected Request",
                    "text/plain",
                    "",
                    "not this host\n",
                    head,
                );
                return Ok(());
            }
            route(shared, &request, stream, head)
        }
    }
}

fn encode_path(path: &str) -> String {
    path.split('/').map(encode).collect::<Vec<_>>().join("/")
}

fn route(
    shared: &Shared,
    request: &Request,
    mut stream: TcpStream,
    head: bool,
) -> std::io::Result<()> {
    let html_kind = "text/html; charset=utf-8";
    match request.path.as_str() {
        "/" => {
            let feed = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            let board = board(&feed.views, feed.note.as_deref());
            let body = page("hookline", &format!("<main id=\"board\">{board}</main>"), true);
            drop(feed);
            respond(&mut stream, "200 OK", html_kind, "", &body, head);
        }
        "/app.js" => respond(&mut stream, "200 OK", "text/javascript", "", APP_JS, head),
        "/sessions.json" => {
            let views = shared.state.lock().unwrap_or_else(|p| p.into_inner()).views.clone();
            let body = serde_json::to_string_pretty(&views).unwrap_or_default();
            respond(&mut stream, "200 OK", "application/json", "", &body, head);
        }
        "/events" => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{SECURITY}\r\n"
            );
            if head {
                return Ok(());
            }
            let mut seen = 0;
            loop {
                let feed = shared.state.lock().unwrap_or_else(|p| p.into_inner());
                let feed = shared
                    .changed
                    .wait_timeout_while(feed, Duration::from_secs(15), |f| f.version == seen)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                seen = feed.version;
                let board = board(&feed.views, feed.note.as_deref());
                drop(feed);
                let mut message = String::from("event: board\n");
                for line in board.lines() {
                    message.push_str("data: ");
                    message.push_str(line);
                    message.push('\n');
                }
                message.push('\n');
                stream.write_all(message.as_bytes())?;
                stream.flush()?;
                if stopping() {
                    return Ok(());
                }
            }
        }
        path => match path.strip_prefix("/session/") {
            Some(name) if !name.is_empty() => {
                let answer = shared.explain.lock().unwrap_or_else(|p| p.into_inner()).explain(name);
                let body = match answer {
                    Ok(answer) if answer.view.is_some() => page(
                        name,
                        &explain(name, answer.view.as_deref(), &answer.transitions),
                        false,
                    ),
                    Ok(_) => page(name, &format!("<p>no session {}</p>", html(name)), false),
                    Err(e) => page(name, &format!("<p>{}</p>", html(&e.to_string())), false),
                };
                respond(&mut stream, "200 OK", html_kind, "", &body, head);
            }
            _ => respond(&mut stream, "404 Not Found", "text/plain", "", "not found\n", head),
        },
    }
    Ok(())
}

const APP_JS: &str = "// hookline web: the live feed. The server renders (and escapes) the board.\n\
const feed = new EventSource('/events');\n\
feed.addEventListener('board', (e) => { document.getElementById('board').innerHTML = e.data; });\n\
feed.onerror = () => { document.getElementById('live').textContent = 'reconnecting…'; };\n\
feed.onopen = () => { document.getElementById('live').textContent = 'live'; };\n";

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;padding:.5rem;\
background:#111;color:#ddd;overflow-wrap:anywhere}h1{font-size:1.1rem;margin:.3rem 0}\
ul{list-style:none;padding:0;margin:0}li.row{border:1px solid #333;border-radius:6px;\
margin:.4rem 0;padding:.4rem .6rem;display:flex;flex-wrap:wrap;gap:.2rem .9rem}\
.state{font-weight:bold;flex-basis:100%}.need .state{color:#f55}.unknown .state{color:#fc3}\
.idle .state{color:#5c5}.busy .state{color:#5cf}.ended{opacity:.6}a{color:#8cf}\
.k{color:#888}.note{color:#fc3}table{border-collapse:collapse;width:100%}\
td,th{text-align:left;padding:.15rem .3rem;vertical-align:top;border-bottom:1px solid #333}";

fn page(title: &str, body: &str, live: bool) -> String {
    let script = if live { "<script src=\"/app.js\" defer></script>" } else { "" };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style>{script}</head><body>{body}</body></html>\n",
        html(title)
    )
}

/// The sessions that need a person first, then those nobody can tell, then the rest.
fn rank(state: StateKind) -> u8 {
    match state {
        StateKind::WaitingOnHuman | StateKind::EnvFault => 0,
        StateKind::Unknown => 1,
        StateKind::Idle => 2,
        StateKind::Active | StateKind::ChildCommand => 3,
        StateKind::Ended => 4,
    }
}

/// The board: a heading and one row per session, needs-you first (a fragment the live feed
/// sends again on each change).
fn board(views: &[View], note: Option<&str>) -> String {
    let mut views: Vec<&View> = views.iter().collect();
    views.sort_by_key(|v| rank(v.state));
    let need = views.iter().filter(|v| rank(v.state) == 0).count();
    let mut out = format!(
        "<h1>{} sessions, {need} need you <span class=\"k\" id=\"live\"></span></h1>",
        views.len()
    );
    if let Some(note) = note {
        let _ = write!(out, "<p class=\"note\">{}</p>", html(note));
    }
    out.push_str("<ul id=\"rows\">");
    for v in views {
        let class = match v.state {
            StateKind::WaitingOnHuman | StateKind::EnvFault => "need",
            StateKind::Unknown => "unknown",
            StateKind::Idle => "idle",
            StateKind::Active | StateKind::ChildCommand => "busy",
            StateKind::Ended => "ended",
        };
        let name = v.session_id.clone().or_else(|| v.tag.clone()).unwrap_or_default();
        let exact = match &v.host {
            Some(host) => format!("{name}@{host}"),
            None => name.clone(),
        };
        let state = match &v.detail {
            Some(detail) => format!("{} ({detail})", v.state),
            None => v.state.to_string(),
        };
        let last = v.last_event.native.as_deref().unwrap_or(&v.last_event.kind);
        let _ = write!(
            out,
            "<li class=\"row {class}\" data-session=\"{}\"><span class=\"state\">{}</span>\
             <span><span class=\"k\">for</span> {}</span>\
             <span><span class=\"k\">host</span> <span class=\"host\">{}</span></span>\
             <span><span class=\"k\">tag</span> <span class=\"tag\">{}</span></span>\
             <span><span class=\"k\">cli</span> {}</span>\
             <span><span class=\"k\">last</span> {}</span>\
             <span><a href=\"/session/{}\">{}</a></span></li>",
            html(&exact),
            html(&state),
            html(&v.age),
            html(v.host.as_deref().unwrap_or("this machine")),
            html(v.tag.as_deref().unwrap_or("-")),
            html(&v.cli),
            html(last),
            html(&encode(&exact)),
            html(&name),
        );
    }
    out.push_str("</ul>");
    out
}

/// A session's explain page: its state, what set it, its input slot, its transitions.
fn explain(name: &str, view: Option<&View>, transitions: &[hookline::state::Transition]) -> String {
    let mut out = format!("<p><a href=\"/\">← all sessions</a></p><h1>{}</h1>", html(name));
    if let Some(v) = view {
        let _ = write!(
            out,
            "<p><b>{}</b>{} for {}, host {}, tag {}, {}</p><p>set by {} under rule {}</p>\
             <p>input: {}</p>",
            v.state,
            v.detail.as_deref().map(|d| format!(" ({})", html(d))).unwrap_or_default(),
            html(&v.age),
            html(v.host.as_deref().unwrap_or("this machine")),
            html(v.tag.as_deref().unwrap_or("-")),
            html(&v.cli),
            html(v.evidence.native.as_deref().unwrap_or(&v.evidence.kind)),
            html(&v.evidence.rule),
            html(&v.input),
        );
    }
    out.push_str(
        "<table><tr><th>time</th><th>seq</th><th>event</th><th>state</th><th>rule</th></tr>",
    );
    for t in transitions {
        let e = &t.evidence;
        let time = hookline::units::rfc3339(e.ts_ns);
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(time.get(11..23).unwrap_or(&time)),
            e.seq,
            html(e.native.as_deref().unwrap_or(&e.kind)),
            t.state.map_or("·".to_owned(), |s| format!("→ {s}")),
            html(&e.rule),
        );
    }
    out.push_str("</table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_text_is_escaped() {
        assert!(same("abcdefghijklmnop", "abcdefghijklmnop"));
        assert!(!same("abcdefghijklmnop", "abcdefghijklmnoq"));
        assert!(!same("abc", "abcd") && !same("", "a"));
        assert_eq!(
            html("<script>\"x\"&'y'</script>\u{1b}"),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;\u{FFFD}"
        );
        assert_eq!(decode(&encode("a b/c@h%")), "a b/c@h%");
        assert_eq!(encode("s1@host-a"), "s1@host-a");
    }
}
