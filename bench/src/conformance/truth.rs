//! The true state timeline of one run, built from what the driver knows by construction: when
//! it pressed a key and what the key meant, and when the mock API received each request and
//! finished each answer (and what the answer meant for the turn). hookline's answers never
//! enter it.

use hookline::vocab::StateKind;
use hookline_tests::mock_http::{Exchange, Meaning};

/// What the session truly does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Truth {
    /// At its prompt, waiting for input.
    Idle,
    /// A turn is in progress (the model is asked or answers).
    Active,
    /// A tool runs.
    Tool,
    /// A dialog waits for the person: a permission, a question.
    Dialog,
    /// The API refused the turn (rate limit, overload, quota), retried or given up.
    Fault,
    /// The CLI's process is gone.
    Ended,
}

impl Truth {
    /// The hookline state that says the same.
    pub fn kind(self) -> StateKind {
        match self {
            Truth::Idle => StateKind::Idle,
            Truth::Active => StateKind::Active,
            Truth::Tool => StateKind::ChildCommand,
            Truth::Dialog => StateKind::WaitingOnHuman,
            Truth::Fault => StateKind::EnvFault,
            Truth::Ended => StateKind::Ended,
        }
    }

    /// The word the tables use (hookline's, for the state that says the same).
    pub fn as_str(self) -> &'static str {
        self.kind().as_str()
    }
}

/// What a turn's tool calls open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tools {
    /// They run at once.
    #[default]
    Run,
    /// A permission dialog first.
    Approval,
    /// A question for the person.
    Question,
}

/// What the driver did, by what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// A prompt reached the CLI (its Enter): a turn starts. `tools` is what its tool calls
    /// open; `wakes` what those of a turn the CLI starts by itself later open.
    Submit {
        /// This turn's tool calls.
        tools: Tools,
        /// Those of a turn the CLI starts by itself.
        wakes: Tools,
    },
    /// A compaction command reached the CLI.
    Compact,
    /// The dialog was approved: the tool runs.
    Approve,
    /// The question was answered: the turn goes on.
    Answer,
    /// The dialog was refused or the turn interrupted (a "no", Escape): the CLI goes back to its
    /// prompt, unless it tells the model (a request carrying the tool's result follows).
    Dismiss,
    /// The CLI's processes were killed.
    Kill,
}

/// What the timeline is built from.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// When the CLI's prompt was first on screen: the timeline starts `idle` there.
    pub ready_ns: u64,
    /// What the driver did, with when.
    pub acts: Vec<(u64, Act)>,
    /// The mock's exchanges.
    pub exchanges: Vec<Exchange>,
    /// When the CLI's process ended, if it did.
    pub ended_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
enum Input {
    Act(Act),
    Received(Exchange),
    Done(Exchange),
    Ended,
}

