//! A tracker's sessions to and from their checkpoint form ([`crate::checkpoint::wire`]).
//!
//! What goes out is what replaying the same events would have built: whether a state was set
//! live and whether a slot was taken are not written, and a restored session is replayed
//! history, as careful as after a full replay.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::wire;
use crate::vocab::{EndReason, UnknownReason};

use super::rules::Turn;
use super::{Current, Pending, Session, State, Tracker, Transition};

impl Tracker {
    /// The sessions as a checkpoint writes them, keeping at most `history` transitions of
    /// each.
    pub(crate) fn to_wire(&self, history: usize) -> wire::Tracker<'_> {
        // A session only its transcript reports (the fallback producer) is no replay of
        // events: it is left out, and read again from its transcript.
        let sessions = self
            .sessions
            .iter()
            .filter(|(_, s)| !s.unhooked)
            .map(|(k, s)| (k.clone(), session_to_wire(s, history)))
            .collect();
        let by_tag = self
            .by_tag
            .iter()
            .filter(|(_, k)| self.sessions.get(*k).is_some_and(|s| !s.unhooked))
            .map(|(t, k)| (t.clone(), k.clone()))
            .collect();
        wire::Tracker { sessions, by_tag }
    }

    /// Replaces the sessions with a checkpoint's, as replayed history (never live, no slot
    /// taken), keeping at most this tracker's history length of each. `None` when the
    /// checkpoint contradicts itself (a tag naming no session).
    pub(crate) fn restore(&mut self, saved: wire::Tracker<'_>) -> Option<()> {
        if saved.by_tag.values().any(|key| !saved.sessions.contains_key(key)) {
            return None;
        }
        let keep = self.history_len;
        self.sessions =
            saved.sessions.into_iter().map(|(k, s)| (k, session_from_wire(s, keep))).collect();
        self.by_tag = saved.by_tag.into_iter().collect();
        Some(())
    }

    /// How many transitions each session keeps.
    pub(crate) fn history_len(&self) -> usize {
        self.history_len
    }

    /// Whether some sessions keep every transition ([`Tracker::with_full_history_of`]): a
    /// checkpoint keeps only the last few, so such a tracker cannot start from one.
    pub(crate) fn keeps_full_history(&self) -> bool {
        self.full_history_of.is_some()
    }
}

fn session_to_wire(s: &Session, history: usize) -> wire::Session<'_> {
    let skip = s.history.len().saturating_sub(history);
    wire::Session {
        key: s.key.clone(),
        cwd: s.cwd.clone(),
        host_pid: s.host_pid,
        transcript_path: s.transcript_path.clone(),
        state: state_to_wire(&s.current.state),
        since_ns: s.current.since_ns,
        evidence: Cow::Borrowed(&s.current.evidence),
        epoch: s.epoch,
        seq: s.seq,
        ts_ns: s.ts_ns,
        last_event: Cow::Borrowed(&s.last_event),
        turn: turn_to_wire(&s.turn),
        todos: s.todos.items().to_vec(),
        retired_hosts: s.retired_hosts.clone(),
        history: s
            .history
            .iter()
            .skip(skip)
            .map(|t| wire::Transition {
                evidence: Cow::Borrowed(&t.evidence),
                state: t.state,
                epoch: t.epoch,
            })
            .collect(),
        epoch_has_events: s.epoch_has_events,
        legacy_only: s.legacy_only,
    }
}

