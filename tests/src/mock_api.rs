//! A scripted mock of the Anthropic Messages API on 127.0.0.1, so the real CLI runs offline.
//!
//! Replies are decided from the request alone ([`Reply::for_request`]):
//!
//! | request | reply |
//! |---|---|
//! | last user text asks for a summary of the conversation (compaction) | a short `<summary>` text |
//! | no tools and an output format asking for a `title` (title side-request) | text `{"title":"mock"}` |
//! | the prompt is hookline's classifier instruction ([`INSTRUCTION_HEAD`]) | a naive model: the word after the first `answer:` in the fenced session text, else `unknown` |
//! | the turn's prompt contains `SCRIPT:todo` | step by step, one per request: `ToolSearch` for the task tools, `TaskCreate` "First task", `TaskCreate` "Second task", `TaskUpdate` 1 → completed, then text `one of two tasks done` |
//! | last user message holds a `tool_result` | text `done`, `stop_reason: end_turn` |
//! | last user text contains `RUNBASH: <cmd>` | a `Bash` `tool_use` running `<cmd>` |
//! | last user text is a `<task-notification>` and a user text of the conversation holds [`WAKEDIALOG`] | a `Bash` `tool_use` running `echo woke` (a dialog opening by itself) |
//! | last user text contains `ASKUSER: <question>` | an `AskUserQuestion` `tool_use` with two options |
//! | last user text contains `RUNAGENT: <prompt>` | an `Agent` `tool_use` (general purpose) whose prompt is [`SUBAGENT_TASK`] `<prompt>` (the subagent's requests are side requests) |
//! | last user text contains `WAKEUP: <seconds>` | a `ScheduleWakeup` `tool_use`: a one-shot wake after `<seconds>` |
//! | last user text contains `RUNBG: <cmd>` | a `Bash` `tool_use` running `<cmd>` with `run_in_background: true` |
//! | last user text contains `APIERROR: rate_limit` / `overloaded` / `quota` | `429` `rate_limit_error` / `529` `overloaded_error` / `400` "credit balance is too low", as the real API refuses a request (retried by Claude unless `CLAUDE_CODE_MAX_RETRIES=0`) |
//! | last user text contains `SLOW:` | text of [`SLOW_WORDS`](crate::mock_http::SLOW_WORDS) words streamed one word per event, [`SLOW_PACE`] apart (about 20 s), so Esc lands mid-stream |
//! | anything else (a `<task-notification>` prompt too) | text `ok` |
//!
//! Every answer says what it means for the turn ([`Meaning`]): titles and classifier consults
//! are side requests, text ends the turn, a `tool_use` calls a tool.
//!
//! `POST /v1/messages` answers with server-sent events when the body says `"stream": true`
//! (always, for the versions seen) and with one JSON message otherwise. `HEAD /` and `GET /`
//! answer 200, `POST /v1/messages/count_tokens` a token count. Anything else answers 404 and is
//! printed to stderr. The server is [`crate::mock_http`]'s.

use serde_json::{Value, json};

use hookline::decide::classifier::INSTRUCTION_HEAD;

use crate::mock_http::{
    Answer, ApiError, Meaning, MockServer, Request, SLOW, SLOW_PACE, marked_command, slow_words,
};

/// The marker a prompt uses to ask the mock for a Bash tool call: `RUNBASH: <command>`.
pub const RUNBASH: &str = "RUNBASH: ";

/// The marker for a Bash call run in the background: `RUNBG: <command>`.
pub const RUNBG: &str = "RUNBG: ";

/// The marker for a question to the user: `ASKUSER: <question>` (`AskUserQuestion`, two
/// options).
pub const ASKUSER: &str = "ASKUSER: ";

/// The marker for a subagent: `RUNAGENT: <its prompt>` (the `Agent` tool, general purpose).
pub const RUNAGENT: &str = "RUNAGENT: ";

/// What the prompt of a subagent [`RUNAGENT`] starts starts with: its requests are side
/// requests of the parent session.
pub const SUBAGENT_TASK: &str = "SUBAGENT-TASK: ";

/// The marker for a one-shot wake: `WAKEUP: <seconds>` (`ScheduleWakeup`).
pub const WAKEUP: &str = "WAKEUP: ";

/// A word that, anywhere in a user's text of the conversation, makes the mock answer a
/// `<task-notification>` (the turn a background task's end starts) with a `Bash` call, which
/// asks for permission: a dialog that opens by itself while the session sat idle.
pub const WAKEDIALOG: &str = "WAKEDIALOG";

