//! hookline's relay and the on-disk event format it writes.
//!
//! The relay is the command an agent CLI (Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor)
//! runs as a hook. It reads the hook's JSON from stdin (or, for Codex's legacy `notify`, from
//! its last argument), wraps it in a versioned [`Envelope`](envelope::Envelope) and writes it
//! as one file into an events directory, atomically, with a sequence number that is strictly
//! increasing across every relay writing to that directory. It never prints anything and always
//! exits 0.
//!
//! This crate is the single owner of the format: the relay binary writes it, the `hookline`
//! crate reads it through the same types, so the two can never drift.
//!
//! * [`envelope`]: the JSON document inside each event file.
//! * [`filename`]: how event files, temp files and the counter are named.
//! * [`location`]: where the events directory and the diagnostics file live.
//! * [`store`]: the events directory itself: safety checks, sequence allocation, atomic writes,
//!   and the committed-sequence read that lets readers never miss an event.
//! * [`input`]: reading the hook's stdin with a size cap and a deadline.
//! * [`diag`]: the size-capped diagnostics file that replaces stderr ([`caplog`]).
//! * [`relay`]: the relay program itself (argument parsing and the whole run).

pub mod caplog;
pub mod diag;
pub mod envelope;
mod error;
pub mod filename;
pub mod input;
pub mod location;
pub mod relay;
pub mod store;
mod sys;

pub use error::Error;

/// The relay's version, recorded in every envelope.
pub const RELAY_VERSION: &str = env!("CARGO_PKG_VERSION");
