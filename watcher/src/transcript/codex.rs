//! Codex's rollout JSONL: one `{"timestamp", "type", "payload"}` record per line. The first,
//! `session_meta`, names the session (`payload.id`); `event_msg` records carry the turn's
//! events by `payload.type`:
//! * `task_started`, `user_message`: [`Observation::TurnStarted`];
//! * `turn_aborted` with `reason: "interrupted"` (Esc): [`Interrupt::Turn`];
//! * `task_complete`: [`Observation::TurnFinished`], unless it carries an `error` (0.171 ends a
//!   turn that failed on the API so, and fires no hook): [`Observation::ApiError`], classed by
//!   its `codex_error_info` (`server_overloaded`, or an object naming the HTTP status);
//! * `token_count`: `info.last_token_usage.output_tokens`, per response;
//! * `error`: [`Observation::ApiError`], classed the same way;
//! * `agent_message`, `agent_reasoning`, `exec_command_begin`, …: the turn goes on.
//!
//! `response_item` records repeat the model's items (messages, function calls) and say the
//! turn goes on.

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Interrupt, Observation, class_of_status, text};

pub(super) fn read(record: &Value) -> (Option<String>, Vec<Observation>) {
    let payload = record.get("payload").unwrap_or(&Value::Null);
    match text(record, "type") {
        Some("session_meta") => (text(payload, "id").map(str::to_owned), Vec::new()),
        Some("event_msg") => (None, event(payload)),
        Some("response_item") => (None, vec![Observation::TurnInProgress]),
        _ => (None, Vec::new()),
    }
}

fn event(payload: &Value) -> Vec<Observation> {
    let kind = text(payload, "type");
    match kind {
        Some("task_started" | "user_message") => vec![Observation::TurnStarted],
        Some("turn_aborted") => match text(payload, "reason") {
            Some("interrupted") => vec![Observation::Interrupted(Interrupt::Turn)],
            _ => Vec::new(),
        },
        Some("task_complete") => match payload.get("error").filter(|e| !e.is_null()) {
            Some(error) => vec![Observation::ApiError(class(error))],
            None => vec![Observation::TurnFinished],
        },
        Some("token_count") => payload
            .get("info")
            .and_then(|i| i.get("last_token_usage"))
            .and_then(|u| u.get("output_tokens"))
            .and_then(Value::as_u64)
            .map(|tokens| vec![Observation::OutputTokens { message: None, tokens }])
            .unwrap_or_default(),
        Some("error") => vec![Observation::ApiError(class(payload))],
        Some(_) => vec![Observation::TurnInProgress],
        None => Vec::new(),
    }
}

/// The class of an error by its `codex_error_info`: a word (`server_overloaded`), or an object
/// whose one key names the failure and may hold the HTTP status (`{"response_too_many_failed_attempts":
/// {"http_status_code": 429}}`).
fn class(error: &Value) -> FailureKind {
    let info = error.get("codex_error_info");
    if let Some(word) = info.and_then(Value::as_str) {
        return match word {
            "usage_limit_exceeded" => FailureKind::RateLimit,
            "unauthorized" => FailureKind::Auth,
            "server_overloaded" => FailureKind::Overloaded,
            "internal_server_error" => FailureKind::Server,
            _ => FailureKind::Other,
        };
    }
    let status = info
        .and_then(Value::as_object)
        .and_then(|o| o.values().find_map(|v| v.get("http_status_code")))
        .and_then(Value::as_u64);
    status.and_then(class_of_status).unwrap_or(FailureKind::Other)
}
