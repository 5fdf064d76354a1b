//! The loop every consumer of an events directory runs, once: hand each event to a [`Sink`],
//! save the cursor only once the sink has it, prune on a cadence, pass the notices on.
//!
//! `hookline watch` follows into NDJSON on stdout and `hookline serve` into its hub; a daemon,
//! a forwarder or a notifier is one more [`Sink`]. [`follow`] waits for new events until told
//! to stop; [`drain`] reads what is there and returns (`hookline watch --no-follow`, and the
//! history a tracker is rebuilt from).
//!
//! The order is what makes a cursor exact: an event is delivered, then the cursor is saved,
//! so a crash between the two hands that one event out again, and nothing is ever skipped. An
//! event the sink could not take (it closed) is not committed.
//!
//! A cursor that cannot be saved (a full disk, a read-only filesystem) does not stop the feed:
//! the failure is passed to the sink as a [`FollowNotice::CursorNotSaved`], the save is retried
//! with a growing pause (from [`RETRY_FIRST`] to [`RETRY_MAX`]), and events keep being delivered
//! meanwhile; [`FollowNotice::CursorSaved`] says when it works again. Until then a restart
//! hands out again the events delivered since the last save. Only when following ends with the
//! cursor still unsaved is the failure returned.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::Error;
use crate::canonical::Event;
use crate::ingest::reader::{Notice, Reader, ReaderConfig, Start};
use crate::ingest::retention::{self, RetentionPolicy};
use crate::ingest::watch::Watcher;

/// How often [`follow`] looks at its stop flag while no event arrives.
pub const TICK: Duration = Duration::from_millis(200);

/// The pause before the first retry of a cursor save that failed; it doubles on each failure.
pub const RETRY_FIRST: Duration = Duration::from_millis(100);

/// The longest pause between retries of a cursor save that keeps failing.
pub const RETRY_MAX: Duration = Duration::from_secs(30);

/// Where the events go.
pub trait Sink {
    /// Hands one event on. [`Delivery::Delivered`] means it is as safe as the sink can make
    /// it (written and flushed, sent, applied): the cursor is saved after it.
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError>;

    /// Something the operator should know: a directory recreated or gone, a file
    /// quarantined, events kept for a cursor.
    fn notice(&mut self, notice: FollowNotice);

    /// Called by [`follow`] with the reader the events come from, after each event delivered
    /// and on each tick without one (`last` false), and once as following ends (`last`
    /// true): where a sink that folds state saves its checkpoint, on its own cadence (see
    /// [`crate::engine::checkpoint::Cadence`]). Nothing by default.
    fn checkpoint(&mut self, reader: &Reader, last: bool) {
        let _ = (reader, last);
    }

    /// Called once, when the source says it has handed out everything that was there when it
    /// opened ([`EventSource::caught_up`]): what arrives from now on is live. Nothing by
    /// default.
    fn caught_up(&mut self) {}
}

/// Where a follow loop's events come from: an events directory's [`Watcher`], or a central
/// consumer of many hosts' events (`fleet::central`). The loop ([`follow_with`]) reads it,
/// hands each event to a [`Sink`], and commits the source (saves the cursor, acknowledges the
/// messages) only once the sink has the events.
pub trait EventSource {
    /// The next event, waiting up to `wait` for one; `None` when none came.
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error>;

    /// Notices met since the last call.
    fn take_notices(&mut self) -> Vec<FollowNotice> {
        Vec::new()
    }

    /// Makes every event handed out so far durable for this consumer: the next one to read
    /// the source starts after them (a cursor saved, messages acknowledged).
    fn commit(&mut self) -> Result<(), Error>;

    /// Whether the source has handed out everything that was there when it opened: the
    /// history. What it hands out after that has arrived since, and is live.
    fn caught_up(&self) -> bool {
        true
    }

    /// The reader of an events directory, for a sink that saves checkpoints of what it folded.
    fn reader(&self) -> Option<&Reader> {
        None
    }

    /// Whether the source has nothing more to hand out (a reader of a stream's history only,
    /// once caught up): the loop commits and ends.
    fn exhausted(&self) -> bool {
        false
    }

    /// For a source that may block longer than a read's wait (connecting to a server): a flag
    /// that, raised, makes it give up at once. Whoever stops the loop raises it.
    fn halt_handle(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        None
    }
}

impl EventSource for Watcher {
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        self.next_timeout(wait)
    }

    fn take_notices(&mut self) -> Vec<FollowNotice> {
        Watcher::take_notices(self).into_iter().map(FollowNotice::Reader).collect()
    }

    fn commit(&mut self) -> Result<(), Error> {
        Watcher::commit(self)
    }

    fn reader(&self) -> Option<&Reader> {
        Some(Watcher::reader(self))
    }
}

