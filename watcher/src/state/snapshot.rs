//! The typed state of a session, and a session at a given time ([`Snapshot`]): what the
//! decisions read. [`View`](super::View) is its wire form.

use std::fmt;
use std::time::Duration;

use crate::units::format_age;
use crate::vocab::{EndReason, FailureKind, StateKind, UnknownReason, WaitReason};

use super::transcript::{self, TranscriptView};
use super::view::from_profile;
use super::windows::WindowFrom;
use super::{Evidence, Pending, Refusal, RepeatedCall, Session, Stale, TodoItem, Tracker};

/// A state with its reason: the wait reason, the error class, the running tool, why the
/// session ended or why it is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Nothing structured says what the session is doing.
    Unknown(UnknownReason),
    /// A turn is in progress.
    Active,
    /// A tool is running.
    ChildCommand {
        /// The tool, when the event named it.
        tool: Option<String>,
    },
    /// The session waits for its human.
    WaitingOnHuman(WaitReason),
    /// Explicitly at the input prompt.
    Idle,
    /// The turn ended on an API error of this class.
    EnvFault(FailureKind),
    /// The session ended, for this reason when the CLI gave one.
    Ended(Option<EndReason>),
}

impl State {
    /// The state without its reason.
    pub fn kind(&self) -> StateKind {
        match self {
            State::Unknown(_) => StateKind::Unknown,
            State::Active => StateKind::Active,
            State::ChildCommand { .. } => StateKind::ChildCommand,
            State::WaitingOnHuman(_) => StateKind::WaitingOnHuman,
            State::Idle => StateKind::Idle,
            State::EnvFault(_) => StateKind::EnvFault,
            State::Ended(_) => StateKind::Ended,
        }
    }

    /// The state a wire form (a [`View`](super::View)'s `state` and `detail`) names: the
    /// reason read back from its word, or the most general one when the word is not one
    /// (a stale state's `detail`, a newer vocabulary).
    pub fn from_wire(kind: StateKind, detail: Option<&str>) -> State {
        match kind {
            StateKind::Unknown => State::Unknown(
                detail.and_then(UnknownReason::from_word).unwrap_or(UnknownReason::Stale),
            ),
            StateKind::Active => State::Active,
            StateKind::ChildCommand => State::ChildCommand { tool: detail.map(str::to_owned) },
            StateKind::WaitingOnHuman => State::WaitingOnHuman(
                detail.and_then(WaitReason::from_word).unwrap_or(WaitReason::Other),
            ),
            StateKind::Idle => State::Idle,
            StateKind::EnvFault => State::EnvFault(
                detail.and_then(FailureKind::from_word).unwrap_or(FailureKind::Other),
            ),
            StateKind::Ended => State::Ended(detail.map(EndReason::parse)),
        }
    }

    /// The reason as `detail` writes it on the wire (a stale state's is the snapshot's
    /// [`Snapshot::detail`]).
    pub fn detail(&self) -> Option<String> {
        match self {
            State::Unknown(why) => Some(why.as_str().to_owned()),
            State::Active | State::Idle => None,
            State::ChildCommand { tool } => tool.clone(),
            State::WaitingOnHuman(reason) => Some(reason.as_str().to_owned()),
            State::EnvFault(class) => Some(class.as_str().to_owned()),
            State::Ended(reason) => reason.as_ref().map(|r| r.as_str().to_owned()),
        }
    }
}

/// Whether the input slot of a session could be taken now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSlot {
    /// It could: the session is explicitly, freshly and authoritatively idle, and this idle's
    /// slot is free.
    Available,
    /// It could not, for this reason.
    Refused(Refusal),
}

impl fmt::Display for InputSlot {
    /// `available`, `waiting for a live event: <why>` (an idle a live generation only
    /// replayed), or `refused: <why>`: the `input` of the wire form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputSlot::Available => f.write_str("available"),
            InputSlot::Refused(refusal @ Refusal::Replayed { live_since_ns: Some(_) }) => {
                write!(f, "waiting for a live event: {refusal}")
            }
            InputSlot::Refused(refusal) => write!(f, "refused: {refusal}"),
        }
    }
}

/// A session at a given time, typed: the state with staleness applied, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The CLI's session id.
    pub session_id: Option<String>,
    /// The orchestrator's tag.
    pub tag: Option<String>,
    /// The host it runs on, for another host's session (heard of through NATS).
    pub host: Option<String>,
    /// The profile (CLI) name.
    pub cli: String,
    /// The working directory the CLI reported.
    pub cwd: Option<String>,
    /// The state, after staleness: [`State::Unknown`] with [`UnknownReason::Stale`] when the
    /// events' state went stale (see `stale`).
    pub state: State,
    /// Why the state reads `unknown` although events said otherwise.
    pub stale: Option<Stale>,
    /// When the state began, in nanoseconds since the Unix epoch.
    pub since_ns: u64,
    /// How long it has lasted, in nanoseconds.
    pub age_ns: u64,
    /// The tracker's generation.
    pub generation: u64,
    /// The session's epoch.
    pub epoch: u64,
    /// The last applied `seq`.
    pub seq: u64,
    /// Set by an event of this generation; `false` means replayed history, shown but never
    /// authorizing anything.
    pub authoritative: bool,
    /// What the last `stop` said was still to come.
    pub pending: Pending,
    /// The open items of the session's own task list.
    pub open_todos: Vec<TodoItem>,
    /// The run of identical consecutive tool calls the current (or last) turn is in, or
    /// ended on.
    pub repeated_call: Option<RepeatedCall>,
    /// What the last `stop` said (its last assistant message, capped).
    pub last_message: Option<String>,
    /// The event and rule that set the state.
    pub evidence: Evidence,
    /// The last event seen for this session (applied or not).
    pub last_event: Evidence,
    /// The host CLI's pid, when known.
    pub host_pid: Option<u32>,
    /// Whether an input slot could be taken now (and why not).
    pub input: InputSlot,
    /// What hookline read in the session's transcript, when it read it.
    pub transcript: Option<TranscriptView>,
}

