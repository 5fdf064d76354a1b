//! What a transcript says about its session's current turn: the fold of its entries, and the
//! caller evidence it makes.

use crate::evidence::TranscriptEvidence;
use crate::vocab::{FailureKind, TranscriptFormat};

use super::entry::{Entry, Interrupt, Observation};

/// What hookline read in a session's transcript, as the tracker keeps it ([`crate::state::Tracker::observe_transcript`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFacts {
    /// The transcript file.
    pub path: String,
    /// Its format.
    pub format: TranscriptFormat,
    /// What it says about the current turn.
    pub reading: Reading,
    /// When it last grew (arrival time): the transcript activity key, distinct from the
    /// pane's.
    pub grew_ns: Option<u64>,
}

/// A fact and when the transcript wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamped<T> {
    /// The fact.
    pub what: T,
    /// When: the entry's own timestamp, else when the line was read.
    pub ts_ns: u64,
}

/// The transcript's view of the current turn, folded entry by entry. A
/// [`Observation::TurnStarted`] starts it over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// When the current turn's first entry was written (the human's prompt).
    pub turn_started_ns: Option<u64>,
    /// The last entry says the turn goes on (assistant output, a tool call or its result).
    pub in_progress: bool,
    /// The turn was interrupted by its human, and when.
    pub interrupted: Option<Stamped<Interrupt>>,
    /// The turn ended on an API error, and when.
    pub api_error: Option<Stamped<FailureKind>>,
    /// The last entry says the model ended its turn. Recorded, never acted on.
    pub finished: bool,
    /// Output tokens of the current turn.
    pub output_tokens: u64,
    /// When the newest counted entry was written.
    pub last_entry_ns: Option<u64>,
    /// The response whose tokens were counted last, and its count (each of Claude's entries
    /// of one response repeats its usage).
    last_message: Option<(String, u64)>,
}

impl Reading {
    /// Folds one entry in; `ts_ns` is when it was written (see [`Stamped::ts_ns`]).
    pub fn apply(&mut self, entry: &Entry, ts_ns: u64) {
        if entry.observations.is_empty() {
            return;
        }
        // An entry that only reports a response's arrival or its tokens says nothing of the
        // turn's progress: it does not make the turn's earlier entries newer than a hook.
        let about_the_turn = entry
            .observations
            .iter()
            .any(|o| !matches!(o, Observation::ResponseArrived | Observation::OutputTokens { .. }));
        if about_the_turn {
            self.last_entry_ns = Some(self.last_entry_ns.map_or(ts_ns, |t| t.max(ts_ns)));
        }
        for observation in &entry.observations {
            match observation {
                Observation::TurnStarted => {
                    *self = Reading {
                        turn_started_ns: Some(ts_ns),
                        in_progress: true,
                        last_entry_ns: self.last_entry_ns,
                        ..Reading::default()
                    };
                }
                Observation::TurnInProgress => {
                    self.in_progress = true;
                    self.finished = false;
                    // Output after an error means the retry went through.
                    self.api_error = None;
                }
                Observation::Interrupted(how) => {
                    self.interrupted = Some(Stamped { what: *how, ts_ns });
                    self.in_progress = false;
                }
                Observation::ResponseArrived => {
                    // A retry went through.
                    self.api_error = None;
                }
                Observation::ApiError(class) => {
                    self.api_error = Some(Stamped { what: *class, ts_ns });
                    self.in_progress = false;
                }
                Observation::TurnFinished => {
                    self.finished = true;
                    self.in_progress = false;
                }
                Observation::OutputTokens { message, tokens } => {
                    match (message, &mut self.last_message) {
                        (Some(id), Some((last, counted))) if id == last => {
                            self.output_tokens = self.output_tokens - *counted + tokens;
                            *counted = *tokens;
                        }
                        (Some(id), _) => {
                            self.output_tokens += tokens;
                            self.last_message = Some((id.clone(), *tokens));
                        }
                        (None, _) => {
                            self.output_tokens += tokens;
                            self.last_message = None;
                        }
                    }
                }
            }
        }
    }

    /// The caller evidence this reading makes, counting only what the transcript wrote after
    /// `after_ns` (the session's last structured event): history never makes evidence, and a
    /// structured event newer than a transcript fact overrides it.
    pub fn evidence_after(&self, after_ns: u64) -> TranscriptEvidence {
        let newer = |ts: Option<u64>| ts.is_some_and(|t| t > after_ns);
        TranscriptEvidence {
            turn_in_progress: self.in_progress && newer(self.last_entry_ns),
            interrupted: newer(self.interrupted.map(|i| i.ts_ns)),
            quota_error: newer(self.api_error.map(|e| e.ts_ns)),
            turn_finished: self.finished && newer(self.last_entry_ns),
            zero_tokens: false,
        }
    }
}
