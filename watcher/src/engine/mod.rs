//! The engine: the one place that assembles hookline's pipeline, and the one authority over
//! input.
//!
//! An engine reads canonical events from a [`Source`] (an events directory, a central
//! consumer of many hosts, events an embedder pushes), folds them into one tracker generation
//! and its decider (policy, journal, leases), reads what the sessions' transcripts add, and
//! saves checkpoints of what it folded. Every command is an adapter over it: `status`,
//! `explain` and a one-shot `decide` over [`Engine::replay`]; `serve`, `daemon`, `top`,
//! `tmux --follow` and `notify` over a [`Running`] engine ([`Engine::spawn`]).
//!
//! Whether an answer can authorize is the engine's alone, and there is one way for it to:
//!
//! * [`Engine::replay`] reads history once. It answers every question and never authorizes
//!   input or a nudge.
//! * [`Engine::open`] reads history, then follows the source; it becomes a *live* generation
//!   when the source says its history has been read (for a directory: everything present when
//!   it opened). Only events applied after that can make a session eligible for input.
//!
//! No tracker or decider built outside an engine can ever authorize input: only the engine
//! says that a source caught up.
//!
//! Input is a lease ([`crate::decide::lease`]): an allowed `input` or `nudge` takes the
//! idle's single slot and hands back a [`LeaseId`], held until
//! something is typed under it ([`Running::deliver`]) or it is released
//! ([`Engine::release`]). A peek ([`Ask::peek`](crate::decide::Ask::peek)) takes nothing.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hookline::decide::{Ask, Policy, Question};
//! use hookline::engine::{Engine, EngineConfig, Source};
//! use hookline::ingest::reader::{ReaderConfig, Start};
//! use hookline::profile::{OverlayDirs, Profiles};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let profiles = Profiles::load(&OverlayDirs::standard())?;
//! let events_dir = hookline::format::location::events_dir()?;
//! let config = EngineConfig::new(profiles.clone(), Policy::default(), &events_dir);
//! let reader = ReaderConfig::new(&events_dir, Start::Beginning, profiles);
//! // The events present now are history: shown, never authorizing. What arrives next is live.
//! let mut engine = Engine::open(config, Source::directory(reader))?;
//! loop {
//!     while engine.poll(Duration::from_millis(200))?.is_some() {}
//!     let decision = engine.decide(&Ask::new("task-42", Question::Input));
//!     if let Some(lease) = &decision.lease {
//!         // Explicitly idle, fresh, live: type the next prompt into task-42, once; or give
//!         // the slot back with engine.release(lease) if you do not.
//!         # let _ = lease;
//!     }
//! }
//! # }
//! ```

pub mod checkpoint;
mod core;
pub mod deliver;
mod errors;
mod names;
mod running;
mod sensors;
mod source;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use self::checkpoint::{Cadence, Resumed};
use self::core::Core;
pub use self::core::{EngineInfo, RECENT_PER_SESSION};
pub use self::errors::{AnswerError, DeliverError};
pub use self::running::{Note, Observer, RunOptions, Running, TICK};
use self::sensors::Sensors;
pub use self::sensors::{PANE_GAP, PANE_SAMPLES, PaneSensing};
pub use self::source::{PushSource, Pusher, Source, pushed};
use crate::Error;
use crate::canonical::Event;
use crate::decide::{
    Ask, Decider, Decision, HostProbe, Journal, Lease, LeaseId, LeaseProblem, Policy, Released,
};
use crate::format::clock::now_ns;
use crate::ingest::follow::{self, EventSource, FollowNotice, Prune};
use crate::ingest::reader::{Reader, ReaderConfig, Start};
use crate::ingest::watch::{WatchOptions, Watcher};
use crate::profile::Profiles;
use crate::protocol::LookupAnswer;
use crate::state::{Applied, Expect, Refusal, Snapshot, Tracker, View};
use crate::transcript::Unhooked;