/// The true timeline: each state with the instant it began, from `ready_ns` on.
pub fn timeline(facts: &Facts) -> Vec<(u64, Truth)> {
    let mut inputs: Vec<(u64, usize, Input)> = Vec::new();
    for (i, (at, act)) in facts.acts.iter().enumerate() {
        inputs.push((*at, i, Input::Act(*act)));
    }
    for (i, e) in facts.exchanges.iter().enumerate() {
        if e.received_ns < facts.ready_ns {
            continue;
        }
        inputs.push((e.received_ns, i, Input::Received(*e)));
        if let Some(done) = e.done_ns {
            inputs.push((done, i, Input::Done(*e)));
        }
    }
    if let Some(ended) = facts.ended_ns {
        inputs.push((ended, 0, Input::Ended));
    }
    inputs.sort_by_key(|(at, i, _)| (*at, *i));
    let acts: Vec<u64> = facts.acts.iter().map(|(at, _)| *at).collect();
    let mut out = vec![(facts.ready_ns, Truth::Idle)];
    let mut state = Truth::Idle;
    let (mut tools, mut wakes) = (Tools::Run, Tools::Run);
    // A compaction runs until its summary is answered, which some CLIs ask as a side request.
    let mut compacting = false;
    for (at, _, input) in inputs {
        let next = match input {
            _ if state == Truth::Ended => None,
            Input::Done(e)
                if compacting && e.complete && !matches!(e.meaning, Meaning::Fails(_)) =>
            {
                compacting = false;
                (state == Truth::Active).then_some(Truth::Idle)
            }
            Input::Received(e) | Input::Done(e) if e.meaning == Meaning::Side => None,
            Input::Act(Act::Submit { tools: t, wakes: w }) => {
                (tools, wakes) = (t, w);
                compacting = false;
                Some(Truth::Active)
            }
            Input::Act(Act::Compact) => {
                tools = Tools::Run;
                compacting = true;
                Some(Truth::Active)
            }
            Input::Act(Act::Approve) => (state == Truth::Dialog).then_some(Truth::Tool),
            Input::Act(Act::Answer) => (state == Truth::Dialog).then_some(Truth::Active),
            Input::Act(Act::Dismiss) => {
                // Told to the model when a request carrying the tool's result comes before the
                // driver acts again.
                let until = acts.iter().copied().find(|a| *a > at).unwrap_or(u64::MAX);
                let told = facts.exchanges.iter().any(|e| {
                    e.meaning != Meaning::Side
                        && e.after_tool
                        && e.received_ns >= at
                        && e.received_ns < until
                });
                Some(if told && state == Truth::Dialog { Truth::Active } else { Truth::Idle })
            }
            Input::Act(Act::Kill) | Input::Ended => Some(Truth::Ended),
            Input::Received(e) => match state {
                Truth::Idle => {
                    tools = wakes;
                    Some(Truth::Active)
                }
                Truth::Tool | Truth::Dialog if e.after_tool => Some(Truth::Active),
                _ => None,
            },
            Input::Done(e) => match e.meaning {
                Meaning::Fails(_) => Some(Truth::Fault),
                _ if !e.complete => None,
                Meaning::CallsTool if matches!(state, Truth::Active | Truth::Fault) => {
                    Some(match tools {
                        Tools::Run => Truth::Tool,
                        Tools::Approval | Tools::Question => Truth::Dialog,
                    })
                }
                Meaning::EndsTurn if matches!(state, Truth::Active | Truth::Fault) => {
                    Some(Truth::Idle)
                }
                _ => None,
            },
        };
        if let Some(next) = next
            && next != state
        {
            state = next;
            out.push((at, next));
        }
    }
    out
}

