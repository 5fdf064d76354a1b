//! Gemini CLI's chat JSONL (`chats/session-….jsonl`): a first record naming the session
//! (`sessionId`), then one message record per line with `type` `user`, `gemini`, `info`,
//! `error` or `warning`.
//! * `user`: [`Observation::TurnStarted`];
//! * `gemini`: the turn goes on, with `tokens.output` output tokens for that message (`id`);
//! * `info` whose whole `content` is `Request cancelled.` (what 0.61 writes on Esc):
//!   [`Interrupt::Turn`] (its `AfterAgent` hook fires too);
//! * `error`: [`Observation::ApiError`] of class `other`.
//!
//! `{"$set": …}` updates name no type and say nothing. 0.61 writes nothing for an API error
//! (it retries without end) and no entry that marks a finished turn (`AfterAgent` does).

use serde_json::Value;

use crate::vocab::FailureKind;

use super::entry::{Interrupt, Observation, text};

/// The whole `content` of the `info` record Gemini writes when the human cancels a turn.
pub const CANCELLED: &str = "Request cancelled.";

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
        Some("info") if text(record, "content") == Some(CANCELLED) => {
            vec![Observation::Interrupted(Interrupt::Turn)]
        }
        Some("error") => vec![Observation::ApiError(FailureKind::Other)],
        _ => Vec::new(),
    };
    (session, observations)
}