/// How many transitions of each session an engine keeps, for `explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum History {
    /// The last this many of every session.
    Last(usize),
    /// Every one of the sessions a name could find (by prefix), [`crate::state::HISTORY`] of
    /// the others: what one session's `explain` needs. No checkpoint is read: it holds no
    /// transitions.
    AllOf(String),
}

/// What an engine's state is for: which checkpoint it reads and saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Showing states (`status`, `top`, `tmux`, `notify`): the tracker's checkpoint.
    Display,
    /// Deciding (`decide`, `serve`, the daemon): the decider's, with what the decisions
    /// remember.
    Decisions,
}

/// What an engine is built from.
#[non_exhaustive]
pub struct EngineConfig {
    /// The profiles.
    pub profiles: Profiles,
    /// The policy.
    pub policy: Policy,
    /// The events directory: where the journal goes by default, checkpoints live, and a
    /// daemon's socket is.
    pub events_dir: PathBuf,
    /// How many transitions of each session to keep.
    pub history: History,
    /// Which checkpoint to read and save.
    pub purpose: Purpose,
    /// Read and save checkpoints (on by default).
    pub checkpoints: bool,
    /// Read the sessions' transcripts (on by default): evidence that can only make an answer
    /// more careful.
    pub transcripts: bool,
    /// Fallback producers: transcripts of sessions without hooks.
    pub unhooked: Vec<Unhooked>,
    /// A replayed engine's withheld `nudge` and `crashed` verdicts count toward
    /// `escalate.withheld-in-a-row` (`hookline decide --count`). A live engine's always do.
    pub count_withheld: bool,
    /// The host process probe (tests inject one).
    pub probe: Option<Box<dyn HostProbe>>,
}

impl std::fmt::Debug for EngineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineConfig")
            .field("events_dir", &self.events_dir)
            .field("history", &self.history)
            .field("purpose", &self.purpose)
            .finish_non_exhaustive()
    }
}

impl EngineConfig {
    /// A configuration with the defaults: the last [`crate::state::HISTORY`] transitions,
    /// for decisions, checkpoints and transcripts read.
    pub fn new(profiles: Profiles, policy: Policy, events_dir: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            profiles,
            policy,
            events_dir: events_dir.into(),
            history: History::Last(crate::state::HISTORY),
            purpose: Purpose::Decisions,
            checkpoints: true,
            transcripts: true,
            unhooked: Vec::new(),
            count_withheld: false,
            probe: None,
        }
    }

    /// The journal the policy asks for, beside the events directory by default.
    pub fn journal(&self) -> Option<Journal> {
        journal_of(&self.policy, &self.events_dir)
    }
}

/// The journal `policy` asks for, beside `events_dir` by default.
pub fn journal_of(policy: &Policy, events_dir: &Path) -> Option<Journal> {
    policy.journal_enabled.then(|| {
        let path = policy.journal_path.clone().unwrap_or_else(|| Journal::default_path(events_dir));
        Journal::new(path, policy.journal_max_bytes)
    })
}

/// Saves the checkpoint of what `decider` folded from what `reader` handed out; the note to
/// give when it could not.
fn save(purpose: Purpose, reader: &Reader, decider: &Decider) -> Option<String> {
    let saved = match purpose {
        Purpose::Decisions => checkpoint::save_decider(reader, decider),
        Purpose::Display => checkpoint::save_tracker(reader, decider.tracker()),
    };
    saved.err().map(|e| format!("checkpoint not saved ({e}); the next reader replays more history"))
}

/// One event an engine applied.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Step {
    /// The event.
    pub event: Event,
    /// What applying it did.
    pub applied: Applied,
    /// It arrived after the source caught up: of this live generation.
    pub live: bool,
    /// It is news to this consumer: after its cursor (a consumer with a cursor), or live (one
    /// without).
    pub news: bool,
}

/// A source being read, with what the engine needs to know of it.
struct Feed {
    source: Box<dyn EventSource + Send>,
    /// Events after a consumer's cursor are news, even those present when it opened.
    cursor: bool,
    /// The source has said it caught up, and the engine knows it.
    caught_up: bool,
    prune: Option<Prune>,
}

