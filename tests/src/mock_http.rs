//! A small std-only HTTP server on 127.0.0.1 under the three model API mocks
//! ([`crate::mock_api`], [`crate::mock_openai`], [`crate::mock_gemini`]): one thread accepts,
//! one thread per connection answers with what a handler decides from the request alone, and
//! every response closes its connection. Every request is recorded
//! ([`MockServer::requests`]) for failure reports; one the handler does not know is answered
//! 404 and printed to stderr, so a new call made by a new CLI version shows in the test output.
//! Also what the mocks share about prompts ([`marked_command`]).
//!
//! Each answer says what it means for the turn of the session that asked ([`Meaning`]), and
//! the server times every exchange on the relay's clock (received, first byte, last byte;
//! [`MockServer::exchanges`]): the ground truth the conformance benchmark
//! (`hookline-bench conformance`) builds a session's true timeline from.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use hookline::format::clock::now_ns;
use serde_json::Value;

/// Cap on a request body; the CLIs' requests are a few hundred KB at most.
const MAX_BODY: usize = 32 << 20;

/// What the handler answers.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Status line after `HTTP/1.1`, e.g. `200 OK`.
    pub status: &'static str,
    /// `content-type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// Sent without a length, ended by closing the connection (server-sent events).
    pub stream: bool,
    /// For a stream: the pause before each server-sent event after the first (a slow
    /// stream, so a person can interrupt it while it is still arriving).
    pub pace: Option<Duration>,
    /// The pause before anything is sent (an API that takes its time to answer).
    pub delay: Option<Duration>,
    /// One line for reports: what was answered.
    pub note: String,
    /// What the answer means for the turn that asked.
    pub meaning: Meaning,
    /// Whether the request carried a tool's result back: the tool it asked for has ended.
    pub after_tool: bool,
}

/// What an answer means for the turn of the session that asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Meaning {
    /// Not part of a turn: a title, the model router, a classifier's consult, a check.
    #[default]
    Side,
    /// Text that ends the turn: once it is sent, the CLI goes back to its prompt.
    EndsTurn,
    /// A tool call: the turn goes on with a tool (or the dialog asking for it).
    CallsTool,
    /// An error status: the API refused the turn's request.
    Fails(ApiError),
}

impl Answer {
    /// A JSON body.
    pub fn json(value: &Value, note: impl Into<String>) -> Answer {
        Answer {
            status: "200 OK",
            content_type: "application/json",
            body: value.to_string().into_bytes(),
            stream: false,
            pace: None,
            delay: None,
            note: format!("200 {}", note.into()),
            meaning: Meaning::Side,
            after_tool: false,
        }
    }

    /// An error status (`429 Too Many Requests`) with a JSON body, as an API answers a
    /// request it refuses.
    pub fn error(status: &'static str, body: &Value, note: impl Into<String>) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: body.to_string().into_bytes(),
            stream: false,
            pace: None,
            delay: None,
            note: format!("{status} {}", note.into()),
            meaning: Meaning::Side,
            after_tool: false,
        }
    }

    /// Server-sent events.
    pub fn sse(text: String, note: impl Into<String>) -> Answer {
        Answer {
            status: "200 OK",
            content_type: "text/event-stream",
            body: text.into_bytes(),
            stream: true,
            pace: None,
            delay: None,
            note: format!("200 {} (sse)", note.into()),
            meaning: Meaning::Side,
            after_tool: false,
        }
    }

    /// The same stream, sent one event (up to a blank line) at a time, `pace` apart.
    pub fn paced(mut self, pace: Duration) -> Answer {
        self.pace = Some(pace);
        self.note = format!("{}, one event every {} ms", self.note, pace.as_millis());
        self
    }

    /// The same answer, sent only after `delay`.
    pub fn delayed(mut self, delay: Duration) -> Answer {
        self.delay = Some(delay);
        self.note = format!("{}, after {} ms", self.note, delay.as_millis());
        self
    }

    /// The same answer, meaning `meaning` for the turn.
    pub fn means(mut self, meaning: Meaning) -> Answer {
        self.meaning = meaning;
        self
    }

    /// The same answer, to a request that carried a tool's result back.
    pub fn after_tool(mut self) -> Answer {
        self.after_tool = true;
        self
    }

    /// An empty `text/plain` body (a reachability check).
    pub fn empty() -> Answer {
        Answer {
            status: "200 OK",
            content_type: "text/plain",
            body: Vec::new(),
            stream: false,
            pace: None,
            delay: None,
            note: "200 empty".into(),
            meaning: Meaning::Side,
            after_tool: false,
        }
    }

    /// 404 with a JSON error: the request is printed to stderr, so a call that a new CLI
    /// version makes shows in the test output.
    pub fn not_found(body: &Value) -> Answer {
        Answer {
            status: "404 Not Found",
            content_type: "application/json",
            body: body.to_string().into_bytes(),
            stream: false,
            pace: None,
            delay: None,
            note: "404 not mocked".into(),
            meaning: Meaning::Side,
            after_tool: false,
        }
    }
}

