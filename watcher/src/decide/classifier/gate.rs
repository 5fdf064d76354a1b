//! The act-gate: the one place a classifier verdict acts.

use super::super::verdict::{Action, Question, Ruling, Signal};
use super::{ClassifierVerdict, CrashedVerdict, StallVerdict};
use crate::vocab::RuleId;

/// What the gate looks at besides the verdict.
#[derive(Debug, Clone, Copy)]
pub struct GateFacts<'a> {
    /// The question.
    pub question: Question,
    /// The deterministic decision: the structured ruling with the caller's evidence applied.
    pub deterministic: &'a Ruling,
    /// The session is at an explicit idle (not waiting on its human, no tool running, no
    /// turn in progress, not ended, not `unknown`) with no pending wake that gates, and the
    /// structured layer answered `fall_back` for want of any structural signal.
    pub no_structural_signal: bool,
    /// `crashed`: consecutive `waiting_on_human` verdicts for the session, this one included.
    pub waiting_in_a_row: u32,
    /// `classifier.waiting-in-a-row`.
    pub waiting_limit: u32,
    /// The text a `stalled` allow sends (hookline's own words, never the classifier's).
    pub nudge_text: &'a str,
}

/// The act-gate: what a classifier verdict does to the deterministic decision. It is the
/// only code that reads a verdict, and it can only withhold a nudge, extend a grace period
/// (`hold`), pause or escalate; it never authorizes a keystroke, a retry, a kill, a teardown
/// or a completion. Its one allow is `stall`'s, which authorizes no keystroke either (it takes
/// no slot: the orchestrator still asks `nudge`).
///
/// | question | verdict | deterministic decision | gated decision |
/// |---|---|---|---|
/// | `stall` | `stalled` | `fall_back` at an explicit idle with no pending wake, no structural signal, and no caller evidence asking more | `proceed` (a nudge is wanted, with hookline's nudge text; no slot is taken) |
/// | `stall` | `stalled` | anything else (waiting on its human, a running tool, a pending wake, a turn in progress, `unknown`, an env fault, hold/pause/escalate from caller evidence) | unchanged |
/// | `stall` | `finished` | `proceed` or `fall_back` | `hold`: the nudge is withheld (it ends nothing) |
/// | `stall` | `finished` | `hold`, `pause`, `escalate` | unchanged |
/// | `crashed` | any | `proceed` (a deterministic completion signal) | unchanged |
/// | `crashed` | `waiting_on_human` | `fall_back` or `hold`, fewer than `classifier.waiting-in-a-row` in a row | `hold` |
/// | `crashed` | `waiting_on_human` | not `proceed`, the `classifier.waiting-in-a-row`-th in a row | `escalate` |
/// | `crashed` | `working` | `fall_back` | `hold` (grace extended) |
/// | `crashed` | `wedged` | not `proceed` | `escalate` |
/// | any | `unknown` (also: not configured, unavailable, timed out, a cap, garbage) | any | unchanged |
/// | `input`, `nudge`, `env-fault`, `escalate` | — (never consulted) | any | unchanged |
///
/// Every change but `stall`'s `stalled` moves the decision up the order of [`Action`]
/// (proceed < fall_back < hold < pause < escalate): more careful, never less.
pub fn gate(facts: &GateFacts<'_>, verdict: ClassifierVerdict) -> Ruling {
    let det = facts.deterministic;
    let careful = |action: Action, rule: RuleId, why: String| {
        if action > det.action {
            Ruling::new(action, Signal::Classifier, rule, why)
        } else {
            det.clone()
        }
    };
    let was = format!("hookline's own ruling was {}: {}", det.action.as_str(), det.reason);
    match (facts.question, verdict) {
        (Question::Stall, ClassifierVerdict::Stall(StallVerdict::Stalled)) => {
            if det.action == Action::FallBack && facts.no_structural_signal {
                Ruling::new(
                    Action::Proceed,
                    Signal::Classifier,
                    RuleId::StallClassifierStalled,
                    format!(
                        "the classifier reads the last message as stalled, where no structural \
                         signal answered either way (at an explicit idle, no pending wake): a \
                         nudge is wanted; ask nudge before typing ({was})"
                    ),
                )
                .nudge_text(facts.nudge_text.to_owned())
            } else {
                det.clone()
            }
        }
        (Question::Stall, ClassifierVerdict::Stall(StallVerdict::Finished)) => careful(
            Action::Hold,
            RuleId::StallClassifierFinished,
            format!(
                "the classifier reads the last message as finished: the nudge is withheld; this \
                 ends nothing ({was})"
            ),
        ),
        (Question::Crashed, _) if det.action == Action::Proceed => det.clone(),
        (Question::Crashed, ClassifierVerdict::Crashed(CrashedVerdict::WaitingOnHuman)) => {
            if facts.waiting_in_a_row >= facts.waiting_limit {
                careful(
                    Action::Escalate,
                    RuleId::CrashedClassifierWaitingInARow,
                    format!(
                        "the classifier has read the screen as waiting on its human {} times in \
                         a row (classifier.waiting-in-a-row = {}): ask a human ({was})",
                        facts.waiting_in_a_row, facts.waiting_limit
                    ),
                )
            } else {
                careful(
                    Action::Hold,
                    RuleId::CrashedClassifierWaitingOnHuman,
                    format!(
                        "the classifier reads the screen as waiting on its human ({} of {} in a \
                         row before escalating): not crashed ({was})",
                        facts.waiting_in_a_row, facts.waiting_limit
                    ),
                )
            }
        }
        (Question::Crashed, ClassifierVerdict::Crashed(CrashedVerdict::Working)) => careful(
            Action::Hold,
            RuleId::CrashedClassifierWorking,
            format!("the classifier reads the screen as working: grace extended ({was})"),
        ),
        (Question::Crashed, ClassifierVerdict::Crashed(CrashedVerdict::Wedged)) => careful(
            Action::Escalate,
            RuleId::CrashedClassifierWedged,
            format!(
                "the classifier reads the screen as wedged: ask a human rather than kill or \
                 retry ({was})"
            ),
        ),
        _ => det.clone(),
    }
}
