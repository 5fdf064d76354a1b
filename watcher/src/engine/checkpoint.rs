//! Checkpoints of a reader's state: the state a reader folded, saved so that the next reader
//! replays only what came after. [`crate::checkpoint`] frames the file (its header, its
//! atomic write, reading it back); this module says what goes in it and when it may be used.
//!
//! A checkpoint is `<events_dir>/.cursors/<folder>.checkpoint`, next to the cursors: one for
//! the readers that fold a tracker (`status`, `top`, `tmux`, `watch`), one for those that fold
//! a decider (`decide`, `serve`, `daemon`). It is written atomically (a temp file renamed over
//! it) and holds, after a one-line header (`hookline-checkpoint <format> <length> <digest>`)
//! that tells a cut-short or damaged body from a good one, a JSON document
//! (`engine/checkpoint/wire.rs`) with
//!
//! * the position it covers: every event behind it is folded in, none after it, for the events
//!   directory and each legacy directory;
//! * the events directory's identity ([`DirId`](crate::ingest::source::DirId)): a checkpoint of a directory deleted and
//!   created again at the same path is foreign;
//! * what folded it: the state format ([`FORMAT`]), the hookline version, the digest of the
//!   profiles (and of the policy words a decider reads), the legacy directories and the number
//!   of transitions kept per session;
//! * the sessions, the reader's memory of recent copies (echoes) and the decider's memory.
//!
//! A reader whose configuration differs in any of these, or that finds the file damaged,
//! truncated or foreign, says so in one line ([`CheckpointIgnored`]) and replays the whole
//! history, as it did before checkpoints existed.
//!
//! A checkpoint is replayed history by construction: it has no field for a live state or a
//! taken input slot, and a tracker restored from it is exactly as careful as one that replayed
//! the same events. Loading one never authorizes anything.

pub(crate) mod wire;

use std::path::PathBuf;
use std::time::Duration;

use crate::Error;
use crate::checkpoint::{FORMAT, Folder, body, path, read, write};
use crate::decide::Decider;
use crate::digest::digest;
use crate::errors::{CheckpointIgnored, CheckpointProblem};
use crate::format::store::EventsDir;
use crate::ingest::cursor::Position;
use crate::ingest::echo::Echoes;
use crate::ingest::reader::{Reader, ReaderConfig, Resume};
use crate::ingest::source;
use crate::state::Tracker;

/// Longest wait for the counter's shared lock when checking a checkpoint against it.
const COUNTER_BOUND: Duration = Duration::from_millis(200);

/// Where a reader starts, as [`resume_tracker`] or [`resume_decider`] found it.
#[derive(Debug, Clone)]
pub enum Resumed {
    /// From a checkpoint: only the events after `covers` are replayed.
    Checkpoint {
        /// The highest ordered `seq` it covers.
        seq: u64,
        /// When it was saved, in nanoseconds since the Unix epoch.
        saved_ns: u64,
    },
    /// From the beginning: there is no checkpoint.
    Beginning,
    /// From the beginning: the checkpoint could not be used (say it on stderr).
    Ignored(CheckpointIgnored),
}

impl Resumed {
    /// The note to print, when a checkpoint was ignored.
    pub fn note(&self) -> Option<&CheckpointIgnored> {
        match self {
            Resumed::Ignored(why) => Some(why),
            _ => None,
        }
    }
}

/// The vocabulary a tracker folds with: its profiles.
fn tracker_vocabulary(tracker: &Tracker) -> u64 {
    digest(tracker.profiles().digest(), b"tracker")
}

/// The vocabulary a decider folds with: its profiles and the policy words its memory reads.
fn decider_vocabulary(decider: &Decider) -> u64 {
    let policy = decider.policy();
    let mut hash = digest(decider.tracker().profiles().digest(), b"decider");
    for word in policy.quota_notification_types.iter().chain(&policy.quota_messages) {
        hash = digest(hash, word.as_bytes());
    }
    hash = digest(hash, &(policy.quota_notification_types.len() as u64).to_le_bytes());
    hash
}

