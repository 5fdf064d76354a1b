//! Codex's rollout JSONL: one `{"timestamp", "type", "payload"}` record per line. The first,
//! `session_meta`, names the session (`payload.id`); `event_msg` records carry the turn's
//! events by `payload.type`:
//! * `task_started`, `user_message`: [`Observation::TurnStarted`];
//! * `turn_aborted` with `reason: "interrupted"` (Esc): [`Interrupt::Turn`];
//! * `task_complete`: [`Observation::TurnFinished`];
//! * `token_count`: `info.last_token_usage.output_tokens`, per response;
//! * `error`: [`Observation::ApiError`], classed by `codex_error_info` where given;
//! * `agent_message`, `agent_reasoning`, `exec_command_begin`, …: the turn goes on.
//!
//! `response_item` records repeat the model's items (messages, function calls) and say the
//! turn goes on.

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Interrupt, Observation, text};

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
        Some("task_complete") => vec![Observation::TurnFinished],
        Some("token_count") => payload
            .get("info")
            .and_then(|i| i.get("last_token_usage"))
            .and_then(|u| u.get("output_tokens"))
            .and_then(Value::as_u64)
            .map(|tokens| vec![Observation::OutputTokens { message: None, tokens }])
            .unwrap_or_default(),
        Some("error") => {
            let info = payload.get("codex_error_info");
            let word = info.and_then(Value::as_str).or_else(|| {
                info.and_then(Value::as_object).and_then(|o| o.keys().next().map(String::as_str))
            });
            let class = match word {
                Some("usage_limit_exceeded") => FailureKind::RateLimit,
                Some("unauthorized") => FailureKind::Auth,
                Some("server_overloaded") => FailureKind::Overloaded,
                Some("internal_server_error") => FailureKind::Server,
                _ => FailureKind::Other,
            };
            vec![Observation::ApiError(class)]
        }
        Some(_) => vec![Observation::TurnInProgress],
        None => Vec::new(),
    }
}
