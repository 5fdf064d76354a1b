//! The checkpoint file as it is written: its own types, apart from the domain types they are
//! converted from and to (the tracker's sessions, the reader's echo memory, the decider's
//! memory), so that a field added to a domain type never changes the file by accident.
//!
//! What the file holds is replayed history and nothing else: no field says a state is live,
//! no field says an input slot was taken. A tracker restored from it is exactly as careful as
//! one that replayed the same events.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::canonical::{BackgroundTask, CompactPhase, Cron, KindName, SessionKey, SourceRef};
use crate::ingest::cursor::Position;
use crate::ingest::source::DirId;
use crate::state::{Evidence, RepeatedCall, StateKind, TodoItem};
use crate::vocab::{FailureKind, WaitReason};

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File<'a> {
    /// [`super::FORMAT`] of the writer.
    pub format: u32,
    /// The crate version of the writer: its rules folded the state.
    pub hookline: String,
    /// What folded it: a tracker alone, or a decider (a tracker and its memory).
    pub folder: super::Folder,
    /// The digest of the profiles the events were mapped with (and, for a decider, of the
    /// policy words its memory reads), as 16 hex digits.
    pub vocabulary: String,
    /// The events directory the position refers to.
    pub events_dir: DirId,
    /// The legacy directories read, in the order given.
    pub legacy_dirs: Vec<PathBuf>,
    /// Every event behind this position is folded in; none after it.
    pub covers: Position,
    /// How many transitions each session keeps.
    pub history: usize,
    /// When it was written, in nanoseconds since the Unix epoch.
    pub saved_ns: u64,
    /// The tracker's sessions.
    pub tracker: Tracker<'a>,
    /// The reader's memory of the copies it handed out.
    pub echoes: Echoes,
    /// The decider's memory of each session, for [`super::Folder::Decider`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decider: Option<BTreeMap<String, Memory>>,
}

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

/// The reader's memory of copies handed out (see [`crate::ingest::echo`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Echoes {
    pub by_id: BTreeMap<String, Vec<Copy>>,
    pub by_tag: BTreeMap<String, Vec<Copy>>,
    pub dirs: Vec<PathBuf>,
    pub names: Vec<String>,
    pub newest_ns: u64,
    pub seen: u64,
}

/// One copy remembered; `dir`, `cli`, `native` and `paired` index [`Echoes::dirs`] and
/// [`Echoes::names`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copy {
    pub dir: usize,
    pub seq: u64,
    pub file: String,
    pub legacy: bool,
    pub original: Option<SourceRef>,
    pub cli: usize,
    pub native: Option<usize>,
    pub agent_id: Option<String>,
    pub kind: KindName,
    pub phase: Option<CompactPhase>,
    pub digest: Option<u64>,
    pub ts_ns: u64,
    pub paired: Vec<usize>,
}

/// What a decider remembers of a session from its events (not from its decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    pub host_first_seen: Option<(u32, u64)>,
    pub quota: Option<crate::decide::QuotaNotice>,
}

impl File<'_> {
    /// The same file owning all it holds: to write after letting go of the state.
    pub fn into_owned(self) -> File<'static> {
        File { tracker: self.tracker.into_owned(), ..self }
    }
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