/// When a follow loop commits its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// After each event the sink took: a restart repeats at most the one event in flight.
    EachEvent,
    /// After `every` events, `after` the first uncommitted one, or when the source has
    /// nothing new: for a sink whose repeats are harmless (a forwarder, whose server drops a
    /// republish by its message id), sparing a durable save per event.
    Batched {
        /// At most this many events uncommitted.
        every: u64,
        /// At most this long after the first uncommitted one.
        after: Duration,
    },
}

/// What a sink that failed says.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// What became of a delivered event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Taken: save the cursor and go on.
    Delivered,
    /// Taken, and the last one wanted: save the cursor and stop.
    Last,
    /// Not taken: whoever reads the sink has gone (a closed pipe). Stop without saving.
    Closed,
}

/// Why [`follow`] or [`drain`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Everything there was has been delivered ([`drain`], or a source that does not follow).
    CaughtUp,
    /// The stop flag was raised.
    Stopped,
    /// The sink took its last event.
    Last,
    /// The sink closed.
    Closed,
}

/// Something [`follow`] or [`drain`] tells its sink about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowNotice {
    /// A notice of the reader.
    Reader(Notice),
    /// Pruning kept this many event files old enough to go, because a cursor has not
    /// consumed them.
    Unconsumed(usize),
    /// The cursor could not be saved; events keep being delivered, and the save is retried.
    CursorNotSaved {
        /// Why, with its causes.
        error: String,
        /// When the next attempt is.
        retry_in: Duration,
        /// How many events were delivered since the last save (a restart repeats them).
        unsaved: u64,
    },
    /// The cursor was saved again after failing.
    CursorSaved {
        /// How many attempts failed before.
        failures: u32,
    },
}

impl FollowNotice {
    /// Whether it is a warning (something works less well than it should) rather than news.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            FollowNotice::Reader(
                Notice::CounterBusy(_) | Notice::Degraded(_) | Notice::Quarantined { .. }
            ) | FollowNotice::CursorNotSaved { .. }
        )
    }
}

impl fmt::Display for FollowNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FollowNotice::Reader(notice) => match notice {
                Notice::DirRecreated(dir) => {
                    write!(f, "{} was recreated; reading it from its start", dir.display())
                }
                Notice::DirGone(dir) => write!(f, "{} disappeared; waiting for it", dir.display()),
                Notice::CounterBusy(dir) => write!(
                    f,
                    "the counter of {} is locked by a stuck writer; ordered events wait",
                    dir.display()
                ),
                Notice::Degraded(why) => write!(f, "{why}"),
                Notice::Quarantined { file, reason } => {
                    write!(f, "quarantined {}: {reason}", file.display())
                }
            },
            FollowNotice::Unconsumed(events) => {
                write!(f, "{events} old events are kept because a cursor has not consumed them")
            }
            FollowNotice::CursorNotSaved { error, retry_in, unsaved } => write!(
                f,
                "{error}; the feed goes on, and saving the cursor is retried in {} (a restart \
                 now would deliver again the {unsaved} events delivered since its last save)",
                crate::units::format_duration(*retry_in)
            ),
            FollowNotice::CursorSaved { failures } => {
                write!(f, "the cursor is saved again, after {failures} failed attempts to save it")
            }
        }
    }
}

/// Pruning while following: what every cursor has consumed goes, on a cadence.
#[derive(Debug, Clone)]
pub struct Prune {
    /// The events directory.
    pub events_dir: PathBuf,
    /// What is kept.
    pub policy: RetentionPolicy,
    /// How often: once when following starts, then at most this often.
    pub every: Duration,
}

impl Prune {
    /// Prunes if it never did (`last` is `None`) or `every` has passed since `last`; the
    /// notice to pass on, when pruning kept unconsumed events.
    pub fn if_due(&self, last: &mut Option<Instant>) -> Result<Option<FollowNotice>, Error> {
        if last.is_some_and(|t| t.elapsed() < self.every) {
            return Ok(None);
        }
        *last = Some(Instant::now());
        let report = retention::prune(&self.events_dir, &self.policy, SystemTime::now())?;
        Ok((report.unconsumed > 0).then_some(FollowNotice::Unconsumed(report.unconsumed)))
    }
}