/// A request as the handler sees it.
#[derive(Debug)]
pub struct Request<'a> {
    /// HTTP method.
    pub method: &'a str,
    /// Path without the query.
    pub path: &'a str,
    /// The query, without `?`.
    pub query: &'a str,
    /// The body parsed as JSON, when it was JSON.
    pub body: Option<&'a Value>,
    /// A number unique to this request within the server, for ids.
    pub id: u64,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path with query.
    pub path: String,
    /// The body parsed as JSON, when it was JSON.
    pub body: Option<Value>,
    /// What the server answered ([`Answer::note`]).
    pub reply: String,
    /// When the exchange happened, on the relay's clock.
    pub exchange: Exchange,
}

/// One exchange's meaning and times, in nanoseconds on the relay's clock
/// ([`hookline::format::clock::now_ns`], the clock every event is stamped with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// The request's number within the server ([`Request::id`]).
    pub id: u64,
    /// What the answer meant for the turn ([`Answer::meaning`]).
    pub meaning: Meaning,
    /// Whether the request carried a tool's result back ([`Answer::after_tool`]).
    pub after_tool: bool,
    /// When the request had been read whole.
    pub received_ns: u64,
    /// When the first byte of the answer was sent (after its delay), once it was.
    pub first_byte_ns: Option<u64>,
    /// When the answer's last byte was sent, or sending stopped, once it did.
    pub done_ns: Option<u64>,
    /// Whether the whole answer was sent (`false`: the client went away mid-stream, an
    /// interrupted turn).
    pub complete: bool,
}

impl RecordedRequest {
    /// A one-line summary for failure reports.
    pub fn summary(&self) -> String {
        format!("{} {} -> {}", self.method, self.path, self.reply)
    }
}

type Handler = dyn Fn(&Request<'_>) -> Answer + Send + Sync;

/// A running server. Stops accepting when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    name: &'static str,
    stop: AtomicBool,
    next_id: AtomicU64,
    requests: Mutex<Vec<RecordedRequest>>,
    handler: Box<Handler>,
}

impl MockServer {
    /// Binds an ephemeral port on 127.0.0.1 and serves with `handler`; `name` prefixes what it
    /// prints.
    pub fn start(
        name: &'static str,
        handler: impl Fn(&Request<'_>) -> Answer + Send + Sync + 'static,
    ) -> std::io::Result<MockServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            name,
            stop: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            requests: Mutex::new(Vec::new()),
            handler: Box::new(handler),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new().name(format!("{name}-accept")).spawn(move || {
                for stream in listener.incoming() {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&shared);
                    let _ = thread::Builder::new()
                        .name(format!("{}-conn", shared.name))
                        .spawn(move || serve_connection(stream, &shared));
                }
            })?
        };
        Ok(MockServer { addr, shared, accept: Some(accept) })
    }

    /// `http://127.0.0.1:<port>`: what the CLI's base URL setting points at.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request served so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Every exchange so far, oldest first (by arrival).
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.requests().into_iter().map(|r| r.exchange).collect()
    }

    /// The requests the mock did not know how to answer.
    pub fn unknown_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.reply.starts_with("404")).collect()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let answer = (shared.handler)(&Request {
        method: &request.method,
        path,
        query,
        body: body.as_ref(),
        id,
    });
    if answer.status.starts_with("404") {
        eprintln!(
            "{}: unknown request {} {} ({} body bytes)",
            shared.name,
            request.method,
            request.path,
            request.body.len()
        );
    }
    let exchange = Exchange {
        id,
        meaning: answer.meaning,
        after_tool: answer.after_tool,
        received_ns: now_ns(),
        first_byte_ns: None,
        done_ns: None,
        complete: false,
    };
    // Recorded before answering, so a client that has read its answer finds it recorded.
    let index = {
        let mut requests = shared.requests.lock().unwrap_or_else(|e| e.into_inner());
        requests.push(RecordedRequest {
            method: request.method,
            path: request.path,
            body,
            reply: answer.note.clone(),
            exchange,
        });
        requests.len() - 1
    };
    let update = |edit: &dyn Fn(&mut Exchange)| {
        let mut requests = shared.requests.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(recorded) = requests.get_mut(index) {
            edit(&mut recorded.exchange);
        }
    };
    if let Some(delay) = answer.delay {
        thread::sleep(delay);
    }
    let length = (!answer.stream).then_some(answer.body.len());
    let sent = write_head(&mut writer, answer.status, answer.content_type, length)
        .and_then(|()| {
            let at = now_ns();
            update(&|e| e.first_byte_ns = Some(at));
            write_body(&mut writer, &answer)
        })
        .and_then(|()| writer.flush());
    let _ = writer.shutdown(Shutdown::Write);
    let at = now_ns();
    update(&|e| {
        e.done_ns = Some(at);
        e.complete = sent.is_ok();
    });
}