/// A directory's watcher that says it caught up once a read found nothing more to hand out:
/// everything present when it opened has been read.
struct DirectorySource {
    watcher: Watcher,
    drained: bool,
}

impl EventSource for DirectorySource {
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        let event = self.watcher.next_event(wait)?;
        if event.is_none() {
            self.drained = true;
        }
        Ok(event)
    }

    fn take_notices(&mut self) -> Vec<FollowNotice> {
        EventSource::take_notices(&mut self.watcher)
    }

    fn commit(&mut self) -> Result<(), Error> {
        EventSource::commit(&mut self.watcher)
    }

    fn caught_up(&self) -> bool {
        self.drained
    }

    fn reader(&self) -> Option<&Reader> {
        Some(self.watcher.reader())
    }
}

/// An engine: see the module documentation. Single-threaded; [`Engine::spawn`] makes a
/// [`Running`] one that follows its source on a thread of its own and answers any thread.
pub struct Engine {
    core: Core,
    feed: Option<Feed>,
    sensors: Sensors,
    purpose: Purpose,
    checkpoints: bool,
    cadence: Cadence,
    notices: Vec<String>,
    /// Steps of a cursor's news read while opening, handed out by [`Engine::poll`] first.
    pending: VecDeque<Step>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("decider", &self.core.decider)
            .field("live", &self.is_live())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// A decider for `config`, not fed yet.
    fn build_decider(config: &mut EngineConfig, one_shot: bool) -> Decider {
        let tracker = Tracker::new(config.profiles.clone(), now_ns());
        let tracker = match &config.history {
            History::Last(n) => tracker.with_history(*n),
            History::AllOf(query) => tracker.with_full_history_of(query),
        };
        let mut decider = Decider::new(tracker, config.policy.clone());
        if one_shot {
            decider = decider.one_shot();
            if config.count_withheld {
                decider = decider.counting();
            }
        }
        if let Some(journal) = config.journal() {
            decider = decider.with_journal(journal);
        }
        if let Some(probe) = config.probe.take() {
            decider = decider.with_boxed_probe(probe);
        }
        decider
    }

    fn new(mut config: EngineConfig, one_shot: bool) -> Engine {
        let decider = Engine::build_decider(&mut config, one_shot);
        let info = EngineInfo {
            events_dir: config.events_dir.clone(),
            journal: decider.journal().map(|j| j.path().to_owned()),
        };
        Engine {
            core: Core::new(decider, info),
            feed: None,
            sensors: Sensors::new(config.transcripts, std::mem::take(&mut config.unhooked)),
            purpose: config.purpose,
            checkpoints: config.checkpoints && !matches!(config.history, History::AllOf(_)),
            cadence: Cadence::new(),
            notices: Vec::new(),
            pending: VecDeque::new(),
        }
    }

    /// Reads what the events directory (and the legacy directories) of `reader` hold, once:
    /// every question is answered, and no input or nudge is ever authorized. The checkpoint is
    /// read first when one fits, and saved after when worth it; the sessions' transcripts are
    /// read once.
    pub fn replay(config: EngineConfig, reader: ReaderConfig) -> Result<Engine, Error> {
        let mut engine = Engine::new(config, true);
        let reader = ReaderConfig { start: Start::Beginning, ..reader };
        let _ = engine.read_history(reader)?;
        engine.sensors.poll_once(&mut engine.core, now_ns());
        Ok(engine)
    }

    /// Reads the history `source` holds, then follows it: see the module documentation.
    /// For a directory read from its beginning, everything present now is replayed here,
    /// before this returns; for a consumer with a cursor, what the cursor covers is, and the
    /// rest is handed out by [`Engine::poll`] as news.
    pub fn open(config: EngineConfig, source: Source) -> Result<Engine, Error> {
        let mut engine = Engine::new(config, false);
        match source {
            Source::Directory { reader, watch, prune } => match reader.start.clone() {
                Start::Cursor(name) => engine.open_cursor(reader, &name, watch, prune)?,
                _ => {
                    let reader = ReaderConfig { start: Start::Beginning, ..reader };
                    let reader = engine.read_history(reader)?;
                    engine.core.catch_up();
                    let watcher = Watcher::new(reader, watch)?;
                    let source = Box::new(DirectorySource { watcher, drained: true });
                    engine.feed = Some(Feed { source, cursor: false, caught_up: true, prune });
                }
            },
            Source::Custom(source) => {
                engine.feed = Some(Feed { source, cursor: false, caught_up: false, prune: None });
            }
        }
        Ok(engine)
    }

