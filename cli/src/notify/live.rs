//! `hookline notify` on its own: a tracker and a [`Notifier`] fed by the follow loop over an
//! events directory, through the durable cursor [`CURSOR`].
//!
//! Once per transition, across restarts: the cursor is saved after each event the notifier
//! observed (so an event is fired at most once, and once more only after a crash between the
//! firing and the save). A restarted notifier first rebuilds the states from the events its
//! cursor covers, firing nothing, then follows from the cursor; the first run of a new cursor
//! takes everything present as history. `unknown` spells are remembered through the journal.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::deliveries::Deliveries;
use super::{Mode, Notifier, Seen};
use hookline::Error;
use hookline::decide::Decider;
use hookline::engine::{Engine, EngineConfig, Note, Observer, Purpose, RunOptions, Source, Step};
use hookline::format::clock::now_ns;
use hookline::ingest::follow::FollowNotice;
use hookline::ingest::reader::{Notice, ReaderConfig, Start};
use hookline::ingest::watch::WatchOptions;

/// The notifier's durable cursor.
pub const CURSOR: &str = "notify";

/// How often states are looked at without an event (staleness, `unknown-after`).
pub const TICK: Duration = hookline::engine::TICK;

/// The notifier, watching a running engine: it hears each transition of an event past its
/// cursor (firing) and looks at every session on each tick.
struct Watch {
    notifier: Notifier,
    deliveries: Option<Deliveries>,
}

impl Observer for Watch {
    fn applied(&mut self, step: &Step, decider: &Decider) {
        if step.applied.session.is_none() || !step.applied.changed {
            // The notifier compares states itself; an event that changed nothing cannot be a
            // transition.
            return;
        }
        let event = &step.event;
        let id = event.session_id.as_deref().or(event.tag.as_deref());
        let now = now_ns();
        let mode = if step.news { Mode::Fire } else { Mode::Prime };
        if let Some(snapshot) = id.and_then(|id| decider.tracker().snapshot(id, now)) {
            self.notifier.observe(&snapshot, Some(event), now, mode);
        }
    }

    fn tick(&mut self, decider: &Decider) {
        let now = now_ns();
        self.notifier.tick(&decider.tracker().snapshots(now), now, Mode::Fire);
        let Some(deliveries) = &mut self.deliveries else { return };
        for record in deliveries.unconfirmed() {
            let tracker = decider.tracker();
            let snapshot = record
                .key
                .as_deref()
                .and_then(|k| tracker.view_by_key(k, now))
                .or_else(|| tracker.view(&record.session, now));
            let seen = snapshot.as_ref().map_or_else(|| unknown(&record.session), Seen::from);
            self.notifier.delivery_unconfirmed_seen(&seen, record.ts_ns, &record.reason, now);
        }
    }
}

/// A session the notifier knows only by the name a delivery gave.
pub(crate) fn unknown(name: &str) -> Seen {
    Seen {
        key: format!("-:{name}"),
        session_id: Some(name.to_owned()),
        tag: None,
        host: None,
        cli: String::new(),
        cwd: None,
        state: hookline::state::State::Unknown(hookline::vocab::UnknownReason::NoEventYet),
        detail: None,
        since_ns: 0,
        age_ns: 0,
    }
}

/// Rebuilds the states (its staleness windows are `config`'s policy's) from history, firing
/// nothing, then follows the events directory of `reader` through [`CURSOR`], firing, until
/// `stop` says so: an engine over the directory, the notifier its observer. `reader.start` is
/// ignored. `deliveries`, when given, are read on each tick: an unconfirmed one fires
/// `delivery_unconfirmed`.
#[allow(clippy::too_many_arguments)] // each one is the caller's to give; a struct would only rename them
pub fn run(
    mut config: EngineConfig,
    reader: ReaderConfig,
    mut notifier: Notifier,
    deliveries: Option<Deliveries>,
    options: WatchOptions,
    stop: &(dyn Fn() -> bool + Sync),
    note: impl Fn(FollowNotice) + Send + Sync + 'static,
    ready: impl FnOnce(),
) -> Result<(), Error> {
    config.purpose = Purpose::Display;
    let reader = ReaderConfig { start: Start::Cursor(CURSOR.into()), ..reader };
    let source = Source::Directory { reader, watch: options, prune: None };
    let mut engine = Engine::open(config, source)?;
    for notice in engine.take_notices() {
        note(FollowNotice::Reader(Notice::Degraded(notice)));
    }
    // The notifier learns the sessions the history rebuilt, firing nothing.
    notifier.tick(&engine.snapshots(), now_ns(), Mode::Prime);
    let note = Arc::new(note);
    let notes = Arc::clone(&note);
    let options = RunOptions::new(move |n: Note| match n {
        Note::Follow(notice) => notes(notice),
        other => notes(FollowNotice::Reader(Notice::Degraded(other.to_string()))),
    })
    .observed(Watch { notifier, deliveries });
    let running = engine.spawn(options);
    ready();
    while !stop() {
        if let Some(why) = running.failure() {
            return Err(Error::EventsStopped { why });
        }
        thread::sleep(Duration::from_millis(50));
    }
    running.stop();
    Ok(())
}
