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

/// Where the events go.
pub trait Sink {
    /// Hands one event on. [`Delivery::Delivered`] means it is as safe as the sink can make
    /// it (written and flushed, sent, applied): the cursor is saved after it.
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError>;

    /// Something the operator should know: a directory recreated or gone, a file
    /// quarantined, events kept for a cursor.
    fn notice(&mut self, notice: FollowNotice);
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
    /// Everything there was has been delivered ([`drain`] only).
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
}

impl FollowNotice {
    /// Whether it is a warning (something works less well than it should) rather than news.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            FollowNotice::Reader(
                Notice::CounterBusy(_) | Notice::Degraded(_) | Notice::Quarantined { .. }
            )
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
/// asks. The cursor is saved after each event delivered, and once more on stop.
pub fn follow(
    watcher: &mut Watcher,
    sink: &mut impl Sink,
    prune: Option<&Prune>,
    stop: &dyn Fn() -> bool,
) -> Result<Ended, Error> {
    let mut last_prune = None::<Instant>;
    while !stop() {
        if let Some(notice) = prune.map(|p| p.if_due(&mut last_prune)).transpose()?.flatten() {
            sink.notice(notice);
        }
        let event = watcher.next_timeout(TICK)?;
        pass_on(watcher.take_notices(), sink);
        let Some(event) = event else { continue };
        let delivery = sink.deliver(event).map_err(Error::Sink)?;
        if let Some(ended) = settle(delivery, || watcher.commit())? {
            return Ok(ended);
        }
    }
    watcher.commit()?;
    Ok(Ended::Stopped)
}

/// Delivers what the reader has, then returns: once nothing is left, or when `stop` says so
/// or the sink ends it. The cursor is saved after each event delivered.
pub fn drain(
    reader: &mut Reader,
    sink: &mut impl Sink,
    stop: &dyn Fn() -> bool,
) -> Result<Ended, Error> {
    loop {
        let queued = reader.poll()?;
        pass_on(reader.take_notices(), sink);
        while let Some(event) = reader.next_event() {
            let delivery = sink.deliver(event).map_err(Error::Sink)?;
            if let Some(ended) = settle(delivery, || reader.commit())? {
                return Ok(ended);
            }
        }
        if queued == 0 && !reader.has_pending() {
            return Ok(Ended::CaughtUp);
        }
        if stop() {
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

/// Saves the cursor after an event the sink took; `Some` when following ends there.
fn settle(
    delivery: Delivery,
    commit: impl FnOnce() -> Result<(), Error>,
) -> Result<Option<Ended>, Error> {
    match delivery {
        Delivery::Delivered => commit().map(|()| None),
        Delivery::Last => commit().map(|()| Some(Ended::Last)),
        Delivery::Closed => Ok(Some(Ended::Closed)),
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
        let kept = FollowNotice::Unconsumed(3);
        assert_eq!(
            kept.to_string(),
            "3 old events are kept because a cursor has not consumed them"
        );
    }
}
