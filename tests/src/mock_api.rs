//! A scripted mock of the Anthropic Messages API on 127.0.0.1, so the real CLI runs offline.
//!
//! Replies are decided from the request alone ([`Reply::for_request`]):
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
//! printed to stderr. The server is [`crate::mock_http`]'s.

use serde_json::{Value, json};

use crate::mock_http::{Answer, MockServer, Request, marked_command};

/// The marker a prompt uses to ask the mock for a Bash tool call: `RUNBASH: <command>`.
pub const RUNBASH: &str = "RUNBASH: ";

/// Starts the mock; `ANTHROPIC_BASE_URL` is its base URL.
pub fn start() -> std::io::Result<MockServer> {
    MockServer::start("mock-api", |request| match (request.method, request.path) {
        ("HEAD" | "GET", "/") => Answer::empty(),
        ("POST", "/v1/messages/count_tokens") => {
            Answer::json(&json!({"input_tokens": 100}), "count_tokens")
        }
        ("POST", "/v1/messages") => messages(request),
        _ => Answer::not_found(
            &json!({"type": "error", "error": {"type": "not_found_error", "message": "not mocked"}}),
        ),
    })
}

fn messages(request: &Request<'_>) -> Answer {
    let body = request.body.unwrap_or(&Value::Null);
    let reply = Reply::for_request(body);
    let model = body["model"].as_str().unwrap_or("claude-mock");
    if body["stream"].as_bool().unwrap_or(false) {
        Answer::sse(reply.sse(model, request.id), reply.describe())
    } else {
        Answer::json(&reply.message(model, request.id), reply.describe())
    }
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
        if let Some(command) = texts.iter().find_map(|t| marked_command(t, RUNBASH)) {
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
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;
    use crate::mock_http::send;

    fn request(body: &Value) -> (u16, String) {
        let api = start().unwrap();
        send(&api.base_url(), "POST", "/v1/messages?beta=true", body)
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
        let api = start().unwrap();
        let mut stream = TcpStream::connect(api.base_url().trim_start_matches("http://")).unwrap();
        write!(stream, "GET /v1/nothing HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 404"), "{response}");
        let unknown = api.unknown_requests();
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].path, "/v1/nothing");
    }
}
