//! Qwen Code's chat JSONL (`projects/<cwd>/chats/<session>.jsonl`): one record per line, each
//! naming its session (`sessionId`), by `type`:
//! * `user`: [`Observation::TurnStarted`];
//! * `assistant`, `tool_result`: the turn goes on;
//! * `system` with `subtype` `ui_telemetry`, by its `systemPayload.uiEvent["event.name"]`:
//!   `qwen-code.api_error` (written for every failed model request, retried or not, while no
//!   hook fires): [`Observation::ApiError`], classed by its `status_code`;
//!   `qwen-code.api_response`: [`Observation::ResponseArrived`] (a retry went through), with
//!   its `output_token_count`; written about a second after the turn's last hook, it never
//!   says the turn goes on.
//!
//! Other `system` records (snapshots, tool-call telemetry) say nothing here. 0.24.4 writes no
//! entry for an Esc: its `Notification(idle_prompt)` hook says the prompt is back.

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Observation, class_of_status, text};

/// The `uiEvent` name of a failed model request.
pub(crate) const API_ERROR: &str = "qwen-code.api_error";
/// The `uiEvent` name of a model response.
pub(crate) const API_RESPONSE: &str = "qwen-code.api_response";

pub(super) fn read(record: &Value) -> (Option<String>, Vec<Observation>) {
    let session = text(record, "sessionId").map(str::to_owned);
    let observations = match text(record, "type") {
        Some("user") => vec![Observation::TurnStarted],
        Some("assistant" | "tool_result") => vec![Observation::TurnInProgress],
        Some("system") if text(record, "subtype") == Some("ui_telemetry") => {
            telemetry(record.pointer("/systemPayload/uiEvent").unwrap_or(&Value::Null))
        }
        _ => Vec::new(),
    };
    (session, observations)
}

fn telemetry(event: &Value) -> Vec<Observation> {
    match text(event, "event.name") {
        Some(API_ERROR) => {
            let class = event
                .get("status_code")
                .and_then(Value::as_u64)
                .and_then(class_of_status)
                .unwrap_or(FailureKind::Other);
            vec![Observation::ApiError(class)]
        }
        Some(API_RESPONSE) => {
            let mut out = vec![Observation::ResponseArrived];
            if let Some(tokens) = event.get("output_token_count").and_then(Value::as_u64) {
                out.push(Observation::OutputTokens { message: None, tokens });
            }
            out
        }
        _ => Vec::new(),
    }
}