/// Starts `tracker` (new, nothing applied yet) from the checkpoint of its events directory
/// when there is one it can use, and makes `config` read only what came after it.
pub fn resume_tracker(config: &mut ReaderConfig, tracker: &mut Tracker) -> Resumed {
    let vocabulary = tracker_vocabulary(tracker);
    match load(config, Folder::Tracker, vocabulary, tracker) {
        Ok(Some(file)) => {
            let resumed = resumed(&file);
            match restore(file, tracker, config) {
                Ok(()) => resumed,
                Err(why) => ignored(config, Folder::Tracker, why),
            }
        }
        Ok(None) => Resumed::Beginning,
        Err(why) => ignored(config, Folder::Tracker, why),
    }
}

/// [`resume_tracker`], only when the checkpoint covers nothing `limit` does not: a consumer
/// that rebuilds its state up to its own cursor and follows from there (`hookline notify`)
/// must not take in, unannounced, events after its cursor. A checkpoint ahead of `limit` is
/// not an error: the reader replays from the beginning, and nothing is said.
pub fn resume_tracker_within(
    config: &mut ReaderConfig,
    tracker: &mut Tracker,
    limit: &Position,
) -> Resumed {
    let vocabulary = tracker_vocabulary(tracker);
    match load(config, Folder::Tracker, vocabulary, tracker) {
        Ok(Some(file)) if within(&file.covers, limit) => {
            let resumed = resumed(&file);
            match restore(file, tracker, config) {
                Ok(()) => resumed,
                Err(why) => ignored(config, Folder::Tracker, why),
            }
        }
        Ok(_) => Resumed::Beginning,
        Err(why) => ignored(config, Folder::Tracker, why),
    }
}

/// Whether everything `inner` covers, `outer` covers too.
fn within(inner: &Position, outer: &Position) -> bool {
    let ordered = |seq: &u64| *seq <= outer.seq || outer.ahead.contains(seq);
    inner.seq <= outer.seq
        && inner.ahead.iter().all(ordered)
        && inner.unordered.is_subset(&outer.unordered)
        && inner.legacy.iter().all(|(dir, files)| {
            outer.legacy.get(dir).is_some_and(|covered| files.is_subset(covered))
        })
}

/// [`resume_tracker`] for a decider (new, nothing applied yet): its tracker and its memory.
pub fn resume_decider(config: &mut ReaderConfig, decider: &mut Decider) -> Resumed {
    let vocabulary = decider_vocabulary(decider);
    match load(config, Folder::Decider, vocabulary, decider.tracker()) {
        Ok(Some(mut file)) => {
            let resumed = resumed(&file);
            let Some(memory) = file.decider.take() else {
                let why = CheckpointProblem::Damaged { why: "no decider memory", source: None };
                return ignored(config, Folder::Decider, why);
            };
            match restore(file, decider.tracker_mut(), config) {
                Ok(()) => {
                    decider.restore_memory(memory);
                    resumed
                }
                Err(why) => ignored(config, Folder::Decider, why),
            }
        }
        Ok(None) => Resumed::Beginning,
        Err(why) => ignored(config, Folder::Decider, why),
    }
}

fn resumed(file: &wire::File<'_>) -> Resumed {
    Resumed::Checkpoint { seq: file.covers.seq, saved_ns: file.saved_ns }
}

fn ignored(config: &ReaderConfig, folder: Folder, why: CheckpointProblem) -> Resumed {
    Resumed::Ignored(CheckpointIgnored { path: path(&config.events_dir, folder), why })
}

/// Saves what `tracker` folded from what `reader` handed out (a reader opened with
/// [`crate::ingest::reader::Start::Beginning`], every event it handed out applied).
pub fn save_tracker(reader: &Reader, tracker: &Tracker) -> Result<(), Error> {
    let taken = take(reader, tracker, Folder::Tracker, tracker_vocabulary(tracker), None)?;
    taken.map_or(Ok(()), |(path, file)| write(&path, &file))
}

/// [`save_tracker`] for a decider.
pub fn save_decider(reader: &Reader, decider: &Decider) -> Result<(), Error> {
    let memory = Some(decider.memory_to_wire());
    let vocabulary = decider_vocabulary(decider);
    let taken = take(reader, decider.tracker(), Folder::Decider, vocabulary, memory)?;
    taken.map_or(Ok(()), |(path, file)| write(&path, &file))
}

