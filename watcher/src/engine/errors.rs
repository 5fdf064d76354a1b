//! Why the engine's operations fail: a request it cannot answer ([`AnswerError`]), a delivery
//! that cannot run ([`DeliverError`]).
//!
//! They live here, not in the crate's `errors.rs`, because they carry types of the layers
//! below the engine (a lease problem, a text that cannot be typed): `errors.rs` belongs to the
//! model layer and imports none of them (see "Layers" in the crate docs).

use std::fmt;

use crate::Error;

/// Why a running engine ([`crate::engine::Running`]) cannot answer a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnswerError {
    /// Events stopped arriving: an answer would be stale.
    Stale {
        /// Why they stopped.
        why: String,
    },
    /// The session's pane cannot be read.
    Pane {
        /// The pane as the request named it.
        target: String,
        /// The cause.
        source: Box<Error>,
    },
    /// A lease cannot be used or given back.
    Lease(crate::decide::LeaseProblem),
}

impl AnswerError {
    /// Why events stopped arriving, or the whole chain of another error: what a delivery
    /// that could not read the engine says of it.
    pub(crate) fn why(self) -> String {
        match self {
            AnswerError::Stale { why } => why,
            other => crate::errors::chain(&other),
        }
    }
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Stale { why } => write!(
                f,
                "events stopped arriving ({why}): answers would be stale; restart hookline serve \
                 (or the daemon)"
            ),
            AnswerError::Pane { target, .. } => write!(f, "cannot read tmux pane {target:?}"),
            AnswerError::Lease(problem) => write!(f, "{problem}"),
        }
    }
}

impl std::error::Error for AnswerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnswerError::Pane { source, .. } => Some(source.as_ref()),
            AnswerError::Lease(problem) => Some(problem),
            AnswerError::Stale { .. } => None,
        }
    }
}

/// Why a delivery ([`crate::engine::Running::deliver`]) could not run at all. Nothing was
/// typed: a delivery that may have typed anything ends with an outcome, never with this.
#[derive(Debug)]
#[non_exhaustive]
pub enum DeliverError {
    /// The text cannot be typed.
    Text(crate::deliver::TextProblem),
    /// A nudge with no text, and nothing for it to quote.
    NothingToQuote {
        /// The session.
        session: String,
    },
    /// The pane cannot be read or found.
    Pane {
        /// The pane as the request named it.
        target: String,
        /// The cause.
        source: Box<Error>,
    },
    /// The session's CLI has no profile here.
    NoProfile {
        /// The CLI.
        cli: String,
    },
    /// Events stopped arriving: nothing may be typed.
    Stale {
        /// Why they stopped.
        why: String,
    },
}

impl fmt::Display for DeliverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeliverError::Text(problem) => write!(f, "nothing typed: {problem}"),
            DeliverError::NothingToQuote { session } => write!(
                f,
                "nothing typed: the nudge of {session:?} has no text to quote (no open item of its \
                 task list, no livelock); give the text to type"
            ),
            DeliverError::Pane { target, .. } => {
                write!(f, "nothing typed: cannot use tmux pane {target:?}")
            }
            DeliverError::NoProfile { cli } => {
                write!(f, "nothing typed: the session's CLI {cli:?} has no profile here")
            }
            DeliverError::Stale { why } => {
                write!(f, "events stopped arriving ({why}): nothing may be typed")
            }
        }
    }
}

impl std::error::Error for DeliverError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DeliverError::Pane { source, .. } => Some(source.as_ref()),
            // The message says the problem itself.
            DeliverError::Text(_)
            | DeliverError::NothingToQuote { .. }
            | DeliverError::NoProfile { .. }
            | DeliverError::Stale { .. } => None,
        }
    }
}
