//! What a session looks like at a given time: the state with staleness applied, and why.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::canonical::Event;
use crate::units::{format_age, format_duration, rfc3339};

use super::windows::WindowFrom;
use super::{Pending, Session, StateKind, Tracker};

/// The event behind a state, and the rule that read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// The state rule applied.
    pub rule: &'static str,
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
            rule,
            mapped_by: event.rule.clone(),
        }
    }
}

/// One step of a session's history, for `explain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

fn from_profile() -> String {
    "profile".into()
}

/// A session at a given time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct View {
    /// The CLI's session id.
    pub session_id: Option<String>,
    /// The orchestrator's tag.
    pub tag: Option<String>,
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
    /// The event and rule that set the state.
    pub evidence: Evidence,
    /// The last event seen for this session (applied or not).
    pub last_event: Evidence,
    /// The host CLI's pid, when known.
    pub host_pid: Option<u32>,
    /// Whether an input slot could be taken now (and why not).
    pub input: String,
}

impl View {
    pub(super) fn of(session: &Session, tracker: &Tracker, now_ns: u64) -> View {
        let current = &session.current;
        let profile = tracker.profiles.get(&session.key.cli);
        let silence = now_ns.saturating_sub(session.ts_ns.max(current.since_ns));
        let state = current.kind.as_str();
        let stale = profile.and_then(|p| {
            p.holes_in(state).find_map(|hole| {
                let (after, from) = tracker.stale.window(&p.name, state, hole.stale_after);
                let after = after?;
                (u128::from(silence) > after.as_nanos()).then(|| Stale {
                    was: current.kind,
                    hole: hole.id.clone(),
                    because: hole.description.clone(),
                    after_ms: after.as_millis() as u64,
                    set_by: match from {
                        WindowFrom::Profile => from_profile(),
                        WindowFrom::State => format!("stale.{state}"),
                        WindowFrom::Cli => format!("stale.{}.{state}", p.name),
                    },
                })
            })
        });
        let (state, detail, since_ns) = match &stale {
            Some(stale) => (
                StateKind::Unknown,
                Some(format!(
                    "stale: {} for over {}{} with no event ({})",
                    current.kind.as_str(),
                    format_duration(std::time::Duration::from_millis(stale.after_ms)),
                    match stale.set_by.as_str() {
                        "profile" => String::new(),
                        key => format!(" (policy {key})"),
                    },
                    stale.because
                )),
                session.ts_ns.max(current.since_ns) + stale.after_ms * 1_000_000,
            ),
            None => (current.kind, current.detail.clone(), current.since_ns),
        };
        let age_ns = now_ns.saturating_sub(since_ns);
        let mut view = View {
            session_id: session.key.session_id.clone(),
            tag: session.key.tag.clone(),
            cli: session.key.cli.clone(),
            cwd: session.cwd.clone(),
            state,
            detail,
            since: rfc3339(since_ns),
            since_ns,
            age_ms: age_ns / 1_000_000,
            age: format_age(std::time::Duration::from_nanos(age_ns)),
            generation: tracker.generation.id,
            epoch: session.epoch,
            seq: session.seq,
            authoritative: current.live,
            replayed: !current.live,
            fresh: stale.is_none(),
            stale,
            unknown_for_ms: (state == StateKind::Unknown).then_some(age_ns / 1_000_000),
            pending: session.turn.pending,
            evidence: current.evidence.clone(),
            last_event: session.last_event.clone(),
            host_pid: session.host_pid,
            input: String::new(),
        };
        view.input = match view.slot_refusal(session.slot_taken) {
            Ok(()) => "available".into(),
            Err(refusal) => format!("refused: {refusal}"),
        };
        view
    }

    /// Why an input slot cannot be taken now, if it cannot.
    pub(super) fn slot_refusal(&self, taken: bool) -> Result<(), Refusal> {
        if let Some(stale) = &self.stale {
            return Err(Refusal::Stale { was: stale.was, hole: stale.hole.clone() });
        }
        if self.state != StateKind::Idle {
            return Err(Refusal::NotIdle { state: self.state, detail: self.detail.clone() });
        }
        if !self.authoritative {
            return Err(Refusal::Replayed);
        }
        if taken {
            return Err(Refusal::AlreadyTaken);
        }
        Ok(())
    }
}

/// The input slot of one `idle`: the caller may deliver input once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// Why an input slot was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The idle state comes from replayed history, not from an event of this generation.
    Replayed,
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
            Refusal::Replayed => {
                write!(f, "idle comes from replayed history, not from an event of this generation")
            }
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
