//! A scripted mock of the Anthropic Messages API on 127.0.0.1, so the real CLI runs offline.
//!
//! Std only: one thread accepts, one thread per connection answers, every response closes its
//! connection. Replies are decided from the request alone ([`Reply::for_request`]):
//!
//! | request | reply |
//! |---|---|
//! | last user text asks for a summary of the conversation (compaction) | a short `<summary>` text |
//! | no tools and an output format asking for a `title` (title side-request) | text `{"title":"mock"}` |
//! | last user message holds a `tool_result` | text `done`, `stop_reason: end_turn` |
//! | last user text contains `RUNBASH: <cmd>` | a `Bash` `tool_use` running `<cmd>` |
//! | anything else | text `ok` |
//!
//! `POST /v1/messages` answers with server-sent events when the body says `"stream": true`
//! (always, for the versions seen) and with one JSON message otherwise. `HEAD /` and `GET /`
//! answer 200, `POST /v1/messages/count_tokens` a token count. Anything else answers 404 and is
//! printed to stderr, so a new call made by a new CLI version shows in the test output. Every
//! request is recorded ([`MockApi::requests`]) for failure reports.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};

/// The marker a prompt uses to ask the mock for a Bash tool call: `RUNBASH: <command>`.
pub const RUNBASH: &str = "RUNBASH: ";

/// Cap on a request body; the CLI's requests are a few hundred KB at most.
const MAX_BODY: usize = 32 << 20;

/// A running mock server. Stops accepting when dropped.
pub struct MockApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    next_id: AtomicU64,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// One request as the mock saw it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path with query.
    pub path: String,
    /// The body parsed as JSON, when it was JSON.
    pub body: Option<Value>,
    /// What the mock answered.
    pub reply: String,
}

impl RecordedRequest {
    /// A one-line summary for failure reports.
    pub fn summary(&self) -> String {
        format!("{} {} -> {}", self.method, self.path, self.reply)
    }
}

impl MockApi {
    /// Binds an ephemeral port on 127.0.0.1 and starts serving.
    pub fn start() -> std::io::Result<MockApi> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new().name("mock-api-accept".into()).spawn(move || {
                for stream in listener.incoming() {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&shared);
                    let _ = thread::Builder::new()
                        .name("mock-api-conn".into())
                        .spawn(move || serve_connection(stream, &shared));
                }
            })?
        };
        Ok(MockApi { addr, shared, accept: Some(accept) })
    }

    /// `http://127.0.0.1:<port>`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request served so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The requests the mock did not know how to answer.
    pub fn unknown_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.reply.starts_with("404")).collect()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// A request as read off the connection (shared with [`crate::mock_http`]).
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) body: Vec<u8>,
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
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let response = respond(&request, body.as_ref(), id);
    if response.status.starts_with("404") {
        eprintln!(
            "mock-api: unknown request {} {} ({} body bytes)",
            request.method,
            request.path,
            request.body.len()
        );
    }
    // Recorded before answering, so a client that has read its answer finds it recorded.
    shared.requests.lock().unwrap_or_else(|e| e.into_inner()).push(RecordedRequest {
        method: request.method,
        path: request.path,
        body,
        reply: response.note,
    });
    let _ = write_head(&mut writer, response.status, response.content_type, response.length)
        .and_then(|()| writer.write_all(&response.body))
        .and_then(|()| writer.flush());
    let _ = writer.shutdown(Shutdown::Write);
}

struct Response {
    status: &'static str,
    content_type: &'static str,
    /// `None` for a stream ended by closing the connection.
    length: Option<usize>,
    body: Vec<u8>,
    note: String,
}

impl Response {
    fn whole(
        status: &'static str,
        content_type: &'static str,
        body: Vec<u8>,
        note: String,
    ) -> Self {
        Response { status, content_type, length: Some(body.len()), body, note }
    }
}

