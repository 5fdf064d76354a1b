//! Evidence the caller brings: what its pane heuristics and its transcript reader saw, and
//! whether the session's window is dead; and the probe of the host CLI's process.
//!
//! Pane and transcript evidence can only make a decision more careful (see
//! [`crate::decide::precedence`]): every field below names what it can ask for, and none can allow.

use serde::{Deserialize, Serialize};

use crate::vocab::{Action, Question, RuleId, Signal};

/// What the caller's pane heuristics see (tmux `capture-pane`, a PTY's screen). Every flag
/// defaults to `false`; unknown fields are refused, so a misspelt flag is not silently lost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct PaneEvidence {
    /// The text looks like the CLI's idle input prompt. Recorded, never acted on: pane text
    /// never authorizes anything.
    pub text_says_idle: bool,
    /// A spinner, "esc to interrupt" or another busy marker is visible.
    pub spinner: bool,
    /// A permission, choice or question dialog seems to be open.
    pub dialog: bool,
    /// A login, trust or onboarding screen (these fire no hook).
    pub login_or_trust: bool,
    /// A quota, rate-limit or billing message is visible.
    pub quota_text: bool,
    /// The input prompt is on screen and its composer holds text the CLI has not been given
    /// (a person typing, an earlier delivery left unsubmitted): typing now would glue onto it.
    pub typed_not_submitted: bool,
    /// The screen's text, for the classifier's `crashed` consult alone (its last screenful,
    /// bounded; docs/classifier.md). No rule reads it: it can act only through the act-gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
}

impl PaneEvidence {
    /// What this reading and the caller's own evidence say together: a field is set when
    /// either sets it (so adding a reading can only make an answer more careful).
    /// The screen text is the caller's when it gave one, else this reading's.
    pub fn or(self, other: Option<PaneEvidence>) -> PaneEvidence {
        let o = other.unwrap_or_default();
        PaneEvidence {
            text_says_idle: self.text_says_idle || o.text_says_idle,
            spinner: self.spinner || o.spinner,
            dialog: self.dialog || o.dialog,
            login_or_trust: self.login_or_trust || o.login_or_trust,
            quota_text: self.quota_text || o.quota_text,
            typed_not_submitted: self.typed_not_submitted || o.typed_not_submitted,
            screen: o.screen.or(self.screen),
        }
    }
}

/// What the caller reads in the CLI's transcript. Every field defaults to `false`; unknown
/// fields are refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct TranscriptEvidence {
    /// The last entry is a tool call without its result, or assistant output still streaming.
    pub turn_in_progress: bool,
    /// The last entry is an interrupt marker (`[Request interrupted by user]`): the human
    /// stopped the turn.
    pub interrupted: bool,
    /// The last entry is an API error about a quota, rate limit or billing.
    pub quota_error: bool,
    /// The last entry says the turn finished. Recorded, never acted on: the transcript is
    /// flushed after `Stop`, and finishing a turn is not being at the prompt.
    pub turn_finished: bool,
    /// The turn has produced zero output tokens for longer than the policy's
    /// `env-fault.zero-tokens-after`: env-fault evidence (hookline sets it from the
    /// transcript's usage entries; a caller may too).
    pub zero_tokens: bool,
}

impl TranscriptEvidence {
    /// What this reading and another say together: a field is set when either sets it (so
    /// adding a reading can only make an answer more careful).
    pub fn or(self, other: Option<TranscriptEvidence>) -> TranscriptEvidence {
        let o = other.unwrap_or_default();
        TranscriptEvidence {
            turn_in_progress: self.turn_in_progress || o.turn_in_progress,
            interrupted: self.interrupted || o.interrupted,
            quota_error: self.quota_error || o.quota_error,
            turn_finished: self.turn_finished || o.turn_finished,
            zero_tokens: self.zero_tokens || o.zero_tokens,
        }
    }

    /// Whether any field is set.
    pub fn any(&self) -> bool {
        self.turn_in_progress
            || self.interrupted
            || self.quota_error
            || self.turn_finished
            || self.zero_tokens
    }
}

/// Everything a caller can add to a question.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CallerEvidence {
    /// The pane heuristics' findings.
    pub pane: Option<PaneEvidence>,
    /// The transcript's.
    pub transcript: Option<TranscriptEvidence>,
    /// The session's window or pane is dead (tmux `#{pane_dead}`, the PTY closed): a
    /// deterministic completion signal for `crashed`. `false` is recorded and changes nothing.
    pub window_dead: Option<bool>,
}

