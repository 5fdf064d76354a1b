//! hookline: structured signals about agent CLI sessions for the orchestrators that supervise
//! them.
//!
//! hookline is three crates, by layer:
//!
//! * `hookline-relay` (`relay/`): the relay, the hook executable an agent CLI runs on every
//!   hook call, which writes one event file per call into an events directory; and the
//!   on-disk event format, its library, which both sides use;
//! * `hookline` (`watcher/`, this crate): the library an orchestrator embeds, from the events
//!   directory to what it may safely do;
//! * `hookline-cli` (`cli/`): the `hookline` command line (`watch`, `status`, `decide`,
//!   `deliver`, the `daemon`, `install`/`doctor`, `notify`, `top`, `tmux`, `web`), built on
//!   this crate.
//!
//! This crate holds:
//!
//! * the reading side of the on-disk format (re-exported from [`hookline_relay`] as
//!   [`format`](mod@format));
//! * the closed vocabularies every layer shares ([`vocab`]): kinds, states, reasons, dialects,
//!   questions and verdicts, as enums with their wire words;
//! * per-CLI profiles ([`profile`]) that map each native event to a small canonical
//!   vocabulary ([`canonical`]);
//! * a watcher ([`ingest`]) that delivers canonical events in order, exactly once per durable
//!   cursor;
//! * per-session state ([`state`]) with explicit `unknown`, generation, epoch and sequence;
//! * the decision layer ([`decide`]) that says what an orchestrator may safely do, and its
//!   leases;
//! * the [`engine`] that assembles them, and checkpoints of its state
//!   ([`engine::checkpoint`], framed by [`checkpoint`]);
//! * pane sensing ([`pane`]) and verified typing into a tmux pane ([`deliver`]);
//! * the decision [`protocol`], its server ([`serve`]) and the [`daemon`]: one live
//!   authority per events directory on a Unix socket, and its client;
//! * with the `nats` feature (off by default), the fleet: events of many machines through NATS
//!   JetStream; with `schema`, the JSON Schemas of the wire formats.
//!
//! It links no command-line parser, no terminal UI and, without `nats`, no async runtime.
//!
//! An orchestrator's signal loop, in short: an [`engine::Engine`] reads the events directory
//! (its history replayed, shown, never authorizing), follows what arrives (live), and answers
//! questions; an allowed `input` takes the idle's single slot as a lease, held until something
//! is typed under it or it is given back. No tracker or decider built outside an engine can
//! authorize input: only the engine says when its source has caught up.
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
//! // One generation: the events present now are history; what arrives next is live.
//! let mut engine = Engine::open(config, Source::directory(reader))?;
//! loop {
//!     while engine.poll(Duration::from_millis(200))?.is_some() {}
//!     let decision = engine.decide(&Ask::new("task-42", Question::Input));
//!     if let Some(lease) = &decision.lease {
//!         // Explicitly idle, fresh, live: deliver the next prompt to task-42 once, under the
//!         // lease; or give the slot back with `engine.release(lease)`.
//!         # let _ = lease;
//!     }
//! }
//! # }
//! ```
//!
//! ## Layers
//!
//! The modules import each other in one direction only, from the bottom up:
//!
//! 1. the model: the closed vocabularies ([`vocab`]), canonical events and session keys
//!    ([`canonical`]), [`units`], the evidence the sensors bring ([`evidence`]), the digest,
//!    the host probes ([`host`]) and the error types ([`Error`]), which import nothing above
//!    them;
//! 2. configuration and files: [`config`], [`paths`], [`fsutil`], the framing of checkpoint
//!    files ([`checkpoint`]) and the [`profile`]s;
//! 3. the sensors: [`ingest`] (the events), [`transcript`]s and [`pane`]s;
//! 4. what they fold into: the sessions' [`state`], then the decisions ([`decide`]) and
//!    verified typing ([`deliver`]);
//! 5. the [`protocol`], the [`engine`] that assembles the layers below and answers it (and
//!    says what goes into a checkpoint, each stateful part in its own wire form), and on top
//!    the server ([`serve`]), the [`daemon`] and the fleet.
//!
//! A module's tests may reach up (a decider's tests run an engine); its code may not.
//! `watcher/tests/integration/layers.rs` reads the sources and fails naming any circle.

pub use hookline_relay as format;

mod errors;

pub use engine::{AnswerError, DeliverError};
pub use errors::{
    CheckpointIgnored, CheckpointProblem, ClientError, ConfigError, ConfigKind, CursorError,
    DaemonStartError, Error, EventsDirFrom, EventsDirProblem, TmuxProblem,
};

pub mod canonical;
pub mod checkpoint;
pub mod config;
pub mod daemon;
pub mod decide;
pub mod deliver;
mod digest;
pub mod engine;
pub mod evidence;
#[cfg(feature = "nats")]
pub mod fleet;
pub mod fsutil;
pub mod host;
pub mod ingest;
pub mod pane;
pub mod paths;
pub mod profile;
pub mod protocol;
#[cfg(feature = "schema")]
pub mod schema;
pub mod serve;
pub mod state;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;
pub mod transcript;
pub mod units;
mod untrusted;
pub mod vocab;
