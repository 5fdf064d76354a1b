//! What a session looks like at a given time: the state with staleness applied, and why.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::canonical::Event;
use crate::units::{format_duration, rfc3339};

use super::{Pending, RepeatedCall, Snapshot, StateKind, TodoItem, TranscriptView};

/// The event behind a state, and the rule that read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evidence {
    /// The canonical kind.
    pub kind: String,
    /// The native event name.
    pub native: Option<String>,
    /// The event's `seq`.
    pub seq: u64,
    /// The event file.
    pub file: String,
    /// When the relay ran.
    pub ts_ns: u64,
    /// The state rule applied (borrowed from the rules table; owned when read back from the
    /// wire).
    pub rule: Cow<'static, str>,
    /// The profile rule that produced the canonical event.
    pub mapped_by: String,
}

impl Evidence {
    pub(super) fn of(event: &Event, rule: &'static str) -> Evidence {
        Evidence {
            kind: event.kind.name().to_owned(),
            native: event.native.clone(),
            seq: event.source.seq,
            file: event.source.file.clone(),
            ts_ns: event.ts_ns,
            rule: Cow::Borrowed(rule),
            mapped_by: event.rule.clone(),
        }
    }
}

/// One step of a session's history, for `explain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Transition {
    /// The event and the rule.
    pub evidence: Evidence,
    /// The state entered, when the event changed it.
    pub state: Option<StateKind>,
    /// The epoch after the event.
    pub epoch: u64,
}

/// A state that went stale: the CLI can leave it without any event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stale {
    /// The state the events last said.
    pub was: StateKind,
    /// The profile hole that makes it stale.
    pub hole: String,
    /// Why.
    pub because: String,
    /// Silence allowed in that state, in milliseconds.
    pub after_ms: u64,
    /// Where that window comes from: `profile` (the hole's `stale-after`), or the policy key
    /// that set it (`stale.<state>`, `stale.<cli>.<state>`).
    #[serde(default = "from_profile")]
    pub set_by: String,
}

pub(super) fn from_profile() -> String {
    "profile".into()
}

/// A session at a given time, in its wire form (`status --json`, `serve`, a decision's
/// evidence): a [`Snapshot`] with its state's reason and its input slot written as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct View {
    /// The CLI's session id.
    pub session_id: Option<String>,
    /// The orchestrator's tag.
    pub tag: Option<String>,
    /// The host it runs on, for another host's session (a central fed through NATS names it
    /// by the subject its events arrived on); `null` for the local events directory's.
    #[serde(default)]
    pub host: Option<String>,
    /// The profile (CLI) name.
    pub cli: String,
    /// The working directory the CLI reported.
    pub cwd: Option<String>,
    /// The state, after staleness.
    pub state: StateKind,
    /// Its reason: the wait reason, the error class, why it is unknown.
    pub detail: Option<String>,
    /// When the state began (RFC 3339, UTC).
    pub since: String,
    /// When the state began, in nanoseconds since the Unix epoch.
    pub since_ns: u64,
    /// How long it has lasted, in milliseconds.
    pub age_ms: u64,
    /// How long it has lasted, for people.
    pub age: String,
    /// The tracker's generation.
    pub generation: u64,
    /// The session's epoch.
    pub epoch: u64,
    /// The last applied `seq`.
    pub seq: u64,
    /// Set by an event of this generation; `false` means replayed history, shown but never
    /// authorizing anything.
    pub authoritative: bool,
    /// The opposite of `authoritative`, spelled out for readers.
    pub replayed: bool,
    /// Not stale.
    pub fresh: bool,
    /// Why the state reads `unknown` although events said otherwise.
    pub stale: Option<Stale>,
    /// How long the session has been `unknown`, in milliseconds.
    pub unknown_for_ms: Option<u64>,
    /// What the last `stop` said was still to come.
    pub pending: Pending,
    /// The open items of the session's own task list (`pending` or `in_progress`).
    pub open_todos: Vec<TodoItem>,
    /// The run of identical consecutive tool calls of the current (or last) turn, when it is
    /// longer than one call.
    pub repeated_call: Option<RepeatedCall>,
    /// The event and rule that set the state.
    pub evidence: Evidence,
    /// The last event seen for this session (applied or not).
    pub last_event: Evidence,
    /// The host CLI's pid, when known.
    pub host_pid: Option<u32>,
    /// Whether an input slot could be taken now (and why not).
    pub input: String,
    /// What hookline read in the session's transcript, when it read it: the source of a
    /// state whose evidence `kind` is `transcript`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptView>,
}