/// The marker of the task-list script (the task tools need `CLAUDE_CODE_ENABLE_TODO_TOOLS=1`).
pub const SCRIPT_TODO: &str = "SCRIPT:todo";

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
    if let Reply::ApiError(error) = reply {
        return error_answer(error).means(Meaning::Fails(error));
    }
    let answer = if body["stream"].as_bool().unwrap_or(false) {
        let answer = Answer::sse(reply.sse(model, request.id), reply.describe());
        match reply {
            Reply::Slow(_) => answer.paced(SLOW_PACE),
            _ => answer,
        }
    } else {
        Answer::json(&reply.message(model, request.id), reply.describe())
    };
    let answer = answer.means(Reply::meaning(body, &reply));
    if carries_tool_result(body) { answer.after_tool() } else { answer }
}

/// Whether the last user message holds a `tool_result`: the tool asked for has ended.
fn carries_tool_result(body: &Value) -> bool {
    let last_user =
        body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    last_user
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
}

/// What the mock answers to one `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Assistant text ending the turn.
    Text(String),
    /// A `Bash` tool call with this command.
    Bash(String),
    /// A tool call: the tool's name and its input.
    Tool(&'static str, Value),
    /// Assistant text ending the turn, streamed slowly, one word per event.
    Slow(String),
    /// An error status instead of a message.
    ApiError(ApiError),
}