/// The body at once, or for a paced stream one event at a time; stops at the first write
/// error (the client went away: an interrupted stream).
fn write_body(writer: &mut impl Write, answer: &Answer) -> std::io::Result<()> {
    let Some(pace) = answer.pace.filter(|_| answer.stream) else {
        return writer.write_all(&answer.body);
    };
    for (i, event) in sse_events(&answer.body).into_iter().enumerate() {
        if i > 0 {
            thread::sleep(pace);
        }
        writer.write_all(event)?;
        writer.flush()?;
    }
    Ok(())
}

/// A server-sent-events body cut after each blank line (`\n\n` or `\r\n\r\n`), separators
/// kept.
fn sse_events(body: &[u8]) -> Vec<&[u8]> {
    let mut events = Vec::new();
    let mut start = 0;
    for i in 1..body.len() {
        let blank =
            body[i] == b'\n' && (body[i - 1] == b'\n' || (i >= 3 && &body[i - 3..i] == b"\r\n\r"));
        if blank {
            events.push(&body[start..=i]);
            start = i + 1;
        }
    }
    if start < body.len() {
        events.push(&body[start..]);
    }
    events
}

/// A request as read off the connection.
struct HttpRequest {
    method: String,
    path: String,
    body: Vec<u8>,
}

fn read_request(reader: &mut impl BufRead) -> Option<HttpRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut content_length = 0usize;
    let mut chunked = false;
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                content_length = value.parse().ok()?;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            }
        }
    }
    let body = if chunked {
        read_chunked(reader)?
    } else {
        if content_length > MAX_BODY {
            return None;
        }
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body).ok()?;
        body
    };
    Some(HttpRequest { method, path, body })
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let size_text = line.trim().split(';').next()?;
        let size = usize::from_str_radix(size_text, 16).ok()?;
        if body.len() + size > MAX_BODY {
            return None;
        }
        if size == 0 {
            // Trailers, then the empty line.
            loop {
                line.clear();
                if reader.read_line(&mut line).ok()? == 0 || line.trim().is_empty() {
                    return Some(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).ok()?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).ok()?;
    }
}

fn write_head(
    writer: &mut impl Write,
    status: &str,
    content_type: &str,
    length: Option<usize>,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n\
         request-id: req_mock\r\nconnection: close\r\n"
    );
    if let Some(length) = length {
        head.push_str(&format!("content-length: {length}\r\n"));
    }
    head.push_str("\r\n");
    writer.write_all(head.as_bytes())
}

/// The marker of a slow streamed answer (every mock): text streamed one word per event,
/// [`SLOW_PACE`] apart, so an Esc lands mid-stream.
pub const SLOW: &str = "SLOW:";

/// How many words a [`SLOW`] answer streams.
pub const SLOW_WORDS: usize = 80;

/// The pause between two events of a [`SLOW`] answer: [`SLOW_WORDS`] of them take about 20 s.
pub const SLOW_PACE: Duration = Duration::from_millis(250);

/// The text of a [`SLOW`] answer, word by word: `word1`, ` word2`, ...
pub fn slow_words() -> Vec<String> {
    (1..=SLOW_WORDS).map(|i| if i == 1 { "word1".into() } else { format!(" word{i}") }).collect()
}

/// The marker of an API error answer (every mock): `APIERROR: rate_limit`,
/// `APIERROR: overloaded`, `APIERROR: invalid` or `APIERROR: quota`, answered with the status
/// and body the real API sends.
pub const APIERROR: &str = "APIERROR: ";

