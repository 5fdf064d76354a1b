//! The triggers a `[[notify]]` rule fires `on`, with their words in `notify.toml`.

use std::fmt;

use hookline::state::State;
use hookline::vocab::WaitReason;
use serde::{Deserialize, Serialize};

/// What a `[[notify]]` rule fires `on`: a transition into a state (by its detail, for a wait),
/// a session `unknown` for longer than the rule's `unknown-after`, or a delivery typed but not
/// confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Trigger {
    /// Into `waiting_on_human`, whatever the reason.
    #[serde(rename = "waiting_on_human")]
    WaitingOnHuman,
    /// Into `waiting_on_human` for a permission dialog.
    #[serde(rename = "waiting_on_human.permission")]
    Permission,
    /// Into `waiting_on_human` for the agent's question.
    #[serde(rename = "waiting_on_human.question")]
    Question,
    /// Into `waiting_on_human` for an MCP elicitation.
    #[serde(rename = "waiting_on_human.elicitation")]
    Elicitation,
    /// Into `waiting_on_human` for any other reason (detail `other`): a turn the human
    /// interrupted, or a wait the CLI did not classify.
    #[serde(rename = "waiting_on_human.interrupted")]
    Interrupted,
    /// Into `idle` (explicitly at the input prompt).
    #[serde(rename = "idle")]
    Idle,
    /// Into `env_fault` (a quota, rate limit, billing, auth or provider error).
    #[serde(rename = "env_fault")]
    EnvFault,
    /// Into `ended`.
    #[serde(rename = "ended")]
    Ended,
    /// `unknown` for longer than the rule's `unknown-after`.
    #[serde(rename = "unknown")]
    Unknown,
    /// A delivery typed into a pane and not confirmed by a structured event. Fed by the
    /// daemon, which runs the deliveries; `hookline notify` alone never sees one.
    #[serde(rename = "delivery_unconfirmed")]
    DeliveryUnconfirmed,
}

impl Trigger {
    /// Every trigger, in the order of the vocabulary (and of the documentation).
    pub const ALL: [Trigger; 10] = [
        Trigger::WaitingOnHuman,
        Trigger::Permission,
        Trigger::Question,
        Trigger::Elicitation,
        Trigger::Interrupted,
        Trigger::Idle,
        Trigger::EnvFault,
        Trigger::Ended,
        Trigger::Unknown,
        Trigger::DeliveryUnconfirmed,
    ];

    /// Every trigger as written in `notify.toml`, in the same order as [`Trigger::ALL`].
    pub const WORDS: [&str; 10] = [
        "waiting_on_human",
        "waiting_on_human.permission",
        "waiting_on_human.question",
        "waiting_on_human.elicitation",
        "waiting_on_human.interrupted",
        "idle",
        "env_fault",
        "ended",
        "unknown",
        "delivery_unconfirmed",
    ];

    /// The word `notify.toml` and the journal use.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::WaitingOnHuman => "waiting_on_human",
            Trigger::Permission => "waiting_on_human.permission",
            Trigger::Question => "waiting_on_human.question",
            Trigger::Elicitation => "waiting_on_human.elicitation",
            Trigger::Interrupted => "waiting_on_human.interrupted",
            Trigger::Idle => "idle",
            Trigger::EnvFault => "env_fault",
            Trigger::Ended => "ended",
            Trigger::Unknown => "unknown",
            Trigger::DeliveryUnconfirmed => "delivery_unconfirmed",
        }
    }

    /// The trigger a word names, if any.
    pub fn from_word(word: &str) -> Option<Trigger> {
        Trigger::ALL.into_iter().find(|t| t.as_str() == word)
    }

    /// Whether entering `state` is this trigger's transition (never for [`Trigger::Unknown`],
    /// which waits, nor [`Trigger::DeliveryUnconfirmed`], which no state is).
    pub fn entered_by(self, state: &State) -> bool {
        matches!(
            (self, state),
            (Trigger::WaitingOnHuman, State::WaitingOnHuman(_))
                | (Trigger::Permission, State::WaitingOnHuman(WaitReason::Permission))
                | (Trigger::Question, State::WaitingOnHuman(WaitReason::Question))
                | (Trigger::Elicitation, State::WaitingOnHuman(WaitReason::Elicitation))
                | (
                    Trigger::Interrupted,
                    State::WaitingOnHuman(WaitReason::Other | WaitReason::Interrupted)
                )
                | (Trigger::Idle, State::Idle)
                | (Trigger::EnvFault, State::EnvFault(_))
                | (Trigger::Ended, State::Ended(_))
        )
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_trigger_reads_and_writes_its_word() {
        for trigger in Trigger::ALL {
            let word = trigger.to_string();
            assert_eq!(serde_json::to_value(trigger).unwrap(), word.as_str(), "{trigger:?}");
            assert_eq!(serde_json::from_value::<Trigger>(word.clone().into()).unwrap(), trigger);
            assert_eq!(Trigger::from_word(&word), Some(trigger));
        }
        assert_eq!(Trigger::WORDS, Trigger::ALL.map(Trigger::as_str));
    }

    #[test]
    fn each_trigger_is_entered_by_its_states_only() {
        let permission = State::WaitingOnHuman(WaitReason::Permission);
        assert!(Trigger::WaitingOnHuman.entered_by(&permission));
        assert!(Trigger::Permission.entered_by(&permission));
        assert!(!Trigger::Question.entered_by(&permission));
        assert!(Trigger::Interrupted.entered_by(&State::WaitingOnHuman(WaitReason::Other)));
        assert!(!Trigger::Idle.entered_by(&State::Active));
        assert!(
            !Trigger::Unknown.entered_by(&State::Unknown(hookline::vocab::UnknownReason::Stale))
        );
    }
}