/// The state at `at` in a timeline (the first state before its start).
pub fn at(timeline: &[(u64, Truth)], at: u64) -> Truth {
    timeline
        .iter()
        .take_while(|(t, _)| *t <= at)
        .last()
        .or(timeline.first())
        .map_or(Truth::Idle, |(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use hookline_tests::mock_http::ApiError;

    use super::*;

    fn exchange(received: u64, done: u64, meaning: Meaning) -> Exchange {
        Exchange {
            id: received,
            meaning,
            after_tool: false,
            received_ns: received,
            first_byte_ns: Some(received + 1),
            done_ns: Some(done),
            complete: true,
        }
    }

    fn facts(acts: Vec<(u64, Act)>, exchanges: Vec<Exchange>) -> Facts {
        Facts { ready_ns: 10, acts, exchanges, ended_ns: None }
    }

    const ASK: Act = Act::Submit { tools: Tools::Approval, wakes: Tools::Run };
    const RUN: Act = Act::Submit { tools: Tools::Run, wakes: Tools::Run };

    #[test]
    fn an_approved_command_goes_through_the_dialog_the_tool_and_back_to_the_prompt() {
        let result = Exchange { after_tool: true, ..exchange(300, 320, Meaning::EndsTurn) };
        let f = facts(
            vec![(100, ASK), (200, Act::Approve)],
            vec![exchange(110, 150, Meaning::CallsTool), exchange(120, 125, Meaning::Side), result],
        );
        assert_eq!(
            timeline(&f),
            [
                (10, Truth::Idle),
                (100, Truth::Active),
                (150, Truth::Dialog),
                (200, Truth::Tool),
                (300, Truth::Active),
                (320, Truth::Idle)
            ]
        );
        assert_eq!(at(&timeline(&f), 5), Truth::Idle);
        assert_eq!(at(&timeline(&f), 250), Truth::Tool);
    }

    #[test]
    fn a_dismissed_dialog_is_idle_unless_the_cli_tells_the_model() {
        let silent = facts(
            vec![(100, ASK), (200, Act::Dismiss)],
            vec![exchange(110, 150, Meaning::CallsTool)],
        );
        assert_eq!(timeline(&silent).last(), Some(&(200, Truth::Idle)));
        let told = Exchange { after_tool: true, ..exchange(210, 260, Meaning::EndsTurn) };
        let f = facts(
            vec![(100, ASK), (200, Act::Dismiss)],
            vec![exchange(110, 150, Meaning::CallsTool), told],
        );
        assert_eq!(timeline(&f)[3..], [(200, Truth::Active), (260, Truth::Idle)]);
        // A request after the driver's next act is not the dismissal's.
        let later = Exchange { after_tool: true, ..exchange(410, 460, Meaning::EndsTurn) };
        let f = facts(
            vec![(100, ASK), (200, Act::Dismiss), (400, RUN)],
            vec![exchange(110, 150, Meaning::CallsTool), later],
        );
        assert_eq!(timeline(&f)[3], (200, Truth::Idle));
    }

    #[test]
    fn an_interrupted_stream_an_api_error_a_wake_and_a_kill() {
        let slow = Exchange { complete: false, ..exchange(110, 300, Meaning::EndsTurn) };
        let failed = exchange(410, 420, Meaning::Fails(ApiError::RateLimit));
        let retried = exchange(450, 460, Meaning::Fails(ApiError::RateLimit));
        let wake = exchange(700, 720, Meaning::EndsTurn);
        let f = Facts {
            ready_ns: 10,
            acts: vec![(100, RUN), (250, Act::Dismiss), (400, RUN), (600, RUN), (800, Act::Kill)],
            exchanges: vec![slow, failed, retried, exchange(610, 620, Meaning::EndsTurn), wake],
            ended_ns: Some(810),
        };
        assert_eq!(
            timeline(&f),
            [
                (10, Truth::Idle),
                (100, Truth::Active),
                (250, Truth::Idle),
                (400, Truth::Active),
                (420, Truth::Fault),
                (600, Truth::Active),
                (620, Truth::Idle),
                (700, Truth::Active),
                (720, Truth::Idle),
                (800, Truth::Ended)
            ]
        );
    }

    #[test]
    fn a_subagents_answers_inside_its_tool_do_not_end_the_turn() {
        let result = Exchange { after_tool: true, ..exchange(400, 420, Meaning::EndsTurn) };
        let f = facts(
            vec![(100, RUN)],
            vec![
                exchange(110, 150, Meaning::CallsTool),
                exchange(200, 210, Meaning::EndsTurn),
                exchange(250, 260, Meaning::CallsTool),
                result,
            ],
        );
        assert_eq!(
            timeline(&f),
            [
                (10, Truth::Idle),
                (100, Truth::Active),
                (150, Truth::Tool),
                (400, Truth::Active),
                (420, Truth::Idle)
            ]
        );
    }

    #[test]
    fn a_compaction_ends_with_its_summary_even_when_asked_as_a_side_request() {
        let f = facts(
            vec![(100, Act::Compact)],
            vec![exchange(150, 170, Meaning::Side), exchange(300, 320, Meaning::Side)],
        );
        assert_eq!(timeline(&f), [(10, Truth::Idle), (100, Truth::Active), (170, Truth::Idle)]);
        // Outside a compaction a side request changes nothing.
        let f = facts(vec![(100, RUN)], vec![exchange(150, 170, Meaning::Side)]);
        assert_eq!(timeline(&f), [(10, Truth::Idle), (100, Truth::Active)]);
    }

    #[test]
    fn a_turn_the_cli_starts_by_itself_opens_what_its_prompt_said() {
        let f = facts(
            vec![(100, Act::Submit { tools: Tools::Run, wakes: Tools::Approval })],
            vec![exchange(110, 120, Meaning::EndsTurn), exchange(500, 520, Meaning::CallsTool)],
        );
        assert_eq!(timeline(&f)[3..], [(500, Truth::Active), (520, Truth::Dialog)]);
    }
}
