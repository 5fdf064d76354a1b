//! hookline's on-disk event format: the one owner of what the relay writes and readers read.
//!
//! The relay (the `hookline-relay` binary of this package, the command an agent CLI runs as a
//! hook) writes each hook call as one file into an events directory, atomically, wrapped in a
//! versioned [`Envelope`](envelope::Envelope), with a sequence number that is strictly
//! increasing across every relay writing to that directory. The `hookline` crate reads them
//! through the same types, so the two can never drift. The relay program itself (its
//! arguments, how it reads stdin, its run) is private to the binary; the reference for the
//! format is `docs/format.md`.
//!
//! * [`envelope`]: the JSON document inside each event file, and its bounds.
//! * [`filename`]: how event files, temp files and the counter are named.
//! * [`layout`]: where event files are (buckets by `seq`, the flat layout of older relays) and
//!   how to list only those after a given `seq`.
//! * [`store`]: the events directory itself: safety checks, sequence allocation, atomic writes,
//!   and the committed-sequence read that lets readers never miss an event.
//! * [`location`]: where the events directory and the diagnostics file live.
//! * [`rawjson`]: reading a payload without refusing anything the relay accepted.
//! * [`find`]: finding a byte without CPU feature detection (a cost on every start in a VM).
//! * [`clock`]: the clock the timestamps are in.
//! * [`diag`]: the relay's diagnostics file, written instead of stderr, read by `doctor`.
//! * [`caplog`]: the size-capped NDJSON log it is (the decision journal is one too).

pub mod caplog;
pub mod clock;
pub mod diag;
pub mod envelope;
mod error;
pub mod filename;
pub mod find;
pub mod layout;
pub mod location;
pub mod rawjson;
pub mod store;
mod sys;

pub use error::{Error, UnsafeReason};

/// The relay's version, recorded in every envelope.
pub const RELAY_VERSION: &str = env!("CARGO_PKG_VERSION");
