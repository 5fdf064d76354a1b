//! The checkpoint file as it is written: the reader's position and what folded it, and each
//! stateful part in its owner's wire form ([`crate::state`]'s sessions, [`crate::ingest::echo`]'s
//! memory of copies, [`crate::decide`]'s memory), apart from the domain types they are
//! converted from and to, so that a field added to a domain type never changes the file by
//! accident.
//!
//! What the file holds is replayed history and nothing else: no field says a state is live,
//! no field says an input slot was taken. A tracker restored from it is exactly as careful as
//! one that replayed the same events.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::checkpoint::Folder;
use crate::decide::wire::Memory;
use crate::ingest::cursor::Position;
use crate::ingest::echo::wire::Echoes;
use crate::ingest::source::DirId;
use crate::state::wire::Tracker;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File<'a> {
    /// [`crate::checkpoint::FORMAT`] of the writer.
    pub format: u32,
    /// The crate version of the writer: its rules folded the state.
    pub hookline: String,
    /// What folded it: a tracker alone, or a decider (a tracker and its memory).
    pub folder: Folder,
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
    /// The decider's memory of each session, for [`Folder::Decider`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decider: Option<BTreeMap<String, Memory>>,
}

impl File<'_> {
    /// The same file owning all it holds: to write after letting go of the state.
    pub fn into_owned(self) -> File<'static> {
        File { tracker: self.tracker.into_owned(), ..self }
    }
}
