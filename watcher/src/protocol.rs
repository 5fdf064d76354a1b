//! The `hookline serve` protocol, defined once: one JSON object per line on stdin, one JSON
//! object per line on stdout, each answering one request, in order, except that a request
//! that may wait (a `next_event` with a timeout, a `deliver`) is answered from a thread of its
//! own, after the requests sent meanwhile. `hookline daemon` speaks the same on each
//! connection of its socket ([`crate::daemon`]).
//!
//! Every type here derives both `Serialize` and `Deserialize`: the server writes the replies
//! and reads the requests with them, the Rust client ([`crate::daemon::Client`]) writes the
//! requests and reads the replies with them, and the JSON Schemas under `schemas/` are
//! generated from them. Nothing mirrors them by hand.
//!
//! Every request is an object with an `op` and an optional `id` (any JSON value, echoed in the
//! reply). Every reply carries `id`, `op` and `ok`; a request that cannot be read or answered
//! gets `{"id": …, "ok": false, "error": "why"}`. Unknown fields are errors, so a misspelt
//! evidence flag is never silently dropped. Sessions are named exactly (their id or tag): a
//! prefix could bind an act to another session; `lookup` is there to resolve what a person
//! typed.
//!
//! | op | request fields | reply fields |
//! |---|---|---|
//! | `hello` | — | `protocol`, `version`, `generation`, `started_ns`, `events_dir`, `journal`, `policy`, `watching` |
//! | `decide` | `session`, `question`, optional `pane`, `transcript`, `window_dead`, `expect`, `peek`, `tmux` `{target, socket}` (the pane is read and its evidence added) | `decision` (see [`Decision`]; an allowed `input` or `nudge` carries its `lease`, unless `peek`) |
//! | `take_input_slot` | `session`, optional `expect` `{generation, epoch}` | `granted`, then `slot` and `lease`, or `refusal` and `reason` |
//! | `release` | `lease` | `released` (`freed` or `void`), or an error for an unknown or spent lease |
//! | `leases` | — | `leases`: every lease held |
//! | `state` | `session` | `view` (or `null` when no event was seen for it) |
//! | `sessions` | — | `sessions`: every view, most recent first |
//! | `lookup` | `session` (what a person typed) | `found` (`exact`, `prefix`, `ambiguous`, `none`), `name`, `candidates`, `similar` |
//! | `next_event` | `session`, optional `timeout_ms` (default 0, at most 600000), `after_ns` | `event` (or `null`), `timed_out`, `dropped`, `view` |
//! | `deliver` | `session`, `tmux` `{target, socket}`, `text` (optional for a nudge), optional `question` (`input`, `nudge`), `lease`, `wait_ms`, `confirm_timeout_ms`, `heal_after_ms` | see [`DeliverAnswer`] |
//! | `reload` | — | `policy`, `profiles`: the policy and profiles in force from now on |
//! | `changes` | optional `after`, `timeout_ms`, `sessions` | `generation`, `last`, `changes` (each `seq`, `event`, `view`), `missed`, and `sessions` when asked for |
//! | `explain` | `session` | `view` (or `null`), `transitions`: the session's last transitions, oldest first |
//!
//! `changes` is how a display follows a server (`hookline top`, `tmux`, `notify` and `web` read
//! a daemon with it): every live event applied and every transition a transcript made, each
//! numbered in one feed with the session's view right after it. Without `after` it hands out
//! nothing and says where the feed is (`last`); with it, the changes after that one, waiting up
//! to `timeout_ms` for the first. Up to [`FEED_LEN`] are kept; `missed` counts those a caller
//! fell too far behind to get. Nothing it shows takes a slot or counts toward anything.
//!
//! `next_event` hands out, oldest first and once each, the canonical events of that session
//! that arrived since the server started (up to [`QUEUE_PER_SESSION`] per session are kept;
//! `dropped` counts the ones lost before they were asked for); with `after_ns`, those that
//! arrived (relay time) before it are passed over. It waits at most `timeout_ms` for one.
//!
//! `deliver` asks the `input` (or `nudge`) decision with the pane's evidence, waiting up to
//! `wait_ms` for an allow, under the caller's `lease` or a lease of its own; it types the text
//! into the pane and waits for the `turn_start` that confirms it ([`crate::deliver`]). A
//! delivery whose connection closes before typing starts types nothing and gives back the
//! lease it took.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::Event;
use crate::decide::{
    Action, Ask, CallerEvidence, Decision, Lease, LeaseId, PaneEvidence, Question, Released,
    Signal, TranscriptEvidence, Verdict,
};
use crate::deliver::{Sent, TurnStarted};
pub use crate::pane::TmuxPane;
use crate::state::{Expect, Refusal, Slot, StateKind, Transition, View};
use crate::vocab::RuleId;

