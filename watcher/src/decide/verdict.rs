//! What a decision says: the question, the verdict, what to do instead, which source decided,
//! why, and on what evidence.

use serde::{Deserialize, Serialize};

use super::HostStatus;
use crate::state::{Slot, StateKind, View};
pub use crate::vocab::{Action, Question, RuleId, Signal, Verdict};

impl Action {
    /// The verdict this action carries.
    pub fn verdict(self) -> Verdict {
        match self {
            Action::Proceed => Verdict::Allow,
            _ => Verdict::Withhold,
        }
    }
}

impl Signal {
    /// Whether this source may ever allow something (the classifier: `stall` only, as the
    /// act-gate says).
    pub fn may_allow(self) -> bool {
        matches!(
            self,
            Signal::StructuredEvent | Signal::HostProcess | Signal::Window | Signal::Classifier
        )
    }
}

/// One step of the reasoning: an action, the rule that chose it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Ruling {
    /// What to do.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule's name (stable, for scripts and the journal).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub rule: RuleId,
    /// Why, for people.
    pub reason: String,
    /// When asking again could change the answer (a backoff, a grace period), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// With an allowed `stall`: the nudge to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudge_text: Option<String>,
}

impl Ruling {
    pub(crate) fn new(
        action: Action,
        signal: Signal,
        rule: RuleId,
        reason: impl Into<String>,
    ) -> Ruling {
        Ruling {
            action,
            signal,
            rule,
            reason: reason.into(),
            retry_after_ms: None,
            nudge_text: None,
        }
    }

    pub(crate) fn nudge_text(mut self, text: String) -> Ruling {
        self.nudge_text = Some(text);
        self
    }

    pub(crate) fn retry_after(mut self, ms: u64) -> Ruling {
        self.retry_after_ms = Some(ms);
        self
    }
}

/// A piece of caller evidence and what it did to the decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Finding {
    /// `transcript` or `pane`.
    pub source: Signal,
    /// The field the caller set (`spinner`, `dialog`, ...).
    pub field: String,
    /// The action it asks for on this question (`proceed` when it has no say here).
    pub asks: Action,
    /// Whether it made the decision more careful than it was.
    pub applied: bool,
}

/// The host process check behind a `crashed` decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct HostCheck {
    /// The pid the host CLI reported.
    pub pid: u32,
    /// `alive`, `dead`, `reused` or `unknown`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub status: HostStatus,
    /// What the check can and cannot tell.
    pub note: String,
}

/// Counters the decision used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Counters {
    /// Withheld `nudge`/`crashed` verdicts in a row for this session's current state.
    pub withheld_in_a_row: u32,
    /// Nudges allowed since the last allowed `input`.
    pub nudges_in_a_row: u32,
}

/// Where a pending wake comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WakeSource {
    /// An item of the stop's background tasks.
    BackgroundTask,
    /// An item of the stop's scheduled wakes (crons).
    Cron,
    /// Counted by the stop but not listed item by item.
    Count,
}

/// A background task or scheduled wake the last stop reported, and whether it gates a stall
/// nudge (the session will wake itself for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PendingWake {
    /// A task, a cron, or what a count says.
    pub source: WakeSource,
    /// The item's id, when it has one.
    pub id: Option<String>,
    /// Its description (a task's), or its prompt (a cron's).
    pub description: Option<String>,
    /// Whether it gates: the session wakes itself when it ends or fires.
    pub gates: bool,
    /// Why it gates or not, for people.
    pub why: String,
}

/// A profile hole that bears on the decision: a state the CLI can be in without telling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct HoleNote {
    /// The hole's id in the profile.
    pub id: String,
    /// What the CLI does not report.
    pub description: String,
}

