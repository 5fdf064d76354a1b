//! A scripted mock of the OpenAI Responses API (`POST /v1/responses`, server-sent events) on
//! 127.0.0.1, so the real Codex CLI runs offline; and of the Chat Completions API
//! (`POST /v1/chat/completions`, [`ChatReply`]), for the OpenAI-compatible providers of
//! OpenCode, Copilot CLI, Qwen Code and Factory Droid.
//!
//! Codex 0.171 calls only `POST {base_url}/responses`, always with `"stream": true`. Replies are
//! decided from the request alone ([`Reply::for_request`]):
//!
//! | request | reply |
//! |---|---|
//! | `text.format` is a JSON schema asking for a `title` (the TUI's thread-title side request; its prompt quotes the user's) | text `{"title":"mock"}` |
//! | the last user text starts a context checkpoint compaction (`/compact`) | a short summary text |
//! | the last input item is a `function_call_output` | text `done` |
//! | the last user text contains `RUNBASH_ESC: <cmd>` | `exec_command` with `sandbox_permissions: require_escalated`: the TUI asks for approval |
//! | the last user text contains `RUNBASH: <cmd>` | `exec_command` running `<cmd>` in the sandbox, no approval |
//! | the last user text contains `APIERROR: rate_limit` / `overloaded` / `quota` | `429` `rate_limit_exceeded` / `503` `server_is_overloaded` / `429` `insufficient_quota`, as the real API refuses a request (the sandbox's provider sets no retries) |
//! | the last user text contains `SLOW:` | text streamed one word per event, about 20 s ([`crate::mock_http::SLOW`]), so Esc lands mid-stream |
//! | anything else | text `ok` |
//!
//! Codex reports the wire tool `exec_command {cmd}` to hooks as `tool_name: "Bash"`,
//! `tool_input: {command}`.
//!
//! OpenCode 1.18 (provider `@ai-sdk/openai-compatible`), Qwen Code and Factory Droid (a
//! `generic-chat-completion-api` custom model) call only `POST {baseURL}/chat/completions`,
//! with `"stream": true`; replies are decided by [`ChatReply::for_request`]:
//!
//! | request | reply |
//! |---|---|
//! | no `tools` (the session-title side request; its prompt quotes the user's) | text `Mock title` |
//! | the last message is a `tool` result | text `done` |
//! | the last user text contains `APIERROR: rate_limit` / `overloaded` / `invalid` / `quota` | `429` / `503` / `400` / `429` `insufficient_quota`, as above, after [`CHAT_ERROR_DELAY`] |
//! | the last user text contains `RUNBASH: <cmd>` | a call of the shell tool the request offers ([`ShellTool`]: `run_shell_command`, `Execute`, else `bash`) |
//! | the last user text contains `SLOW:` | text streamed one word per chunk, about 20 s |
//! | anything else | text `ok` |
//!
//! Pi 0.73 (provider api `openai-completions`) and Kilo Code 7.7 (an OpenCode fork) call the
//! same path the same way; Pi's shell tool is also named `bash` (`{command, timeout?}`: the
//! extra `description` is ignored).
//!
//! Anything but these two paths answers 404 and is printed.

use serde_json::{Value, json};

use crate::mock_http::{
    Answer, ApiError, Meaning, MockServer, Request, SLOW, SLOW_PACE, marked_command, slow_words,
};

/// `RUNBASH: <command>`: a shell command the sandbox allows, run without asking.
pub const RUNBASH: &str = "RUNBASH: ";
/// `RUNBASH_ESC: <command>`: a shell command asking to leave the sandbox, which needs approval.
pub const RUNBASH_ESC: &str = "RUNBASH_ESC: ";
/// How long the Chat Completions mock takes to answer an [`ApiError`].
pub const CHAT_ERROR_DELAY: std::time::Duration = std::time::Duration::from_secs(2);
/// How Codex's `/compact` prompt starts.
const COMPACTION: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION";

/// Starts the mock; Codex's `base_url` is `<base_url>/v1`.
pub fn start() -> std::io::Result<MockServer> {
    MockServer::start("mock-openai", |request| match (request.method, request.path) {
        ("POST", "/v1/responses") => answer(request),
        ("POST", "/v1/chat/completions") => chat_answer(request),
        _ => Answer::not_found(&json!({"error": {"message": "not mocked", "type": "not_found"}})),
    })
}