/// The protocol's version, in `hello`'s reply.
pub const PROTOCOL_VERSION: u32 = 3;
/// Events kept per session for `next_event`.
pub const QUEUE_PER_SESSION: usize = 256;
/// Changes kept for `changes`.
pub const FEED_LEN: usize = 1024;
/// The longest `next_event` wait.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// The longest request line.
pub const MAX_LINE: usize = 1 << 20;

/// A request, without its `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Request {
    /// Who is serving.
    Hello(NoFields),
    /// A decision.
    Decide(DecideRequest),
    /// Take a session's input slot directly, as a lease.
    TakeInputSlot(SlotRequest),
    /// Give a lease back.
    Release(LeaseRequest),
    /// The leases held.
    Leases(NoFields),
    /// A session's view.
    State(SessionRequest),
    /// Every session's view.
    Sessions(NoFields),
    /// What a name a person typed names.
    Lookup(SessionRequest),
    /// The next canonical event of a session.
    NextEvent(NextRequest),
    /// Type a text into a session's pane, once allowed, and confirm it.
    Deliver(DeliverRequest),
    /// Read the policy and the profiles again, keeping the live generation.
    Reload(NoFields),
    /// What changed since a change the caller saw (display only).
    Changes(ChangesRequest),
    /// A session's view and its last transitions (display only).
    Explain(SessionRequest),
}

/// `changes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChangesRequest {
    /// The last change the caller has (a previous answer's `last`); without it, nothing is
    /// handed out and the answer says where the feed is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
    /// How long to wait for a change after `after`, in milliseconds (default 0). At most
    /// [`MAX_WAIT`].
    #[serde(default)]
    pub timeout_ms: u64,
    /// Also every session's view, as `sessions` answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sessions: bool,
}

/// No fields beyond `op` and `id`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// `state`, `lookup`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// A session id or tag.
    pub session: String,
}

/// `decide`: the question, the caller's evidence, and the pane to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DecideRequest {
    /// A session id or tag, exactly.
    pub session: String,
    /// The question.
    pub question: Question,
    /// What the caller's pane heuristics see (can only make the answer more careful).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<PaneEvidence>,
    /// What the caller reads in the transcript (can only make the answer more careful).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptEvidence>,
    /// The caller reports the session's window dead: a completion signal for `crashed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_dead: Option<bool>,
    /// The generation and epoch the caller last saw; the input slot is refused if they moved.
    #[serde(default, skip_serializing_if = "is_default")]
    pub expect: Expect,
    /// Answer without taking anything: no slot, no lease, no consult, nothing counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub peek: bool,
    /// The session's tmux pane: the server reads it with the patterns of the session's CLI
    /// and adds what it shows to `pane` before deciding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux: Option<TmuxPane>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl DecideRequest {
    /// A request for `ask`, with the pane to read.
    pub fn new(ask: &Ask, tmux: Option<TmuxPane>) -> DecideRequest {
        DecideRequest {
            session: ask.session.clone(),
            question: ask.question,
            pane: ask.pane.clone(),
            transcript: ask.transcript,
            window_dead: ask.window_dead,
            expect: ask.expect,
            peek: ask.peek,
            tmux,
        }
    }

    /// The question, as the decider takes it.
    pub fn ask(&self) -> Ask {
        let caller = CallerEvidence {
            pane: self.pane.clone(),
            transcript: self.transcript,
            window_dead: self.window_dead,
        };
        let mut ask = Ask::new(&self.session, self.question).expect(self.expect).with(caller);
        ask.peek = self.peek;
        ask
    }
}

/// `take_input_slot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SlotRequest {
    /// A session id or tag, exactly.
    pub session: String,
    /// The generation and epoch the caller saw.
    #[serde(default)]
    pub expect: Expect,
}

/// `release`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    /// The lease's id.
    pub lease: LeaseId,
}

