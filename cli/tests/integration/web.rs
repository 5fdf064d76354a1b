//! `hookline web` driven by a real headless browser (Debian's `chromium`, through
//! `chromedriver`): the page lists the sessions, needs-you first, a new event changes a row
//! without a reload, a hostile tag is text, a phone-sized window never scrolls sideways; and
//! on a non-loopback address a request without the token is refused. Screenshots at phone
//! and desktop sizes go to `target/web-artefacts/`. Without chromium the tests are skipped
//! loudly, except under CI=true, where they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::watch::{fixture, hookline, run_relay_with};

fn found(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/usr/local/bin", "/usr/lib/chromium"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// chromium and chromedriver, or `None` (after a loud message) when missing outside CI.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let both = found("chromium").zip(found("chromedriver"));
    if both.is_none() {
        let why = "chromium and chromedriver are missing: apt-get install chromium \
                   chromium-driver to run the web tests";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("\n*** SKIPPED: {why} ***\n");
    }
    both
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One HTTP/1.1 request; the status code, the head and the body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.to_ascii_lowercase().starts_with("content-length:") {
            length = line[15..].trim().parse::<usize>().ok();
        }
        head.push_str(&line);
        if line.trim().is_empty() {
            break;
        }
    }
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).unwrap();
        }
        None => drop(reader.read_to_end(&mut body)),
    }
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, head, String::from_utf8_lossy(&body).into_owned())
}

/// A child killed when dropped.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A chromedriver session of a headless chromium.
struct Browser {
    port: u16,
    session: String,
    _driver: Kill,
}

impl Browser {
    fn start(chromium: &Path, driver: &Path, width: u32, height: u32) -> Browser {
        let port = free_port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let driver = Kill(child);
        wait_port(port);
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-dev-shm-usage",
                     format!("--window-size={width},{height}")]}}}});
        let (code, _, body) = http(port, "POST", "/session", &[], &caps.to_string());
        assert_eq!(code, 200, "{body}");
        let reply: Value = serde_json::from_str(&body).unwrap();
        let session = reply["value"]["sessionId"].as_str().unwrap().to_owned();
        Browser { port, session, _driver: driver }
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let body = if body.is_null() { String::new() } else { body.to_string() };
        let (code, _, reply) = http(self.port, method, &path, &[], &body);
        assert_eq!(code, 200, "{method} {path}: {reply}");
        serde_json::from_str::<Value>(&reply).unwrap()["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", json!({"url": url}));
    }

    fn js(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", json!({"script": script, "args": []}))
    }

    fn screenshot(&self, name: &str) {
        let png = decode64(self.call("GET", "/screenshot", Value::Null).as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/web-artefacts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), png).unwrap();
    }

    fn wait(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let value = self.js(script);
            if value.as_bool() == Some(true) || !value.is_boolean() && !value.is_null() {
                return value;
            }
            assert!(Instant::now() < deadline, "{what}: never");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn decode64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, c)| n | u32::from(value(*c)) << (18 - 6 * i));
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

const HOSTILE: &str = "<img src=x onerror=\"document.title='owned'\"><b>bold</b>";

fn fire(dir: &Path, name: &str, session: &str, tag: &str) {
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    payload["session_id"] = json!(session);
    run_relay_with(
        dir,
        &["--cli", "claude"],
        &[("HOOKLINE_TAG", tag)],
        payload.to_string().as_bytes(),
    );
}