/// The errors a prompt can ask a mock for after [`APIERROR`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiError {
    /// `rate_limit`: the API's 429.
    RateLimit,
    /// `overloaded`: the API's overload answer (529 for Anthropic, 503 for OpenAI and Gemini).
    Overloaded,
    /// `invalid`: the API's 400 for a request it cannot take, which no client retries.
    Invalid,
    /// `quota`: the account's quota or credit is used up (the API's own answer for it:
    /// Anthropic's 400 "credit balance is too low", OpenAI's 429 `insufficient_quota`,
    /// Gemini's 429 `RESOURCE_EXHAUSTED` naming the quota), which no retry fixes.
    Quota,
}

impl ApiError {
    /// The error the last [`APIERROR`] of `texts` asks for (the last: a failed turn leaves its
    /// prompt in the next request, in a message of its own or merged into the new one).
    pub fn asked_in<'t>(texts: impl DoubleEndedIterator<Item = &'t str>) -> Option<ApiError> {
        let last = |t: &str| t.rfind(APIERROR).and_then(|at| marked_command(&t[at..], APIERROR));
        match texts.rev().find_map(last)?.as_str() {
            "rate_limit" => Some(ApiError::RateLimit),
            "overloaded" => Some(ApiError::Overloaded),
            "invalid" => Some(ApiError::Invalid),
            "quota" => Some(ApiError::Quota),
            _ => None,
        }
    }
}

/// The command a prompt asks the mock to run: the text after `marker` (`RUNBASH: `), up to the
/// end of its line; `None` without the marker or with nothing after it.
pub fn marked_command(text: &str, marker: &str) -> Option<String> {
    let start = text.find(marker)? + marker.len();
    let command = text[start..].lines().next().unwrap_or("").trim();
    (!command.is_empty()).then(|| command.to_owned())
}

/// Sends one request to a server and returns the status code and the whole response (head and
/// body), for the mocks' unit tests.
#[cfg(test)]
pub(crate) fn send(base_url: &str, method: &str, path: &str, body: &Value) -> (u16, String) {
    use std::io::Read;
    let addr = base_url.trim_start_matches("http://");
    let text = body.to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{text}",
        text.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    (response[9..12].parse().unwrap(), response)
}

/// The body of a response returned by [`send`].
#[cfg(test)]
pub(crate) fn body_of(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn slow_server() -> MockServer {
        MockServer::start("mock-test", |request| {
            let events: String = (0..5).map(|i| format!("data: {i}\n\n")).collect();
            let answer = Answer::sse(events, "five events").means(Meaning::EndsTurn);
            if request.path == "/slow" { answer.paced(Duration::from_millis(200)) } else { answer }
        })
        .unwrap()
    }

    #[test]
    fn each_exchange_is_timed_and_one_the_client_left_is_incomplete() {
        let server = slow_server();
        let (status, _) = send(&server.base_url(), "POST", "/fast", &Value::Null);
        assert_eq!(status, 200);
        // A client that reads the start of a slow stream and goes away, as an Esc does.
        let addr = server.base_url().trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&addr).unwrap();
        write!(stream, "POST /slow HTTP/1.1\r\ncontent-length: 0\r\n\r\n").unwrap();
        // It leaves once the first event has arrived: the rest is paced, so the server's
        // next write comes 200 ms later and finds the client gone.
        let mut seen = Vec::new();
        while !String::from_utf8_lossy(&seen).contains("data: 0") {
            let mut chunk = [0u8; 256];
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the stream ended before its first event");
            seen.extend_from_slice(&chunk[..n]);
        }
        drop(stream);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let exchanges = loop {
            let exchanges = server.exchanges();
            if exchanges.len() == 2 && exchanges[1].done_ns.is_some() {
                break exchanges;
            }
            assert!(std::time::Instant::now() < deadline, "{exchanges:?}");
            thread::sleep(Duration::from_millis(20));
        };
        let (fast, slow) = (exchanges[0], exchanges[1]);
        assert_eq!((fast.meaning, fast.complete, slow.complete), (Meaning::EndsTurn, true, false));
        for e in [fast, slow] {
            let first = e.first_byte_ns.unwrap();
            assert!(e.received_ns <= first && first <= e.done_ns.unwrap(), "{e:?}");
        }
        assert!(slow.done_ns.unwrap() - slow.first_byte_ns.unwrap() >= 150_000_000, "{slow:?}");
    }
}