/// The evidence behind a decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct DecisionEvidence {
    /// The session as the tracker sees it (state, since, age, generation, epoch, seq, the event
    /// that set the state, the last event); `None` when no event was ever seen for it.
    pub view: Option<View>,
    /// What the structured layer (events, liveness) said before the caller's evidence.
    pub structured: Ruling,
    /// The caller's transcript and pane evidence, and what each did.
    pub caller: Vec<Finding>,
    /// The host process check, for `crashed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostCheck>,
    /// The caller reported the session's window dead (`true`) or alive (`false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_dead: Option<bool>,
    /// The profile holes that bear on the answer: what this CLI cannot report.
    pub holes: Vec<HoleNote>,
    /// The counters used.
    pub counters: Counters,
    /// The quota notification that counts as env-fault evidence, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_notice: Option<QuotaNotice>,
    /// For `nudge` and `stall`: what the last stop reported pending, item by item, and which
    /// of it gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_wakes: Vec<PendingWake>,
    /// The classifier consult (`[classifier]`): what it was shown (by hash), what it said,
    /// and whether the act-gate let that change the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier: Option<super::classifier::ConsultNote>,
}

/// A notification that reported a quota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct QuotaNotice {
    /// When it was sent, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Its type.
    pub notification_type: Option<String>,
    /// Its message.
    pub message: Option<String>,
    /// The event file.
    pub file: String,
}

/// The answer to one question about one session.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Decision {
    /// The question.
    pub question: Question,
    /// The session as asked (id or tag).
    pub session: String,
    /// `allow` or `withhold`.
    pub verdict: Verdict,
    /// What to do: `proceed` when allowed; else `hold`, `pause`, `escalate` or `fall_back`.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule that decided (stable names, listed in the module documentation).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub rule: RuleId,
    /// Why, for people.
    pub reason: String,
    /// When asking again could change the answer, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The input slot taken, when `input` or `nudge` was allowed: deliver exactly once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// The lease on that slot: held by the requester until something is typed under it
    /// (`hookline deliver --lease`) or it is released (`hookline lease release`). `None` for
    /// a peek, which takes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<super::LeaseId>,
    /// With an allowed `stall`: the nudge to send (quoting the open item, or the turn's
    /// dangling last sentence). Sending it is input: ask `nudge` first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nudge_text: Option<String>,
    /// The session's state, when it has one.
    pub state: Option<StateKind>,
    /// When the decision was made, in nanoseconds since the Unix epoch.
    pub at_ns: u64,
    /// The evidence.
    pub evidence: DecisionEvidence,
}

impl Decision {
    /// Whether the orchestrator may go ahead.
    pub fn allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_proceed_allows_and_the_order_runs_from_permissive_to_careful() {
        let all =
            [Action::Proceed, Action::FallBack, Action::Hold, Action::Pause, Action::Escalate];
        for (i, a) in all.iter().enumerate() {
            assert_eq!(a.verdict() == Verdict::Allow, i == 0);
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
            for b in &all[i..] {
                assert!(a <= b);
            }
        }
    }

    #[test]
    fn questions_read_their_wire_words() {
        for q in Question::ALL {
            assert_eq!(q.as_str().parse::<Question>().unwrap(), q);
            assert_eq!(serde_json::to_value(q).unwrap(), q.as_str());
        }
        assert_eq!("env_fault".parse::<Question>().unwrap(), Question::EnvFault);
        assert_eq!(serde_json::from_str::<Question>("\"env_fault\"").unwrap(), Question::EnvFault);
        assert!("idle".parse::<Question>().is_err());
    }

    #[test]
    fn only_structured_and_liveness_sources_may_allow() {
        let may: Vec<Signal> = [
            Signal::StructuredEvent,
            Signal::HostProcess,
            Signal::Window,
            Signal::Transcript,
            Signal::Pane,
            Signal::None,
        ]
        .into_iter()
        .filter(|s| s.may_allow())
        .collect();
        assert_eq!(may, [Signal::StructuredEvent, Signal::HostProcess, Signal::Window]);
    }
}