    /// Replays `reader` from its beginning (or its checkpoint) into the decider; returns the
    /// reader, caught up.
    fn read_history(&mut self, mut reader: ReaderConfig) -> Result<Reader, Error> {
        let resumed =
            if self.checkpoints { self.resume(&mut reader, None) } else { Resumed::Beginning };
        let mut applied = 0u64;
        let core = &mut self.core;
        let (reader, notices) = follow::replay(reader, |event| {
            core.apply(&event);
            applied += 1;
        })?;
        self.notices.extend(notices.iter().map(ToString::to_string));
        if self.checkpoints && Cadence::one_shot_saves(&resumed, applied) {
            self.save_checkpoint(&reader);
        }
        Ok(reader)
    }

    /// A consumer with a cursor: what the cursor covers is history (from the checkpoint when
    /// it covers nothing past the cursor); the first run of a new cursor takes everything
    /// present as history. What follows the cursor is news.
    fn open_cursor(
        &mut self,
        config: ReaderConfig,
        name: &str,
        watch: WatchOptions,
        prune: Option<Prune>,
    ) -> Result<(), Error> {
        let events_dir = config.events_dir.clone();
        let known = crate::ingest::cursor::exists(&events_dir, name);
        let mut reader =
            Reader::open(ReaderConfig { start: Start::Cursor(name.to_owned()), ..config.clone() })?;
        if known {
            let position = reader.position().clone();
            let mut history = ReaderConfig { start: Start::Beginning, ..config };
            if self.checkpoints {
                self.resume(&mut history, Some(&position));
            }
            let core = &mut self.core;
            let (_, notices) = follow::replay(history, |event| {
                if position.covers(&event.source) {
                    core.apply(&event);
                }
            })?;
            self.notices.extend(notices.iter().map(ToString::to_string));
        } else {
            let core = &mut self.core;
            let mut sink = follow::Apply::new(|event: Event| {
                core.apply(&event);
            });
            follow::drain(&mut reader, &mut sink, &|| false)?;
            self.notices.extend(sink.notices.iter().map(ToString::to_string));
        }
        let watcher = Watcher::new(reader, watch)?;
        let source = Box::new(DirectorySource { watcher, drained: !known });
        if !known {
            self.core.catch_up();
        }
        self.feed = Some(Feed { source, cursor: true, caught_up: !known, prune });
        Ok(())
    }

    fn resume(
        &mut self,
        reader: &mut ReaderConfig,
        within: Option<&crate::ingest::cursor::Position>,
    ) -> Resumed {
        let decider = &mut self.core.decider;
        let resumed = match (self.purpose, within) {
            (Purpose::Decisions, _) => checkpoint::resume_decider(reader, decider),
            (Purpose::Display, None) => checkpoint::resume_tracker(reader, decider.tracker_mut()),
            (Purpose::Display, Some(limit)) => {
                checkpoint::resume_tracker_within(reader, decider.tracker_mut(), limit)
            }
        };
        if let Some(note) = resumed.note() {
            self.notices.push(format!("{note}; replaying the whole history"));
        }
        resumed
    }

    fn save_checkpoint(&mut self, reader: &Reader) {
        if let Some(note) = save(self.purpose, reader, &self.core.decider) {
            self.notices.push(note);
        }
    }