/// A checkpoint taken and not written yet: a consumer that shares its tracker behind a lock
/// takes it under the lock, then writes it after letting go. `None` when the events directory
/// is not there.
pub fn take_tracker(reader: &Reader, tracker: &Tracker) -> Result<Option<Taken>, Error> {
    let taken = take(reader, tracker, Folder::Tracker, tracker_vocabulary(tracker), None)?;
    Ok(taken.map(|(path, file)| Taken { path, file: file.into_owned() }))
}

/// [`take_tracker`] for a decider.
pub fn take_decider(reader: &Reader, decider: &Decider) -> Result<Option<Taken>, Error> {
    let memory = Some(decider.memory_to_wire());
    let vocabulary = decider_vocabulary(decider);
    let taken = take(reader, decider.tracker(), Folder::Decider, vocabulary, memory)?;
    Ok(taken.map(|(path, file)| Taken { path, file: file.into_owned() }))
}

/// A checkpoint taken ([`take_tracker`], [`take_decider`]), to write.
#[derive(Debug)]
pub struct Taken {
    path: PathBuf,
    file: wire::File<'static>,
}

impl Taken {
    /// The highest ordered `seq` it covers.
    pub fn seq(&self) -> u64 {
        self.file.covers.seq
    }

    /// Writes it atomically, over the one before: encoded straight into a temp file in the
    /// same directory, its header put in place, then renamed over the old one (not synced: a
    /// checkpoint lost in a crash only means a longer replay).
    pub fn write(self) -> Result<(), Error> {
        write(&self.path, &self.file)
    }
}

/// The checkpoint of `tracker` after what `reader` handed out, borrowing the tracker's
/// evidence, and where it goes.
fn take<'t>(
    reader: &Reader,
    tracker: &'t Tracker,
    folder: Folder,
    vocabulary: u64,
    decider: Option<std::collections::BTreeMap<String, crate::decide::wire::Memory>>,
) -> Result<Option<(PathBuf, wire::File<'t>)>, Error> {
    let events_dir = reader.events_dir();
    let Some(dir) = source::dir_id(events_dir)? else {
        return Ok(None);
    };
    let history = tracker.history_len();
    let file = wire::File {
        format: FORMAT,
        hookline: env!("CARGO_PKG_VERSION").to_owned(),
        folder,
        vocabulary: format!("{vocabulary:016x}"),
        events_dir: dir,
        legacy_dirs: reader.legacy_dirs().to_vec(),
        covers: reader.position().clone(),
        history,
        saved_ns: crate::format::clock::now_ns(),
        tracker: tracker.to_wire(history),
        echoes: reader.echoes().to_wire(),
        decider,
    };
    Ok(Some((path(events_dir, folder), file)))
}

/// When a follower saves its checkpoint: after [`Cadence::EVENTS`] events, or
/// [`Cadence::EVERY`] after the first event not saved yet, and when it stops.
#[derive(Debug)]
pub struct Cadence {
    unsaved: u64,
    since: Option<std::time::Instant>,
}

impl Default for Cadence {
    fn default() -> Self {
        Cadence::new()
    }
}

impl Cadence {
    /// Events applied after which a checkpoint is due.
    pub const EVENTS: u64 = 10_000;
    /// How long after the first unsaved event a checkpoint is due.
    pub const EVERY: Duration = Duration::from_secs(30);
    /// Events a one-shot reader replays after a checkpoint before it writes a new one at
    /// exit: fewer cost less to replay again than the checkpoint costs to write.
    pub const ONE_SHOT_EVENTS: u64 = 1_000;

    /// Whether a one-shot reader that started as `resumed` and replayed `applied` events
    /// saves its checkpoint at exit: always when it had none it could use, else after
    /// [`Cadence::ONE_SHOT_EVENTS`].
    pub fn one_shot_saves(resumed: &Resumed, applied: u64) -> bool {
        !matches!(resumed, Resumed::Checkpoint { .. }) || applied >= Cadence::ONE_SHOT_EVENTS
    }