/// Follows a watcher into a sink until `stop` says so or the sink ends it, pruning as `prune`
/// asks. The cursor is saved after each event delivered (a failed save is retried, see the
/// module's documentation), and once more on stop.
pub fn follow(
    watcher: &mut Watcher,
    sink: &mut impl Sink,
    prune: Option<&Prune>,
    stop: &dyn Fn() -> bool,
) -> Result<Ended, Error> {
    follow_with(watcher, sink, Commit::EachEvent, prune, stop)
}

/// The one follow loop: reads `source` into `sink` until `stop` says so or the sink ends it,
/// committing the source as `commit` says and only ever after the sink took the events,
/// pruning as `prune` asks, telling the sink once when the source caught up with its history,
/// and giving it its checkpoint ticks. A failed commit on the filesystem is retried with a
/// growing pause while the feed goes on (see the module's documentation).
pub fn follow_with<S: EventSource + ?Sized>(
    source: &mut S,
    sink: &mut impl Sink,
    commit: Commit,
    prune: Option<&Prune>,
    stop: &dyn Fn() -> bool,
) -> Result<Ended, Error> {
    let mut last_prune = None::<Instant>;
    let mut saver = Saver::default();
    let mut caught_up = false;
    let mut first_unsaved = Instant::now();
    while !stop() {
        if let Some(notice) = prune.map(|p| p.if_due(&mut last_prune)).transpose()?.flatten() {
            sink.notice(notice);
        }
        if !caught_up && source.caught_up() {
            caught_up = true;
            sink.caught_up();
        }
        if source.exhausted() {
            saver.last(|| source.commit(), sink)?;
            return Ok(Ended::CaughtUp);
        }
        let wait = match commit {
            Commit::Batched { .. } if saver.unsaved > 0 => Duration::from_millis(5),
            _ => TICK,
        };
        let event = source.next_event(wait)?;
        for notice in source.take_notices() {
            sink.notice(notice);
        }
        let Some(event) = event else {
            saver.retry_if_due(|| source.commit(), sink)?;
            if let Some(reader) = source.reader() {
                sink.checkpoint(reader, false);
            }
            continue;
        };
        if !caught_up && source.caught_up() {
            caught_up = true;
            sink.caught_up();
        }
        let delivery = sink.deliver(event).map_err(Error::Sink)?;
        let due = match commit {
            Commit::EachEvent => true,
            Commit::Batched { every, after } => {
                if saver.unsaved == 0 {
                    first_unsaved = Instant::now();
                }
                saver.unsaved + 1 >= every || first_unsaved.elapsed() >= after
            }
        };
        let settled = if due || delivery != Delivery::Delivered {
            saver.settle(delivery, || source.commit(), sink)?
        } else {
            saver.unsaved += 1;
            None
        };
        if let Some(ended) = settled {
            if ended != Ended::Closed
                && let Some(reader) = source.reader()
            {
                sink.checkpoint(reader, true);
            }
            return Ok(ended);
        }
        if let Some(reader) = source.reader() {
            sink.checkpoint(reader, false);
        }
    }
    saver.last(|| source.commit(), sink)?;
    if let Some(reader) = source.reader() {
        sink.checkpoint(reader, true);
    }
    Ok(Ended::Stopped)
}

/// Delivers what the reader has, then returns: once nothing is left, or when `stop` says so
/// or the sink ends it. The cursor is saved after each event delivered (a failed save is
/// retried, see the module's documentation).
pub fn drain(
    reader: &mut Reader,
    sink: &mut impl Sink,
    stop: &dyn Fn() -> bool,
) -> Result<Ended, Error> {
    let mut saver = Saver::default();
    loop {
        let queued = reader.poll()?;
        pass_on(reader.take_notices(), sink);
        while let Some(event) = reader.next_event() {
            let delivery = sink.deliver(event).map_err(Error::Sink)?;
            if let Some(ended) = saver.settle(delivery, || reader.commit(), sink)? {
                return Ok(ended);
            }
        }
        if queued == 0 && !reader.has_pending() {
            saver.unsaved_last(|| reader.commit(), sink)?;
            return Ok(Ended::CaughtUp);
        }
        if stop() {
            saver.unsaved_last(|| reader.commit(), sink)?;
            return Ok(Ended::Stopped);
        }
    }
}

/// Opens a reader from the start of its directories and delivers everything there to `apply`:
/// the history a tracker or a decider is rebuilt from. Returns the reader, caught up (a live
/// consumer follows on from it), and the notices met on the way.
pub fn replay(
    config: ReaderConfig,
    apply: impl FnMut(Event),
) -> Result<(Reader, Vec<FollowNotice>), Error> {
    let mut reader = Reader::open(ReaderConfig { start: Start::Beginning, ..config })?;
    let mut sink = Apply::new(apply);
    drain(&mut reader, &mut sink, &|| false)?;
    Ok((reader, sink.notices))
}

