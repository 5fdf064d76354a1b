//! `hookline notify` on its own: a tracker and a [`Notifier`] fed by the follow loop over an
//! events directory, through the durable cursor [`CURSOR`].
//!
//! Once per transition, across restarts: the cursor is saved after each event the notifier
//! observed (so an event is fired at most once, and once more only after a crash between the
//! firing and the save). A restarted notifier first rebuilds the states from the events its
//! cursor covers, firing nothing, then follows from the cursor; the first run of a new cursor
//! takes everything present as history. `unknown` spells are remembered through the journal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use super::{Mode, Notifier};
use crate::Error;
use crate::canonical::Event;
use crate::checkpoint;
use crate::format::clock::now_ns;
use crate::ingest::cursor::CURSORS_DIR;
use crate::ingest::follow::{self, Delivery, FollowNotice, Sink, SinkError};
use crate::ingest::reader::{Notice, Reader, ReaderConfig, Start};
use crate::ingest::watch::{WatchOptions, Watcher};
use crate::state::Tracker;

/// The notifier's durable cursor.
pub const CURSOR: &str = "notify";

/// How often states are looked at without an event (staleness, `unknown-after`).
pub const TICK: Duration = Duration::from_millis(250);

/// A tracker and the notifier that watches it, shared by the follow loop and the ticker.
#[derive(Debug)]
pub struct Watched {
    /// The tracker.
    pub tracker: Tracker,
    /// The notifier.
    pub notifier: Notifier,
}

impl Watched {
    /// Applies one event, and shows the notifier the session it touched.
    pub fn apply(&mut self, event: &Event, mode: Mode) {
        let applied = self.tracker.apply(event);
        if applied.session.is_none() || !applied.changed {
            // The notifier compares states itself; an event that changed nothing cannot be a
            // transition.
            return;
        }
        let id = event.session_id.as_deref().or(event.tag.as_deref());
        let now = now_ns();
        if let Some(snapshot) = id.and_then(|id| self.tracker.snapshot(id, now)) {
            self.notifier.observe(&snapshot, Some(event), now, mode);
        }
    }

    /// Looks at every session without an event.
    pub fn tick(&mut self, mode: Mode) {
        let now = now_ns();
        let snapshots = self.tracker.snapshots(now);
        self.notifier.tick(&snapshots, now, mode);
    }
}

struct Feed<N> {
    watched: Arc<Mutex<Watched>>,
    mode: Mode,
    note: N,
}

fn lock(watched: &Mutex<Watched>) -> MutexGuard<'_, Watched> {
    watched.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<N: FnMut(FollowNotice)> Sink for Feed<N> {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        lock(&self.watched).apply(&event, self.mode);
        Ok(Delivery::Delivered)
    }

    fn notice(&mut self, notice: FollowNotice) {
        (self.note)(notice);
    }
}

/// Rebuilds the states of `tracker` (a new one: its staleness windows are the caller's) from
/// history, firing nothing, then follows the events directory of `config` through [`CURSOR`],
/// firing, until `stop` says so. `config.start` is ignored.
pub fn run(
    config: ReaderConfig,
    tracker: Tracker,
    notifier: Notifier,
    options: WatchOptions,
    stop: &(dyn Fn() -> bool + Sync),
    mut note: impl FnMut(FollowNotice),
    ready: impl FnOnce(),
) -> Result<(), Error> {
    let events_dir = config.events_dir.clone();
    let known = events_dir.join(CURSORS_DIR).join(format!("{CURSOR}.json")).is_file();
    let mut reader =
        Reader::open(ReaderConfig { start: Start::Cursor(CURSOR.into()), ..config.clone() })?;
    let (mut tracker, mut config) = (tracker, config);
    let position = reader.position().clone();
    if known {
        // The states up to the cursor, from the checkpoint when it covers no event past the
        // cursor (those are fired, not learnt). The notifier learns the sessions it restored
        // from the ticks below, as it would have from their events.
        let resumed = checkpoint::resume_tracker_within(&mut config, &mut tracker, &position);
        if let Some(why) = resumed.note() {
            note(FollowNotice::Reader(Notice::Degraded(format!(
                "{why}; replaying the whole history"
            ))));
        }
    }
    let watched = Arc::new(Mutex::new(Watched { tracker, notifier }));
    if known {
        let (_, notices) = follow::replay(config, |event| {
            if position.covers(&event.source) {
                lock(&watched).apply(&event, Mode::Prime);
            }
        })?;
        notices.into_iter().for_each(&mut note);
    } else {
        let mut feed = Feed { watched: Arc::clone(&watched), mode: Mode::Prime, note: &mut note };
        follow::drain(&mut reader, &mut feed, &|| false)?;
    }
    lock(&watched).tick(Mode::Prime);
    let done = AtomicBool::new(false);
    thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) && !stop() {
                thread::sleep(TICK);
                lock(&watched).tick(Mode::Fire);
            }
        });
        let result = (|| {
            let mut watcher = Watcher::new(reader, options)?;
            ready();
            let mut feed =
                Feed { watched: Arc::clone(&watched), mode: Mode::Fire, note: &mut note };
            follow::follow(&mut watcher, &mut feed, None, stop).map(drop)
        })();
        done.store(true, Ordering::Relaxed);
        result
    })
}
