//! Signal precedence, enforced: structured hook events > transcript-derived signals > pane
//! heuristics.
//!
//! [`PRECEDENCE`] is the table: which sources may allow, which may only make an answer more
//! careful. `docs/decide.md` shows it as a generated section, and a test holds it to
//! [`Signal::may_allow`], which `enforce` applies to every answer.
//!
//! The structured layer decides first. Then each piece of caller evidence, transcript first,
//! may replace the ruling only with a strictly more careful action (the order of
//! [`Action`]: proceed < fall_back < hold < pause < escalate), so at equal strength the higher
//! rank keeps the say. Last, `enforce` refuses any `allow` whose source may not allow.

use super::verdict::{Action, Finding, Question, Ruling, Signal};
use crate::evidence::CallerEvidence;
use crate::vocab::RuleId;

/// One row of the precedence table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    /// The rank (1 is the highest); `None` for "no signal".
    pub rank: Option<u8>,
    /// The sources at this rank.
    pub signals: &'static [Signal],
    /// The sources, for people.
    pub source: &'static str,
    /// Whether they may allow anything.
    pub allows: bool,
    /// What they may allow, for people.
    pub can_allow: &'static str,
    /// Whether they may make an answer more careful.
    pub more_careful: bool,
}

/// Signal precedence, highest rank first.
pub const PRECEDENCE: &[Rank] = &[
    Rank {
        rank: Some(1),
        signals: &[Signal::StructuredEvent],
        source: "structured hook event (the session's state from an explicit event)",
        allows: true,
        can_allow: "yes, as the rules say; `input`/`nudge` only at an explicit, fresh, \
                    authoritative `idle` of the current generation and epoch",
        more_careful: true,
    },
    Rank {
        rank: Some(1),
        signals: &[Signal::HostProcess, Signal::Window],
        source: "deterministic liveness: host pid dead or reused; window dead (caller's \
                 `window_dead`)",
        allows: true,
        can_allow: "`crashed` only",
        more_careful: false,
    },
    Rank {
        rank: Some(2),
        signals: &[Signal::Transcript],
        source: "transcript-derived signals (caller's `transcript`)",
        allows: false,
        can_allow: "never",
        more_careful: true,
    },
    Rank {
        rank: Some(3),
        signals: &[Signal::Pane],
        source: "pane heuristics (caller's `pane`)",
        allows: false,
        can_allow: "never",
        more_careful: true,
    },
    Rank {
        rank: Some(4),
        signals: &[Signal::Classifier],
        source: "the configured classifier's verdict (`[classifier]`, through the act-gate)",
        allows: true,
        can_allow: "`stall` only, and only `stalled` where the structural answer was \
                    `fall_back` at an explicit idle with no pending wake (a nudge is wanted: no \
                    keystroke, no slot)",
        more_careful: true,
    },
    Rank {
        rank: None,
        signals: &[Signal::None],
        source: "none",
        allows: false,
        can_allow: "never: `fall_back`",
        more_careful: false,
    },
];

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
                effect.rule,
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
            RuleId::OnlyStructuredSignalsAllow,
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
    use crate::evidence::{EFFECTS, PaneEvidence, TranscriptEvidence};

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
                    typed_not_submitted: bit("typed_not_submitted"),
                    screen: None,
                }),
                transcript: Some(TranscriptEvidence {
                    turn_in_progress: bit("turn_in_progress"),
                    interrupted: bit("interrupted"),
                    quota_error: bit("quota_error"),
                    turn_finished: bit("turn_finished"),
                    zero_tokens: bit("zero_tokens"),
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
                    let structured = Ruling::new(action, signal, RuleId::NotIdle, "why");
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

    /// The precedence table as Markdown, for docs/decide.md.
    fn precedence_table() -> String {
        let mut out = String::from(
            "| rank | source | can allow | can make more careful |\n|---|---|---|---|\n",
        );
        for r in PRECEDENCE {
            let rank = r.rank.map_or("—".to_owned(), |n| n.to_string());
            let careful = if r.more_careful { "yes" } else { "—" };
            out.push_str(&format!("| {rank} | {} | {} | {careful} |\n", r.source, r.can_allow));
        }
        out
    }

    #[test]
    fn the_precedence_table_is_what_the_code_enforces_and_the_docs_show() {
        let mut seen = Vec::new();
        for r in PRECEDENCE {
            for signal in r.signals {
                assert_eq!(signal.may_allow(), r.allows, "{signal:?}");
                seen.push(*signal);
            }
            assert_eq!(r.can_allow.starts_with("never"), !r.allows, "{}", r.source);
        }
        // Every source once (the match fails to compile when a source is added).
        for signal in &seen {
            match signal {
                Signal::StructuredEvent
                | Signal::HostProcess
                | Signal::Window
                | Signal::Transcript
                | Signal::Pane
                | Signal::Classifier
                | Signal::None => {}
            }
        }
        seen.sort_by_key(|s| s.as_str());
        seen.dedup();
        assert_eq!(seen.len(), 7, "{seen:?}");
        // Caller evidence is ranked as it is applied: the transcript before the pane.
        let rank = |s: Signal| PRECEDENCE.iter().find(|r| r.signals.contains(&s)).unwrap().rank;
        assert!(rank(Signal::StructuredEvent) < rank(Signal::Transcript));
        assert!(rank(Signal::Transcript) < rank(Signal::Pane));
        assert!(rank(Signal::Pane) < rank(Signal::Classifier));
        let table = precedence_table();
        crate::testing::assert_generated_section("docs/decide.md", "signal-precedence", &table);
    }

    #[test]
    fn the_transcript_outranks_the_pane_at_equal_strength() {
        let caller = CallerEvidence {
            pane: Some(PaneEvidence { spinner: true, ..Default::default() }),
            transcript: Some(TranscriptEvidence { turn_in_progress: true, ..Default::default() }),
            window_dead: None,
        };
        let structured = Ruling::new(
            Action::Proceed,
            Signal::StructuredEvent,
            RuleId::InputAtExplicitIdle,
            "idle",
        );
        let (ruling, findings) = combine(Question::Input, &structured, &caller);
        assert_eq!((ruling.action, ruling.signal), (Action::Hold, Signal::Transcript));
        assert_eq!(ruling.rule, RuleId::TranscriptTurnInProgress);
        assert_eq!(findings.iter().filter(|f| f.applied).count(), 1);
    }

    #[test]
    fn pane_text_that_looks_idle_never_allows() {
        let caller = CallerEvidence {
            pane: Some(PaneEvidence { text_says_idle: true, ..Default::default() }),
            ..Default::default()
        };
        for question in Question::ALL {
            let structured = Ruling::new(
                Action::FallBack,
                Signal::None,
                RuleId::NoStructuredSignal,
                "no signal",
            );
            let (ruling, findings) = combine(question, &structured, &caller);
            assert_eq!(ruling.action, Action::FallBack);
            assert!(!findings[0].applied);
        }
    }

    #[test]
    fn an_allow_from_a_source_that_may_not_allow_is_refused() {
        for signal in [Signal::Pane, Signal::Transcript, Signal::None] {
            let ruling =
                enforce(Ruling::new(Action::Proceed, signal, RuleId::InputAtExplicitIdle, "y"));
            assert_eq!(ruling.action, Action::FallBack);
        }
    }
}
