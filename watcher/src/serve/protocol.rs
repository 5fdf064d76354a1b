//! The `hookline serve` protocol: one JSON object per line on stdin, one JSON object per line
//! on stdout, each answering one request: in order, except that `hookline serve` answers a
//! `next_event` that may wait from a thread of its own, after the requests sent meanwhile.
//! `hookline daemon` speaks the same on each connection of its socket ([`crate::daemon`]).
//!
//! Every request is an object with an `op` and an optional `id` (any JSON value, echoed in the
//! reply). Every reply carries `id`, `op` and `ok`; a request that cannot be read or answered
//! gets `{"id": …, "ok": false, "error": "why"}`. Unknown fields are errors, so a misspelt
//! evidence flag is never silently dropped.
//!
//! | op | request fields | reply fields |
//! |---|---|---|
//! | `hello` | — | `protocol`, `version`, `generation`, `started_ns`, `events_dir`, `journal`, `policy`, `watching` |
//! | `decide` | `session`, `question`, optional `pane`, `transcript`, `window_dead`, `expect`, `tmux` `{target, socket}` (the pane is read and its evidence added) | `decision` (see [`Decision`]) |
//! | `take_input_slot` | `session`, optional `expect` `{generation, epoch}` | `granted`, then `slot`, or `refusal` and `reason` |
//! | `state` | `session` | `view` (or `null` when no event was seen for it) |
//! | `sessions` | — | `sessions`: every view, most recent first |
//! | `next_event` | `session`, optional `timeout_ms` (default 0, at most 600000) | `event` (or `null`), `timed_out`, `dropped`, `view` |
//! | `deliver` | `session`, `tmux` `{target, socket}`, `text`, optional `wait_ms`, `confirm_timeout_ms`, `heal_after_ms` | see [`DeliverAnswer`] |
//!
//! `next_event` hands out, oldest first and once each, the canonical events of that session
//! that arrived since `serve` started (up to [`QUEUE_PER_SESSION`] per session are kept;
//! `dropped` counts the ones lost before they were asked for). It waits at most `timeout_ms`
//! for one; meanwhile events of every session keep flowing into the tracker, and
//! [`Shared::handle`](super::hub::Shared::handle) may be called from other threads for other requests.
//!
//! `deliver` asks the `input` decision (with the pane's evidence), waiting up to `wait_ms`
//! for an allow; with it (the slot is taken) it types the text into the pane and waits for the
//! `turn_start` that confirms it ([`crate::deliver`]). It is answered from a thread of its own,
//! like a waiting `next_event`, and holds no lock while it types or waits.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::Event;
use crate::decide::PaneEvidence;
use crate::decide::{Action, Ask, Decision, Policy, Signal, Verdict};
use crate::deliver::TurnStarted;
pub use crate::pane::TmuxPane;
use crate::state::{Expect, Refusal, Slot, StateKind, View};

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Type a text into a session's pane, once allowed, and confirm it.
    Deliver(DeliverRequest),
}

/// No fields beyond `op` and `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// `state`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// A session id or tag.
    pub session: String,
}

/// `take_input_slot`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NextRequest {
    /// A session id or tag (it need not have any event yet).
    pub session: String,
    /// How long to wait, in milliseconds.
    #[serde(default)]
    pub timeout_ms: u64,
}

/// `deliver`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliverRequest {
    /// A session id or tag.
    pub session: String,
    /// The session's pane.
    pub tmux: TmuxPane,
    /// The text (checked by [`crate::deliver::check_text`] before anything is asked).
    pub text: String,
    /// How long to wait for an allow, in milliseconds (default 0: ask once). At most
    /// [`MAX_WAIT`].
    #[serde(default)]
    pub wait_ms: u64,
    /// How long to wait for the confirming `turn_start` after the Enter [default 15 s].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_timeout_ms: Option<u64>,
    /// When the self-heal may press Enter once more, after the first [default 1.5 s].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal_after_ms: Option<u64>,
}

impl Request {
    /// Whether answering may wait: a `next_event` with a `timeout_ms` above 0, and every
    /// `deliver`.
    pub fn may_wait(&self) -> bool {
        match self {
            Request::NextEvent(NextRequest { timeout_ms, .. }) => *timeout_ms > 0,
            Request::Deliver(_) => true,
            _ => false,
        }
    }