fn respond(request: &HttpRequest, body: Option<&Value>, id: u64) -> Response {
    let path = request.path.split('?').next().unwrap_or("");
    match (request.method.as_str(), path) {
        ("HEAD" | "GET", "/") => {
            Response::whole("200 OK", "text/plain", Vec::new(), "200 empty".into())
        }
        ("POST", "/v1/messages/count_tokens") => Response::whole(
            "200 OK",
            "application/json",
            json!({"input_tokens": 100}).to_string().into_bytes(),
            "200 count_tokens".into(),
        ),
        ("POST", "/v1/messages") => {
            let body = body.unwrap_or(&Value::Null);
            let reply = Reply::for_request(body);
            let model = body["model"].as_str().unwrap_or("claude-mock");
            if body["stream"].as_bool().unwrap_or(false) {
                Response {
                    status: "200 OK",
                    content_type: "text/event-stream",
                    length: None,
                    body: reply.sse(model, id).into_bytes(),
                    note: format!("200 {} (sse)", reply.describe()),
                }
            } else {
                Response::whole(
                    "200 OK",
                    "application/json",
                    reply.message(model, id).to_string().into_bytes(),
                    format!("200 {}", reply.describe()),
                )
            }
        }
        _ => Response::whole(
            "404 Not Found",
            "application/json",
            json!({"type": "error", "error": {"type": "not_found_error", "message": "not mocked"}})
                .to_string()
                .into_bytes(),
            "404 not mocked".into(),
        ),
    }
}