/// The Anthropic API's answer to `error`.
fn error_answer(error: ApiError) -> Answer {
    let (status, kind, message) = match error {
        ApiError::RateLimit => (
            "429 Too Many Requests",
            "rate_limit_error",
            "This request would exceed the rate limit for your organization.",
        ),
        ApiError::Overloaded => ("529 Overloaded", "overloaded_error", "Overloaded"),
        ApiError::Invalid => {
            ("400 Bad Request", "invalid_request_error", "The request is not valid (mock).")
        }
        ApiError::Quota => (
            "400 Bad Request",
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & \
             Billing to upgrade or purchase credits.",
        ),
    };
    let body = json!({"type": "error", "error": {"type": kind, "message": message},
                      "request_id": "req_mock"});
    Answer::error(status, &body, kind)
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
        if let Some(prompt) = texts.iter().find(|t| t.contains(INSTRUCTION_HEAD)) {
            return Reply::Text(naive_classifier(prompt));
        }
        if let Some(step) = script_step(body, SCRIPT_TODO) {
            return todo_script(step);
        }
        if blocks.iter().any(|b| b["type"] == "tool_result") {
            return Reply::Text("done".into());
        }
        if let Some(command) = texts.iter().find_map(|t| marked_command(t, RUNBASH)) {
            return Reply::Bash(command);
        }
        if texts.iter().any(|t| t.contains("<task-notification>"))
            && any_user_text(body, |t| t.contains(WAKEDIALOG))
        {
            return Reply::Bash("echo woke".into());
        }
        if let Some(question) = texts.iter().find_map(|t| marked_command(t, ASKUSER)) {
            let input = json!({"questions": [{
                "question": question,
                "header": "Choice",
                "options": [
                    {"label": "Yes", "description": "Go on"},
                    {"label": "No", "description": "Stop here"},
                ],
                "multiSelect": false,
            }]});
            return Reply::Tool("AskUserQuestion", input);
        }
        if let Some(prompt) = texts.iter().find_map(|t| marked_command(t, RUNAGENT)) {
            let input = json!({"description": "Run a subagent",
                               "prompt": format!("{SUBAGENT_TASK}{prompt}"),
                               "subagent_type": "general-purpose"});
            return Reply::Tool("Agent", input);
        }
        if let Some(delay) = texts.iter().find_map(|t| marked_command(t, WAKEUP)) {
            let seconds: u64 = delay.parse().unwrap_or(60);
            let input = json!({"delaySeconds": seconds, "reason": "the conformance wake",
                               "prompt": "the scheduled wake fired: say ok", "noop": false});
            return Reply::Tool("ScheduleWakeup", input);
        }
        if let Some(command) = texts.iter().find_map(|t| marked_command(t, RUNBG)) {
            let input = json!({"command": command, "description": "Run the requested command",
                               "run_in_background": true});
            return Reply::Tool("Bash", input);
        }
        if let Some(error) = ApiError::asked_in(texts.iter().copied()) {
            return Reply::ApiError(error);
        }
        if texts.iter().any(|t| t.contains(SLOW)) {
            return Reply::Slow(slow_words().concat());
        }
        Reply::Text("ok".into())
    }

    /// What the reply to `body` means for the turn: side requests (a title, a classifier's
    /// consult) are no part of it.
    fn meaning(body: &Value, reply: &Reply) -> Meaning {
        let text = body.to_string();
        let consult = text.contains(INSTRUCTION_HEAD);
        // A subagent's requests are its own, not its parent session's turn.
        let subagent = last_user_texts(body).iter().any(|t| t.contains(SUBAGENT_TASK));
        match reply {
            _ if is_title_request(body) || consult || subagent => Meaning::Side,
            Reply::Text(_) | Reply::Slow(_) => Meaning::EndsTurn,
            Reply::Bash(_) | Reply::Tool(..) => Meaning::CallsTool,
            Reply::ApiError(error) => Meaning::Fails(*error),
        }
    }

    fn describe(&self) -> String {
        match self {
            Reply::Text(text) => format!("text {:?}", truncate(text, 40)),
            Reply::Slow(text) => format!("slow text {:?}", truncate(text, 40)),
            Reply::ApiError(error) => format!("{error:?}"),
            Reply::Bash(command) => format!("Bash {command:?}"),
            Reply::Tool(name, input) => format!("{name} {}", truncate(&input.to_string(), 60)),
        }
    }

    fn stop_reason(&self) -> &'static str {
        match self {
            Reply::Text(_) | Reply::Slow(_) | Reply::ApiError(_) => "end_turn",
            Reply::Bash(_) | Reply::Tool(..) => "tool_use",
        }
    }

    /// The tool call, when the reply is one.
    fn tool(&self) -> Option<(&str, Value)> {
        match self {
            Reply::Text(_) | Reply::Slow(_) | Reply::ApiError(_) => None,
            Reply::Bash(command) => Some(("Bash", Reply::tool_input(command))),
            Reply::Tool(name, input) => Some((name, input.clone())),
        }
    }

    fn tool_input(command: &str) -> Value {
        json!({"command": command, "description": "Run the requested command"})
    }

    /// The reply as one non-streaming message object.
    pub fn message(&self, model: &str, id: u64) -> Value {
        let content = match (self, self.tool()) {
            (Reply::Text(text) | Reply::Slow(text), _) => json!([{"type": "text", "text": text}]),
            (_, Some((name, input))) => json!([{
                "type": "tool_use",
                "id": tool_use_id(id),
                "name": name,
                "input": input,
            }]),
            (_, None) => json!([]),
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
        let text_delta = |text: &str| json!({"type": "text_delta", "text": text});
        let (block, deltas) = match (self, self.tool()) {
            (Reply::Text(text), _) => (json!({"type": "text", "text": ""}), vec![text_delta(text)]),
            // One word per event, each but the first after a space.
            (Reply::Slow(_), _) => (
                json!({"type": "text", "text": ""}),
                slow_words().iter().map(|w| text_delta(w)).collect(),
            ),
            (_, Some((name, input))) => (
                json!({"type": "tool_use", "id": tool_use_id(id), "name": name, "input": {}}),
                vec![json!({"type": "input_json_delta", "partial_json": input.to_string()})],
            ),
            (_, None) => (json!({"type": "text", "text": ""}), Vec::new()),
        };
        let mut events = vec![
            ("message_start", json!({"type": "message_start", "message": start})),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": block}),
            ),
        ];
        events.extend(deltas.into_iter().map(|delta| {
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            )
        }));
        events.extend([
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
        ]);
        events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
    }
}

/// The texts of the last user message.
fn last_user_texts(body: &Value) -> Vec<&str> {
    let last_user =
        body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    match last_user.map(|m| &m["content"]) {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(blocks)) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    }
}

/// Whether any user text of the conversation satisfies `test`.
fn any_user_text(body: &Value, test: impl Fn(&str) -> bool) -> bool {
    let Some(messages) = body["messages"].as_array() else { return false };
    messages.iter().filter(|m| m["role"] == "user").any(|m| match &m["content"] {
        Value::String(text) => test(text),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).any(&test),
        _ => false,
    })
}