fn session_from_wire(s: wire::Session<'_>, keep: usize) -> Session {
    let skip = s.history.len().saturating_sub(keep);
    let history: VecDeque<Transition> = s
        .history
        .into_iter()
        .skip(skip)
        .map(|t| Transition { evidence: t.evidence.into_owned(), state: t.state, epoch: t.epoch })
        .collect();
    Session {
        key: s.key,
        cwd: s.cwd,
        host_pid: s.host_pid,
        transcript_path: s.transcript_path,
        // What the transcript says is read again from the file, never from a checkpoint.
        transcript: None,
        current: Current {
            state: state_from_wire(s.state),
            since_ns: s.since_ns,
            evidence: s.evidence.into_owned(),
            // Replayed history by construction: a checkpoint never makes a state live.
            live: false,
        },
        epoch: s.epoch,
        seq: s.seq,
        ts_ns: s.ts_ns,
        last_event: s.last_event.into_owned(),
        turn: turn_from_wire(s.turn),
        todos: super::TodoList::from_items(s.todos),
        retired_hosts: s.retired_hosts,
        // A replay takes no slot: neither does a restored session.
        slot_taken: false,
        moved_since_slot: false,
        history,
        epoch_has_events: s.epoch_has_events,
        legacy_only: s.legacy_only,
        unhooked: false,
    }
}

fn state_to_wire(state: &State) -> wire::State {
    match state {
        State::Unknown(why) => wire::State::Unknown {
            why: match why {
                UnknownReason::NoEventYet => wire::Unknown::NoEventYet,
                UnknownReason::SessionStarted => wire::Unknown::SessionStarted,
                UnknownReason::NewProducer => wire::Unknown::NewProducer,
                UnknownReason::StopNotInputReady => wire::Unknown::StopNotInputReady,
                UnknownReason::Stale => wire::Unknown::Stale,
                UnknownReason::TranscriptOnly => wire::Unknown::TranscriptOnly,
            },
        },
        State::Active => wire::State::Active,
        State::ChildCommand { tool } => wire::State::ChildCommand { tool: tool.clone() },
        State::WaitingOnHuman(reason) => wire::State::WaitingOnHuman { reason: *reason },
        State::Idle => wire::State::Idle,
        State::EnvFault(class) => wire::State::EnvFault { class: *class },
        State::Ended(reason) => {
            wire::State::Ended { reason: reason.as_ref().map(|r| r.as_str().to_owned()) }
        }
    }
}

fn state_from_wire(state: wire::State) -> State {
    match state {
        wire::State::Unknown { why } => State::Unknown(match why {
            wire::Unknown::NoEventYet => UnknownReason::NoEventYet,
            wire::Unknown::SessionStarted => UnknownReason::SessionStarted,
            wire::Unknown::NewProducer => UnknownReason::NewProducer,
            wire::Unknown::StopNotInputReady => UnknownReason::StopNotInputReady,
            wire::Unknown::Stale => UnknownReason::Stale,
            wire::Unknown::TranscriptOnly => UnknownReason::TranscriptOnly,
        }),
        wire::State::Active => State::Active,
        wire::State::ChildCommand { tool } => State::ChildCommand { tool },
        wire::State::WaitingOnHuman { reason } => State::WaitingOnHuman(reason),
        wire::State::Idle => State::Idle,
        wire::State::EnvFault { class } => State::EnvFault(class),
        wire::State::Ended { reason } => State::Ended(reason.as_deref().map(EndReason::parse)),
    }
}

fn turn_to_wire(turn: &Turn) -> wire::Turn {
    wire::Turn {
        running_tools: turn.running_tools,
        waiting_tool: turn.waiting_tool.clone(),
        pending_tasks: turn.pending.tasks,
        pending_wakes: turn.pending.wakes,
        background_tasks: turn.pending.background_tasks.clone(),
        crons: turn.pending.crons.clone(),
        started_ns: turn.started_ns,
        calls: turn.calls.clone(),
        last_message: turn.last_message.clone(),
    }
}

fn turn_from_wire(turn: wire::Turn) -> Turn {
    Turn {
        running_tools: turn.running_tools,
        waiting_tool: turn.waiting_tool,
        pending: Pending {
            tasks: turn.pending_tasks,
            wakes: turn.pending_wakes,
            background_tasks: turn.background_tasks,
            crons: turn.crons,
        },
        started_ns: turn.started_ns,
        calls: turn.calls,
        last_message: turn.last_message,
    }
}