/// A field of caller evidence and, per question, the action it asks for when set.
pub(crate) struct Effect {
    pub source: Signal,
    pub field: &'static str,
    /// The rule of a decision it made more careful (`<source>-<field>`).
    pub rule: RuleId,
    /// What it means, for the decision's reason.
    pub says: &'static str,
    /// One action per question, in the order of [`Question::ALL`] (a new question fails to
    /// compile here until every row says what the field asks of it).
    pub asks: [Action; Question::COUNT],
}

use Action::{Escalate as E, Hold as H, Pause as P, Proceed as N};

/// The effects table: the only place pane and transcript evidence act. `N` (proceed) means the
/// field has no say on that question. Order: transcript first, it outranks the pane.
pub(crate) const EFFECTS: &[Effect] = &[
    Effect {
        source: Signal::Transcript,
        field: "turn_in_progress",
        rule: RuleId::TranscriptTurnInProgress,
        says: "the transcript shows a turn in progress",
        asks: [H, H, H, N, N, H],
    },
    Effect {
        source: Signal::Transcript,
        field: "interrupted",
        rule: RuleId::TranscriptInterrupted,
        says: "the transcript shows the turn interrupted by its human",
        asks: [H, H, H, N, N, H],
    },
    Effect {
        source: Signal::Transcript,
        field: "quota_error",
        rule: RuleId::TranscriptQuotaError,
        says: "the transcript shows a quota, rate-limit or billing error",
        asks: [P, P, P, P, N, P],
    },
    Effect {
        source: Signal::Transcript,
        field: "zero_tokens",
        rule: RuleId::TranscriptZeroTokens,
        says: "the transcript shows the turn has produced no output token for longer than \
               env-fault.zero-tokens-after",
        asks: [P, P, P, P, N, P],
    },
    Effect {
        source: Signal::Transcript,
        field: "turn_finished",
        rule: RuleId::TranscriptTurnFinished,
        says: "the transcript shows the turn finished",
        asks: [N, N, N, N, N, N],
    },
    Effect {
        source: Signal::Pane,
        field: "text_says_idle",
        rule: RuleId::PaneTextSaysIdle,
        says: "the pane text looks idle",
        asks: [N, N, N, N, N, N],
    },
    Effect {
        source: Signal::Pane,
        field: "spinner",
        rule: RuleId::PaneSpinner,
        says: "the pane shows a busy marker",
        asks: [H, H, H, N, N, H],
    },
    Effect {
        source: Signal::Pane,
        field: "dialog",
        rule: RuleId::PaneDialog,
        says: "the pane shows a dialog waiting for its human",
        asks: [H, H, H, N, N, H],
    },
    Effect {
        source: Signal::Pane,
        field: "login_or_trust",
        rule: RuleId::PaneLoginOrTrust,
        says: "the pane shows a login, trust or onboarding screen, which fires no hook",
        asks: [H, H, H, N, E, H],
    },
    Effect {
        source: Signal::Pane,
        field: "quota_text",
        rule: RuleId::PaneQuotaText,
        says: "the pane shows a quota, rate-limit or billing message",
        asks: [P, P, P, P, N, P],
    },
    Effect {
        source: Signal::Pane,
        field: "typed_not_submitted",
        rule: RuleId::PaneTypedNotSubmitted,
        says: "the pane shows text typed into the composer and not submitted",
        asks: [H, H, N, N, N, H],
    },
];

impl Effect {
    pub(crate) fn asks(&self, question: Question) -> Action {
        let index = Question::ALL.iter().position(|q| *q == question).unwrap_or(0);
        self.asks[index]
    }
}

impl CallerEvidence {
    /// The fields set, in the order of [`EFFECTS`].
    pub(crate) fn set_fields(&self) -> Vec<&'static Effect> {
        EFFECTS.iter().filter(|e| self.is_set(e.source, e.field)).collect()
    }

    fn is_set(&self, source: Signal, field: &str) -> bool {
        match source {
            Signal::Transcript => self.transcript.is_some_and(|t| match field {
                "turn_in_progress" => t.turn_in_progress,
                "interrupted" => t.interrupted,
                "quota_error" => t.quota_error,
                "turn_finished" => t.turn_finished,
                "zero_tokens" => t.zero_tokens,
                _ => false,
            }),
            Signal::Pane => self.pane.as_ref().is_some_and(|p| match field {
                "text_says_idle" => p.text_says_idle,
                "spinner" => p.spinner,
                "dialog" => p.dialog,
                "login_or_trust" => p.login_or_trust,
                "quota_text" => p.quota_text,
                "typed_not_submitted" => p.typed_not_submitted,
                _ => false,
            }),
            _ => false,
        }
    }
}

/// What a probe says about the host CLI's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostStatus {
    /// A process with that pid runs (it may be another one that reused the pid).
    Alive,
    /// No process has that pid.
    Dead,
    /// The pid belongs to a process started after the session's first event: the host died
    /// and its pid was reused.
    Reused,
    /// The probe cannot tell.
    Unknown,
}