fn answer(request: &Request<'_>) -> Answer {
    let body = request.body.unwrap_or(&Value::Null);
    let reply = Reply::for_request(body);
    let model = body["model"].as_str().unwrap_or("gpt-mock");
    let answer = match reply {
        Reply::ApiError(error) => return error_answer(error).means(Meaning::Fails(error)),
        Reply::Slow => Answer::sse(reply.sse(model, request.id), reply.describe()).paced(SLOW_PACE),
        _ => Answer::sse(reply.sse(model, request.id), reply.describe()),
    };
    let input = body["input"].as_array().map(Vec::as_slice).unwrap_or_default();
    let answer = answer.means(match reply {
        _ if is_title_request(body) => Meaning::Side,
        Reply::Exec { .. } => Meaning::CallsTool,
        _ => Meaning::EndsTurn,
    });
    if input.last().is_some_and(|item| item["type"] == "function_call_output") {
        answer.after_tool()
    } else {
        answer
    }
}

/// The OpenAI API's answer to `error`.
fn error_answer(error: ApiError) -> Answer {
    let (status, kind, code, message) = match error {
        ApiError::RateLimit => (
            "429 Too Many Requests",
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached for requests. Please try again in 20s.",
        ),
        ApiError::Overloaded => (
            "503 Service Unavailable",
            "server_error",
            "server_is_overloaded",
            "The server is overloaded. Please try again later.",
        ),
        ApiError::Invalid => (
            "400 Bad Request",
            "invalid_request_error",
            "invalid_request",
            "The request is not valid (mock).",
        ),
        ApiError::Quota => (
            "429 Too Many Requests",
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        ),
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    Answer::error(status, &body, code)
}

fn chat_answer(request: &Request<'_>) -> Answer {
    let body = request.body.unwrap_or(&Value::Null);
    let reply = ChatReply::for_request(body);
    let model = body["model"].as_str().unwrap_or("mock-model");
    if let ChatReply::ApiError(error) = reply {
        // Refused after a while, as a loaded API does: a client's hooks for the prompt have run
        // well before its error ones.
        return error_answer(error).delayed(CHAT_ERROR_DELAY).means(Meaning::Fails(error));
    }
    let answer = if body["stream"] == true {
        let answer = Answer::sse(reply.sse(model, request.id), reply.describe());
        if reply == ChatReply::Slow { answer.paced(SLOW_PACE) } else { answer }
    } else {
        Answer::json(&reply.completion(model, request.id), reply.describe())
    };
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let answer = answer.means(match reply {
        _ if body["tools"].as_array().is_none_or(Vec::is_empty) => Meaning::Side,
        ChatReply::Shell(..) => Meaning::CallsTool,
        _ => Meaning::EndsTurn,
    });
    if messages.last().is_some_and(|m| m["role"] == "tool") { answer.after_tool() } else { answer }
}

/// What the mock answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Assistant text ending the turn.
    Text(String),
    /// An `exec_command` call; `escalated` asks to run outside the sandbox.
    Exec {
        /// The command.
        cmd: String,
        /// Whether it asks for `require_escalated`.
        escalated: bool,
    },
    /// Assistant text streamed slowly, one word per event.
    Slow,
    /// An error status instead of a stream.
    ApiError(ApiError),
}

impl Reply {
    /// Decides the reply from the request body (see the module table).
    pub fn for_request(body: &Value) -> Reply {
        if is_title_request(body) {
            return Reply::Text(json!({"title": "mock"}).to_string());
        }
        let input = body["input"].as_array().map(Vec::as_slice).unwrap_or_default();
        let last_user_text = input
            .iter()
            .rev()
            .find(|item| item["role"] == "user")
            .map(|item| texts(&item["content"]))
            .unwrap_or_default();
        if last_user_text.iter().any(|t| t.trim_start().starts_with(COMPACTION)) {
            return Reply::Text("mock summary: the user ran mock shell commands.".into());
        }
        if input.last().is_some_and(|item| item["type"] == "function_call_output") {
            return Reply::Text("done".into());
        }
        for text in &last_user_text {
            if let Some(cmd) = marked_command(text, RUNBASH_ESC) {
                return Reply::Exec { cmd, escalated: true };
            }
            if let Some(cmd) = marked_command(text, RUNBASH) {
                return Reply::Exec { cmd, escalated: false };
            }
        }
        if let Some(error) = ApiError::asked_in(last_user_text.iter().map(String::as_str)) {
            return Reply::ApiError(error);
        }
        if last_user_text.iter().any(|t| t.contains(SLOW)) {
            return Reply::Slow;
        }
        Reply::Text("ok".into())
    }

