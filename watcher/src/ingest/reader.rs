//! The reader: canonical events from an events directory (and legacy directories), in order,
//! exactly once per cursor.
//!
//! Each [`Reader::poll`] lists the directories and queues what is new (of the events directory,
//! its top and only the buckets that can hold a `seq` after the last one listed: see
//! [`layout`](crate::format::layout)); [`Reader::next_event`] hands out one event and moves the
//! in-memory position past it; [`Reader::commit`] saves the position of a named cursor. A
//! consumer that commits after it has handled an event never sees it again after a restart, and
//! never misses one.
//!
//! Ordering: ordered events are read only up to the *committed* `seq` read under the
//! counter's shared lock (see `hookline_relay::store`), so an event still being written by a
//! relay that took a lower `seq` can never be overtaken and skipped. Unordered events (lock
//! timeouts) and legacy files are tracked by name. Primary and legacy events are merged by
//! time: a legacy file newer than the last primary event read waits while more primary files
//! are listed but not read yet (a backlog larger than a batch).
//!
//! Each event handed out is checked against the ones handed out before it: a copy of one
//! reported by another producer is marked as its echo (see [`echo`](crate::ingest::echo)).
//!
//! A file that cannot be read as an envelope is delivered as an `unknown` event naming it and
//! its reason, to every cursor at its position (it stays where it is; a copy goes to
//! `.quarantine/` for inspection); the events behind it are not held up.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::Error;
use crate::canonical::{CANONICAL_VERSION, Event, Kind, SourceRef};
use crate::format::envelope::RawEnvelope;
use crate::format::filename::{EventFileName, bucket_name, bucket_of};
use crate::format::layout::usable_bucket;
use crate::format::store::EventsDir;
use crate::ingest::cursor::{Cursor, Position};
use crate::ingest::echo::Echoes;
use crate::ingest::mapping::map_envelope;
use crate::ingest::source::{self, DirId, EventFile, LegacyName, Stamp};
use crate::profile::Profiles;

/// Where a reader starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// From a named, durable cursor (from the beginning the first time).
    Cursor(String),
    /// From a named, durable cursor; the first time, from events that arrive after the reader
    /// opens (everything already present counts as read, and the cursor is saved there).
    CursorFromNow(String),
    /// From the oldest event present; nothing is saved.
    Beginning,
    /// From events that arrive after the reader opens; nothing is saved.
    Now,
}

/// How to read.
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// The events directory.
    pub events_dir: PathBuf,
    /// Legacy directories (older Python relay), read but never created or modified.
    pub legacy_dirs: Vec<PathBuf>,
    /// Where to start.
    pub start: Start,
    /// The profiles used to map events.
    pub profiles: Profiles,
    /// Most files read per poll, to bound memory on a large backlog.
    pub batch: usize,
    /// Longest wait for the counter's shared lock.
    pub lock_bound: Duration,
    /// How long after a directory last changed a poll trusts its [`Stamp`] to skip listing
    /// it again ([`source::STAMP_SETTLED`]; tests shorten it).
    pub stamp_settled: Duration,
    /// With [`Start::Beginning`], start past what a checkpoint folded in instead of at the
    /// oldest event (see [`crate::checkpoint`]).
    pub resume: Option<Resume>,
    /// Most listed files a worker thread reads, parses and maps ahead of the consumer on a
    /// large backlog (at least 128 files listed and not read); 0 reads every file in the
    /// consumer's thread. Only reading, parsing, mapping, digesting and quarantining move to
    /// the worker: events are handed out, echoes marked and the cursor moved by the consumer,
    /// exactly as without it.
    pub read_ahead: usize,
    /// Worker threads reading ahead ([`DEFAULT_READ_AHEAD_THREADS`]): the files are read in
    /// chunks handed to each in turn and taken back in the same turn, so in order.
    pub read_ahead_threads: usize,
}