    /// The request's operation.
    pub fn op(&self) -> Op {
        match self {
            Request::Hello(_) => Op::Hello,
            Request::Decide(_) => Op::Decide,
            Request::TakeInputSlot(_) => Op::TakeInputSlot,
            Request::State(_) => Op::State,
            Request::Sessions(_) => Op::Sessions,
            Request::NextEvent(_) => Op::NextEvent,
            Request::Deliver(_) => Op::Deliver,
        }
    }
}

/// A request's operation, echoed in its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `hello`.
    Hello,
    /// `decide`.
    Decide,
    /// `take_input_slot`.
    TakeInputSlot,
    /// `state`.
    State,
    /// `sessions`.
    Sessions,
    /// `next_event`.
    NextEvent,
    /// `deliver`.
    Deliver,
}

/// Reads one request line: its `id` (or `null`) and the request, or the error reply saying why
/// not (with the `id` when there was one).
pub fn parse(line: &str) -> Result<(Value, Request), Reply> {
    let mut value: Value = serde_json::from_str(line)
        .map_err(|e| Reply::error(Value::Null, None, format!("not JSON: {e}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err(Reply::error(
            Value::Null,
            None,
            "a request must be a JSON object with an \"op\"".into(),
        ));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let op = object.get("op").cloned();
    let request = serde_json::from_value::<Request>(value).map_err(|e| {
        let why = match op {
            None => "missing \"op\": one of hello, decide, take_input_slot, state, sessions, \
                     next_event, deliver"
                .to_owned(),
            Some(op) => format!("bad {op} request: {e}"),
        };
        Reply::error(id.clone(), None, why)
    })?;
    Ok((id, request))
}

/// One reply line: the request's `id`, its `op` (when it was read), `ok`, then the answer's
/// fields or the `error`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Reply {
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    op: Option<Op>,
    ok: bool,
    #[serde(flatten)]
    body: Body,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
enum Body {
    Answer(Answer),
    Error { error: String },
}

impl Reply {
    /// The answer to a request.
    pub fn answer(id: Value, op: Op, answer: Answer) -> Reply {
        Reply { id, op: Some(op), ok: true, body: Body::Answer(answer) }
    }

    /// A request that cannot be read (`op` is `None`) or answered, and why.
    pub fn error(id: Value, op: Option<Op>, error: String) -> Reply {
        Reply { id, op, ok: false, body: Body::Error { error } }
    }

    /// Whether the request was answered.
    pub fn is_ok(&self) -> bool {
        self.ok
    }

    /// The reply as one JSON line, without its newline. A reply that cannot be encoded becomes
    /// an error reply saying so.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            let error = format!("cannot encode the reply: {e}");
            serde_json::to_string(&Reply::error(self.id.clone(), self.op, error)).unwrap_or_else(
                |e| format!(r#"{{"id":null,"ok":false,"error":"cannot encode the reply: {e}"}}"#),
            )
        })
    }
}

/// The fields of an answer, after `id`, `op` and `ok`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Answer {
    /// `hello`.
    Hello(Box<Hello>),
    /// `decide`.
    Decide {
        /// The decision.
        decision: Box<Decision>,
    },
    /// `take_input_slot`.
    TakeInputSlot(Box<SlotAnswer>),
    /// `state`.
    State {
        /// The session's view, `None` when no event was seen for it.
        view: Option<Box<View>>,
    },
    /// `sessions`.
    Sessions {
        /// Every view, most recent first.
        sessions: Vec<View>,
    },
    /// `next_event`.
    NextEvent(NextAnswer),
    /// `deliver`.
    Deliver(Box<DeliverAnswer>),
}

/// `hello`'s answer: who is serving.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hello {
    /// [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// hookline's version.
    pub version: &'static str,
    /// The tracker's generation.
    pub generation: u64,
    /// When the generation started, in nanoseconds since the Unix epoch.
    pub started_ns: u64,
    /// The events directory.
    pub events_dir: PathBuf,
    /// The journal, when there is one.
    pub journal: Option<PathBuf>,
    /// The policy in force.
    pub policy: Policy,
    /// Whether events still arrive.
    pub watching: bool,
}

