//! hookline: structured signals about agent CLI sessions for the orchestrators that supervise
//! them.
//!
//! The `hookline-relay` binary, run by an agent CLI as a hook, writes one event file per hook
//! call into an events directory. This crate reads that directory and turns it into what an
//! orchestrator needs:
//!
//! * the reading side of the on-disk format (re-exported from [`hookline_relay`]);
//! * the closed vocabularies every layer shares ([`vocab`]): kinds, states, reasons, dialects,
//!   questions and verdicts, as enums with their wire words;
//! * per-CLI profiles that map each native event to a small canonical vocabulary;
//! * a watcher that delivers canonical events in order, exactly once per durable cursor;
//! * per-session state with explicit `unknown`, generation, epoch and sequence;
//! * the decision layer that says what an orchestrator may safely do;
//! * `install`, `uninstall` and `doctor` for the CLIs' settings files;
//! * pane sensing ([`pane`]) and verified typing into a tmux pane ([`deliver`]);
//! * [`daemon`]: one live authority per events directory on a Unix socket, and its client;
//! * notifications on state transitions ([`notify`]) and tmux pane marks ([`pane::marks`]).
//!
//! An orchestrator's signal loop, in short: a [`ingest::watch::Watcher`] hands out canonical
//! events in order, exactly once per durable cursor; a [`state::Tracker`] folds them into
//! states; input is delivered only when the tracker grants the session's input slot.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hookline::ingest::reader::{Reader, ReaderConfig, Start};
//! use hookline::ingest::watch::{WatchOptions, Watcher};
//! use hookline::profile::{OverlayDirs, Profiles};
//! use hookline::state::Tracker;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let profiles = Profiles::load(&OverlayDirs::standard())?;
//! let events_dir = hookline::format::location::events_dir()?;
//! let start = Start::Cursor("my-orchestrator".into());
//! let reader = Reader::open(ReaderConfig::new(events_dir, start, profiles.clone()))?;
//! let mut watcher = Watcher::new(reader, WatchOptions::default())?;
//! // One generation: events older than this instant are history and authorize nothing.
//! let mut tracker = Tracker::new(profiles, hookline::format::clock::now_ns());
//! loop {
//!     if let Some(event) = watcher.next_timeout(Duration::from_secs(1))? {
//!         tracker.apply(&event);
//!         watcher.commit()?;
//!     }
//!     let now = hookline::format::clock::now_ns();
//!     if let Ok(slot) = tracker.take_input_slot("task-42", now) {
//!         // Explicitly idle, fresh, live: deliver the next prompt to task-42 once.
//!         # let _ = slot;
//!     }
//! }
//! # }
//! ```

pub use hookline_relay as format;

mod error;

pub use error::{CheckpointIgnored, CheckpointProblem, ClientError, Error, NotifyConfigError};

pub mod canonical;
pub mod checkpoint;
pub mod daemon;
pub mod decide;
pub mod deliver;
#[cfg(feature = "nats")]
pub mod fleet;
mod fsutil;
pub mod ingest;
pub mod install;
pub mod notify;
pub mod pane;
pub mod paths;
pub mod profile;
#[cfg(feature = "schema")]
pub mod schema;
pub mod serve;
pub mod state;
pub mod term;
#[cfg(test)]
mod testing;
pub mod transcript;
pub mod units;
mod untrusted;
pub mod vocab;