pub(crate) fn read_request(reader: &mut impl BufRead) -> Option<HttpRequest> {
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

pub(crate) fn write_head(
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

/// What the mock answers to one `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Assistant text ending the turn.
    Text(String),
    /// A `Bash` tool call with this command.
    Bash(String),
}

impl Reply {
    /// Decides the reply from the request body (see the module table).
    pub fn for_request(body: &Value) -> Reply {
        let last_user =
            body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
        let blocks: Vec<&Value> = match last_user.map(|m| &m["content"]) {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(text @ Value::String(_)) => vec![text],
            _ => Vec::new(),
        };
        let texts: Vec<&str> =
            blocks.iter().filter_map(|b| b.as_str().or_else(|| b["text"].as_str())).collect();
        // First: a compaction request appends its instructions to the last user message, which
        // may hold the last prompt (RUNBASH) or a tool result (a denied tool call).
        if texts.iter().any(|t| is_summary_request(t)) {
            return Reply::Text(
                "<analysis>mock analysis</analysis>\n<summary>1. Primary Request and Intent: \
                 the user ran mock shell commands.</summary>"
                    .into(),
            );
        }
        if is_title_request(body) {
            return Reply::Text(json!({"title": "mock"}).to_string());
        }
        if blocks.iter().any(|b| b["type"] == "tool_result") {
            return Reply::Text("done".into());
        }
        if let Some(command) = texts.iter().find_map(|t| runbash_command(t)) {
            return Reply::Bash(command);
        }
        Reply::Text("ok".into())
    }

    fn describe(&self) -> String {
        match self {
            Reply::Text(text) => format!("text {:?}", truncate(text, 40)),
            Reply::Bash(command) => format!("Bash {command:?}"),
        }
    }

    fn stop_reason(&self) -> &'static str {
        match self {
            Reply::Text(_) => "end_turn",
            Reply::Bash(_) => "tool_use",
        }
    }

    fn tool_input(command: &str) -> Value {
        json!({"command": command, "description": "Run the requested command"})
    }

    /// The reply as one non-streaming message object.
    pub fn message(&self, model: &str, id: u64) -> Value {
        let content = match self {
            Reply::Text(text) => json!([{"type": "text", "text": text}]),
            Reply::Bash(command) => json!([{
                "type": "tool_use",
                "id": tool_use_id(id),
                "name": "Bash",
                "input": Reply::tool_input(command),
            }]),
        };
        json!({
            "id": format!("msg_mock_{id:016x}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": self.stop_reason(),
            "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        })
    }

    /// The reply as the server-sent events of a streaming response.
    pub fn sse(&self, model: &str, id: u64) -> String {
        let mut start = self.message(model, id);
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        start["usage"]["output_tokens"] = json!(1);
        let (block, delta) = match self {
            Reply::Text(text) => {
                (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": text}))
            }
            Reply::Bash(command) => (
                json!({"type": "tool_use", "id": tool_use_id(id), "name": "Bash", "input": {}}),
                json!({
                    "type": "input_json_delta",
                    "partial_json": Reply::tool_input(command).to_string(),
                }),
            ),
        };
        let events = [
            ("message_start", json!({"type": "message_start", "message": start})),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": block}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            ),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                json!({
                    "type": "message_delta",
                    "delta": {"stop_reason": self.stop_reason(), "stop_sequence": null},
                    "usage": {"output_tokens": 10},
                }),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ];
        events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
    }
}

fn tool_use_id(id: u64) -> String {
    format!("toolu_mock_{id:016x}")
}

/// The command after `RUNBASH: `, up to the end of its line.
fn runbash_command(text: &str) -> Option<String> {
    let start = text.find(RUNBASH)? + RUNBASH.len();
    let command = text[start..].lines().next().unwrap_or("").trim();
    (!command.is_empty()).then(|| command.to_string())
}

/// The compaction request: its last user text asks for a summary of the conversation.
fn is_summary_request(text: &str) -> bool {
    let text = text.to_lowercase();
    text.contains("summary of the conversation") || text.contains("<summary>")
}

/// A side-request for a session title: no tools, and an output format whose schema or
/// instructions ask for a `title`.
fn is_title_request(body: &Value) -> bool {
    let no_tools = body["tools"].as_array().is_none_or(|t| t.is_empty());
    let format = &body["output_config"]["format"];
    no_tools && !format.is_null() && format.to_string().contains("title")
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn request(body: &Value) -> (u16, String) {
        let api = MockApi::start().unwrap();
        let text = body.to_string();
        let mut stream = TcpStream::connect(api.addr).unwrap();
        write!(
            stream,
            "POST /v1/messages?beta=true HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{text}",
            text.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        (status, response)
    }

    #[test]
    fn a_runbash_prompt_streams_a_bash_tool_use() {
        let body = json!({
            "model": "m", "stream": true, "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                {"type": "text", "text": "please RUNBASH: echo hi > /tmp/out.txt\nthanks"},
            ]}],
        });
        let (status, response) = request(&body);
        assert_eq!(status, 200);
        let events: Vec<&str> =
            response.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
        assert_eq!(
            events,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let delta: Value = response
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .find(|d: &Value| d["type"] == "content_block_delta")
            .unwrap();
        let input: Value =
            serde_json::from_str(delta["delta"]["partial_json"].as_str().unwrap()).unwrap();
        assert_eq!(input["command"], "echo hi > /tmp/out.txt");
        assert!(response.contains(r#""stop_reason":"tool_use""#));
    }

    #[test]
    fn a_tool_result_ends_the_turn_even_if_the_prompt_asked_for_bash() {
        let body = json!({"messages": [
            {"role": "user", "content": "RUNBASH: ls"},
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "RUNBASH: ls"}]},
        ]});
        assert_eq!(Reply::for_request(&body), Reply::Text("done".into()));
    }

    #[test]
    fn title_and_summary_side_requests_get_their_own_answers() {
        let title = json!({
            "messages": [{"role": "user", "content": "RUNBASH: ls"}],
            "output_config": {"format": {"type": "json_schema", "schema": {"properties": {"title": {}}}}},
        });
        assert_eq!(Reply::for_request(&title), Reply::Text(r#"{"title":"mock"}"#.into()));
        let summary = json!({"messages": [{"role": "user", "content": [
            {"type": "tool_result", "content": "The user doesn't want to proceed"},
            {"type": "text", "text": "now RUNBASH: echo denied"},
            {"type": "text", "text": "Your task is to create a detailed summary of the conversation"}
        ]}]});
        assert!(matches!(Reply::for_request(&summary), Reply::Text(t) if t.contains("<summary>")));
    }

    #[test]
    fn a_non_streaming_request_gets_one_json_message() {
        let (status, response) =
            request(&json!({"stream": false, "messages": [{"role": "user", "content": "hi"}]}));
        assert_eq!(status, 200);
        let body: Value = serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["content"][0]["text"], "ok");
        assert_eq!(body["stop_reason"], "end_turn");
    }

    #[test]
    fn unknown_requests_are_answered_404_and_recorded() {
        let api = MockApi::start().unwrap();
        let mut stream = TcpStream::connect(api.addr).unwrap();
        write!(stream, "GET /v1/nothing HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 404"), "{response}");
        let unknown = api.unknown_requests();
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].path, "/v1/nothing");
    }
}