/// Where a reader whose history a checkpoint folded in starts: past the checkpoint's
/// position, with the memory of the copies handed out before it (so that an echo of an event
/// before the cut is still recognised). Made by
/// [`crate::engine::checkpoint::resume_tracker`] and
/// [`crate::engine::checkpoint::resume_decider`].
#[derive(Debug, Clone)]
pub struct Resume {
    pub(crate) position: Position,
    pub(crate) echoes: Echoes,
}

impl ReaderConfig {
    /// A configuration with the defaults: no legacy directory, a batch of 1024 files.
    pub fn new(events_dir: impl Into<PathBuf>, start: Start, profiles: Profiles) -> ReaderConfig {
        ReaderConfig {
            events_dir: events_dir.into(),
            legacy_dirs: Vec::new(),
            start,
            profiles,
            batch: 1024,
            lock_bound: Duration::from_millis(200),
            stamp_settled: source::STAMP_SETTLED,
            resume: None,
            read_ahead: match std::thread::available_parallelism() {
                Ok(n) if n.get() > 1 => DEFAULT_READ_AHEAD,
                _ => 0,
            },
            read_ahead_threads: DEFAULT_READ_AHEAD_THREADS
                .min(std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }
}

/// Buckets a listing takes at most: the backlog of names a reader holds is bounded by this many
/// buckets' worth of events (with the top's), not by the history.
const LISTED_BUCKETS: usize = 2;

/// With workers reading ahead and buckets left for a later listing, the next listing is taken
/// once fewer names than this are left to send them.
const LIST_AHEAD: usize = 1024;

/// The default [`ReaderConfig::read_ahead`] where there is more than one core: four batches.
pub const DEFAULT_READ_AHEAD: usize = 4096;

/// The most [`ReaderConfig::read_ahead_threads`] by default, fewer where there are fewer cores:
/// one per core, the consumer sharing them (it mostly waits for their results).
pub const DEFAULT_READ_AHEAD_THREADS: usize = 4;

/// The fewest listed files not read yet for which a worker is started: below, a thread hop
/// costs more than it saves (a follower reads a few files at a time).
const AHEAD_FROM: usize = 2 * ahead::CHUNK;

/// A mapped event, where it sits in the cursor, and its payload's digest (for echoes). Not
/// boxed, though it passes through several queues: with glibc's allocator a box allocated by a
/// worker and freed by the consumer cost more than the moves it saves.
type Item = (Event, Mark, Option<u64>);

/// Where a queued event sits in the cursor.
#[derive(Debug, Clone)]
enum Mark {
    Ordered(u64),
    Unordered(String),
    Legacy(PathBuf, String),
}

/// Something a poll noticed that a consumer should hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The events directory was deleted and created again: reading restarts at its start.
    DirRecreated(PathBuf),
    /// The events directory disappeared.
    DirGone(PathBuf),
    /// The counter lock could not be had: ordered events wait for the next poll.
    CounterBusy(PathBuf),
    /// Watching works less well than it should (e.g. notifications fell back to polling).
    Degraded(String),
    /// An unreadable file was reported, and a copy of it quarantined for inspection.
    Quarantined {
        /// The copy.
        file: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Reads canonical events in order.
#[derive(Debug)]
pub struct Reader {
    config: ReaderConfig,
    cursor: Cursor,
    position: Position,
    dir_id: Option<DirId>,
    /// Mapped events waiting to be handed out.
    queue: VecDeque<Item>,
    /// The vector a poll reads its batch into, empty between polls.
    batch_buffer: Vec<Item>,
    /// Legacy events newer than the primary events read so far, while a primary backlog
    /// remains, in time order.
    legacy_waiting: Vec<Item>,
    /// The copies handed out, to recognise echoes.
    echoes: Echoes,
    /// Listed event files not read yet, nor sent to the worker.
    backlog: VecDeque<EventFile>,
    /// Reads the files the consumer reads itself.
    files: source::FileReader,
    /// The worker reading listed files ahead, once a backlog is large enough.
    ahead: Option<ahead::ReadAhead>,
    /// The worker was lost: files are read in the consumer's thread from then on.
    ahead_lost: bool,
    /// The fewest files in the backlog for which the worker starts ([`AHEAD_FROM`]; tests
    /// lower it).
    ahead_from: usize,
    /// Highest ordered seq queued or in the backlog.
    listed_seq: u64,
    /// Unordered and legacy files queued or in the backlog.
    listed_names: HashSet<(PathBuf, String)>,
    notices: Vec<Notice>,
    /// The last listing saw ordered files above the committed seq (writers in progress).
    uncommitted: bool,
    /// The events directory's settled stamp, its current bucket's (see
    /// [`Reader::current_bucket`]) and the committed seq at the last listing, when that listing
    /// left nothing to wait for: while all stay the same nothing can have appeared, and a poll
    /// does not list again (see [`Stamp`]).
    quiet: Option<(Stamp, Option<Stamp>, u64)>,
    /// The last listing left buckets after it for the next one ([`LISTED_BUCKETS`]).
    more_listed: bool,
    /// Where that listing stopped: the highest seq it could hold.
    listed_up_to: Option<u64>,
    /// The same for each legacy directory: its settled stamp at its last listing.
    legacy_quiet: HashMap<PathBuf, Stamp>,
    /// Tests count the listings of the events directory.
    #[cfg(test)]
    listings: usize,
}

impl Reader {
    /// Opens a reader. With [`Start::Now`], everything already present counts as read.
    pub fn open(mut config: ReaderConfig) -> Result<Reader, Error> {
        let cursor = match &config.start {
            Start::Cursor(name) | Start::CursorFromNow(name) => {
                Cursor::open(&config.events_dir, name)?
            }
            Start::Beginning | Start::Now => Cursor::anonymous(),
        };
        let (position, echoes) = match (&config.start, config.resume.take()) {
            (Start::Beginning, Some(resume)) => (resume.position, resume.echoes),
            _ => (cursor.position.clone(), Echoes::new()),
        };
        let mut reader = Reader {
            position,
            cursor,
            dir_id: source::dir_id(&config.events_dir)?,
            queue: VecDeque::new(),
            batch_buffer: Vec::new(),
            legacy_waiting: Vec::new(),
            echoes,
            backlog: VecDeque::new(),
            files: source::FileReader::new(&config.events_dir),
            ahead: None,
            ahead_lost: false,
            ahead_from: AHEAD_FROM,
            listed_seq: 0,
            listed_names: HashSet::new(),
            notices: Vec::new(),
            uncommitted: false,
            quiet: None,
            more_listed: false,
            listed_up_to: None,
            legacy_quiet: HashMap::new(),
            #[cfg(test)]
            listings: 0,
            config,
        };
        reader.listed_seq = reader.position.seq;
        if reader.cursor.recreated {
            reader.notices.push(Notice::DirRecreated(reader.config.events_dir.clone()));
        }
        if reader.cursor.is_new && reader.cursor.name().is_some() {
            if matches!(reader.config.start, Start::CursorFromNow(_)) {
                reader.skip_present()?;
            }
            // Registered at once, so that retention keeps what this consumer has not read.
            reader.commit()?;
        }
        if reader.config.start == Start::Now {
            reader.skip_present()?;
        }
        Ok(reader)
    }

    fn skip_present(&mut self) -> Result<(), Error> {
        if self.dir_id.is_some() {
            let dir = &self.config.events_dir;
            let committed = EventsDir::open(dir)?.committed_seq(self.config.lock_bound)?;
            for EventFile { name, .. } in source::list_newest(dir)?.events {
                match name.unordered_ts_ns {
                    None => self.position.seq = self.position.seq.max(name.seq),
                    Some(_) => drop(self.position.unordered.insert(name.to_string())),
                }
            }
            if let Some(c) = committed.filter(|c| *c != u64::MAX) {
                self.position.seq = self.position.seq.max(c);
            }
        }
        for dir in self.config.legacy_dirs.clone() {
            let names: BTreeSet<String> =
                source::list_legacy(&dir)?.into_iter().map(|n| n.file).collect();
            self.position.legacy.insert(dir, names);
        }
        self.listed_seq = self.position.seq;
        Ok(())
    }

    /// The events directory.
    pub fn events_dir(&self) -> &Path {
        &self.config.events_dir
    }

    /// The bucket the next ordered event goes into, when it exists and is usable (see
    /// [`layout`](crate::format::layout)): where a watcher waits for new events besides the
    /// top of the directory.
    pub fn current_bucket(&self) -> Option<PathBuf> {
        let next = self.listed_seq.saturating_add(1);
        let path = self.config.events_dir.join(bucket_name(bucket_of(next)));
        let meta = std::fs::symlink_metadata(&path).ok()?;
        usable_bucket(&meta).then_some(path)
    }

    /// The legacy directories read.
    pub fn legacy_dirs(&self) -> &[PathBuf] {
        &self.config.legacy_dirs
    }

    /// The profiles in use.
    pub fn profiles(&self) -> &Profiles {
        &self.config.profiles
    }

    /// Lists the directories and queues new events (at most one batch of files from the
    /// events directory). Returns how many events were queued.
    pub fn poll(&mut self) -> Result<usize, Error> {
        let before = self.queue.len();
        let dir = self.config.events_dir.clone();
        let id = source::dir_id(&dir)?;
        if id != self.dir_id {
            match (self.dir_id, id) {
                (Some(_), None) => self.notices.push(Notice::DirGone(dir.clone())),
                (Some(_), Some(_)) => self.notices.push(Notice::DirRecreated(dir.clone())),
                _ => {}
            }
            if self.dir_id.is_some() {
                self.forget_events_dir();
            }
            self.dir_id = id;
            self.cursor.dir = id;
        }
        // Listed again once everything listed is read; or, when the last listing left buckets
        // for later, as soon as few names are left to hand the workers: the consumer lists
        // while they read, instead of both waiting for each other at every listing.
        let list_ahead =
            self.more_listed && self.ahead.is_some() && self.backlog.len() < LIST_AHEAD;
        if id.is_some() && (!self.unread() || list_ahead) {
            self.list_primary(&dir)?;
        }
        self.read_ahead(&dir);
        // The batch's vector is kept from poll to poll: an event is large, and a new vector
        // of a batch of them on every poll made glibc consolidate its free lists each time.
        let mut primary = std::mem::take(&mut self.batch_buffer);
        let mut read = 0;
        while read < self.config.batch {
            let Some(next) = self.next_read(&dir) else {
                break;
            };
            read += 1;
            if let Some((item, notice)) = next? {
                self.notices.extend(notice);
                primary.push(item);
            }
        }
        // The worker reads the next batch while the consumer handles this one.
        self.read_ahead(&dir);
        let legacy = self.poll_legacy()?;
        self.enqueue_merged(&mut primary, legacy);
        self.batch_buffer = primary;
        Ok(self.queue.len() - before)
    }

    /// A new directory starts its seqs again: forgets the old one's.
    fn forget_events_dir(&mut self) {
        let dir = &self.config.events_dir;
        self.position.forget_events_dir();
        self.listed_seq = 0;
        self.listed_up_to = None;
        self.quiet = None;
        self.backlog.clear();
        // Whatever the workers read was of the old directory, and so is the one kept open.
        self.ahead = None;
        self.files.reset();
        self.listed_names.retain(|(d, _)| d != dir);
    }

    fn list_primary(&mut self, dir: &Path) -> Result<(), Error> {
        let events_dir = EventsDir::open(dir)?;
        let committed = events_dir.committed_seq(self.config.lock_bound)?;
        if committed.is_none() {
            self.notices.push(Notice::CounterBusy(dir.to_owned()));
        }
        // Taken after the counter and before the listing: whatever changes after either is
        // seen by the next poll.
        let now = SystemTime::now();
        let stamp = source::stamp(dir);
        let bucket =
            source::stamp(&dir.join(bucket_name(bucket_of(self.listed_seq.saturating_add(1)))));
        let counter = committed;
        match (self.quiet.take(), stamp, counter) {
            (Some(quiet), Some(stamp), Some(counter)) if quiet == (stamp, bucket, counter) => {
                self.quiet = Some(quiet);
                return Ok(());
            }
            _ => {}
        }
        #[cfg(test)]
        {
            self.listings += 1;
        }
        // Only the buckets that can hold what was not read yet (from the one holding the last
        // seq read, to see it is still there): the listing costs the same however long the
        // history before it.
        // A few buckets at a time: memory bounded however long a history is replayed; the
        // next poll lists on once these are read. A listing that took everything up to where
        // it stopped is continued after that: its buckets hold nothing more to wait for, and
        // the next listing's first event (above the last listed) shows the history is there.
        let after = match self.listed_up_to {
            Some(up_to) if up_to == self.listed_seq => up_to,
            _ => self.listed_seq.saturating_sub(1),
        };
        let listing = source::list_some(dir, after, LISTED_BUCKETS)?;
        self.more_listed = listing.up_to.is_some();
        self.listed_up_to = listing.up_to;
        let ordered = || listing.events.iter().map(|e| e.name).filter(EventFileName::is_ordered);
        let last_gone = !ordered().any(|n| n.seq >= self.listed_seq);
        if committed.is_some_and(|c| c < self.listed_seq) && last_gone {
            // The counter never goes back and the newest file is never pruned (see `cursor`):
            // the directory was recreated, in a way its identity could not tell (the same
            // inode, no birth time).
            self.notices.push(Notice::DirRecreated(dir.to_owned()));
            self.forget_events_dir();
        }
        let committed = match committed {
            // Files above the committed seq are normally those of writers still holding the
            // counter, which was read before the listing. Read again after it, a counter still
            // below a file that was visible is behind the files (set back by a restored backup,
            // or a write lost in a crash): those files are complete, and once they are older
            // than a writer in progress can be, they are delivered whatever it says.
            Some(c) if ordered().any(|n| n.seq > c) => {
                events_dir.committed_seq(self.config.lock_bound)?.map(|again| {
                    let above = listing.events.iter();
                    let above = above.filter(|e| e.name.is_ordered() && e.name.seq > again);
                    // Sorted by seq: settled up to the first file that is not.
                    above.take_while(|e| settled(dir, e)).last().map_or(again, |e| e.name.seq)
                })
            }
            other => other,
        };
        self.uncommitted =
            ordered().any(|n| n.seq > self.listed_seq && committed.is_none_or(|c| n.seq > c));
        let present: HashSet<String> = listing
            .events
            .iter()
            .filter(|e| !e.name.is_ordered())
            .map(|e| e.name.to_string())
            .collect();
        // Unordered files pruned since: forget them so the cursor stays small.
        self.position.unordered.retain(|f| present.contains(f));
        // The listing becomes the backlog in place: one buffer of names however long the
        // history, not a listing and a copy of most of it.
        let mut events = listing.events;
        events.retain(|EventFile { name, .. }| match name.unordered_ts_ns {
            None => {
                let new = name.seq > self.listed_seq && committed.is_some_and(|c| name.seq <= c);
                if new {
                    self.listed_seq = name.seq;
                }
                new && !self.position.ahead.contains(&name.seq)
            }
            Some(_) => {
                let file = name.to_string();
                !self.position.unordered.contains(&file)
                    && self.listed_names.insert((dir.to_owned(), file))
            }
        });
        if self.backlog.is_empty() {
            self.backlog = VecDeque::from(events);
        } else {
            self.backlog.extend(events);
        }
        if !self.uncommitted && !self.more_listed {
            let settled = |s: &Stamp| s.settled(now, self.config.stamp_settled);
            self.quiet = stamp
                .filter(|s| settled(s) && bucket.as_ref().is_none_or(settled))
                .zip(counter)
                .map(|(stamp, counter)| (stamp, bucket, counter));
        }
        Ok(())
    }

    /// Whether listed files remain unread: in the backlog or in flight to the worker.
    fn unread(&self) -> bool {
        !self.backlog.is_empty() || self.ahead.as_ref().is_some_and(|a| a.in_flight() > 0)
    }

    /// Starts the worker on a large enough backlog and keeps it [`ReaderConfig::read_ahead`]
    /// files ahead.
    fn read_ahead(&mut self, dir: &Path) {
        let limit = self.config.read_ahead;
        if limit == 0 || self.ahead_lost || self.backlog.is_empty() {
            return;
        }
        if self.ahead.is_none() && self.backlog.len() >= self.ahead_from {
            let (profiles, threads) =
                (self.config.profiles.clone(), self.config.read_ahead_threads);
            self.ahead = ahead::ReadAhead::start(dir.to_owned(), profiles, threads);
            self.ahead_lost = self.ahead.is_none();
        }
        if let Some(ahead) = &mut self.ahead {
            ahead.collect();
            if !ahead.top_up(&mut self.backlog, limit) {
                self.lose_ahead();
            }
        }
    }

    /// The next listed file read, in order: from the worker while it has some in flight,
    /// else read here. `None` when none is left.
    fn next_read(&mut self, dir: &Path) -> Option<ahead::Read> {
        if let Some(ahead) = &mut self.ahead {
            if let Some(read) = ahead.next() {
                return Some(read);
            }
            if ahead.in_flight() > 0 {
                self.lose_ahead();
            }
        }
        let name = self.backlog.pop_front()?;
        Some(ahead::read_one(&mut self.files, &self.config.profiles, dir, name))
    }

    /// The worker is gone (it panicked): what it was sent and did not return is read here,
    /// in order, and no worker is started again.
    fn lose_ahead(&mut self) {
        if let Some(ahead) = self.ahead.take() {
            for name in ahead.into_unread().into_iter().rev() {
                self.backlog.push_front(name);
            }
        }
        self.ahead_lost = true;
    }

    fn poll_legacy(&mut self) -> Result<Vec<Item>, Error> {
        let mut events = Vec::new();
        for dir in self.config.legacy_dirs.clone() {
            let now = SystemTime::now();
            let stamp = source::stamp(&dir);
            if stamp.is_some() && self.legacy_quiet.get(&dir) == stamp.as_ref() {
                continue;
            }
            self.legacy_quiet.remove(&dir);
            let names = source::list_legacy(&dir)?;
            if let Some(stamp) = stamp.filter(|s| s.settled(now, self.config.stamp_settled)) {
                self.legacy_quiet.insert(dir.clone(), stamp);
            }
            for name in names {
                let delivered =
                    self.position.legacy.get(&dir).is_some_and(|s| s.contains(&name.file));
                if delivered || !self.listed_names.insert((dir.clone(), name.file.clone())) {
                    continue;
                }
                events.push(self.read_legacy(&dir, &name));
            }
        }
        Ok(events)
    }

    fn read_legacy(&self, dir: &Path, name: &LegacyName) -> Item {
        let source =
            SourceRef { dir: dir.to_owned(), seq: 0, file: name.file.clone(), legacy: true };
        let event = match source::read_legacy(dir, name) {
            Ok(envelope) => map_envelope(&self.config.profiles, &envelope, source),
            Err(reason) => {
                unreadable(source, format!("unreadable legacy file: {reason}"), name.ts_ns)
            }
        };
        (event, Mark::Legacy(dir.to_owned(), name.file.clone()), None)
    }

    /// Queues primary events (in seq order) and legacy events (in time order), merged by time
    /// without reordering either list. While primary files remain listed but unread, legacy
    /// events newer than the last primary one wait for them.
    fn enqueue_merged(&mut self, primary: &mut Vec<Item>, legacy: Vec<Item>) {
        let mut legacy: Vec<Item> =
            std::mem::take(&mut self.legacy_waiting).into_iter().chain(legacy).collect();
        legacy.sort_by_key(|item| item.0.ts_ns);
        if self.unread() {
            let read_up_to = primary.iter().map(|item| item.0.ts_ns).max();
            let due = legacy.partition_point(|item| read_up_to.is_some_and(|t| item.0.ts_ns <= t));
            self.legacy_waiting = legacy.split_off(due);
        }
        let mut primary = primary.drain(..).peekable();
        let mut legacy = legacy.into_iter().peekable();
        loop {
            let take_legacy = match (primary.peek(), legacy.peek()) {
                (Some(p), Some(l)) => l.0.ts_ns < p.0.ts_ns,
                (None, Some(_)) => true,
                (_, None) => false,
            };
            let next = if take_legacy { legacy.next() } else { primary.next() };
            match next {
                Some(item) => self.queue.push_back(item),
                None => break,
            }
        }
    }

    /// Hands out the next queued event and moves the position past it.
    pub fn next_event(&mut self) -> Option<Event> {
        let (mut event, mark, digest) = self.queue.pop_front()?;
        self.echoes.mark(&mut event, digest);
        match mark {
            Mark::Ordered(seq) => {
                self.position.seq = self.position.seq.max(seq);
                self.position.ahead.retain(|s| *s > seq);
            }
            Mark::Unordered(file) => {
                self.listed_names.remove(&(self.config.events_dir.clone(), file.clone()));
                self.position.unordered.insert(file);
            }
            Mark::Legacy(dir, file) => {
                self.listed_names.remove(&(dir.clone(), file.clone()));
                self.position.legacy.entry(dir).or_default().insert(file);
            }
        }
        Some(event)
    }

    /// Whether events are queued, listed but not read yet, or left for the next listing.
    pub fn has_pending(&self) -> bool {
        !self.queue.is_empty()
            || self.unread()
            || self.more_listed
            || !self.legacy_waiting.is_empty()
    }

    /// Whether the last listing saw event files that could not be read yet because their
    /// writers still held the counter: poll again soon.
    pub fn needs_rescan(&self) -> bool {
        self.uncommitted
    }

    /// The position after the last event handed out.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The memory of the copies handed out, to recognise echoes (what a checkpoint keeps).
    pub(crate) fn echoes(&self) -> &Echoes {
        &self.echoes
    }

    /// Saves the position of a named cursor (nothing for an anonymous reader).
    pub fn commit(&self) -> Result<(), Error> {
        self.commit_at(&self.position)
    }

    /// Saves a given position (one the reader handed out earlier).
    pub fn commit_at(&self, position: &Position) -> Result<(), Error> {
        self.cursor.save(position)
    }

    /// Takes the notices gathered by the polls since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }
}

/// How old a file above the counter must be to be taken as settled: far longer than a writer
/// holds the counter lock.
const SETTLED_AFTER: Duration = Duration::from_secs(1);

/// Whether an event file is older than [`SETTLED_AFTER`] (or dated in the future: a clock
/// stepped back), so that no writer can still be writing an event that sorts before it.
fn settled(dir: &Path, file: &EventFile) -> bool {
    match std::fs::symlink_metadata(file.path(dir)).and_then(|m| m.modified()) {
        Ok(modified) => !modified.elapsed().is_ok_and(|age| age < SETTLED_AFTER),
        Err(_) => false,
    }
}

/// An event for a file whose content could not be used.
pub(crate) fn unreadable(source: SourceRef, reason: String, ts_ns: u64) -> Event {
    Event {
        v: CANONICAL_VERSION,
        kind: Kind::Unknown { reason: Some(reason) },
        cli: String::new(),
        session_id: None,
        tag: None,
        host: None,
        agent_id: None,
        turn_id: None,
        cwd: None,
        transcript_path: None,
        native: None,
        rule: "none".into(),
        ts_ns,
        host_pid: None,
        todo: None,
        input_digest: None,
        source,
        echo_of: None,
    }
}

/// Reads every event present in a directory once, from the beginning (for one-shot commands
/// such as `status`).
pub fn read_all(config: ReaderConfig) -> Result<Vec<Event>, Error> {
    let mut events = Vec::new();
    crate::ingest::follow::replay(config, |event| events.push(event))?;
    Ok(events)
}

/// Converts an envelope to an event without a directory (for tests and the demo).
pub fn event_from_envelope(profiles: &Profiles, envelope: &RawEnvelope, file: &str) -> Event {
    let source =
        SourceRef { dir: PathBuf::new(), seq: envelope.seq, file: file.to_owned(), legacy: false };
    map_envelope(profiles, envelope, source)
}

mod ahead;

#[cfg(test)]
mod tests;
