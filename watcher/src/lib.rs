//! hookline: structured signals about agent CLI sessions for the orchestrators that supervise
//! them.
//!
//! The `hookline-relay` binary, run by an agent CLI as a hook, writes one event file per hook
//! call into an events directory. This crate reads that directory and turns it into what an
//! orchestrator needs:
//!
//! * the reading side of the on-disk format (re-exported from [`hookline_relay`]);
//! * per-CLI profiles that map each native event to a small canonical vocabulary;
//! * a watcher that delivers canonical events in order, exactly once per durable cursor;
//! * per-session state with explicit `unknown`, generation, epoch and sequence;
//! * the decision layer that says what an orchestrator may safely do;
//! * `install`, `uninstall` and `doctor` for the CLIs' settings files.

pub use hookline_relay as format;

mod error;

pub use error::Error;

pub mod canonical;
pub mod cursor;
pub mod decide;
mod fsutil;
pub mod locate;
pub mod mapping;
pub mod profile;
pub mod reader;
pub mod retention;
pub mod source;
pub mod state;
#[cfg(test)]
mod testing;
pub mod units;
pub mod watch;
