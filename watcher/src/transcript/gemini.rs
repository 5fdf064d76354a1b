//! Gemini CLI's chat JSONL (`chats/session-….jsonl`): a first record naming the session
//! (`sessionId`), then one message record per line with `type` `user`, `gemini`, `info`,
//! `error` or `warning`.
//! * `user`: [`Observation::TurnStarted`];
//! * `gemini`: the turn goes on, with `tokens.output` output tokens for that message (`id`);
//! * `error`: [`Observation::ApiError`] of class `other`.
//!
//! Gemini writes no entry that marks an interrupted or a finished turn: the transcript closes
//! no interrupt hole for it (its `AfterAgent` hook marks the turn's end).

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Observation, text};

pub(super) fn read(record: &Value) -> (Option<String>, Vec<Observation>) {
    let session = text(record, "sessionId").map(str::to_owned);
    let observations = match text(record, "type") {
        Some("user") => vec![Observation::TurnStarted],
        Some("gemini") => {
            let mut out = Vec::new();
            if let Some(tokens) =
                record.get("tokens").and_then(|t| t.get("output")).and_then(Value::as_u64)
            {
                let message = text(record, "id").map(str::to_owned);
                out.push(Observation::OutputTokens { message, tokens });
            }
            out.push(Observation::TurnInProgress);
            out
        }
        Some("error") => vec![Observation::ApiError(FailureKind::Other)],
        _ => Vec::new(),
    };
    (session, observations)
}
