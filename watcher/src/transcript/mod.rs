//! Transcript signals: what each CLI's own transcript says about the current turn, read
//! carefully enough to be the second-rank source the signal precedence reserves for it.
//!
//! Some states have no hook at all (Esc interrupting a Claude Code turn or denying its
//! permission dialog fires nothing), but every CLI writes a transcript. This module reads it:
//!
//! * [`tail`]: a bounded tail follower bound to the file's identity, which never reads the
//!   whole file and never replays a line it already read as new;
//! * [`entry`]: per-format entry readers ([`claude`], [`codex`], [`gemini`], [`qwen`]) that match
//!   entries by type and role, never by text anywhere in the line, into closed
//!   [`Observation`]s;
//! * [`reading`]: the fold of a session's entries into its current turn, and the
//!   [`TranscriptEvidence`](crate::decide::TranscriptEvidence) it makes;
//! * [`follower`]: the three together, for one session; [`sessions`]: one per session a
//!   tracker knows.
//!
//! A transcript can only make an answer more careful: its facts count only where they are
//! newer than the session's last structured event, and nothing here can make a session
//! `idle` or authorize input. `docs/transcripts.md` has the rules per CLI.

pub mod claude;
pub mod codex;
pub mod entry;
pub mod follower;
pub mod gemini;
pub mod qwen;
pub mod reading;
pub mod sessions;
pub mod tail;

pub use entry::{Entry, Interrupt, Observation};
pub use follower::{Follower, Update, read_tail};
pub use reading::{Reading, Stamped, TranscriptFacts};
pub use sessions::{Followers, Unhooked, Wanted};
pub use tail::{Change, Line, Poll, Tail, TailLimits};

#[cfg(test)]
mod tests;
