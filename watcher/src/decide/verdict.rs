//! What a decision says: the question, the verdict, what to do instead, which source decided,
//! why, and on what evidence.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::state::{Slot, StateKind, View};

/// The five questions. Each asks whether the orchestrator may go ahead, unattended, with
/// something that would be wrong if hookline were wrong; `allow` is the permissive answer and
/// `withhold` the careful one, for every question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Question {
    /// May I deliver input (type into the session) now? Allowing takes the idle's input slot.
    #[serde(rename = "input")]
    Input,
    /// May I send a stall nudge now? A nudge is input: allowing takes the input slot too.
    #[serde(rename = "nudge")]
    Nudge,
    /// May I declare this session finished or crashed (and retry or reclaim it)?
    #[serde(rename = "crashed")]
    Crashed,
    /// May I carry on as if the environment were fine (retry, charge an attempt)? Withheld
    /// with `pause` when there is env-fault evidence (quota, rate limit, billing, auth).
    #[serde(rename = "env-fault", alias = "env_fault")]
    EnvFault,
    /// May I carry on without a human? Withheld with `escalate` when a human should look.
    #[serde(rename = "escalate")]
    Escalate,
}

impl Question {
    /// Every question, in the order of the documentation.
    pub const ALL: [Question; 5] = [
        Question::Input,
        Question::Nudge,
        Question::Crashed,
        Question::EnvFault,
        Question::Escalate,
    ];

    /// The word used on the command line and the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Question::Input => "input",
            Question::Nudge => "nudge",
            Question::Crashed => "crashed",
            Question::EnvFault => "env-fault",
            Question::Escalate => "escalate",
        }
    }
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Question {
    type Err = String;

    fn from_str(s: &str) -> Result<Question, String> {
        Question::ALL
            .into_iter()
            .find(|q| q.as_str() == s || q.as_str().replace('-', "_") == s)
            .ok_or_else(|| {
                format!("{s:?} is not a question: ask input, nudge, crashed, env-fault or escalate")
            })
    }
}

/// The answer, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Do not; [`Action`] says what to do instead.
    Withhold,
}

/// What the orchestrator should do, from the most permissive to the most careful. The order is
/// the one evidence is combined in: caller evidence may move a decision up this list, never
/// down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Go ahead (the only action with verdict `allow`).
    Proceed,
    /// hookline has no structured signal for this: keep your own existing behaviour (which
    /// the caller's evidence may still make more careful).
    FallBack,
    /// Do not act now; ask again later (after the next event).
    Hold,
    /// Pause the run: an environment fault (quota, rate limit, billing, auth); do not retry,
    /// do not charge an attempt.
    Pause,
    /// Ask a human.
    Escalate,
}

impl Action {
    /// The verdict this action carries.
    pub fn verdict(self) -> Verdict {
        match self {
            Action::Proceed => Verdict::Allow,
            _ => Verdict::Withhold,
        }
    }

    /// The word used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Proceed => "proceed",
            Action::FallBack => "fall_back",
            Action::Hold => "hold",
            Action::Pause => "pause",
            Action::Escalate => "escalate",
        }
    }
}

/// Which source decided. Sources are ranked (see the module documentation): only a structured
/// event, or for `crashed` a deterministic liveness signal, can allow anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// An explicit hook event, through the session's state.
    StructuredEvent,
    /// The host CLI's process is gone (its pid is dead or reused).
    HostProcess,
    /// The caller reported the session's window or pane dead.
    Window,
    /// The caller's transcript-derived evidence.
    Transcript,
    /// The caller's pane heuristics.
    Pane,
    /// No structured signal: hookline cannot tell, the caller keeps its own behaviour.
    None,
}

impl Signal {
    /// The word used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::StructuredEvent => "structured_event",
            Signal::HostProcess => "host_process",
            Signal::Window => "window",
            Signal::Transcript => "transcript",
            Signal::Pane => "pane",
            Signal::None => "none",
        }
    }

    /// Whether this source may ever allow something.
    pub fn may_allow(self) -> bool {
        matches!(self, Signal::StructuredEvent | Signal::HostProcess | Signal::Window)
    }
}

/// One step of the reasoning: an action, the rule that chose it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ruling {
    /// What to do.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule's name (stable, for scripts and the journal).
    pub rule: String,
    /// Why, for people.
    pub reason: String,
    /// When asking again could change the answer (a backoff, a grace period), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Ruling {
    pub(crate) fn new(
        action: Action,
        signal: Signal,
        rule: &str,
        reason: impl Into<String>,
    ) -> Ruling {
        Ruling {
            action,
            signal,
            rule: rule.to_owned(),
            reason: reason.into(),
            retry_after_ms: None,
        }
    }

    pub(crate) fn retry_after(mut self, ms: u64) -> Ruling {
        self.retry_after_ms = Some(ms);
        self
    }
}

/// A piece of caller evidence and what it did to the decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct HostCheck {
    /// The pid the host CLI reported.
    pub pid: u32,
    /// `alive`, `dead`, `reused` or `unknown`.
    pub status: String,
    /// What the check can and cannot tell.
    pub note: String,
}

/// Counters the decision used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Withheld `nudge`/`crashed` verdicts in a row for this session's current state.
    pub withheld_in_a_row: u32,
    /// Nudges allowed since the last allowed `input`.
    pub nudges_in_a_row: u32,
}

/// A profile hole that bears on the decision: a state the CLI can be in without telling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoleNote {
    /// The hole's id in the profile.
    pub id: String,
    /// What the CLI does not report.
    pub description: String,
}

/// The evidence behind a decision.
#[derive(Debug, Clone, Serialize)]
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
}

/// A notification that reported a quota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize)]
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
    pub rule: String,
    /// Why, for people.
    pub reason: String,
    /// When asking again could change the answer, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The input slot taken, when `input` or `nudge` was allowed: deliver exactly once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
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
