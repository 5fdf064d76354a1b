//! A running engine: its source followed on a thread of its own (the one follow loop), the
//! transcripts read on another, and any number of threads answering from it at once.
//!
//! Nothing blocking runs under the engine's lock: a pane is read, a classifier consulted and
//! a transcript read holding no lock, so that `hello` is always answered and a stop always
//! ends it.

use std::collections::HashSet;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::core::{Core, Queued};
use super::sensors::{PaneSensing, Sensors};
use super::{Engine, Feed, Purpose, Step, names};
use crate::canonical::Event;
use crate::decide::{Ask, Decider, Decision, Lease, LeaseId, Planned, Policy, Released};
use crate::engine::checkpoint::{self, Cadence};
use crate::engine::errors::AnswerError;
use crate::format::clock::now_ns;
use crate::ingest::follow::{self, Commit, Delivery, FollowNotice, Sink, SinkError};
use crate::ingest::reader::Reader;
use crate::profile::Profiles;
use crate::protocol::{
    ChangesAnswer, DecideRequest, ExplainAnswer, Hello, LookupAnswer, MAX_WAIT, NextAnswer,
    PROTOCOL_VERSION, ReloadAnswer,
};
use crate::state::{Expect, Refusal, Snapshot, View};

/// How often the transcripts are read and an observer ticked.
pub const TICK: Duration = Duration::from_millis(250);

/// What a running engine tells its operator (`hookline serve` prints it on stderr).
#[derive(Debug)]
#[non_exhaustive]
pub enum Note {
    /// A notice of the follow loop.
    Follow(FollowNotice),
    /// The journal could not be written.
    Journal(String),
    /// Events stopped arriving: every answer that depends on them is refused from now on.
    WatcherStopped(crate::Error),
    /// A connection to `hookline daemon` could not be served.
    Connection(io::Error),
    /// The checkpoint could not be saved: the next start replays more history, nothing else.
    Checkpoint(crate::Error),
    /// Something the engine said while opening (a checkpoint set aside).
    Engine(String),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Follow(notice) => write!(f, "{notice}"),
            Note::Journal(error) => write!(f, "journal: {error}"),
            Note::WatcherStopped(error) => write!(f, "the watcher stopped: {error}"),
            Note::Connection(error) => write!(f, "a connection could not be served: {error}"),
            Note::Checkpoint(error) => write!(f, "checkpoint not saved: {error}"),
            Note::Engine(note) => write!(f, "{note}"),
        }
    }
}

impl Note {
    /// Whether it is a warning (something works less well than it should) rather than news.
    pub fn is_warning(&self) -> bool {
        match self {
            Note::Follow(notice) => notice.is_warning(),
            _ => true,
        }
    }
}

/// Something that watches a running engine's sessions (a notifier, a dashboard): it hears of
/// each event applied, and is ticked while none arrives, under the engine's lock (keep it
/// quick: spawn, send, never wait).
pub trait Observer: Send {
    /// An event was applied.
    fn applied(&mut self, step: &Step, decider: &Decider);
    /// A tick ([`TICK`]): states may have gone stale, transcripts changed.
    fn tick(&mut self, decider: &Decider) {
        let _ = decider;
    }
}

/// How a running engine runs.
pub struct RunOptions {
    /// Hears what the operator should know.
    pub notes: Arc<dyn Fn(Note) + Send + Sync>,
    /// Watches the sessions.
    pub observer: Option<Box<dyn Observer>>,
    /// When the source is committed.
    pub commit: Commit,
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions").field("commit", &self.commit).finish_non_exhaustive()
    }
}

impl RunOptions {
    /// Notes to `notes`, no observer, each event committed.
    pub fn new(notes: impl Fn(Note) + Send + Sync + 'static) -> RunOptions {
        RunOptions { notes: Arc::new(notes), observer: None, commit: Commit::EachEvent }
    }

    /// With an observer.
    pub fn observed(mut self, observer: impl Observer + 'static) -> RunOptions {
        self.observer = Some(Box::new(observer));
        self
    }
}

struct Inner {
    core: Core,
    observer: Option<Box<dyn Observer>>,
}