    fn describe(&self) -> String {
        match self {
            Reply::Text(text) => format!("text {text:?}"),
            Reply::Slow => "slow text".into(),
            Reply::ApiError(error) => format!("{error:?}"),
            Reply::Exec { cmd, escalated: true } => format!("exec_command escalated {cmd:?}"),
            Reply::Exec { cmd, escalated: false } => format!("exec_command {cmd:?}"),
        }
    }

    /// The output item, complete.
    fn item(&self, id: u64) -> Value {
        match self {
            Reply::Slow => Reply::Text(slow_words().concat()).item(id),
            Reply::ApiError(_) => Reply::Text(String::new()).item(id),
            Reply::Text(text) => json!({
                "type": "message",
                "id": format!("msg_mock_{id:08x}"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }),
            Reply::Exec { cmd, escalated } => {
                let mut arguments = json!({"cmd": cmd});
                if *escalated {
                    arguments["sandbox_permissions"] = json!("require_escalated");
                    arguments["justification"] = json!("Run the requested command");
                }
                json!({
                    "type": "function_call",
                    "id": format!("fc_mock_{id:08x}"),
                    "call_id": format!("call_mock_{id:08x}"),
                    "name": "exec_command",
                    "arguments": arguments.to_string(),
                    "status": "completed",
                })
            }
        }
    }

    /// The reply as the server-sent events of one streamed response.
    pub fn sse(&self, model: &str, id: u64) -> String {
        let response_id = format!("resp_mock_{id:08x}");
        let item = self.item(id);
        let mut added = item.clone();
        let text_delta = |text: &str| {
            json!({
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": text,
            })
        };
        let deltas = match self {
            Reply::Text(text) => vec![text_delta(text)],
            Reply::Slow => slow_words().iter().map(|w| text_delta(w)).collect(),
            Reply::ApiError(_) => Vec::new(),
            Reply::Exec { .. } => vec![json!({
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": 0,
                "delta": item["arguments"],
            })],
        };
        match self {
            Reply::Exec { .. } => added["arguments"] = json!(""),
            _ => added["content"] = json!([]),
        }
        added["status"] = json!("in_progress");
        let mut events = vec![
            json!({
                "type": "response.created",
                "response": {"id": response_id, "object": "response", "status": "in_progress", "model": model, "output": []},
            }),
            json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        ];
        events.extend(deltas);
        events.extend([
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            json!({
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "object": "response",
                    "status": "completed",
                    "model": model,
                    "output": [item],
                    "usage": {
                        "input_tokens": 100,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 10,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 110,
                    },
                },
            }),
        ]);
        events
            .iter()
            .map(|data| format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or("")))
            .collect()
    }
}

/// The shell tool a Chat Completions client offers, and the arguments it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellTool {
    /// OpenCode's `bash {command, description}`.
    Bash,
    /// Qwen Code's `run_shell_command {command, description, is_background}`.
    RunShellCommand,
    /// Factory Droid's `Execute {command, riskLevel, riskLevelReason}`: without the two risk
    /// fields Droid rejects the call back to the model.
    Execute,
}

impl ShellTool {
    /// Every tool, in the order they are looked for among those offered.
    pub const ALL: [ShellTool; 3] =
        [ShellTool::RunShellCommand, ShellTool::Execute, ShellTool::Bash];

    /// The tool's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            ShellTool::Bash => "bash",
            ShellTool::RunShellCommand => "run_shell_command",
            ShellTool::Execute => "Execute",
        }
    }

    /// The shell tool among those the request offers (`tools[].function.name`); `bash` when
    /// it offers none of them.
    pub fn offered(body: &Value) -> ShellTool {
        let offered: Vec<&str> = body["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect())
            .unwrap_or_default();
        ShellTool::ALL.into_iter().find(|t| offered.contains(&t.name())).unwrap_or(ShellTool::Bash)
    }

    /// The call's arguments, as a JSON string.
    fn arguments(self, cmd: &str) -> String {
        let arguments = match self {
            ShellTool::Bash => json!({"command": cmd, "description": "Run the requested command"}),
            ShellTool::RunShellCommand => json!({
                "command": cmd, "description": "Run the requested command", "is_background": false,
            }),
            ShellTool::Execute => json!({
                "command": cmd, "riskLevel": "low",
                "riskLevelReason": "Runs the command the test asked for",
            }),
        };
        arguments.to_string()
    }
}

