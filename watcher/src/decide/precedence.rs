//! Signal precedence, enforced: structured hook events > transcript-derived signals > pane
//! heuristics.
//!
//! | rank | source | can allow | can make more careful |
//! |---|---|---|---|
//! | 1 | structured hook event (the session's state, from an explicit event) | yes: `input` and `nudge` only at an explicit, fresh, authoritative `idle` of the current generation and epoch; the others as their rules say | yes |
//! | 1 | deterministic liveness: host pid dead or reused, window dead (caller) | `crashed` only | — |
//! | 2 | transcript-derived (caller's [`TranscriptEvidence`](super::TranscriptEvidence)) | never | yes |
//! | 3 | pane heuristics (caller's [`PaneEvidence`](super::PaneEvidence)) | never | yes |
//! | — | none: no structured signal | never: `fall_back`, the caller keeps its own behaviour | — |
//!
//! The structured layer decides first. Then each piece of caller evidence, transcript first,
//! may replace the ruling only with a strictly more careful action (the order of
//! [`Action`]: proceed < fall_back < hold < pause < escalate), so at equal strength the higher
//! rank keeps the say. Last, `enforce` refuses any `allow` whose source may not allow.

use super::evidence::CallerEvidence;
use super::verdict::{Action, Finding, Question, Ruling, Signal};

/// Combines the structured ruling with the caller's evidence. Returns the final ruling and
/// what each piece of evidence did.
pub(crate) fn combine(
    question: Question,
    structured: &Ruling,
    caller: &CallerEvidence,
) -> (Ruling, Vec<Finding>) {
    let mut ruling = structured.clone();
    let mut findings = Vec::new();
    for effect in caller.set_fields() {
        let asks = effect.asks(question);
        let applied = asks > ruling.action;
        if applied {
            let word = effect.source.as_str();
            ruling = Ruling::new(
                asks,
                effect.source,
                &format!("{word}-{}", effect.field.replace('_', "-")),
                format!(
                    "{}: {} (the {word} can only make a decision more careful; hookline's own \
                     ruling was {}: {})",
                    effect.says,
                    asks.as_str(),
                    structured.action.as_str(),
                    structured.reason
                ),
            );
        }
        findings.push(Finding {
            source: effect.source,
            field: effect.field.to_owned(),
            asks,
            applied,
        });
    }
    (enforce(ruling), findings)
}

/// The last guard: an `allow` from a source that may not allow becomes `fall_back`. No rule
/// produces one; this keeps it so if one ever did.
pub(crate) fn enforce(ruling: Ruling) -> Ruling {
    if ruling.action == Action::Proceed && !ruling.signal.may_allow() {
        return Ruling::new(
            Action::FallBack,
            Signal::None,
            "only-structured-signals-allow",
            format!(
                "a {} signal cannot allow anything ({}): no structured signal",
                ruling.signal.as_str(),
                ruling.reason
            ),
        );
    }
    ruling
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::evidence::{EFFECTS, PaneEvidence, TranscriptEvidence};

    fn every_caller_evidence() -> Vec<CallerEvidence> {
        let mut all = Vec::new();
        let fields = EFFECTS.len();
        for mask in 0u32..(1 << fields) {
            let bit = |name: &str| {
                let i = EFFECTS.iter().position(|e| e.field == name).unwrap();
                mask & (1 << i) != 0
            };
            all.push(CallerEvidence {
                pane: Some(PaneEvidence {
                    text_says_idle: bit("text_says_idle"),
                    spinner: bit("spinner"),
                    dialog: bit("dialog"),
                    login_or_trust: bit("login_or_trust"),
                    quota_text: bit("quota_text"),
                }),
                transcript: Some(TranscriptEvidence {
                    turn_in_progress: bit("turn_in_progress"),
                    interrupted: bit("interrupted"),
                    quota_error: bit("quota_error"),
                    turn_finished: bit("turn_finished"),
                }),
                window_dead: None,
            });
        }
        all
    }

    #[test]
    fn caller_evidence_never_makes_a_ruling_less_careful() {
        let actions =
            [Action::Proceed, Action::FallBack, Action::Hold, Action::Pause, Action::Escalate];
        let signals = [Signal::StructuredEvent, Signal::HostProcess, Signal::Window, Signal::None];
        for question in Question::ALL {
            for action in actions {
                for signal in signals {
                    let structured = Ruling::new(action, signal, "r", "why");
                    for caller in every_caller_evidence() {
                        let (ruling, findings) = combine(question, &structured, &caller);
                        assert!(ruling.action >= action, "{question} {action:?} {caller:?}");
                        if ruling.action == Action::Proceed {
                            assert!(ruling.signal.may_allow());
                            assert_eq!(ruling, enforce(structured.clone()));
                        }
                        assert!(findings.iter().all(|f| f.asks != Action::FallBack));
                    }
                }
            }
        }
    }

    #[test]
    fn the_transcript_outranks_the_pane_at_equal_strength() {
        let caller = CallerEvidence {
            pane: Some(PaneEvidence { spinner: true, ..Default::default() }),
            transcript: Some(TranscriptEvidence { turn_in_progress: true, ..Default::default() }),
            window_dead: None,
        };
        let structured = Ruling::new(Action::Proceed, Signal::StructuredEvent, "idle", "idle");
        let (ruling, findings) = combine(Question::Input, &structured, &caller);
        assert_eq!((ruling.action, ruling.signal), (Action::Hold, Signal::Transcript));
        assert_eq!(ruling.rule, "transcript-turn-in-progress");
        assert_eq!(findings.iter().filter(|f| f.applied).count(), 1);
    }

    #[test]
    fn pane_text_that_looks_idle_never_allows() {
        let caller = CallerEvidence {
            pane: Some(PaneEvidence { text_says_idle: true, ..Default::default() }),
            ..Default::default()
        };
        for question in Question::ALL {
            let structured = Ruling::new(Action::FallBack, Signal::None, "none", "no signal");
            let (ruling, findings) = combine(question, &structured, &caller);
            assert_eq!(ruling.action, Action::FallBack);
            assert!(!findings[0].applied);
        }
    }

    #[test]
    fn an_allow_from_a_source_that_may_not_allow_is_refused() {
        for signal in [Signal::Pane, Signal::Transcript, Signal::None] {
            let ruling = enforce(Ruling::new(Action::Proceed, signal, "x", "y"));
            assert_eq!(ruling.action, Action::FallBack);
        }
    }
}