impl Snapshot {
    pub(super) fn of(session: &Session, tracker: &Tracker, now_ns: u64) -> Snapshot {
        Snapshot::of_with(session, tracker, now_ns, true)
    }

    /// The snapshot; `with_transcript`: with the state the transcript sets over the
    /// structured one, if it sets one.
    pub(super) fn of_with(
        session: &Session,
        tracker: &Tracker,
        now_ns: u64,
        with_transcript: bool,
    ) -> Snapshot {
        let current = &session.current;
        let overlay = transcript::overlay(session, &current.state).filter(|_| with_transcript);
        let was = current.state.kind();
        let profile = tracker.profiles.get(&session.key.cli);
        let silence = now_ns.saturating_sub(session.ts_ns.max(current.since_ns));
        let stale = profile.filter(|_| overlay.is_none()).and_then(|p| {
            p.holes_in(was).find_map(|hole| {
                let (after, from) = tracker.stale.window(&p.name, was, hole.stale_after);
                let after = after?;
                (u128::from(silence) > after.as_nanos()).then(|| Stale {
                    was,
                    hole: hole.id.clone(),
                    because: hole.description.clone(),
                    after_ms: after.as_millis() as u64,
                    set_by: match from {
                        WindowFrom::Profile => from_profile(),
                        WindowFrom::State => format!("stale.{was}"),
                        WindowFrom::Cli => format!("stale.{}.{was}", p.name),
                    },
                })
            })
        });
        let (state, since_ns, evidence) = match (&stale, overlay) {
            (_, Some((state, since_ns, evidence))) => (state, since_ns, evidence),
            (Some(stale), None) => (
                State::Unknown(UnknownReason::Stale),
                session.ts_ns.max(current.since_ns) + stale.after_ms * 1_000_000,
                current.evidence.clone(),
            ),
            (None, None) => (current.state.clone(), current.since_ns, current.evidence.clone()),
        };
        let mut snapshot = Snapshot {
            session_id: session.key.session_id.clone(),
            tag: session.key.tag.clone(),
            host: session.key.host.clone(),
            cli: session.key.cli.clone(),
            cwd: session.cwd.clone(),
            state,
            stale,
            since_ns,
            age_ns: now_ns.saturating_sub(since_ns),
            generation: tracker.generation.id,
            epoch: session.epoch,
            seq: session.seq,
            authoritative: current.live,
            pending: session.turn.pending.clone(),
            open_todos: session.todos.open(),
            repeated_call: session.turn.calls.clone(),
            last_message: session.turn.last_message.clone(),
            evidence,
            last_event: session.last_event.clone(),
            host_pid: session.host_pid,
            input: InputSlot::Available,
            transcript: session.transcript.as_ref().map(|t| t.view(session.ts_ns)),
        };
        let live = tracker.is_live().then_some(tracker.generation.started_ns);
        if let Err(refusal) = snapshot.slot_refusal(session.slot_taken, live) {
            snapshot.input = InputSlot::Refused(refusal);
        }
        snapshot
    }

    /// The state's reason, as the wire form's `detail` writes it.
    pub fn detail(&self) -> Option<String> {
        match (&self.state, &self.stale) {
            (State::Unknown(UnknownReason::Stale), Some(stale)) => Some(stale.detail()),
            (state, _) => state.detail(),
        }
    }

    /// How long the state has lasted, in milliseconds.
    pub fn age_ms(&self) -> u64 {
        self.age_ns / 1_000_000
    }

    /// How long the state has lasted, for people.
    pub fn age(&self) -> String {
        format_age(Duration::from_nanos(self.age_ns))
    }

    /// Why an input slot cannot be taken now, if it cannot. `live` is when the tracker's
    /// generation started, when it has caught up with history: an idle it only replayed then
    /// predates it, and waits for a live event.
    pub(super) fn slot_refusal(&self, taken: bool, live: Option<u64>) -> Result<(), Refusal> {
        if let Some(stale) = &self.stale {
            return Err(Refusal::Stale { was: stale.was, hole: stale.hole.clone() });
        }
        if self.state != State::Idle {
            return Err(Refusal::NotIdle { state: self.state.kind(), detail: self.detail() });
        }
        if !self.authoritative {
            return Err(Refusal::Replayed { live_since_ns: live });
        }
        if taken {
            return Err(Refusal::AlreadyTaken);
        }
        Ok(())
    }
}