/// `next_event`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NextRequest {
    /// A session id or tag, exactly (it need not have any event yet).
    pub session: String,
    /// How long to wait, in milliseconds.
    #[serde(default)]
    pub timeout_ms: u64,
    /// Pass over the queued events the relay wrote before this instant (nanoseconds since
    /// the Unix epoch): an orchestrator started late acts only on what happens from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ns: Option<u64>,
}

/// `deliver`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliverRequest {
    /// A session id or tag, exactly.
    pub session: String,
    /// The session's pane, on the caller's tmux server.
    pub tmux: TmuxPane,
    /// The text (checked by [`crate::deliver::check_text`] before anything is asked). Absent
    /// for a nudge: the `nudge_text` of the allowed `nudge` is typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The question whose allow the typing needs: `input` (the default) or `nudge`.
    #[serde(default = "input", skip_serializing_if = "is_input")]
    pub question: Question,
    /// A lease the caller holds on the session's slot (from an allowed `decide`); without
    /// one the delivery takes its own, and gives it back if it ends before typing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseId>,
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

fn input() -> Question {
    Question::Input
}

fn is_input(question: &Question) -> bool {
    *question == Question::Input
}

impl Request {
    /// Whether answering may wait: a `next_event` with a `timeout_ms` above 0, and every
    /// `deliver`.
    pub fn may_wait(&self) -> bool {
        match self {
            Request::NextEvent(NextRequest { timeout_ms, .. })
            | Request::Changes(ChangesRequest { timeout_ms, .. }) => *timeout_ms > 0,
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
            Request::Release(_) => Op::Release,
            Request::Leases(_) => Op::Leases,
            Request::State(_) => Op::State,
            Request::Sessions(_) => Op::Sessions,
            Request::Lookup(_) => Op::Lookup,
            Request::NextEvent(_) => Op::NextEvent,
            Request::Deliver(_) => Op::Deliver,
            Request::Reload(_) => Op::Reload,
            Request::Changes(_) => Op::Changes,
            Request::Explain(_) => Op::Explain,
        }
    }

    /// The request as one line, with its `id`, without the newline.
    pub fn to_line(&self, id: &Value) -> String {
        let mut value = serde_json::to_value(self).expect("a request is JSON");
        if let Some(object) = value.as_object_mut() {
            object.insert("id".into(), id.clone());
        }
        value.to_string()
    }
}

/// A request's operation, echoed in its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Op {
    /// `hello`.
    Hello,
    /// `decide`.
    Decide,
    /// `take_input_slot`.
    TakeInputSlot,
    /// `release`.
    Release,
    /// `leases`.
    Leases,
    /// `state`.
    State,
    /// `sessions`.
    Sessions,
    /// `lookup`.
    Lookup,
    /// `next_event`.
    NextEvent,
    /// `deliver`.
    Deliver,
    /// `reload`.
    Reload,
    /// `changes`.
    Changes,
    /// `explain`.
    Explain,
}

impl Op {
    /// Every operation, in the table's order.
    pub const ALL: [Op; 13] = [
        Op::Hello,
        Op::Decide,
        Op::TakeInputSlot,
        Op::Release,
        Op::Leases,
        Op::State,
        Op::Sessions,
        Op::Lookup,
        Op::NextEvent,
        Op::Deliver,
        Op::Reload,
        Op::Changes,
        Op::Explain,
    ];

    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Hello => "hello",
            Op::Decide => "decide",
            Op::TakeInputSlot => "take_input_slot",
            Op::Release => "release",
            Op::Leases => "leases",
            Op::State => "state",
            Op::Sessions => "sessions",
            Op::Lookup => "lookup",
            Op::NextEvent => "next_event",
            Op::Deliver => "deliver",
            Op::Reload => "reload",
            Op::Changes => "changes",
            Op::Explain => "explain",
        }
    }
}

/// Reads one request line: its `id` (or `null`) and the request, or the error reply saying why
/// not (with the `id` when there was one).
#[allow(clippy::result_large_err)] // the error is the reply itself, sent at once
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
            None => {
                let ops: Vec<&str> = Op::ALL.iter().map(|op| op.as_str()).collect();
                format!("missing \"op\": one of {}", ops.join(", "))
            }
            Some(op) => format!("bad {op} request: {e}"),
        };
        Reply::error(id.clone(), None, why)
    })?;
    Ok((id, request))
}