pub(crate) struct Shared {
    inner: Mutex<Inner>,
    changed: Condvar,
    /// The transcripts' followers: locked before `inner`, never after it, and held while
    /// the files are read (outside `inner`).
    sensors: Mutex<Sensors>,
    notes: Arc<dyn Fn(Note) + Send + Sync>,
    purpose: Purpose,
    checkpoints: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads what the sessions' transcripts gained (the files read holding no lock on the
    /// engine) and hands it to the decider; wakes the waiters when a state changed.
    fn sense(&self) {
        let mut sensors = self.sensors.lock().unwrap_or_else(|p| p.into_inner());
        if !sensors.active() {
            return;
        }
        let wanted = sensors.wanted(self.lock().core.decider.tracker());
        let now = now_ns();
        let gained = sensors.read(wanted, now);
        let changed = self.lock().core.observe_transcripts(gained.facts, gained.unhooked, now);
        if changed {
            self.changed.notify_all();
        }
    }

    fn stale(inner: &Inner) -> Result<(), AnswerError> {
        match &inner.core.failure {
            Some(why) => Err(AnswerError::Stale { why: why.clone() }),
            None => Ok(()),
        }
    }
}

/// A running engine ([`Engine::spawn`]): answers from any thread while its source is followed.
/// Dropping it (or [`Running::stop`]) stops following and joins its threads.
pub struct Running {
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    /// The source's own stop flags, raised with `stop`.
    halts: Vec<Arc<AtomicBool>>,
    threads: Vec<JoinHandle<()>>,
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running").finish_non_exhaustive()
    }
}

/// The follow loop's sink: each event into the core, waking the waiters.
struct FeedSink {
    shared: Arc<Shared>,
    cursor: bool,
    cadence: Cadence,
}

impl Sink for FeedSink {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        let mut inner = self.shared.lock();
        let live = inner.core.decider.is_live();
        let applied = inner.core.apply(&event);
        let Inner { core, observer } = &mut *inner;
        if let Some(observer) = observer {
            let step = Step { event, applied, live, news: self.cursor || live };
            observer.applied(&step, &core.decider);
        }
        drop(inner);
        self.shared.changed.notify_all();
        self.cadence.applied();
        Ok(Delivery::Delivered)
    }

    fn notice(&mut self, notice: FollowNotice) {
        (self.shared.notes)(Note::Follow(notice));
    }

    fn caught_up(&mut self) {
        self.shared.lock().core.catch_up();
    }

    fn checkpoint(&mut self, reader: &Reader, last: bool) {
        if !self.shared.checkpoints || !(self.cadence.due() || last && self.cadence.unsaved()) {
            return;
        }
        self.cadence = Cadence::new();
        // Taken under the lock, written after it: answers do not wait for the disk.
        let taken = {
            let inner = self.shared.lock();
            match self.shared.purpose {
                Purpose::Decisions => checkpoint::take_decider(reader, &inner.core.decider),
                Purpose::Display => checkpoint::take_tracker(reader, inner.core.decider.tracker()),
            }
        };
        if let Err(e) = taken.and_then(|taken| taken.map_or(Ok(()), checkpoint::Taken::write)) {
            (self.shared.notes)(Note::Checkpoint(e));
        }
    }
}

