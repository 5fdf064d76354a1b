//! The `hookline serve` protocol: one JSON object per line on stdin, one JSON object per line
//! on stdout, each answering one request: in order, except that `hookline serve` answers a
//! `next_event` that may wait from a thread of its own, after the requests sent meanwhile.
//!
//! Every request is an object with an `op` and an optional `id` (any JSON value, echoed in the
//! reply). Every reply carries `id`, `op` and `ok`; a request that cannot be read or answered
//! gets `{"id": …, "ok": false, "error": "why"}`. Unknown fields are errors, so a misspelt
//! evidence flag is never silently dropped.
//!
//! | op | request fields | reply fields |
//! |---|---|---|
//! | `hello` | — | `protocol`, `version`, `generation`, `started_ns`, `events_dir`, `journal`, `policy`, `watching` |
//! | `decide` | `session`, `question`, optional `pane`, `transcript`, `window_dead`, `expect` | `decision` (see [`Decision`](crate::decide::Decision)) |
//! | `take_input_slot` | `session`, optional `expect` `{generation, epoch}` | `granted`, then `slot`, or `refusal` and `reason` |
//! | `state` | `session` | `view` (or `null` when no event was seen for it) |
//! | `sessions` | — | `sessions`: every view, most recent first |
//! | `next_event` | `session`, optional `timeout_ms` (default 0, at most 600000) | `event` (or `null`), `timed_out`, `dropped`, `view` |
//!
//! `next_event` hands out, oldest first and once each, the canonical events of that session
//! that arrived since `serve` started (up to [`QUEUE_PER_SESSION`] per session are kept;
//! `dropped` counts the ones lost before they were asked for). It waits at most `timeout_ms`
//! for one; meanwhile events of every session keep flowing into the tracker, and
//! [`Shared::handle`](super::hub::Shared::handle) may be called from other threads for other requests.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::decide::Ask;
use crate::state::Expect;

/// The protocol's version, in `hello`'s reply.
pub const PROTOCOL_VERSION: u32 = 1;
/// Events kept per session for `next_event`.
pub const QUEUE_PER_SESSION: usize = 256;
/// The longest `next_event` wait.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// The longest request line.
pub const MAX_LINE: usize = 1 << 20;

/// A request, without its `id`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Who is serving.
    Hello(NoFields),
    /// A decision.
    Decide(Ask),
    /// Take a session's input slot directly.
    TakeInputSlot(SlotRequest),
    /// A session's view.
    State(SessionRequest),
    /// Every session's view.
    Sessions(NoFields),
    /// The next canonical event of a session.
    NextEvent(NextRequest),
}

/// No fields beyond `op` and `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// `state`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// A session id or tag.
    pub session: String,
}

/// `take_input_slot`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotRequest {
    /// A session id or tag.
    pub session: String,
    /// The generation and epoch the caller saw.
    #[serde(default)]
    pub expect: Expect,
}

/// `next_event`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextRequest {
    /// A session id or tag (it need not have any event yet).
    pub session: String,
    /// How long to wait, in milliseconds.
    #[serde(default)]
    pub timeout_ms: u64,
}

impl Request {
    /// Whether answering may wait: a `next_event` with a `timeout_ms` above 0.
    pub fn may_wait(&self) -> bool {
        matches!(self, Request::NextEvent(NextRequest { timeout_ms, .. }) if *timeout_ms > 0)
    }

    pub(super) fn op(&self) -> &'static str {
        match self {
            Request::Hello(_) => "hello",
            Request::Decide(_) => "decide",
            Request::TakeInputSlot(_) => "take_input_slot",
            Request::State(_) => "state",
            Request::Sessions(_) => "sessions",
            Request::NextEvent(_) => "next_event",
        }
    }
}

/// Reads one request line: its `id` (or `null`) and the request, or the `id` and why not.
pub fn parse(line: &str) -> Result<(Value, Request), (Value, String)> {
    let mut value: Value =
        serde_json::from_str(line).map_err(|e| (Value::Null, format!("not JSON: {e}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err((Value::Null, "a request must be a JSON object with an \"op\"".into()));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let op = object.get("op").cloned();
    let request = serde_json::from_value::<Request>(value).map_err(|e| {
        let why = match op {
            None => "missing \"op\": one of hello, decide, take_input_slot, state, sessions, \
                     next_event"
                .to_owned(),
            Some(op) => format!("bad {op} request: {e}"),
        };
        (id.clone(), why)
    })?;
    Ok((id, request))
}
