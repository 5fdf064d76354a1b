//! A tracker's sessions as a checkpoint holds them ([`crate::engine::checkpoint`]): their own
//! types, apart from the domain types they are converted from and to (`state/checkpoint.rs`),
//! so that a field added to a domain type never changes the file by accident.
//!
//! What the file holds is replayed history and nothing else: no field says a state is live,
//! no field says an input slot was taken. A tracker restored from it is exactly as careful as
//! one that replayed the same events.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::canonical::{BackgroundTask, Cron, SessionKey};
use crate::state::{Evidence, RepeatedCall, StateKind, TodoItem};
use crate::vocab::{FailureKind, WaitReason};

/// A tracker's sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tracker<'a> {
    /// Sessions by key.
    pub sessions: BTreeMap<String, Session<'a>>,
    /// Tag → the key of the session that last changed state under it.
    pub by_tag: BTreeMap<String, String>,
}

/// One session, as replayed. The evidence, most of a session's size, is borrowed from the
/// tracker when a checkpoint is written straight away, owned when it is read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session<'a> {
    pub key: SessionKey,
    pub cwd: Option<String>,
    pub host_pid: Option<u32>,
    pub transcript_path: Option<String>,
    pub state: State,
    pub since_ns: u64,
    pub evidence: Cow<'a, Evidence>,
    pub epoch: u64,
    pub seq: u64,
    pub ts_ns: u64,
    pub last_event: Cow<'a, Evidence>,
    pub turn: Turn,
    pub todos: Vec<TodoItem>,
    pub retired_hosts: Vec<u32>,
    pub history: Vec<Transition<'a>>,
    pub epoch_has_events: bool,
    pub legacy_only: bool,
}

/// A state with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case", deny_unknown_fields)]
pub enum State {
    Unknown { why: Unknown },
    Active,
    ChildCommand { tool: Option<String> },
    WaitingOnHuman { reason: WaitReason },
    Idle,
    EnvFault { class: FailureKind },
    Ended { reason: Option<String> },
}

/// Why a session reads `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unknown {
    NoEventYet,
    SessionStarted,
    NewProducer,
    StopNotInputReady,
    Stale,
    TranscriptOnly,
}

/// A session's turn bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub running_tools: u32,
    pub waiting_tool: Option<String>,
    pub pending_tasks: u32,
    pub pending_wakes: u32,
    pub background_tasks: Vec<BackgroundTask>,
    pub crons: Vec<Cron>,
    pub started_ns: Option<u64>,
    pub calls: Option<RepeatedCall>,
    pub last_message: Option<String>,
}

/// One transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transition<'a> {
    pub evidence: Cow<'a, Evidence>,
    pub state: Option<StateKind>,
    pub epoch: u64,
}

impl Tracker<'_> {
    /// The same sessions, owning their evidence.
    pub fn into_owned(self) -> Tracker<'static> {
        let sessions = self.sessions.into_iter().map(|(k, s)| (k, s.into_owned())).collect();
        Tracker { sessions, by_tag: self.by_tag }
    }
}

impl Session<'_> {
    /// The same session, owning its evidence.
    pub fn into_owned(self) -> Session<'static> {
        let owned = |e: Cow<'_, Evidence>| Cow::Owned(e.into_owned());
        Session {
            evidence: owned(self.evidence),
            last_event: owned(self.last_event),
            history: self
                .history
                .into_iter()
                .map(|t| Transition { evidence: owned(t.evidence), state: t.state, epoch: t.epoch })
                .collect(),
            ..self
        }
    }
}