/// How far a scripted turn has got: the number of tool calls the assistant made since the
/// last user prompt that holds `marker` (a prompt, not a tool result); `None` when the turn's
/// prompt has no such marker.
fn script_step(body: &Value, marker: &str) -> Option<usize> {
    let messages = body["messages"].as_array()?;
    let text_of = |m: &Value| match &m["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect()
        }
        _ => Vec::new(),
    };
    let prompt = messages
        .iter()
        .rposition(|m| m["role"] == "user" && text_of(m).iter().any(|t| t.contains(marker)))?;
    let calls = messages[prompt..]
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter(|m| {
            m["content"].as_array().is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use"))
        })
        .count();
    Some(calls)
}

/// The task-list script, step by step (as captured from 2.1.332: the task tools are deferred
/// behind ToolSearch).
fn todo_script(step: usize) -> Reply {
    let create = |subject: &str, thing: &str| {
        json!({"subject": subject, "description": format!("do the {thing} thing"),
               "activeForm": format!("Doing the {thing} thing")})
    };
    match step {
        0 => Reply::Tool(
            "ToolSearch",
            json!({"query": "select:TaskCreate,TaskUpdate,TaskList,TaskGet", "max_results": 10}),
        ),
        1 => Reply::Tool("TaskCreate", create("First task", "first")),
        2 => Reply::Tool("TaskCreate", create("Second task", "second")),
        3 => Reply::Tool("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
        _ => Reply::Text("one of two tasks done".into()),
    }
}

/// What a model that obeys the text it judges answers hookline's classifier: whatever the
/// session text (after the `BEGIN-` marker) tells it to, as `answer: WORD`; else `unknown`.
fn naive_classifier(prompt: &str) -> String {
    let fenced = prompt.split_once("\nBEGIN-").map_or("", |(_, text)| text);
    let lower = fenced.to_lowercase();
    let Some(at) = lower.find("answer:") else { return "unknown".into() };
    let word: String = fenced[at + "answer:".len()..]
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '.')
        .collect();
    if word.is_empty() { "unknown".into() } else { word }
}

fn tool_use_id(id: u64) -> String {
    format!("toolu_mock_{id:016x}")
}

