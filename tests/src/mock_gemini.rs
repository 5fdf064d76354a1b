//! A scripted mock of the Gemini API on 127.0.0.1, so the real Gemini CLI runs offline
//! (`GOOGLE_GEMINI_BASE_URL=<base_url>`, with `security.auth.selectedType = "gemini-api-key"`).
//!
//! | request | reply |
//! |---|---|
//! | `…:streamGenerateContent?alt=sse` whose last turn holds a `functionResponse` | text `done` |
//! | `…:streamGenerateContent?alt=sse` whose last user text contains `RUNBASH: <cmd>` | a `run_shell_command` function call |
//! | `…:streamGenerateContent?alt=sse` whose last user text contains `APIERROR: rate_limit` / `overloaded` / `quota` | `429` `RESOURCE_EXHAUSTED` / `503` `UNAVAILABLE` / `429` `RESOURCE_EXHAUSTED` naming the quota, as the real API refuses a request (retried by the CLI unless `general.maxAttempts` is 1) |
//! | `…:streamGenerateContent?alt=sse` whose last user text contains `SLOW:` | text streamed one word per event, about 20 s ([`crate::mock_http::SLOW`]), so Esc lands mid-stream |
//! | `…:streamGenerateContent?alt=sse`, anything else | text `ok` |
//! | `…:generateContent` asking for JSON with a schema (the model router, every turn) | JSON filling the schema: integers at their minimum or 1 (the router's `complexity_score` must be ≥ 1), strings `mock` |
//! | `…:generateContent`, anything else (`/compress`) | a short summary text |
//! | `…:countTokens`, `…:embedContent` | stubs (never called by 0.61) |
//!
//! The stream is `data: <GenerateContentResponse>\r\n\r\n` lines. Anything else answers 404
//! and is printed.

use serde_json::{Map, Value, json};

use crate::mock_http::{
    Answer, ApiError, Meaning, MockServer, Request, SLOW, SLOW_PACE, marked_command, slow_words,
};

/// `RUNBASH: <command>`: the mock answers with a `run_shell_command` call.
pub const RUNBASH: &str = "RUNBASH: ";

/// Starts the mock; `GOOGLE_GEMINI_BASE_URL` is its base URL.
pub fn start() -> std::io::Result<MockServer> {
    MockServer::start("mock-gemini", |request| {
        let method = request.path.strip_prefix("/v1beta/models/").and_then(|m| m.split_once(':'));
        match (request.method, method) {
            ("POST", Some((model, "streamGenerateContent"))) => stream(request, model),
            ("POST", Some((model, "generateContent"))) => generate(request, model),
            ("POST", Some((_, "countTokens"))) => {
                Answer::json(&json!({"totalTokens": 100}), "countTokens")
            }
            ("POST", Some((_, "embedContent"))) => {
                Answer::json(&json!({"embedding": {"values": vec![0.0; 8]}}), "embedContent")
            }
            _ => Answer::not_found(
                &json!({"error": {"code": 404, "message": "not mocked", "status": "NOT_FOUND"}}),
            ),
        }
    })
}

fn stream(request: &Request<'_>, model: &str) -> Answer {
    let body = request.body.unwrap_or(&Value::Null);
    let reply = Reply::for_request(body);
    let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    let after_tool = contents.last().is_some_and(|c| {
        c["parts"].as_array().is_some_and(|p| p.iter().any(|p| p["functionResponse"].is_object()))
    });
    let answer = stream_answer(&reply, model).means(match &reply {
        Reply::ApiError(error) => Meaning::Fails(*error),
        Reply::Shell(_) => Meaning::CallsTool,
        Reply::Text(_) | Reply::Slow => Meaning::EndsTurn,
    });
    if after_tool { answer.after_tool() } else { answer }
}

fn stream_answer(reply: &Reply, model: &str) -> Answer {
    let note = format!("{model} {}", reply.describe());
    match reply {
        Reply::ApiError(error) => error_answer(*error),
        Reply::Slow => {
            // One response per word; only the last says why the candidate ended.
            let words = slow_words();
            let events: String = words
                .iter()
                .enumerate()
                .map(|(i, word)| {
                    let mut data = response(model, json!({"text": word}));
                    if i + 1 < words.len() {
                        data["candidates"][0].as_object_mut().map(|c| c.remove("finishReason"));
                    }
                    format!("data: {data}\r\n\r\n")
                })
                .collect();
            Answer::sse(events, note).paced(SLOW_PACE)
        }
        _ => Answer::sse(format!("data: {}\r\n\r\n", response(model, reply.part())), note),
    }
}