    /// What the engine has to say since the last call: a checkpoint set aside or not saved,
    /// the follow loop's notices.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Applies the next event of the source, waiting up to `wait` for one, and commits it
    /// (the cursor saved, the message acknowledged); `None` when none came. A replayed engine
    /// has no source: always `None`.
    pub fn poll(&mut self, wait: Duration) -> Result<Option<Step>, Error> {
        if let Some(step) = self.pending.pop_front() {
            return Ok(Some(step));
        }
        let Some(feed) = self.feed.as_mut() else { return Ok(None) };
        if !feed.caught_up && feed.source.caught_up() {
            feed.caught_up = true;
            self.core.catch_up();
        }
        let event = feed.source.next_event(wait)?;
        for notice in feed.source.take_notices() {
            self.notices.push(notice.to_string());
        }
        if !feed.caught_up && feed.source.caught_up() {
            feed.caught_up = true;
            self.core.catch_up();
        }
        let Some(event) = event else {
            self.sensors.poll_once(&mut self.core, now_ns());
            return Ok(None);
        };
        let live = self.core.decider.is_live();
        let applied = self.core.apply(&event);
        let news = feed.cursor || live;
        feed.source.commit()?;
        self.cadence.applied();
        if self.checkpoints
            && self.cadence.due()
            && let Some(reader) = feed.source.reader()
            && let Some(note) = save(self.purpose, reader, &self.core.decider)
        {
            self.notices.push(note);
        }
        Ok(Some(Step { event, applied, live, news }))
    }

    /// Makes this engine follow its source on a thread of its own, answering any thread: see
    /// [`Running`]. A replayed engine runs too (it answers, nothing more arrives).
    pub fn spawn(self, options: RunOptions) -> Running {
        Running::start(self, options)
    }

    /// Whether this engine is a live generation: it followed its source past its history.
    pub fn is_live(&self) -> bool {
        self.core.decider.is_live()
    }

    /// The decider: the tracker, the policy, the journal.
    pub fn decider(&self) -> &Decider {
        &self.core.decider
    }

    /// The tracker.
    pub fn tracker(&self) -> &Tracker {
        self.core.decider.tracker()
    }

    /// Where its state comes from.
    pub fn info(&self) -> &EngineInfo {
        &self.core.info
    }

    /// Answers one question now (see [`Decider::decide`]): an allowed `input` or `nudge` of a
    /// live engine holds a lease ([`Decision::lease`]) unless the ask is a peek.
    pub fn decide(&mut self, ask: &Ask) -> Decision {
        self.core.decider.decide(ask, now_ns())
    }

    /// Reads the session's pane first (with the patterns of its CLI), then answers as
    /// [`Engine::decide`] does.
    pub fn decide_with_pane(&mut self, ask: Ask, pane: &PaneSensing) -> Result<Decision, Error> {
        let classifier = self.core.decider.policy().classifier.command.is_some();
        let ask = pane.read_into(ask, self.tracker(), classifier)?;
        Ok(self.decide(&ask))
    }

    /// Takes a session's input slot as a lease, checking nothing but the slot's own rules.
    pub fn take_input_slot(&mut self, session: &str, expect: Expect) -> Result<Lease, Refusal> {
        self.core.decider.take_input_slot(session, now_ns(), expect)
    }

    /// Gives a lease back (see [`Decider::release`]).
    pub fn release(&mut self, lease: &LeaseId) -> Result<Released, LeaseProblem> {
        self.core.decider.release(lease, now_ns())
    }

    /// Every session's snapshot now, most recently active first.
    pub fn snapshots(&self) -> Vec<Snapshot> {
        self.tracker().snapshots(now_ns())
    }

    /// Every session's view now, most recently active first.
    pub fn views(&self) -> Vec<View> {
        self.tracker().views(now_ns())
    }

    /// A session's view now, named exactly (its id or tag).
    pub fn view(&self, session: &str) -> Option<View> {
        self.tracker().view(session, now_ns())
    }

    /// What a name a person typed names: exactly, by prefix, several sessions, or none (with
    /// the known names it resembles).
    pub fn lookup(&self, query: &str) -> LookupAnswer {
        names::lookup(self.tracker(), query)
    }

    /// Journal write failures since the last call.
    pub fn take_journal_errors(&mut self) -> Vec<String> {
        self.core.decider.take_journal_errors()
    }
}