/// What the Chat Completions mock answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatReply {
    /// Assistant text ending the turn.
    Text(String),
    /// A call of the client's shell tool running this command.
    Shell(ShellTool, String),
    /// Assistant text streamed slowly, one word per chunk.
    Slow,
    /// An error status instead of a completion.
    ApiError(ApiError),
}

impl ChatReply {
    /// Decides the reply from the request body (see the module table).
    pub fn for_request(body: &Value) -> ChatReply {
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return ChatReply::Text("Mock title".into());
        }
        let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        if messages.last().is_some_and(|m| m["role"] == "tool") {
            return ChatReply::Text("done".into());
        }
        let last_user_text = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| texts(&m["content"]))
            .unwrap_or_default();
        if let Some(error) = ApiError::asked_in(last_user_text.iter().map(String::as_str)) {
            return ChatReply::ApiError(error);
        }
        for text in &last_user_text {
            if let Some(cmd) = marked_command(text, RUNBASH) {
                return ChatReply::Shell(ShellTool::offered(body), cmd);
            }
        }
        if last_user_text.iter().any(|t| t.contains(SLOW)) {
            return ChatReply::Slow;
        }
        ChatReply::Text("ok".into())
    }

    fn describe(&self) -> String {
        match self {
            ChatReply::Text(text) => format!("text {text:?}"),
            ChatReply::Shell(tool, cmd) => format!("{} {cmd:?}", tool.name()),
            ChatReply::Slow => format!("text of {} words, slowly", crate::mock_http::SLOW_WORDS),
            ChatReply::ApiError(error) => format!("{error:?}"),
        }
    }

    fn chunk(model: &str, id: u64, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": format!("chatcmpl-mock-{id:08x}"),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }

    /// The reply as the server-sent events of one streamed completion, ending with the usage
    /// chunk and `[DONE]`.
    pub fn sse(&self, model: &str, id: u64) -> String {
        let text_chunks = |words: Vec<String>| {
            let mut chunks: Vec<Value> = words
                .into_iter()
                .enumerate()
                .map(|(i, word)| {
                    let delta = if i == 0 {
                        json!({"role": "assistant", "content": word})
                    } else {
                        json!({"content": word})
                    };
                    ChatReply::chunk(model, id, delta, None)
                })
                .collect();
            chunks.push(ChatReply::chunk(model, id, json!({}), Some("stop")));
            chunks
        };
        let chunks = match self {
            ChatReply::Text(text) => text_chunks(vec![text.clone()]),
            ChatReply::Slow => text_chunks(slow_words()),
            ChatReply::ApiError(_) => Vec::new(),
            ChatReply::Shell(tool, cmd) => vec![
                ChatReply::chunk(
                    model,
                    id,
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "index": 0,
                        "id": format!("call_mock_{id:08x}"),
                        "type": "function",
                        "function": {"name": tool.name(), "arguments": ""},
                    }]}),
                    None,
                ),
                ChatReply::chunk(
                    model,
                    id,
                    json!({"tool_calls": [{
                        "index": 0,
                        "function": {"arguments": tool.arguments(cmd)},
                    }]}),
                    None,
                ),
                ChatReply::chunk(model, id, json!({}), Some("tool_calls")),
            ],
        };
        let usage = json!({
            "id": format!("chatcmpl-mock-{id:08x}"),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        });
        let mut text: String =
            chunks.iter().chain([&usage]).map(|data| format!("data: {data}\n\n")).collect();
        text.push_str("data: [DONE]\n\n");
        text
    }

    /// The reply as one complete (not streamed) completion.
    pub fn completion(&self, model: &str, id: u64) -> Value {
        let message = match self {
            ChatReply::Text(text) => json!({"role": "assistant", "content": text}),
            ChatReply::Slow => json!({"role": "assistant", "content": slow_words().concat()}),
            ChatReply::ApiError(_) => Value::Null,
            ChatReply::Shell(tool, cmd) => {
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_mock_{id:08x}"),
                    "type": "function",
                    "function": {"name": tool.name(), "arguments": tool.arguments(cmd)},
                }]})
            }
        };
        let finish = if matches!(self, ChatReply::Shell(..)) { "tool_calls" } else { "stop" };
        json!({
            "id": format!("chatcmpl-mock-{id:08x}"),
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        })
    }
}