/// Saves the cursor after each event delivered, and keeps the feed going when it cannot:
/// a save that fails on the filesystem (a full disk) is reported and retried with a growing
/// pause, the events delivered meanwhile counted.
#[derive(Debug, Default)]
struct Saver {
    failing: Option<Failing>,
    /// Events delivered since the last save.
    unsaved: u64,
}

#[derive(Debug)]
struct Failing {
    failures: u32,
    pause: Duration,
    next: Instant,
}

impl Saver {
    /// Saves the cursor after an event the sink took (unless a failed save waits for its
    /// retry); `Some` when following ends there.
    fn settle(
        &mut self,
        delivery: Delivery,
        commit: impl FnOnce() -> Result<(), Error>,
        sink: &mut impl Sink,
    ) -> Result<Option<Ended>, Error> {
        match delivery {
            Delivery::Delivered => {
                self.unsaved += 1;
                self.retry_if_due(commit, sink).map(|()| None)
            }
            Delivery::Last => {
                self.unsaved += 1;
                self.last(commit, sink).map(|()| Some(Ended::Last))
            }
            Delivery::Closed => Ok(Some(Ended::Closed)),
        }
    }

    /// Saves, unless a failed save waits for its retry.
    fn retry_if_due(
        &mut self,
        commit: impl FnOnce() -> Result<(), Error>,
        sink: &mut impl Sink,
    ) -> Result<(), Error> {
        match &self.failing {
            Some(failing) if Instant::now() < failing.next => Ok(()),
            _ => self.attempt(commit, sink).map(drop),
        }
    }