    /// Nothing unsaved yet.
    pub fn new() -> Cadence {
        Cadence { unsaved: 0, since: None }
    }

    /// Counts one event applied.
    pub fn applied(&mut self) {
        self.unsaved += 1;
        self.since.get_or_insert_with(std::time::Instant::now);
    }

    /// Whether a checkpoint is due now; if so, counts it as saved.
    pub fn due(&mut self) -> bool {
        let due = self.unsaved >= Cadence::EVENTS
            || self.since.is_some_and(|t| t.elapsed() >= Cadence::EVERY);
        if due {
            *self = Cadence::new();
        }
        due
    }

    /// Whether any event was applied since the last checkpoint.
    pub fn unsaved(&self) -> bool {
        self.unsaved > 0
    }
}

/// Reads and checks the checkpoint a reader configured as `config` could start from.
fn load(
    config: &ReaderConfig,
    folder: Folder,
    vocabulary: u64,
    tracker: &Tracker,
) -> Result<Option<wire::File<'static>>, CheckpointProblem> {
    let Some(bytes) = read(&path(&config.events_dir, folder))? else {
        return Ok(None);
    };
    if tracker.keeps_full_history() {
        return Err(CheckpointProblem::NeedsFullHistory);
    }
    let Some(current) = source::dir_id(&config.events_dir).ok().flatten() else {
        return Ok(None);
    };
    let body = body(&bytes)?;
    let file: wire::File<'static> =
        serde_json::from_slice(body).map_err(|e| CheckpointProblem::Damaged {
            why: "cannot be read back",
            source: Some(std::sync::Arc::new(e)),
        })?;
    let mismatch = |what, saved: String, current: String| {
        Err(CheckpointProblem::Mismatch { what, saved, current })
    };
    if file.format != FORMAT {
        return mismatch("state format", file.format.to_string(), FORMAT.to_string());
    }
    if file.folder != folder {
        return Err(CheckpointProblem::Foreign(format!("a checkpoint of a {:?}", file.folder)));
    }
    let version = env!("CARGO_PKG_VERSION");
    if file.hookline != version {
        return mismatch("hookline", file.hookline, version.to_owned());
    }
    let vocabulary = format!("{vocabulary:016x}");
    if file.vocabulary != vocabulary {
        return mismatch("profiles (digest)", file.vocabulary, vocabulary);
    }
    if file.legacy_dirs != config.legacy_dirs {
        let show = |dirs: &[PathBuf]| format!("legacy directories {dirs:?}");
        return mismatch("other", show(&file.legacy_dirs), show(&config.legacy_dirs));
    }
    if file.history < tracker.history_len() {
        let show = |n: usize| format!("{n} transitions per session");
        return mismatch("history", show(file.history), show(tracker.history_len()));
    }
    if !current.same_dir(&file.events_dir) {
        return Err(CheckpointProblem::OtherDirectory(
            "the directory was deleted and created again since".into(),
        ));
    }
    let counter = EventsDir::open(&config.events_dir)
        .and_then(|dir| dir.committed_seq(COUNTER_BOUND))
        .ok()
        .flatten();
    if counter.is_some_and(|c| c < file.covers.seq) {
        return Err(CheckpointProblem::OtherDirectory(format!(
            "it covers seq {}, the directory's counter is at {}",
            file.covers.seq,
            counter.unwrap_or_default()
        )));
    }
    Ok(Some(file))
}

/// Puts a checked checkpoint into `tracker` and `config`.
fn restore(
    file: wire::File<'_>,
    tracker: &mut Tracker,
    config: &mut ReaderConfig,
) -> Result<(), CheckpointProblem> {
    let damaged = |why| CheckpointProblem::Damaged { why, source: None };
    let echoes = Echoes::from_wire(file.echoes).ok_or_else(|| damaged("an echo names nothing"))?;
    tracker.restore(file.tracker).ok_or_else(|| damaged("a tag names no session"))?;
    config.resume = Some(Resume { position: file.covers, echoes });
    Ok(())
}

#[cfg(test)]
mod tests;