/// One reply line: the request's `id`, its `op` (when it was read), `ok`, then the answer's
/// fields or the `error`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Reply {
    /// The request's `id`, or `null`.
    pub id: Value,
    /// The request's operation, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    /// Whether the request was answered.
    pub ok: bool,
    #[serde(flatten)]
    body: Body,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
enum Body {
    Error { error: String },
    Answer(Answer),
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

    /// The error, when the request was not answered.
    pub fn error_text(&self) -> Option<&str> {
        match &self.body {
            Body::Error { error } => Some(error),
            Body::Answer(_) => None,
        }
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

/// The fields of an answer, after `id`, `op` and `ok`: one type per operation, each read by
/// the client as itself ([`crate::daemon::Client`] knows which op it asked).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
#[non_exhaustive]
pub enum Answer {
    /// `hello`.
    Hello(Box<Hello>),
    /// `decide`.
    Decide(DecideAnswer),
    /// `take_input_slot`.
    TakeInputSlot(Box<SlotAnswer>),
    /// `release`.
    Release(ReleaseAnswer),
    /// `leases`.
    Leases(LeasesAnswer),
    /// `state`.
    State(StateAnswer),
    /// `sessions`.
    Sessions(SessionsAnswer),
    /// `lookup`.
    Lookup(LookupAnswer),
    /// `next_event`.
    NextEvent(NextAnswer),
    /// `deliver`.
    Deliver(Box<DeliverAnswer>),
    /// `reload`.
    Reload(ReloadAnswer),
    /// `changes`.
    Changes(ChangesAnswer),
    /// `explain`.
    Explain(ExplainAnswer),
}

/// `changes`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ChangesAnswer {
    /// The tracker's generation: a different one than before means the server restarted,
    /// and the changes before are not this feed's.
    pub generation: u64,
    /// The last change in the feed: the `after` of the next request.
    pub last: u64,
    /// The changes after `after`, oldest first.
    pub changes: Vec<Change>,
    /// Changes after `after` no longer kept: the caller fell more than [`FEED_LEN`] behind.
    pub missed: u64,
    /// Every session's view now, most recent first, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<View>>,
}

/// One change of a server's sessions: a live event applied, or a transition a transcript made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Change {
    /// Its number in the feed, from 1.
    pub seq: u64,
    /// The event applied; `null` when the session's transcript changed its state.
    pub event: Option<Box<Event>>,
    /// The session's view right after.
    pub view: Option<Box<View>>,
}

/// `explain`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ExplainAnswer {
    /// The session's view, `None` when no event was seen for it.
    pub view: Option<Box<View>>,
    /// Its last transitions (each event, the rule that read it, the state it entered), oldest
    /// first.
    pub transitions: Vec<Transition>,
}

/// `hello`'s answer: who is serving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Hello {
    /// [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// hookline's version.
    pub version: String,
    /// The tracker's generation.
    pub generation: u64,
    /// When the generation started, in nanoseconds since the Unix epoch.
    pub started_ns: u64,
    /// The events directory.
    pub events_dir: PathBuf,
    /// The journal, when there is one.
    pub journal: Option<PathBuf>,
    /// The policy in force, key by key (`table.key` → value, as `docs/policy.md` lists them).
    pub policy: serde_json::Map<String, Value>,
    /// Whether events still arrive.
    pub watching: bool,
}

impl Hello {
    /// How long a `decide` may take beyond a client's reply timeout: the classifier consult's
    /// `classifier.timeout` when the policy names a classifier.
    pub fn consult_allowance(&self) -> Duration {
        let configured = self.policy.get("classifier.command").is_some_and(|c| !c.is_null());
        match self.policy.get("classifier.timeout").and_then(Value::as_str) {
            Some(text) if configured => crate::units::parse_duration(text).unwrap_or_default(),
            _ => Duration::ZERO,
        }
    }
}

/// `decide`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct DecideAnswer {
    /// The decision; an allowed `input` or `nudge` carries the `lease` it took.
    pub decision: Box<Decision>,
}

/// `take_input_slot`'s answer: the slot and its lease, or the refusal and its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SlotAnswer {
    /// Whether the slot was granted.
    pub granted: bool,
    /// The slot granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// The lease on it: give it back with `release` if nothing is typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseId>,
    /// Why it was refused, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
}