    /// The last save, as following ends: its failure is returned.
    fn last(
        &mut self,
        commit: impl FnOnce() -> Result<(), Error>,
        sink: &mut impl Sink,
    ) -> Result<(), Error> {
        match self.attempt(commit, sink)? {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The last save, as following ends, when the cursor is not saved yet.
    fn unsaved_last(
        &mut self,
        commit: impl FnOnce() -> Result<(), Error>,
        sink: &mut impl Sink,
    ) -> Result<(), Error> {
        if self.failing.is_none() {
            return Ok(());
        }
        self.last(commit, sink)
    }

    /// One save: a filesystem failure is reported and scheduled for a retry, and handed back;
    /// any other failure is returned as an error.
    fn attempt(
        &mut self,
        commit: impl FnOnce() -> Result<(), Error>,
        sink: &mut impl Sink,
    ) -> Result<Option<Error>, Error> {
        let error = match commit() {
            Ok(()) => {
                self.unsaved = 0;
                if let Some(failing) = self.failing.take() {
                    sink.notice(FollowNotice::CursorSaved { failures: failing.failures });
                }
                return Ok(None);
            }
            Err(error @ Error::Io { .. }) => error,
            Err(error) => return Err(error),
        };
        let failing = self.failing.get_or_insert(Failing {
            failures: 0,
            pause: RETRY_FIRST / 2,
            next: Instant::now(),
        });
        failing.failures += 1;
        failing.pause = (failing.pause * 2).min(RETRY_MAX);
        failing.next = Instant::now() + failing.pause;
        // The first failure, then once per longest pause: a full disk is not a flood.
        if failing.failures == 1 || failing.pause == RETRY_MAX {
            sink.notice(FollowNotice::CursorNotSaved {
                error: crate::errors::chain(&error),
                retry_in: failing.pause,
                unsaved: self.unsaved,
            });
        }
        Ok(Some(error))
    }
}

fn pass_on(notices: Vec<Notice>, sink: &mut impl Sink) {
    for notice in notices {
        sink.notice(FollowNotice::Reader(notice));
    }
}

/// A sink that hands each event to a function and keeps the notices for the caller: the
/// history a tracker or a decider is rebuilt from, events collected by a test.
#[derive(Debug)]
pub struct Apply<F> {
    apply: F,
    /// The notices, in order.
    pub notices: Vec<FollowNotice>,
}

impl<F: FnMut(Event)> Apply<F> {
    /// A sink calling `apply` for each event.
    pub fn new(apply: F) -> Apply<F> {
        Apply { apply, notices: Vec::new() }
    }
}

impl<F: FnMut(Event)> Sink for Apply<F> {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        (self.apply)(event);
        Ok(Delivery::Delivered)
    }

    fn notice(&mut self, notice: FollowNotice) {
        self.notices.push(notice);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ingest::watch::WatchOptions;
    use crate::profile::Profiles;
    use crate::testing::write_event;

    fn cursor_reader(dir: &Path) -> Reader {
        let config =
            ReaderConfig::new(dir, Start::Cursor("c".into()), Profiles::shipped().unwrap());
        Reader::open(config).unwrap()
    }

    /// Takes `take` events, then answers `then`.
    struct Takes {
        take: usize,
        then: Delivery,
        seqs: Vec<u64>,
    }

    impl Sink for Takes {
        fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
            if self.seqs.len() == self.take {
                if self.then == Delivery::Closed {
                    return Ok(Delivery::Closed);
                }
                self.seqs.push(event.source.seq);
                return Ok(self.then);
            }
            self.seqs.push(event.source.seq);
            Ok(Delivery::Delivered)
        }

        fn notice(&mut self, _: FollowNotice) {}
    }

    fn rest(dir: &Path) -> Vec<u64> {
        let mut sink = Takes { take: usize::MAX, then: Delivery::Delivered, seqs: Vec::new() };
        assert_eq!(drain(&mut cursor_reader(dir), &mut sink, &|| false).unwrap(), Ended::CaughtUp);
        sink.seqs
    }

    #[test]
    fn an_event_a_closed_sink_did_not_take_is_the_next_consumers_first() {
        let tmp = tempfile::tempdir().unwrap();
        for native in ["SessionStart", "UserPromptSubmit", "Stop"] {
            write_event(tmp.path(), native, "s", None);
        }
        let mut sink = Takes { take: 1, then: Delivery::Closed, seqs: Vec::new() };
        let ended = drain(&mut cursor_reader(tmp.path()), &mut sink, &|| false).unwrap();
        assert_eq!((ended, sink.seqs), (Ended::Closed, vec![1]));
        assert_eq!(rest(tmp.path()), [2, 3]);
    }

    #[test]
    fn following_commits_the_last_event_wanted_and_stops_there() {
        let tmp = tempfile::tempdir().unwrap();
        for native in ["SessionStart", "UserPromptSubmit", "Stop"] {
            write_event(tmp.path(), native, "s", None);
        }
        let mut watcher = Watcher::new(cursor_reader(tmp.path()), WatchOptions::default()).unwrap();
        let mut sink = Takes { take: 1, then: Delivery::Last, seqs: Vec::new() };
        let ended = follow(&mut watcher, &mut sink, None, &|| false).unwrap();
        assert_eq!((ended, sink.seqs), (Ended::Last, vec![1, 2]));
        drop(watcher);
        assert_eq!(rest(tmp.path()), [3]);
    }

    #[test]
    fn a_raised_stop_flag_ends_following_with_the_cursor_saved() {
        let tmp = tempfile::tempdir().unwrap();
        write_event(tmp.path(), "SessionStart", "s", None);
        let mut watcher = Watcher::new(cursor_reader(tmp.path()), WatchOptions::default()).unwrap();
        let mut sink = Takes { take: usize::MAX, then: Delivery::Delivered, seqs: Vec::new() };
        let delivered = std::cell::Cell::new(false);
        let stop = || delivered.replace(true);
        assert_eq!(follow(&mut watcher, &mut sink, None, &stop).unwrap(), Ended::Stopped);
        drop(watcher);
        assert_eq!(rest(tmp.path()), Vec::<u64>::new());
    }

    #[test]
    fn notices_say_what_happened_and_which_are_warnings() {
        let gone = FollowNotice::Reader(Notice::DirGone("/ev".into()));
        assert_eq!(gone.to_string(), "/ev disappeared; waiting for it");
        assert!(!gone.is_warning());
        let quarantined = FollowNotice::Reader(Notice::Quarantined {
            file: "/ev/.quarantine/x.json".into(),
            reason: "not a valid envelope".into(),
        });
        assert_eq!(
            quarantined.to_string(),
            "quarantined /ev/.quarantine/x.json: not a valid envelope"
        );
        assert!(quarantined.is_warning());
        let unsaved = FollowNotice::CursorNotSaved {
            error: "cannot write /ev/.cursors/x: No space left on device".into(),
            retry_in: Duration::from_millis(400),
            unsaved: 2,
        };
        assert_eq!(
            unsaved.to_string(),
            "cannot write /ev/.cursors/x: No space left on device; the feed goes on, and saving \
             the cursor is retried in 400ms (a restart now would deliver again the 2 events \
             delivered since its last save)"
        );
        assert!(unsaved.is_warning());
        assert!(!FollowNotice::CursorSaved { failures: 3 }.is_warning());
        let kept = FollowNotice::Unconsumed(3);
        assert_eq!(
            kept.to_string(),
            "3 old events are kept because a cursor has not consumed them"
        );
    }
}