impl From<&Snapshot> for View {
    /// The wire form of a snapshot: the typed state and input written as words.
    fn from(s: &Snapshot) -> View {
        let state = s.state.kind();
        View {
            session_id: s.session_id.clone(),
            tag: s.tag.clone(),
            host: s.host.clone(),
            cli: s.cli.clone(),
            cwd: s.cwd.clone(),
            state,
            detail: s.detail(),
            since: rfc3339(s.since_ns),
            since_ns: s.since_ns,
            age_ms: s.age_ms(),
            age: s.age(),
            generation: s.generation,
            epoch: s.epoch,
            seq: s.seq,
            authoritative: s.authoritative,
            replayed: !s.authoritative,
            fresh: s.stale.is_none(),
            stale: s.stale.clone(),
            unknown_for_ms: (state == StateKind::Unknown).then_some(s.age_ms()),
            pending: s.pending.clone(),
            open_todos: s.open_todos.clone(),
            repeated_call: s.repeated_call.clone().filter(|run| run.count > 1),
            evidence: s.evidence.clone(),
            last_event: s.last_event.clone(),
            host_pid: s.host_pid,
            input: s.input.to_string(),
            transcript: s.transcript.clone(),
        }
    }
}

impl Stale {
    /// The `detail` of a state that went stale, for people.
    pub fn detail(&self) -> String {
        format!(
            "stale: {} for over {}{} with no event ({})",
            self.was.as_str(),
            format_duration(std::time::Duration::from_millis(self.after_ms)),
            match self.set_by.as_str() {
                "profile" => String::new(),
                key => format!(" (policy {key})"),
            },
            self.because
        )
    }
}

/// The input slot of one `idle`: the caller may deliver input once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Slot {
    /// The session.
    pub session_id: Option<String>,
    /// Its tag.
    pub tag: Option<String>,
    /// The generation that granted it.
    pub generation: u64,
    /// The epoch it was granted in.
    pub epoch: u64,
    /// The last applied `seq` when it was granted.
    pub seq: u64,
    /// When the idle it belongs to began, in nanoseconds since the Unix epoch: the slot is
    /// this idle's, and a lease on it ends with it.
    #[serde(default)]
    pub idle_since_ns: u64,
}

/// Why an input slot was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "refusal", rename_all = "snake_case")]
pub enum Refusal {
    /// No session has that id or tag.
    NoSuchSession {
        /// What was asked for.
        session: String,
    },
    /// The session is not explicitly idle.
    NotIdle {
        /// Its state.
        state: StateKind,
        /// The state's reason.
        detail: Option<String>,
    },
    /// The idle state comes from replayed history, not from an event of this generation: a
    /// reader that only replays history (a one-shot) never has a live one; a live generation
    /// (`live_since_ns`: a daemon restarted since the session went idle) waits for a live
    /// event.
    Replayed {
        /// When the live generation started, in nanoseconds since the Unix epoch; absent for
        /// a reader that only replays.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        live_since_ns: Option<u64>,
    },
    /// The state is stale.
    Stale {
        /// What it was.
        was: StateKind,
        /// The hole.
        hole: String,
    },
    /// This idle's slot was already taken.
    AlreadyTaken,
    /// The caller's view is from another generation.
    OtherGeneration {
        /// What the caller saw.
        expected: u64,
        /// The tracker's.
        current: u64,
    },
    /// The caller's view is from another epoch.
    OtherEpoch {
        /// What the caller saw.
        expected: u64,
        /// The session's.
        current: u64,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoSuchSession { session } => write!(f, "no session {session:?}"),
            Refusal::NotIdle { state, detail: Some(detail) } => {
                write!(f, "state is {} ({detail})", state.as_str())
            }
            Refusal::NotIdle { state, detail: None } => write!(f, "state is {}", state.as_str()),
            Refusal::Replayed { live_since_ns: None } => {
                write!(f, "idle comes from replayed history, not from an event of this generation")
            }
            Refusal::Replayed { live_since_ns: Some(started_ns) } => write!(
                f,
                "idle comes from replayed history: it predates this live generation (started \
                 {}: the daemon or serve restarted since), so no live event has made it \
                 eligible; the session's next turn end re-opens input (or a person typing into \
                 its pane, once that turn ends)",
                rfc3339(*started_ns)
            ),
            Refusal::Stale { was, hole } => write!(f, "{} is stale (hole {hole})", was.as_str()),
            Refusal::AlreadyTaken => write!(f, "this idle's input slot was already taken"),
            Refusal::OtherGeneration { expected, current } => {
                write!(f, "generation {expected} is not the current one ({current})")
            }
            Refusal::OtherEpoch { expected, current } => {
                write!(f, "epoch {expected} is not the current one ({current})")
            }
        }
    }
}

impl std::error::Error for Refusal {}