/// The Gemini API's answer to `error`.
fn error_answer(error: ApiError) -> Answer {
    let (status, code, text, message) = match error {
        ApiError::RateLimit => (
            "429 Too Many Requests",
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted (e.g. check quota).",
        ),
        ApiError::Overloaded => (
            "503 Service Unavailable",
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
        ),
        ApiError::Invalid => {
            ("400 Bad Request", 400, "INVALID_ARGUMENT", "The request is not valid (mock).")
        }
        ApiError::Quota => (
            "429 Too Many Requests",
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details. \
             Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests",
        ),
    };
    let body = json!({"error": {"code": code, "message": message, "status": text}});
    Answer::error(status, &body, text)
}

fn generate(request: &Request<'_>, model: &str) -> Answer {
    let body = request.body.unwrap_or(&Value::Null);
    let config = &body["generationConfig"];
    let schema = [&config["responseJsonSchema"], &config["responseSchema"]]
        .into_iter()
        .find(|s| s.is_object());
    let (text, note) = match schema {
        Some(schema) => {
            let text = fill_schema(schema).to_string();
            let note = format!("{model} json {text}");
            (text, note)
        }
        None => {
            let text = "mock summary: the user ran mock shell commands.".to_owned();
            (text, format!("{model} text summary"))
        }
    };
    // The router's JSON is a side request; a summary (`/compress`) is the compaction's answer.
    let meaning = if schema.is_some() { Meaning::Side } else { Meaning::EndsTurn };
    Answer::json(&response(model, json!({"text": text})), note).means(meaning)
}

/// One `GenerateContentResponse` holding `part`.
fn response(model: &str, part: Value) -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [part]},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25},
        "modelVersion": model,
    })
}

/// What the mock streams for one `streamGenerateContent`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Model text ending the turn.
    Text(String),
    /// A `run_shell_command` call.
    Shell(String),
    /// Model text streamed slowly, one word per event.
    Slow,
    /// An error status instead of a stream.
    ApiError(ApiError),
}

impl Reply {
    /// Decides from the request body (see the module table).
    pub fn for_request(body: &Value) -> Reply {
        let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
        let parts = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
        if contents
            .last()
            .is_some_and(|c| parts(c).iter().any(|p| p["functionResponse"].is_object()))
        {
            return Reply::Text("done".into());
        }
        let last_user = contents.iter().rev().find(|c| c["role"] == "user").map(parts);
        let last_user = last_user.unwrap_or_default();
        let texts = || last_user.iter().filter_map(|p| p["text"].as_str());
        if let Some(command) = texts().find_map(|text| marked_command(text, RUNBASH)) {
            return Reply::Shell(command);
        }
        let texts: Vec<&str> = texts().collect();
        if let Some(error) = ApiError::asked_in(texts.iter().copied()) {
            return Reply::ApiError(error);
        }
        if texts.iter().any(|t| t.contains(SLOW)) {
            return Reply::Slow;
        }
        Reply::Text("ok".into())
    }

    fn part(&self) -> Value {
        match self {
            Reply::Text(text) => json!({"text": text}),
            Reply::Slow | Reply::ApiError(_) => json!({"text": ""}),
            Reply::Shell(command) => json!({"functionCall": {
                "name": "run_shell_command",
                "args": {"command": command, "description": "Run the requested command"},
            }}),
        }
    }

    fn describe(&self) -> String {
        match self {
            Reply::Text(text) => format!("text {text:?}"),
            Reply::Slow => "slow text".into(),
            Reply::ApiError(error) => format!("{error:?}"),
            Reply::Shell(command) => format!("run_shell_command {command:?}"),
        }
    }
}