impl From<Result<Lease, Refusal>> for SlotAnswer {
    fn from(result: Result<Lease, Refusal>) -> SlotAnswer {
        match result {
            Ok(lease) => SlotAnswer {
                granted: true,
                slot: Some(lease.slot),
                lease: Some(lease.id),
                reason: None,
                refusal: None,
            },
            Err(refusal) => SlotAnswer {
                granted: false,
                slot: None,
                lease: None,
                reason: Some(refusal.to_string()),
                refusal: Some(refusal),
            },
        }
    }
}

/// `release`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ReleaseAnswer {
    /// `freed` (the slot is free for the next caller) or `void` (the session had left that
    /// idle: nothing to free).
    pub released: Released,
}

/// `leases`' answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct LeasesAnswer {
    /// Every lease held, oldest first.
    pub leases: Vec<Lease>,
}

/// `state`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct StateAnswer {
    /// The session's view, `None` when no event was seen for it.
    pub view: Option<Box<View>>,
}

/// `sessions`' answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SessionsAnswer {
    /// Every view, most recent first.
    pub sessions: Vec<View>,
}

/// How a name a person typed names a session ([`LookupAnswer::found`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Found {
    /// A session's id or tag, whole.
    Exact,
    /// The start of one session's id or tag, and of no other's.
    Prefix,
    /// The start of several sessions' ids or tags: see `candidates`.
    Ambiguous,
    /// No session's: see `similar`.
    None,
}

/// `lookup`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct LookupAnswer {
    /// How the name names a session.
    pub found: Found,
    /// The session's exact name (its session id, else its tag), when one session is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The sessions a prefix names (one for `prefix`, several for `ambiguous`), for people
    /// (`<id> (<cli>, tag <tag>)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// Known sessions whose names resemble it, for people, when none has it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<String>,
}

/// `next_event`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NextAnswer {
    /// The session's oldest event not handed out yet, `None` when the wait timed out.
    pub event: Option<Box<Event>>,
    /// Whether the wait ended with nothing to hand out.
    pub timed_out: bool,
    /// The session's state changed with no event: its transcript made it more careful (an
    /// Esc interrupt, an API error). `event` is `null`; `view` has the transcript as its
    /// evidence.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transcript: bool,
    /// Events of the session lost before they were asked for, since the last one handed out.
    pub dropped: u64,
    /// The session's view.
    pub view: Option<Box<View>>,
}

/// `reload`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ReloadAnswer {
    /// The policy in force from now on, key by key.
    pub policy: serde_json::Map<String, Value>,
    /// The profiles in force from now on, by name.
    pub profiles: Vec<String>,
    /// What the reload said about the files it read (overlay warnings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How a `deliver` ended.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliverOutcome {
    /// Typed, and a `turn_start` of the session confirmed it: exit 0.
    Confirmed,
    /// Nothing was typed (the decision withheld input, the pane refused it, the requester
    /// went away before typing started): exit 1.
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
#[non_exhaustive]
pub enum RefusedBy {
    /// The `input` (or `nudge`) decision withheld it (its rule is the decision's), or the
    /// session has no such name.
    Decision,
    /// The pane, read after the allow ([`crate::deliver::Rule`]).
    Pane,
    /// The requester went away before typing started.
    Cancelled,
}

/// The decision a delivery asked for, in brief.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DecisionBrief {
    /// The question asked: `input` or `nudge`.
    #[serde(default = "input")]
    pub question: Question,
    /// `allow` or `withhold`.
    pub verdict: Verdict,
    /// `proceed`, or what to do instead.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub rule: RuleId,
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
            question: d.question,
            verdict: d.verdict,
            action: d.action,
            signal: d.signal,
            rule: d.rule,
            reason: d.reason.clone(),
            slot: d.slot.clone(),
            state: d.state,
        }
    }
}

/// `deliver`'s answer.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeliverAnswer {
    /// How it ended.
    pub outcome: DeliverOutcome,
    /// Whether anything may have been typed: `false` only when nothing was.
    pub delivered: bool,
    /// Whether a structured event confirmed it.
    pub confirmed: bool,
    /// Whether the self-heal pressed Enter a second time.
    pub enter_resent: bool,
    /// The keys sent into the pane.
    #[serde(default)]
    pub sent: Sent,
    /// The pane typed into: its id on its tmux server (`%12`), resolved once before anything
    /// was sent; every key went to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    /// The text typed (the nudge text, for a nudge given none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The lease it typed under (consumed), or took and gave back (nothing typed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseId>,
    /// The decision.
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
