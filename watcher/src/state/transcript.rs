//! What a session's transcript adds to its state: rank-2 evidence, which can only make the
//! state more careful.
//!
//! * An interrupt the transcript wrote after the session's last structured event ends an
//!   `active`, `child_command` or `waiting_on_human` turn as `waiting_on_human` with detail
//!   `interrupted` (never `idle`: idle needs an explicit event). The next structured event
//!   (the next prompt's `turn_start`) is newer and clears it.
//! * An API error it wrote after the last structured event ends an `active` or
//!   `child_command` turn as `env_fault` of that class, where no `stop_failure` came.
//!
//! The state set so carries the transcript as its evidence (`kind` `transcript`, rule
//! `transcript-*`), and is exactly as authoritative as the structured state it replaces: it is
//! never `idle`, so it never opens an input slot.

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::evidence::TranscriptEvidence;
use crate::transcript::{Interrupt, TranscriptFacts, Wanted};
use crate::vocab::{TranscriptFormat, WaitReason};

use super::{Evidence, Session, State, Tracker};

/// A session's transcript, in its wire form (`status --json`, `serve`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TranscriptView {
    /// The transcript file.
    pub path: String,
    /// Its format.
    pub format: TranscriptFormat,
    /// What it says, counting only what it wrote after the session's last structured event.
    pub evidence: TranscriptEvidence,
    /// Output tokens of the current turn, by the transcript.
    pub output_tokens: u64,
    /// When the current turn's first entry was written, in nanoseconds since the Unix epoch.
    pub turn_started_ns: Option<u64>,
    /// When the file last grew, in nanoseconds since the Unix epoch, as seen by hookline.
    pub grew_ns: Option<u64>,
}

impl TranscriptFacts {
    /// The wire form, counting what was written after `after_ns`.
    pub fn view(&self, after_ns: u64) -> TranscriptView {
        TranscriptView {
            path: self.path.clone(),
            format: self.format,
            evidence: self.reading.evidence_after(after_ns),
            output_tokens: self.reading.output_tokens,
            turn_started_ns: self.reading.turn_started_ns,
            grew_ns: self.grew_ns,
        }
    }
}

impl TranscriptView {
    /// Whether the current turn has produced zero output tokens for longer than `floor` at
    /// `now_ns`, counting from the later of its first entry and `turn_since_ns` (when the
    /// structured state said the turn began). A zero `floor` never fires, nor does a turn the
    /// transcript has not seen start.
    pub fn zero_tokens_for(&self, floor: Duration, turn_since_ns: u64, now_ns: u64) -> bool {
        let Some(started) = self.turn_started_ns else {
            return false;
        };
        let from = started.max(turn_since_ns);
        !floor.is_zero()
            && self.output_tokens == 0
            && !self.evidence.interrupted
            && u128::from(now_ns.saturating_sub(from)) > floor.as_nanos()
    }
}

/// The state the transcript sets over the session's structured state, with its evidence and
/// when it began, if it sets one (see the module docs).
pub(super) fn overlay(session: &Session, state: &State) -> Option<(State, u64, Evidence)> {
    let facts = session.transcript.as_ref()?;
    let after = session.ts_ns;
    let reading = &facts.reading;
    let evidence = |native: &str, rule: &'static str, ts_ns: u64| Evidence {
        kind: "transcript".into(),
        native: Some(native.to_owned()),
        seq: session.seq,
        file: facts.path.clone(),
        ts_ns,
        rule: Cow::Borrowed(rule),
        mapped_by: format!("transcript:{}", facts.format),
    };
    // A session only its transcript reports starts `unknown`; what the transcript writes
    // after hookline started reading it moves it, as carefully.
    let unhooked = session.unhooked;
    let interrupted = reading.interrupted.filter(|i| i.ts_ns > after);
    if let Some(i) = interrupted
        && (unhooked
            || matches!(
                state,
                State::Active | State::ChildCommand { .. } | State::WaitingOnHuman(_)
            ))
    {
        let native = match i.what {
            Interrupt::Turn => "interrupted turn",
            Interrupt::ToolUse => "tool use refused",
        };
        let rule = "transcript-interrupt-after-last-event";
        return Some((
            State::WaitingOnHuman(WaitReason::Interrupted),
            i.ts_ns,
            evidence(native, rule, i.ts_ns),
        ));
    }
    let error = reading.api_error.filter(|e| e.ts_ns > after);
    if let Some(e) = error
        && (unhooked || matches!(state, State::Active | State::ChildCommand { .. }))
    {
        let rule = "transcript-api-error-after-last-event";
        return Some((State::EnvFault(e.what), e.ts_ns, evidence("api error", rule, e.ts_ns)));
    }
    let busy = reading.in_progress && reading.last_entry_ns.is_some_and(|t| t > after);
    if unhooked && busy {
        let ts = reading.last_entry_ns.unwrap_or(after);
        return Some((
            State::Active,
            ts,
            evidence("turn in progress", "transcript-turn-in-progress", ts),
        ));
    }
    None
}

impl Tracker {
    /// The transcripts to read ([`crate::transcript::Followers::poll_wanted`]): one per live
    /// session whose events named one and whose CLI's profile says how to read it. Cheap:
    /// what a consumer that shares its tracker behind a lock takes under it, to read the files
    /// after letting go.
    pub fn transcripts_wanted(&self) -> Vec<Wanted> {
        let mut wanted = Vec::new();
        for (key, session, path) in self.transcript_paths() {
            let Some(spec) =
                self.profiles().get(&session.key.cli).and_then(|p| p.transcript.as_ref())
            else {
                continue;
            };
            if session.ended() {
                continue;
            }
            wanted.push(Wanted {
                key: key.to_owned(),
                path: path.to_owned(),
                format: spec.format,
                session_id: session.key.session_id.clone(),
            });
        }
        wanted
    }
}
