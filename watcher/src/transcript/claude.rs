//! Claude Code's session JSONL: one entry per line, `type` `user`, `assistant`, `system` and
//! a dozen kinds of metadata (`summary`, `file-history-snapshot`, `api-request-blob`,
//! `attachment`, …) that say nothing about the turn and are skipped.
//!
//! What 2.1.332 writes, and what each means here:
//! * a `user` entry with the human's prompt: [`Observation::TurnStarted`] (not `isMeta`, not
//!   a compaction summary, not a tool result);
//! * on Esc while a response streams: the partial `assistant` entry, then a `user` entry whose
//!   whole text is `[Request interrupted by user]`: [`Interrupt::Turn`];
//! * on Esc at a permission dialog: a `user` `tool_result` with top-level
//!   `toolDenialKind: "user-rejected"`, then a `user` entry `[Request interrupted by user for
//!   tool use]`: [`Interrupt::ToolUse`];
//! * an `assistant` entry with `isApiErrorMessage: true` and `error` (`rate_limit`,
//!   `server_error` with `apiErrorStatus` 529, …): [`Observation::ApiError`];
//! * an `assistant` entry's `message.usage.output_tokens` per `message.id`, and its
//!   `stop_reason` (`end_turn`: the turn's last entry; `tool_use` or none: it goes on).
//!
//! * a `system` entry `subtype: "turn_duration"`: the turn ended normally.
//!
//! Entries of a subagent (`isSidechain: true`) are skipped: a subagent never changes its
//! parent's state.

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Interrupt, Observation, class_of_status, text};

/// The whole text of the `user` entry Claude writes when the human stops a running turn.
pub(crate) const INTERRUPTED_TURN: &str = "[Request interrupted by user]";
/// The whole text of the `user` entry Claude writes when the human refuses a tool use.
pub const INTERRUPTED_TOOL_USE: &str = "[Request interrupted by user for tool use]";

pub(super) fn read(entry: &Value) -> (Option<String>, Vec<Observation>) {
    let session = text(entry, "sessionId").map(str::to_owned);
    if entry.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return (session, Vec::new());
    }
    let observations = match text(entry, "type") {
        Some("user") => user(entry),
        Some("assistant") => assistant(entry),
        Some("system") => system(entry),
        _ => Vec::new(),
    };
    (session, observations)
}

fn user(entry: &Value) -> Vec<Observation> {
    let Some(message) = entry.get("message").filter(|m| text(m, "role") == Some("user")) else {
        return Vec::new();
    };
    if text(entry, "toolDenialKind") == Some("user-rejected") {
        return vec![Observation::Interrupted(Interrupt::ToolUse)];
    }
    let flag = |key: &str| entry.get(key).and_then(Value::as_bool) == Some(true);
    let content = message.get("content");
    // The message's text when it is all text: a string, or text blocks only.
    let whole_text = match content {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(blocks))
            if !blocks.is_empty() && blocks.iter().all(|b| text(b, "type") == Some("text")) =>
        {
            Some(blocks.iter().filter_map(|b| text(b, "text")).collect::<Vec<_>>().join(""))
        }
        _ => None,
    };
    match whole_text.as_deref().map(str::trim) {
        Some(INTERRUPTED_TURN) => return vec![Observation::Interrupted(Interrupt::Turn)],
        Some(INTERRUPTED_TOOL_USE) => return vec![Observation::Interrupted(Interrupt::ToolUse)],
        _ => {}
    }
    let tool_result = matches!(content, Some(Value::Array(blocks))
        if blocks.iter().any(|b| text(b, "type") == Some("tool_result")));
    if tool_result {
        return vec![Observation::TurnInProgress];
    }
    if flag("isMeta") || flag("isCompactSummary") || whole_text.is_none() {
        return Vec::new();
    }
    vec![Observation::TurnStarted]
}

fn assistant(entry: &Value) -> Vec<Observation> {
    if entry.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        let status = entry.get("apiErrorStatus").and_then(Value::as_u64);
        let class = match (text(entry, "error"), status) {
            (_, Some(529)) => FailureKind::Overloaded,
            (Some("rate_limit"), _) => FailureKind::RateLimit,
            (Some("billing_error"), _) => FailureKind::Billing,
            (Some("authentication_failed" | "oauth_org_not_allowed"), _) => FailureKind::Auth,
            (Some("overloaded"), _) => FailureKind::Overloaded,
            (Some("server_error"), _) => FailureKind::Server,
            (_, Some(status)) => class_of_status(status).unwrap_or(FailureKind::Other),
            _ => FailureKind::Other,
        };
        return vec![Observation::ApiError(class)];
    }
    let Some(message) = entry.get("message") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(tokens) =
        message.get("usage").and_then(|u| u.get("output_tokens")).and_then(Value::as_u64)
    {
        out.push(Observation::OutputTokens {
            message: text(message, "id").map(str::to_owned),
            tokens,
        });
    }
    out.push(match text(message, "stop_reason") {
        Some("end_turn" | "stop_sequence" | "max_tokens" | "refusal") => Observation::TurnFinished,
        _ => Observation::TurnInProgress,
    });
    out
}

fn system(entry: &Value) -> Vec<Observation> {
    // `turn_duration` closes a turn that ended normally (none after an interrupt, a denial or
    // an API error).
    if text(entry, "subtype") == Some("turn_duration") {
        return vec![Observation::TurnFinished];
    }
    if text(entry, "subtype") != Some("api_error") {
        return Vec::new();
    }
    let status = entry
        .get("error")
        .and_then(|e| e.get("status"))
        .or_else(|| entry.get("status"))
        .and_then(Value::as_u64);
    vec![Observation::ApiError(status.and_then(class_of_status).unwrap_or(FailureKind::Other))]
}