/// `take_input_slot`'s answer: the slot, or the refusal and its reason.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SlotAnswer {
    /// Whether the slot was granted.
    pub granted: bool,
    /// The slot granted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// Why it was refused, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
}

impl From<Result<Slot, Refusal>> for SlotAnswer {
    fn from(result: Result<Slot, Refusal>) -> SlotAnswer {
        match result {
            Ok(slot) => SlotAnswer { granted: true, slot: Some(slot), reason: None, refusal: None },
            Err(refusal) => SlotAnswer {
                granted: false,
                slot: None,
                reason: Some(refusal.to_string()),
                refusal: Some(refusal),
            },
        }
    }
}

/// `next_event`'s answer.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NextAnswer {
    /// The session's oldest event not handed out yet, `None` when the wait timed out.
    pub event: Option<Box<Event>>,
    /// Whether the wait ended without an event.
    pub timed_out: bool,
    /// Events of the session lost before they were asked for, since the last one handed out.
    pub dropped: u64,
    /// The session's view.
    pub view: Option<Box<View>>,
}

/// How a `deliver` ended.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliverOutcome {
    /// Typed, and a `turn_start` of the session confirmed it: exit 0.
    Confirmed,
    /// Nothing was typed (the decision withheld input, or the pane refused it): exit 1.
    Refused,
    /// Typed (or possibly typed), and no structured event confirmed it in time: exit 3.
    Unconfirmed,
}

impl DeliverOutcome {
    /// The exit code `hookline deliver` uses: 0 confirmed, 1 refused, 3 unconfirmed.
    pub fn exit_code(self) -> u8 {
        match self {
            DeliverOutcome::Confirmed => 0,
            DeliverOutcome::Refused => 1,
            DeliverOutcome::Unconfirmed => 3,
        }
    }

    /// The word used on the wire and in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliverOutcome::Confirmed => "confirmed",
            DeliverOutcome::Refused => "refused",
            DeliverOutcome::Unconfirmed => "unconfirmed",
        }
    }
}

/// What refused a delivery.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBy {
    /// The `input` decision withheld it (its rule is the decision's).
    Decision,
    /// The pane, read after the allow ([`crate::deliver::Rule`]).
    Pane,
}

/// The `input` decision a delivery asked for, in brief.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionBrief {
    /// `allow` or `withhold`.
    pub verdict: Verdict,
    /// `proceed`, or what to do instead.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule.
    pub rule: String,
    /// Why.
    pub reason: String,
    /// The input slot it took, when it allowed.
    pub slot: Option<Slot>,
    /// The session's state.
    pub state: Option<StateKind>,
}

impl From<&Decision> for DecisionBrief {
    fn from(d: &Decision) -> DecisionBrief {
        DecisionBrief {
            verdict: d.verdict,
            action: d.action,
            signal: d.signal,
            rule: d.rule.clone(),
            reason: d.reason.clone(),
            slot: d.slot.clone(),
            state: d.state,
        }
    }
}

/// `deliver`'s answer.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliverAnswer {
    /// How it ended.
    pub outcome: DeliverOutcome,
    /// Whether anything may have been typed: `false` only when nothing was.
    pub delivered: bool,
    /// Whether a structured event confirmed it.
    pub confirmed: bool,
    /// Whether the self-heal pressed Enter a second time.
    pub enter_resent: bool,
    /// The `input` decision.
    pub decision: DecisionBrief,
    /// What refused it, when it was refused.
    pub refused_by: Option<RefusedBy>,
    /// The rule that refused it (the decision's, or the pane's [`crate::deliver::Rule`]), when refused.
    pub rule: Option<String>,
    /// Why it was refused or is unconfirmed, for people.
    pub reason: Option<String>,
    /// From the request to the outcome, in milliseconds.
    pub elapsed_ms: u64,
    /// From the request to the allow, in milliseconds, when it was allowed: `elapsed_ms` minus
    /// this is the allow-to-outcome time (the pane's checks, typing, the confirmation).
    pub allowed_after_ms: Option<u64>,
    /// The `turn_start` that confirmed it.
    pub event: Option<TurnStarted>,
    /// What the pane showed before typing (several looks, combined).
    pub pane: Option<PaneEvidence>,
    /// What the composer held then.
    pub composer: Option<String>,
}