fn spawn(args: &[&str], dir: &Path, home: &Path, ready: &str) -> Kill {
    let mut child = Command::new(hookline())
        .args(args)
        .arg("--events-dir")
        .arg(dir)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains(ready) {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{args:?} said only {said}");
        said.push_str(&line);
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Kill(child)
}

#[test]
fn the_web_view_lists_sessions_needs_you_first_live_escaped_and_fits_a_phone() {
    let Some((chromium, driver)) = browser() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir_all(&dir).unwrap();
    let _daemon = spawn(&["daemon"], &dir, tmp.path(), "serving");
    fire(&dir, "claude-code/2.1.332/UserPromptSubmit.json", "calm-1", "calm");
    fire(&dir, "claude-code/2.1.332/Stop.json", "calm-1", "calm");
    fire(&dir, "claude-code/2.1.332/UserPromptSubmit.json", "evil-1", HOSTILE);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let _web = spawn(&["web", "--listen", &listen], &dir, tmp.path(), "web: http://");
    let browser = Browser::start(&chromium, &driver, 390, 844);
    browser.go(&format!("http://{listen}/"));
    browser.wait("two rows", "return document.querySelectorAll('li.row').length === 2");
    // The hostile tag is text: no element of it, no script run.
    let tags = browser.js("return [...document.querySelectorAll('.tag')].map(t => t.textContent)");
    assert!(tags.as_array().unwrap().contains(&json!(HOSTILE)), "{tags}");
    assert_eq!(browser.js("return document.querySelectorAll('li.row img, li.row b').length"), 0);
    assert_ne!(browser.js("return document.title"), "owned");
    // A live change, no reload: a mark set on this page survives the update.
    browser.js("window.hooklineMark = 42; return true");
    fire(&dir, "claude-code/2.1.332/PermissionRequest.json", "calm-1", "calm");
    browser.wait(
        "the dialog on top",
        "const first = document.querySelector('li.row');\
         return first.dataset.session === 'calm-1' && first.textContent.includes('waiting_on_human')",
    );
    assert_eq!(browser.js("return window.hooklineMark"), 42, "the page was not reloaded");
    assert_eq!(browser.js("return document.querySelector('meta[name=viewport]') !== null"), true);
    assert_eq!(
        browser.js("return document.documentElement.scrollWidth <= window.innerWidth"),
        true,
        "no horizontal scroll at 390 px"
    );
    browser.screenshot("phone-390x844.png");
    // The explain page, from the row's link.
    browser.go(&format!("http://{listen}/session/calm-1"));
    let text = browser.wait("explain", "return document.body.textContent.includes('PermissionRequest') && document.body.textContent");
    assert!(text.as_str().unwrap().contains("input: refused"), "{text}");
    browser.call("POST", "/window/rect", json!({"width": 1280, "height": 800}));
    browser.go(&format!("http://{listen}/"));
    browser.wait("rows", "return document.querySelectorAll('li.row').length === 2");
    browser.screenshot("desktop-1280x800.png");
    // Nothing acts: no POST is answered, whatever its path.
    for path in ["/", "/session/calm-1", "/events"] {
        let (code, head, _) = http(port, "POST", path, &[], "{\"text\":\"rm -rf /\"}");
        assert_eq!(code, 405, "{head}");
    }
    // A page elsewhere cannot read a loopback view through a name of its own.
    let (code, _, _) = http(port, "GET", "/", &["Host: evil.example:80"], "");
    assert_ne!(code, 200);
}

#[test]
fn off_loopback_the_web_view_wants_its_token() {
    let Some((chromium, driver)) = browser() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir_all(&dir).unwrap();
    let _daemon = spawn(&["daemon"], &dir, tmp.path(), "serving");
    fire(&dir, "claude-code/2.1.332/UserPromptSubmit.json", "s-1", "job");
    let port = free_port();
    let listen = format!("0.0.0.0:{port}");
    let refused = Command::new(hookline())
        .args(["web", "--listen", &listen, "--events-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--token-file"));
    let token_file = tmp.path().join("token");
    let token = "k3y-0f-the-test-w1th-l3ngth";
    std::fs::write(&token_file, token).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args = ["web", "--listen", &listen, "--token-file", token_file.to_str().unwrap()];
    let loose = Command::new(hookline()).args(args).arg("--events-dir").arg(&dir).output().unwrap();
    assert_eq!(loose.status.code(), Some(2), "a token others can read is refused");
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let _web = spawn(&args, &dir, tmp.path(), "web: http://");
    for path in ["/", "/events", "/sessions.json", "/session/s-1", "/?token=wrong"] {
        let (code, _, _) = http(port, "GET", path, &[], "");
        assert_eq!(code, 401, "{path}");
    }
    let bearer = format!("Authorization: Bearer {token}");
    assert_eq!(http(port, "GET", "/sessions.json", &[&bearer], "").0, 200);
    // In a browser: refused without it; `?token=` once, then the cookie carries the feed.
    let browser = Browser::start(&chromium, &driver, 390, 844);
    browser.go(&format!("http://127.0.0.1:{port}/"));
    assert_eq!(browser.js("return document.body.textContent.trim()"), "a token, please");
    browser.go(&format!("http://127.0.0.1:{port}/?token={token}"));
    browser.wait("the board", "return document.querySelectorAll('li.row').length === 1");
    assert_eq!(browser.js("return location.search"), "", "the token left the address bar");
    assert_eq!(browser.js("return document.cookie"), "", "HttpOnly");
    fire(&dir, "claude-code/2.1.332/Stop.json", "s-1", "job");
    browser.wait("live", "return document.querySelector('li.row').textContent.includes('idle')");
}