/// The compaction request: its last user text asks for a summary of the conversation.
fn is_summary_request(text: &str) -> bool {
    let text = text.to_lowercase();
    // A background task's `<task-notification>` carries a `<summary>` of its own.
    text.contains("summary of the conversation")
        || (text.contains("<summary>") && !text.contains("<task-notification>"))
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
    fn questions_subagents_wakes_and_a_dialog_that_opens_by_itself_are_scripted() {
        let user = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
        let tool = |body: &Value| match Reply::for_request(body) {
            Reply::Tool(name, input) => (name, input),
            other => panic!("{other:?}"),
        };
        let (name, input) = tool(&user("ASKUSER: left or right?"));
        assert_eq!(name, "AskUserQuestion");
        assert_eq!(input["questions"][0]["question"], "left or right?");
        assert_eq!(input["questions"][0]["options"].as_array().unwrap().len(), 2);
        let (name, input) = tool(&user("RUNAGENT: say ok"));
        assert_eq!((name, input["prompt"].as_str()), ("Agent", Some("SUBAGENT-TASK: say ok")));
        assert_eq!(input["subagent_type"], "general-purpose");
        let (name, input) = tool(&user("WAKEUP: 75"));
        assert_eq!((name, input["delaySeconds"].as_u64()), ("ScheduleWakeup", Some(75)));
        // A task's end starts a turn: a Bash call when the conversation asked for one, text
        // otherwise, and never the compaction's summary (the notification has a <summary>).
        let notification = "<task-notification>\n<status>completed</status>\n<summary>Background \
                            command \"wait\" completed (exit code 0)</summary>\n</task-notification>";
        let body = json!({"messages": [
            {"role": "user", "content": "RUNBG: until [ -e go ]; do sleep 0.05; done # WAKEDIALOG"},
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "started"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
            {"role": "user", "content": notification},
        ]});
        assert_eq!(Reply::for_request(&body), Reply::Bash("echo woke".into()));
        assert_eq!(Reply::for_request(&user(notification)), Reply::Text("ok".into()));
    }

    #[test]
    fn every_answer_says_what_it_means_for_the_turn_and_a_quota_is_refused() {
        let api = start().unwrap();
        let post = |body: Value| send(&api.base_url(), "POST", "/v1/messages", &body);
        let user = |text: &str| json!({"role": "user", "content": text});
        post(json!({"messages": [user("say ok")], "tools": [{"name": "Bash"}]}));
        post(json!({"messages": [user("RUNBASH: ls")], "tools": [{"name": "Bash"}]}));
        post(
            json!({"messages": [user("hi")], "output_config": {"format": {"schema": {"title": {}}}}}),
        );
        post(json!({"messages": [
            user("RUNBASH: ls"),
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
        ]}));
        // A subagent's request is a side request of its parent's turn.
        post(json!({"messages": [user("SUBAGENT-TASK: say ok")], "tools": [{"name": "Bash"}]}));
        let (status, response) = post(json!({"messages": [user("APIERROR: quota")]}));
        assert_eq!(status, 400);
        assert!(response.contains("credit balance is too low"), "{response}");
        let meanings: Vec<(Meaning, bool)> =
            api.exchanges().iter().map(|e| (e.meaning, e.after_tool)).collect();
        assert_eq!(
            meanings,
            [
                (Meaning::EndsTurn, false),
                (Meaning::CallsTool, false),
                (Meaning::Side, false),
                (Meaning::EndsTurn, true),
                (Meaning::Side, false),
                (Meaning::Fails(ApiError::Quota), false),
            ]
        );
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
    fn the_todo_script_moves_one_tool_call_per_request_and_ends_on_text() {
        let mut messages = vec![json!({"role": "user", "content": "SCRIPT:todo please"})];
        let mut names = Vec::new();
        loop {
            let body = json!({"messages": messages});
            match Reply::for_request(&body) {
                Reply::Text(text) => {
                    assert_eq!(text, "one of two tasks done");
                    break;
                }
                reply => {
                    let (name, input) = reply.tool().unwrap();
                    names.push(name.to_owned());
                    messages.push(json!({"role": "assistant", "content": [
                        {"type": "tool_use", "name": name, "input": input}]}));
                    messages.push(json!({"role": "user", "content": [
                        {"type": "tool_result", "content": "ok"}]}));
                }
            }
        }
        assert_eq!(names, ["ToolSearch", "TaskCreate", "TaskCreate", "TaskUpdate"]);
    }

    #[test]
    fn a_runbg_prompt_asks_for_a_background_bash_call() {
        let body = json!({"messages": [{"role": "user", "content": "RUNBG: sleep 6"}]});
        let (name, input) =
            Reply::for_request(&body).tool().map(|(n, i)| (n.to_owned(), i)).unwrap();
        assert_eq!(name, "Bash");
        assert_eq!(
            (input["command"].as_str(), input["run_in_background"].as_bool()),
            (Some("sleep 6"), Some(true))
        );
        let done = json!({"messages": [
            {"role": "user", "content": "RUNBG: sleep 6"},
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "started"}]},
            {"role": "user", "content": "<task-notification>done</task-notification>"},
        ]});
        assert_eq!(Reply::for_request(&done), Reply::Text("ok".into()));
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
    fn a_slow_prompt_streams_one_word_per_event_paced() {
        let api = start().unwrap();
        let body = json!({"stream": true, "messages": [{"role": "user", "content": "SLOW: go"}]});
        let started = std::time::Instant::now();
        let (status, response) = send(&api.base_url(), "POST", "/v1/messages", &body);
        assert_eq!(status, 200);
        let deltas: Vec<Value> = response
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .filter(|d: &Value| d["type"] == "content_block_delta")
            .collect();
        assert_eq!(deltas.len(), crate::mock_http::SLOW_WORDS);
        assert_eq!(deltas[1]["delta"]["text"], " word2");
        // message_start, content_block_start, the deltas, then three more: paced between each.
        let pauses = (crate::mock_http::SLOW_WORDS + 4) as u32;
        assert!(started.elapsed() >= SLOW_PACE * pauses, "{:?}", started.elapsed());
    }

    #[test]
    fn an_apierror_prompt_is_answered_with_the_api_s_error_status() {
        let api = start().unwrap();
        for (name, status, kind) in
            [("rate_limit", 429, "rate_limit_error"), ("overloaded", 529, "overloaded_error")]
        {
            let body = json!({"stream": true, "messages": [
                {"role": "user", "content": format!("APIERROR: {name}")}]});
            let (got, response) = send(&api.base_url(), "POST", "/v1/messages", &body);
            assert_eq!(got, status, "{response}");
            let error: Value = serde_json::from_str(crate::mock_http::body_of(&response)).unwrap();
            assert_eq!(error["error"]["type"], kind);
        }
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