/// The texts of a message's `content` (a string, or `input_text` parts).
fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(text) => vec![text.clone()],
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).map(str::to_owned).collect()
        }
        _ => Vec::new(),
    }
}

/// The TUI's thread-title request: its output format is a JSON schema with a `title`.
fn is_title_request(body: &Value) -> bool {
    let format = &body["text"]["format"];
    format["type"] == "json_schema" && format["schema"].to_string().contains("\"title\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_http::{body_of, send};

    fn user(text: &str) -> Value {
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    }

    fn data_lines(response: &str) -> Vec<Value> {
        body_of(response)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn an_escalated_runbash_prompt_streams_an_exec_command_call() {
        let server = start().unwrap();
        let body = json!({"model": "gpt-5.5", "stream": true, "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "RUNBASH: no"}]},
            user("please RUNBASH_ESC: echo hi > /tmp/out.txt\nthanks"),
        ]});
        let (status, response) = send(&server.base_url(), "POST", "/v1/responses", &body);
        assert_eq!(status, 200);
        assert!(response.contains("content-type: text/event-stream"), "{response}");
        let events = data_lines(&response);
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            [
                "response.created",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let item = &events[3]["item"];
        assert_eq!(item["name"], "exec_command");
        let arguments: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments["cmd"], "echo hi > /tmp/out.txt");
        assert_eq!(arguments["sandbox_permissions"], "require_escalated");
        assert_eq!(events[4]["response"]["output"][0], *item);
        assert_eq!(
            server.requests()[0].reply,
            "200 exec_command escalated \"echo hi > /tmp/out.txt\" (sse)"
        );
    }

    #[test]
    fn slow_and_apierror_prompts_stream_slowly_or_fail_as_the_api_does() {
        let server = start().unwrap();
        let slow = json!({"stream": true, "input": [user("SLOW: go")]});
        let started = std::time::Instant::now();
        let (status, response) = send(&server.base_url(), "POST", "/v1/responses", &slow);
        assert_eq!(status, 200);
        let deltas: Vec<Value> = data_lines(&response)
            .into_iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .collect();
        assert_eq!(deltas.len(), crate::mock_http::SLOW_WORDS);
        assert!(started.elapsed() >= SLOW_PACE * deltas.len() as u32);
        let done = data_lines(&response).pop().unwrap();
        assert_eq!(done["response"]["output"][0]["content"][0]["text"], slow_words().concat());
        for (name, status, code) in [
            ("rate_limit", 429, "rate_limit_exceeded"),
            ("overloaded", 503, "server_is_overloaded"),
        ] {
            let body = json!({"input": [user(&format!("APIERROR: {name}"))]});
            let (got, response) = send(&server.base_url(), "POST", "/v1/responses", &body);
            assert_eq!(got, status, "{response}");
            let error: Value = serde_json::from_str(body_of(&response)).unwrap();
            assert_eq!(error["error"]["code"], code);
        }
    }

    #[test]
    fn side_requests_and_tool_results_get_text() {
        let title = json!({
            "input": [user("Generate a concise title\n\nUser prompt:\nplease RUNBASH_ESC: ls")],
            "text": {"format": {"type": "json_schema", "schema": {"properties": {"title": {"type": "string"}}}}},
        });
        assert_eq!(Reply::for_request(&title), Reply::Text(r#"{"title":"mock"}"#.into()));
        let compact = json!({"input": [user("RUNBASH: ls"), user(&format!("{COMPACTION} now"))]});
        assert!(matches!(Reply::for_request(&compact), Reply::Text(t) if t.contains("summary")));
        let after_tool = json!({"input": [
            user("RUNBASH: ls"),
            {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"},
            {"type": "function_call_output", "call_id": "c", "output": "Process exited with code 0"},
        ]});
        assert_eq!(Reply::for_request(&after_tool), Reply::Text("done".into()));
        assert_eq!(
            Reply::for_request(&json!({"input": [user("RUNBASH: ls -l")]})),
            Reply::Exec { cmd: "ls -l".into(), escalated: false }
        );
        assert_eq!(Reply::for_request(&json!({"input": [user("hi")]})), Reply::Text("ok".into()));
    }

    #[test]
    fn a_runbash_chat_prompt_streams_a_bash_tool_call_and_its_result_gets_text() {
        let server = start().unwrap();
        let tools = json!([{"type": "function", "function": {"name": "bash"}}]);
        let body = json!({"model": "mock-model", "stream": true, "tools": tools, "messages": [
            {"role": "system", "content": "RUNBASH: no"},
            {"role": "user", "content": [{"type": "text", "text": "please RUNBASH: echo hi > /tmp/o"}]},
        ]});
        let (status, response) = send(&server.base_url(), "POST", "/v1/chat/completions", &body);
        assert_eq!(status, 200);
        assert!(response.contains("content-type: text/event-stream"), "{response}");
        let data: Vec<&str> =
            body_of(&response).lines().filter_map(|l| l.strip_prefix("data: ")).collect();
        assert_eq!(data.last(), Some(&"[DONE]"));
        let chunks: Vec<Value> =
            data[..data.len() - 1].iter().map(|d| serde_json::from_str(d).unwrap()).collect();
        let call = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "bash");
        let arguments = chunks[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        let arguments: Value = serde_json::from_str(arguments).unwrap();
        assert_eq!(arguments["command"], "echo hi > /tmp/o");
        assert_eq!(chunks[2]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chunks[3]["usage"]["total_tokens"], 110);
        assert_eq!(server.requests()[0].reply, "200 bash \"echo hi > /tmp/o\" (sse)");

        let after_tool = json!({"tools": tools, "messages": [
            {"role": "user", "content": "RUNBASH: ls"},
            {"role": "assistant", "content": null, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c", "content": "(no output)"},
        ]});
        assert_eq!(ChatReply::for_request(&after_tool), ChatReply::Text("done".into()));
        let title = json!({"messages": [{"role": "user", "content": "RUNBASH: ls"}]});
        assert_eq!(ChatReply::for_request(&title), ChatReply::Text("Mock title".into()));
        let plain = json!({"tools": tools, "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(ChatReply::for_request(&plain), ChatReply::Text("ok".into()));
        let (status, response) = send(
            &server.base_url(),
            "POST",
            "/v1/chat/completions",
            &json!({"stream": false, "tools": tools, "messages": [{"role": "user", "content": "hi"}]}),
        );
        assert_eq!(status, 200);
        let completion: Value = serde_json::from_str(body_of(&response)).unwrap();
        assert_eq!(completion["choices"][0]["message"]["content"], "ok");
    }

    #[test]
    fn chat_clients_get_their_own_shell_tool_and_api_errors() {
        let with_tools = |names: &[&str], text: &str| {
            let tools: Vec<Value> = names
                .iter()
                .map(|n| json!({"type": "function", "function": {"name": n}}))
                .collect();
            json!({"tools": tools, "messages": [{"role": "user", "content": text}]})
        };
        let cases = [
            (&["read_file", "run_shell_command"][..], "run_shell_command", "is_background"),
            (&["Read", "Execute", "Task"][..], "Execute", "riskLevel"),
            (&["read"][..], "bash", "description"),
        ];
        for (offered, name, field) in cases {
            let body = with_tools(offered, "please RUNBASH: echo hi");
            let reply = ChatReply::for_request(&body);
            let completion = reply.completion("m", 1);
            let call = &completion["choices"][0]["message"]["tool_calls"][0]["function"];
            assert_eq!(call["name"], name);
            let arguments: Value =
                serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
            assert_eq!(arguments["command"], "echo hi");
            assert!(arguments.get(field).is_some(), "{arguments}");
        }
        let server = start().unwrap();
        for (marker, status, code) in [
            ("rate_limit", 429, "rate_limit_exceeded"),
            ("overloaded", 503, "server_is_overloaded"),
            ("invalid", 400, "invalid_request"),
        ] {
            let body = with_tools(&["Execute"], &format!("APIERROR: {marker}"));
            let (got, response) = send(&server.base_url(), "POST", "/v1/chat/completions", &body);
            assert_eq!(got, status, "{response}");
            let error: Value = serde_json::from_str(body_of(&response)).unwrap();
            assert_eq!(error["error"]["code"], code);
        }
        let slow = ChatReply::for_request(&with_tools(&["Execute"], "SLOW: go"));
        assert_eq!(slow, ChatReply::Slow);
        let chunks = slow.sse("m", 1);
        assert_eq!(chunks.matches("\"content\":").count(), crate::mock_http::SLOW_WORDS);
    }

    #[test]
    fn other_paths_are_not_mocked() {
        let server = start().unwrap();
        let (status, _) = send(&server.base_url(), "GET", "/v1/models", &Value::Null);
        assert_eq!(status, 404);
        assert_eq!(server.unknown_requests().len(), 1);
    }
}