impl HostStatus {
    /// The word used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            HostStatus::Alive => "alive",
            HostStatus::Dead => "dead",
            HostStatus::Reused => "reused",
            HostStatus::Unknown => "unknown",
        }
    }
}

/// Checks whether a host CLI process still runs.
pub trait HostProbe: Send {
    /// The status of `pid`, for a session whose first event with that pid came at
    /// `first_seen_ns` (nanoseconds since the Unix epoch).
    fn probe(&self, pid: u32, first_seen_ns: u64) -> HostStatus;
}

/// The real probe: `kill(pid, 0)`, and on Linux the process start time from `/proc` to see a
/// pid reused by a process that started after the session did.
///
/// Limits, which is why a dead host is the only thing it can report with confidence:
/// * a reused pid whose start time cannot be read looks alive (`crashed` is then withheld
///   until the session's end or the caller's dead window: the safe side);
/// * a pid from another pid namespace (the CLI in a container) names some other process, or
///   none: turn `crashed.check-host-pid` off there.
#[derive(Debug, Clone, Copy, Default)]
pub struct KillProbe;

impl HostProbe for KillProbe {
    fn probe(&self, pid: u32, first_seen_ns: u64) -> HostStatus {
        match crate::host::alive(pid) {
            None => HostStatus::Unknown,
            Some(false) => HostStatus::Dead,
            Some(true) => match crate::host::start_ns(pid) {
                // One second of slack: boot time is known to the second.
                Some(start) if start > first_seen_ns.saturating_add(1_000_000_000) => {
                    HostStatus::Reused
                }
                _ => HostStatus::Alive,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_not_reused() {
        let me = std::process::id();
        assert_eq!(KillProbe.probe(me, crate::format::clock::now_ns()), HostStatus::Alive);
    }

    #[test]
    fn a_process_started_after_the_session_reads_as_reused() {
        if crate::host::start_ns(std::process::id()).is_none() {
            return; // not Linux: kill(2) alone cannot tell
        }
        assert_eq!(KillProbe.probe(std::process::id(), 0), HostStatus::Reused);
    }

    #[test]
    fn a_reaped_child_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        // Linux hands out pids in increasing order: this one is not reused within the test.
        assert_eq!(KillProbe.probe(pid, crate::format::clock::now_ns()), HostStatus::Dead);
    }

    #[test]
    fn nonsense_pids_are_unknown() {
        assert_eq!(KillProbe.probe(0, 0), HostStatus::Unknown);
        assert_eq!(KillProbe.probe(u32::MAX, 0), HostStatus::Unknown);
    }

    #[test]
    fn every_effect_names_a_real_field_and_none_allows_more_than_proceed() {
        let all_pane = PaneEvidence {
            text_says_idle: true,
            spinner: true,
            dialog: true,
            login_or_trust: true,
            quota_text: true,
            typed_not_submitted: true,
            screen: None,
        };
        let all_transcript = TranscriptEvidence {
            turn_in_progress: true,
            interrupted: true,
            quota_error: true,
            turn_finished: true,
            zero_tokens: true,
        };
        let all = CallerEvidence {
            pane: Some(all_pane.clone()),
            transcript: Some(all_transcript),
            window_dead: None,
        };
        assert_eq!(all.set_fields().len(), EFFECTS.len());
        let pane_fields = serde_json::to_value(&all_pane).unwrap();
        let transcript_fields = serde_json::to_value(all_transcript).unwrap();
        for e in EFFECTS {
            let fields = if e.source == Signal::Pane { &pane_fields } else { &transcript_fields };
            assert!(fields.get(e.field).is_some(), "{}", e.field);
            let rule = format!("{}-{}", e.source.as_str(), e.field.replace('_', "-"));
            assert_eq!(e.rule.as_str(), rule, "the rule of {}", e.field);
        }
        assert_eq!(
            pane_fields.as_object().unwrap().len() + transcript_fields.as_object().unwrap().len(),
            EFFECTS.len()
        );
    }

    #[test]
    fn a_host_status_is_written_as_its_word() {
        use HostStatus::{Alive, Dead, Reused, Unknown};
        for status in [Alive, Dead, Reused, Unknown] {
            let word = serde_json::to_value(status).unwrap();
            assert_eq!(word, status.as_str());
            assert_eq!(serde_json::from_value::<HostStatus>(word).unwrap(), status);
        }
    }

    #[test]
    fn a_misspelt_flag_is_refused() {
        let e = serde_json::from_str::<CallerEvidence>(r#"{"pane": {"spiner": true}}"#);
        assert!(e.unwrap_err().to_string().contains("spiner"));
    }
}