/// A value satisfying a JSON schema (OpenAPI-style upper-case types too), as plain as possible:
/// the first enum value, strings `mock`, numbers at their minimum or 1, one item per array.
pub fn fill_schema(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = schema["type"].as_str().unwrap_or("object").to_ascii_lowercase();
    match kind.as_str() {
        "string" => json!("mock"),
        "integer" => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        "number" => json!(schema["minimum"].as_f64().unwrap_or(1.0).max(1.0)),
        "boolean" => json!(true),
        "array" => json!([fill_schema(&schema["items"])]),
        "null" => Value::Null,
        _ => {
            let mut object = Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    object.insert(name.clone(), fill_schema(property));
                }
            }
            Value::Object(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_http::{body_of, send};

    fn user(text: &str) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }

    #[test]
    fn a_runbash_prompt_streams_a_shell_function_call() {
        let server = start().unwrap();
        let body = json!({"contents": [user("please RUNBASH: echo hi > /tmp/out.txt\nthanks")]});
        let path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
        let (status, response) = send(&server.base_url(), "POST", path, &body);
        assert_eq!(status, 200);
        assert!(response.contains("content-type: text/event-stream"), "{response}");
        let data = body_of(&response).strip_prefix("data: ").unwrap();
        assert!(data.ends_with("\r\n\r\n"));
        let event: Value = serde_json::from_str(data.trim_end()).unwrap();
        let call = &event["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(call["name"], "run_shell_command");
        assert_eq!(call["args"]["command"], "echo hi > /tmp/out.txt");
        assert_eq!(event["modelVersion"], "gemini-3.8-flash");
    }

    #[test]
    fn slow_and_apierror_prompts_stream_slowly_or_fail_as_the_api_does() {
        let server = start().unwrap();
        let path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
        let started = std::time::Instant::now();
        let body = json!({"contents": [user("SLOW: go")]});
        let (status, response) = send(&server.base_url(), "POST", path, &body);
        assert_eq!(status, 200);
        let events: Vec<Value> = body_of(&response)
            .split("\r\n\r\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert_eq!(events.len(), crate::mock_http::SLOW_WORDS);
        assert!(started.elapsed() >= SLOW_PACE * (events.len() as u32 - 1));
        let text: String = events
            .iter()
            .map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(text, slow_words().concat());
        assert_eq!(events.last().unwrap()["candidates"][0]["finishReason"], "STOP");
        assert!(events[0]["candidates"][0]["finishReason"].is_null());
        for (name, status, text) in
            [("rate_limit", 429, "RESOURCE_EXHAUSTED"), ("overloaded", 503, "UNAVAILABLE")]
        {
            let body = json!({"contents": [user(&format!("APIERROR: {name}"))]});
            let (got, response) = send(&server.base_url(), "POST", path, &body);
            assert_eq!(got, status, "{response}");
            let error: Value = serde_json::from_str(body_of(&response)).unwrap();
            assert_eq!(error["error"]["status"], text);
        }
    }

    #[test]
    fn a_function_response_ends_the_turn() {
        let body = json!({"contents": [
            user("RUNBASH: ls"),
            {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "RUNBASH: ls"}}}]},
        ]});
        assert_eq!(Reply::for_request(&body), Reply::Text("done".into()));
        assert_eq!(
            Reply::for_request(&json!({"contents": [user("hi")]})),
            Reply::Text("ok".into())
        );
    }

    #[test]
    fn the_router_gets_json_that_satisfies_its_schema() {
        let server = start().unwrap();
        let body = json!({"contents": [user("RUNBASH: ls")], "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {"type": "OBJECT", "properties": {
                "complexity_reasoning": {"type": "STRING"},
                "complexity_score": {"type": "INTEGER"},
            }},
        }});
        let path = "/v1beta/models/gemini-3.5-flash-lite:generateContent";
        let (status, response) = send(&server.base_url(), "POST", path, &body);
        assert_eq!(status, 200);
        let reply: Value = serde_json::from_str(body_of(&response)).unwrap();
        let text = reply["candidates"][0]["content"]["parts"][0]["text"].as_str().unwrap();
        let filled: Value = serde_json::from_str(text).unwrap();
        assert_eq!(filled, json!({"complexity_reasoning": "mock", "complexity_score": 1}));
        assert_eq!(fill_schema(&json!({"type": "string", "enum": ["a", "b"]})), "a");
        assert_eq!(
            fill_schema(&json!({"type": "array", "items": {"type": "boolean"}})),
            json!([true])
        );
    }

    #[test]
    fn other_paths_are_not_mocked() {
        let server = start().unwrap();
        let (status, _) = send(&server.base_url(), "GET", "/v1beta/models", &Value::Null);
        assert_eq!(status, 404);
        assert_eq!(server.unknown_requests().len(), 1);
    }
}