impl Running {
    pub(crate) fn start(engine: Engine, options: RunOptions) -> Running {
        let Engine { core, feed, sensors, purpose, checkpoints, notices, pending, .. } = engine;
        for notice in notices {
            (options.notes)(Note::Engine(notice));
        }
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner { core, observer: options.observer }),
            changed: Condvar::new(),
            sensors: Mutex::new(sensors),
            notes: options.notes,
            purpose,
            checkpoints,
        });
        {
            // Steps read while opening come first.
            let mut inner = shared.lock();
            let Inner { core, observer } = &mut *inner;
            if let Some(observer) = observer {
                for step in pending {
                    observer.applied(&step, &core.decider);
                }
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let mut halts = Vec::new();
        if let Some(feed) = feed {
            halts.extend(feed.source.halt_handle());
            threads.push(feeder(&shared, &stop, feed, options.commit));
        }
        threads.push(ticker(&shared, &stop));
        Running { shared, stop, halts, threads }
    }

    /// Stops following and waits for the threads to end.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for halt in &self.halts {
            halt.store(true, Ordering::Relaxed);
        }
        self.shared.changed.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Records that events stopped arriving: from now on every request that depends on fresh
    /// state is refused, since its answer could be stale; waiters wake.
    pub fn fail(&self, why: String) {
        self.shared.lock().core.failure = Some(why);
        self.shared.changed.notify_all();
    }

    /// Why events stopped arriving, once they did.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().core.failure.clone()
    }

    /// Reads the decider (the tracker, the policy) under the engine's lock: keep it short.
    pub fn with_decider<R>(&self, read: impl FnOnce(&Decider) -> R) -> R {
        read(&self.shared.lock().core.decider)
    }

    /// Whether this engine is a live generation.
    pub fn is_live(&self) -> bool {
        self.with_decider(Decider::is_live)
    }

    /// `hello`: who is serving.
    pub fn hello(&self) -> Hello {
        let inner = self.shared.lock();
        let generation = inner.core.decider.tracker().generation();
        Hello {
            protocol: PROTOCOL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            generation: generation.id,
            started_ns: generation.started_ns,
            events_dir: inner.core.info.events_dir.clone(),
            journal: inner.core.info.journal.clone(),
            policy: policy_map(inner.core.decider.policy()),
            watching: inner.core.failure.is_none(),
        }
    }

    /// Every session's snapshot now, most recently active first.
    pub fn snapshots(&self) -> Vec<Snapshot> {
        self.shared.sense();
        self.with_decider(|d| d.tracker().snapshots(now_ns()))
    }

    /// Every session's view now, most recently active first; refused once events stopped.
    pub fn views(&self) -> Result<Vec<View>, AnswerError> {
        self.shared.sense();
        let inner = self.shared.lock();
        Shared::stale(&inner)?;
        Ok(inner.core.decider.tracker().views(now_ns()))
    }

    /// A session's view now, named exactly; refused once events stopped.
    pub fn view(&self, session: &str) -> Result<Option<View>, AnswerError> {
        self.shared.sense();
        let inner = self.shared.lock();
        Shared::stale(&inner)?;
        Ok(inner.core.decider.view(session, now_ns()))
    }

    /// What a name a person typed names.
    pub fn lookup(&self, query: &str) -> LookupAnswer {
        self.with_decider(|d| names::lookup(d.tracker(), query))
    }

    /// Answers one question: the pane `request.tmux` names is read first and a classifier
    /// consulted, both holding no lock; an allowed `input` or `nudge` holds a lease unless the
    /// request is a peek.
    pub fn decide(&self, request: &DecideRequest) -> Result<Decision, AnswerError> {
        let mut ask = request.ask();
        if let Some(tmux) = &request.tmux {
            let (patterns, classifier) = {
                let inner = self.shared.lock();
                let decider = &inner.core.decider;
                let patterns = PaneSensing::patterns(decider.tracker(), &ask.session);
                (patterns, decider.policy().classifier.command.is_some())
            };
            ask = PaneSensing::new(tmux.clone()).read_with(ask, &patterns, classifier).map_err(
                |source| AnswerError::Pane {
                    target: tmux.target.clone(),
                    source: Box::new(source),
                },
            )?;
        }
        self.decide_ask(&ask)
    }

    /// [`Running::decide`] of an ask whose pane evidence is already in.
    pub fn decide_ask(&self, ask: &Ask) -> Result<Decision, AnswerError> {
        self.shared.sense();
        let planned = {
            let mut inner = self.shared.lock();
            Shared::stale(&inner)?;
            inner.core.decider.consult_for(ask, now_ns())
        };
        // A classifier consult runs holding no lock, bounded by its timeout.
        let note = planned.map(Planned::run);
        let mut inner = self.shared.lock();
        Shared::stale(&inner)?;
        Ok(inner.core.decider.decide_consulted(ask, now_ns(), note))
    }

    /// Takes a session's input slot as a lease (the slot's own rules only).
    pub fn take_input_slot(
        &self,
        session: &str,
        expect: Expect,
    ) -> Result<Result<Lease, Refusal>, AnswerError> {
        let mut inner = self.shared.lock();
        Shared::stale(&inner)?;
        Ok(inner.core.decider.take_input_slot(session, now_ns(), expect))
    }

    /// Gives a lease back.
    pub fn release(&self, lease: &LeaseId) -> Result<Released, AnswerError> {
        let released = self.shared.lock().core.decider.release(lease, now_ns());
        self.shared.changed.notify_all();
        released.map_err(AnswerError::Lease)
    }

    /// The leases held.
    pub fn leases(&self) -> Vec<Lease> {
        self.shared.lock().core.decider.leases(now_ns())
    }

    /// `next_event`: the session's oldest event (or transcript transition) not handed out yet,
    /// waiting up to `wait` for one; those the relay wrote before `after_ns` passed over.
    pub fn next_event(
        &self,
        session: &str,
        wait: Duration,
        after_ns: Option<u64>,
    ) -> Result<NextAnswer, AnswerError> {
        let deadline = Instant::now() + wait.min(MAX_WAIT);
        let mut inner = self.shared.lock();
        loop {
            Shared::stale(&inner)?;
            let key = inner.core.decider.tracker().session_key(session);
            let mut popped = None;
            if let Some(queue) = key.as_ref().and_then(|k| inner.core.queues.get_mut(k)) {
                while let Some(item) = queue.items.pop_front() {
                    let old = match (&item, after_ns) {
                        (Queued::Event(e), Some(after)) => e.ts_ns < after,
                        (Queued::Transcript(v), Some(after)) => v.since_ns < after,
                        _ => false,
                    };
                    if !old {
                        popped = Some((item, std::mem::take(&mut queue.dropped)));
                        break;
                    }
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if popped.is_some() || left.is_zero() {
                let view = inner.core.decider.view(session, now_ns()).map(Box::new);
                let (item, dropped) = popped.unzip();
                let (event, transcript) = match item {
                    Some(Queued::Event(event)) => (Some(event), false),
                    Some(Queued::Transcript(_)) => (None, true),
                    None => (None, false),
                };
                return Ok(NextAnswer {
                    timed_out: event.is_none() && !transcript,
                    event,
                    transcript,
                    dropped: dropped.unwrap_or(0),
                    view,
                });
            }
            inner = self
                .shared
                .changed
                .wait_timeout(inner, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// Waits until a live event of `session` (named exactly; it need not have any event yet)
    /// satisfies `matches`, or until `deadline`: for an act that waits for the structured
    /// event proving it took effect. It looks at the session's last [`super::RECENT_PER_SESSION`]
    /// live events, so one that arrived before the call is found too, and leaves the
    /// `next_event` queues alone. The newest match wins. `Err` when events stopped arriving.
    pub fn wait_for(
        &self,
        session: &str,
        deadline: Instant,
        matches: impl Fn(&Event) -> bool,
    ) -> Result<Option<Event>, AnswerError> {
        let mut inner = self.shared.lock();
        loop {
            Shared::stale(&inner)?;
            let key = inner.core.decider.tracker().session_key(session);
            let found = key
                .and_then(|k| inner.core.queues.get(&k))
                .and_then(|queue| queue.recent.iter().rev().find(|e| matches(e)).cloned());
            let left = deadline.saturating_duration_since(Instant::now());
            if found.is_some() || left.is_zero() {
                return Ok(found);
            }
            inner = self
                .shared
                .changed
                .wait_timeout(inner, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// `changes`: the changes after `after` (none without it: the answer says where the feed
    /// is), waiting up to `wait` for the first; with every session's view when `sessions`.
    /// Takes nothing and counts nothing: for displays.
    pub fn changes(
        &self,
        after: Option<u64>,
        wait: Duration,
        sessions: bool,
    ) -> Result<ChangesAnswer, AnswerError> {
        let deadline = Instant::now() + wait.min(MAX_WAIT);
        if sessions {
            self.shared.sense();
        }
        let mut inner = self.shared.lock();
        loop {
            Shared::stale(&inner)?;
            let feed = &inner.core.feed;
            let left = deadline.saturating_duration_since(Instant::now());
            let ready = after.is_none_or(|after| feed.last > after);
            if ready || left.is_zero() {
                let (changes, missed) =
                    after.map_or((Vec::new(), 0), |after| feed.after(after.min(feed.last)));
                let tracker = inner.core.decider.tracker();
                return Ok(ChangesAnswer {
                    generation: tracker.generation().id,
                    last: feed.last,
                    changes,
                    missed,
                    sessions: sessions.then(|| tracker.views(now_ns())),
                });
            }
            inner = self
                .shared
                .changed
                .wait_timeout(inner, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// `explain`: a session's view (named exactly) and its last transitions, oldest first.
    pub fn explain(&self, session: &str) -> Result<ExplainAnswer, AnswerError> {
        self.shared.sense();
        let inner = self.shared.lock();
        Shared::stale(&inner)?;
        let decider = &inner.core.decider;
        let view = decider.view(session, now_ns()).map(Box::new);
        let transitions = decider
            .tracker()
            .find(session)
            .map(|s| s.history().cloned().collect())
            .unwrap_or_default();
        Ok(ExplainAnswer { view, transitions })
    }

    /// Waits up to `wait` for anything to change (an event applied, a transcript transition,
    /// a lease given back, events stopping).
    pub fn wait_change(&self, wait: Duration) {
        let inner = self.shared.lock();
        drop(self.shared.changed.wait_timeout(inner, wait).unwrap_or_else(|p| p.into_inner()));
    }

    /// Takes a new policy, profiles and journal, keeping the live generation, its sessions and
    /// its leases (`SIGHUP`, the `reload` request).
    pub fn reload(
        &self,
        policy: Policy,
        profiles: Profiles,
        warnings: Vec<String>,
    ) -> ReloadAnswer {
        let mut inner = self.shared.lock();
        let journal = super::journal_of(&policy, &inner.core.info.events_dir);
        let names = profiles.iter().map(|p| p.name.clone()).collect();
        let map = policy_map(&policy);
        inner.core.reload(policy, profiles, journal);
        drop(inner);
        self.shared.changed.notify_all();
        ReloadAnswer { policy: map, profiles: names, warnings }
    }

    /// Journal write failures since the last call.
    pub fn take_journal_errors(&self) -> Vec<String> {
        self.shared.lock().core.decider.take_journal_errors()
    }

    /// Runs `act` on the decider under the engine's lock, waking waiters after: for the
    /// delivery use case.
    pub(crate) fn act<R>(&self, act: impl FnOnce(&mut Decider) -> R) -> R {
        let result = act(&mut self.shared.lock().core.decider);
        self.shared.changed.notify_all();
        result
    }

    /// The failure check and a read of the decider, under the lock.
    pub(crate) fn read_live<R>(&self, read: impl FnOnce(&Decider) -> R) -> Result<R, AnswerError> {
        let inner = self.shared.lock();
        Shared::stale(&inner)?;
        Ok(read(&inner.core.decider))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The policy, key by key, as `hello` and `reload` show it.
fn policy_map(policy: &Policy) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(policy) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

/// The thread of the one follow loop.
fn feeder(
    shared: &Arc<Shared>,
    stop: &Arc<AtomicBool>,
    feed: Feed,
    commit: Commit,
) -> JoinHandle<()> {
    let (shared, stop) = (Arc::clone(shared), Arc::clone(stop));
    thread::spawn(move || {
        let Feed { mut source, cursor, caught_up, prune } = feed;
        if caught_up {
            shared.lock().core.catch_up();
        }
        let mut sink = FeedSink { shared: Arc::clone(&shared), cursor, cadence: Cadence::new() };
        let stopping = || stop.load(Ordering::Relaxed);
        let ended = follow::follow_with(&mut *source, &mut sink, commit, prune.as_ref(), &stopping);
        let failure = match ended {
            Err(e) => Some(e),
            // A source that ended by itself (a stream read to its end, a pusher gone) leaves
            // no fresh state to answer from.
            Ok(_) if !stopping() => {
                Some(crate::Error::EventsStopped { why: "the source of events ended".into() })
            }
            Ok(_) => None,
        };
        if let Some(e) = failure {
            let why = crate::errors::chain(&e);
            (shared.notes)(Note::WatcherStopped(e));
            shared.lock().core.failure = Some(why);
            shared.changed.notify_all();
        }
    })
}

/// The thread that reads the transcripts (holding no lock on the engine while it reads) and
/// ticks the observer: a transition only a transcript shows reaches the waiters within a tick.
fn ticker(shared: &Arc<Shared>, stop: &Arc<AtomicBool>) -> JoinHandle<()> {
    let (shared, stop) = (Arc::clone(shared), Arc::clone(stop));
    thread::spawn(move || {
        let mut seen_errors: HashSet<String> = HashSet::new();
        while !stop.load(Ordering::Relaxed) {
            shared.sense();
            {
                let mut inner = shared.lock();
                let Inner { core, observer } = &mut *inner;
                if let Some(observer) = observer {
                    observer.tick(&core.decider);
                }
                for error in core.decider.take_journal_errors() {
                    if seen_errors.insert(error.clone()) {
                        (shared.notes)(Note::Journal(error));
                    }
                }
            }
            let until = Instant::now() + TICK;
            while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                thread::sleep(Duration::from_millis(25));
            }
        }
    })
}
