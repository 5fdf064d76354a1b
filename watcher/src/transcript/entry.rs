//! What one transcript line says: a closed set of [`Observation`]s, read by the line's format.
//!
//! Every reader matches an entry by its structure — its `type`, its role, the fields the CLI
//! sets on it — never by text found anywhere in the line: Claude Code writes an
//! `api-request-blob` entry that repeats an interrupt marker's text inside the request it
//! logs, and a session's own output can say anything. The one place text is compared is an
//! interrupt marker, and only as the whole text of a `user` entry's message.

use serde_json::Value;

use crate::units::parse_rfc3339;
use crate::vocab::{FailureKind, TranscriptFormat};

use super::{claude, codex, gemini, qwen};

/// How a turn was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interrupt {
    /// The human stopped the turn while it ran (Esc).
    Turn,
    /// The human refused a tool use at its permission dialog (Esc, or "no").
    ToolUse,
}

impl Interrupt {
    /// The word used in reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            Interrupt::Turn => "turn",
            Interrupt::ToolUse => "tool use",
        }
    }
}

/// One thing a transcript entry says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// The human's prompt: a new turn starts.
    TurnStarted,
    /// The turn goes on: assistant output, a tool call, a tool result.
    TurnInProgress,
    /// The human interrupted the turn.
    Interrupted(Interrupt),
    /// The turn ended on an API error of this class.
    ApiError(FailureKind),
    /// A model response arrived (a request went through, clearing an API error before it).
    /// It says nothing of whether the turn goes on: a CLI may write it after the turn's last
    /// hook (Qwen Code's `api_response` telemetry, about a second after its `Stop`).
    ResponseArrived,
    /// The turn's last entry: the model ended its turn.
    TurnFinished,
    /// Output tokens of one model response, as the CLI counts them. `message` names the
    /// response when the CLI writes one response over several entries (each repeating the
    /// usage): the last count of a message replaces its earlier ones.
    OutputTokens {
        /// The response's id, when the CLI gives one.
        message: Option<String>,
        /// Its output tokens.
        tokens: u64,
    },
}

/// One transcript line, read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    /// When the CLI wrote it (its own `timestamp`), in nanoseconds since the Unix epoch.
    pub ts_ns: Option<u64>,
    /// The session id the entry names, when it names one.
    pub session_id: Option<String>,
    /// What it says, in order. Empty for entries that say nothing hookline reads (metadata,
    /// request logs, snapshots).
    pub observations: Vec<Observation>,
}

/// Why a line was not read as an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// Not UTF-8.
    NotText,
    /// Not a JSON object.
    NotJson,
}

/// Reads one line of a transcript in `format`.
pub fn read(format: TranscriptFormat, line: &[u8]) -> Result<Entry, Unreadable> {
    let text = std::str::from_utf8(line).map_err(|_| Unreadable::NotText)?;
    let value: Value = serde_json::from_str(text).map_err(|_| Unreadable::NotJson)?;
    if !value.is_object() {
        return Err(Unreadable::NotJson);
    }
    let ts_ns = value.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
    let (session_id, observations) = match format {
        TranscriptFormat::ClaudeJsonl => claude::read(&value),
        TranscriptFormat::CodexRollout => codex::read(&value),
        TranscriptFormat::GeminiChats => gemini::read(&value),
        TranscriptFormat::QwenChats => qwen::read(&value),
    };
    Ok(Entry { ts_ns, session_id, observations })
}

/// A string field of an object.
pub(super) fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The error class of an HTTP status an API answered with.
pub(super) fn class_of_status(status: u64) -> Option<FailureKind> {
    Some(match status {
        429 => FailureKind::RateLimit,
        402 => FailureKind::Billing,
        401 | 403 => FailureKind::Auth,
        529 | 503 => FailureKind::Overloaded,
        500..=599 => FailureKind::Server,
        _ => return None,
    })
}
