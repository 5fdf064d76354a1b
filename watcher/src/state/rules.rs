//! The transition rules: what each canonical event does to a session's state.
//!
//! Rules are semantic, not a ranking: a late `tool_start` from a hook that ran in parallel
//! with `PermissionRequest` does not end the permission wait, because only a tool end, a stop
//! or a new prompt ends it.

use crate::canonical::{Event, Kind, WaitReason};
use crate::profile::Profile;
use crate::vocab::{EndReason, StartWord, UnknownReason};

use super::todo::RepeatedCall;
use super::{Pending, State, StateKind};

/// What an event does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Effect {
    /// A new epoch begins; the state is `unknown` until an input-ready event.
    NewEpoch,
    /// The state becomes this.
    Enter(State),
    /// The state stays; the event is recorded.
    Keep,
}

/// The session bookkeeping a rule may look at and update.
#[derive(Debug, Clone, Default)]
pub(super) struct Turn {
    /// Tools started and not ended.
    pub running_tools: u32,
    /// The tool a permission or question wait is about.
    pub waiting_tool: Option<String>,
    /// What the last `stop` said was still pending.
    pub pending: Pending,
    /// When the turn's `turn_start` was relayed.
    pub started_ns: Option<u64>,
    /// The run of identical tool calls this turn ended on, or is in.
    pub calls: Option<RepeatedCall>,
    /// The last `stop`'s last assistant message.
    pub last_message: Option<String>,
}

impl Turn {
    /// What a turn's end keeps: when it started, its calls, what it said; and what the stop
    /// reported pending.
    fn ended(&mut self, pending: Pending, last_message: Option<String>) -> Turn {
        Turn {
            pending,
            started_ns: self.started_ns,
            calls: self.calls.take(),
            last_message,
            ..Turn::default()
        }
    }
}

/// Decides the effect of `event` on a session in `current`, and updates `turn`. Returns the
/// effect and the name of the rule that decided it.
pub(super) fn decide(
    profile: Option<&Profile>,
    event: &Event,
    current: StateKind,
    turn: &mut Turn,
) -> (Effect, &'static str) {
    let input_ready = profile.is_some_and(|p| p.is_input_ready(event.kind.kind_name()));
    let waiting = current == StateKind::WaitingOnHuman;
    let enter = Effect::Enter;
    match &event.kind {
        Kind::SessionStart { source } => match source.as_deref().and_then(StartWord::from_word) {
            Some(StartWord::Compact) => (Effect::Keep, "compaction-restart-keeps-state"),
            _ => {
                *turn = Turn::default();
                (Effect::NewEpoch, "session-start-new-epoch")
            }
        },
        Kind::SessionEnd { reason } => {
            *turn = Turn::default();
            (enter(State::Ended(reason.as_deref().map(EndReason::parse))), "session-end")
        }
        Kind::TurnStart => {
            *turn = Turn { started_ns: Some(event.ts_ns), ..Turn::default() };
            (enter(State::Active), "prompt-starts-turn")
        }
        Kind::ToolStart { tool } => {
            turn.running_tools += 1;
            turn.calls = RepeatedCall::after(turn.calls.take(), event);
            let approved = profile.is_some_and(|p| p.tool_start_after_approval)
                && tool.is_some()
                && turn.waiting_tool == *tool;
            if waiting && approved {
                // Fired only once the dialog about this very tool was answered (Qwen Code).
                turn.waiting_tool = None;
                (
                    enter(State::ChildCommand { tool: tool.clone() }),
                    "tool-start-after-approval-ends-the-wait",
                )
            } else if waiting {
                (Effect::Keep, "tool-start-does-not-end-a-wait")
            } else {
                (enter(State::ChildCommand { tool: tool.clone() }), "tool-start-child-command")
            }
        }
        Kind::ToolEnd { tool, .. } => {
            turn.running_tools = turn.running_tools.saturating_sub(1);
            let ends_wait = turn.waiting_tool.is_none() || turn.waiting_tool == *tool;
            if waiting && !ends_wait {
                return (Effect::Keep, "other-tool-end-does-not-end-a-wait");
            }
            turn.waiting_tool = None;
            if turn.running_tools > 0 {
                (enter(State::ChildCommand { tool: None }), "tool-end-others-still-running")
            } else {
                (enter(State::Active), "tool-end-turn-goes-on")
            }
        }
        Kind::PermissionRequest { tool } => {
            turn.waiting_tool = tool.clone();
            (enter(State::WaitingOnHuman(WaitReason::Permission)), "permission-request-waits")
        }
        Kind::WaitingForInput { reason, tool, .. } => {
            if tool.is_some() {
                // A question tool: its call is a running tool that ends with its answer.
                turn.running_tools += 1;
                turn.waiting_tool = tool.clone();
            }
            (enter(State::WaitingOnHuman(*reason)), "waiting-for-input")
        }
        Kind::IdlePrompt
            if input_ready
                && turn.started_ns.zip(profile.and_then(|p| p.idle_prompt_delay)).is_some_and(
                    |(started, delay)| {
                        u128::from(event.ts_ns.saturating_sub(started)) < delay.as_nanos()
                    },
                ) =>
        {
            // Sooner after the prompt than the CLI's idle timer: the previous turn's.
            (Effect::Keep, "late-idle-prompt-belongs-to-the-previous-turn")
        }
        Kind::IdlePrompt if input_ready => {
            let (pending, said) = (std::mem::take(&mut turn.pending), turn.last_message.take());
            *turn = turn.ended(pending, said);
            (enter(State::Idle), "input-ready-event-idle")
        }
        Kind::Stop { pending_tasks, scheduled_wakes, tasks, crons, last_message } => {
            let pending = Pending {
                tasks: *pending_tasks,
                wakes: *scheduled_wakes,
                background_tasks: tasks.clone(),
                crons: crons.clone(),
            };
            *turn = turn.ended(pending, last_message.clone());
            if input_ready {
                (enter(State::Idle), "input-ready-event-idle")
            } else {
                (enter(State::Unknown(UnknownReason::StopNotInputReady)), "stop-not-input-ready")
            }
        }
        Kind::StopFailure { error, .. } => {
            *turn = Turn::default();
            (enter(State::EnvFault(*error)), "stop-failure-env-fault")
        }
        Kind::Compact { .. } => (Effect::Keep, "compaction-never-idles"),
        Kind::IdlePrompt => (Effect::Keep, "idle-prompt-not-input-ready"),
        Kind::SubagentStart { .. } | Kind::SubagentStop { .. } => {
            (Effect::Keep, "subagent-lifecycle-recorded")
        }
        Kind::Todo => (Effect::Keep, "task-list-changed"),
        Kind::Notification { .. } => (Effect::Keep, "notification-recorded"),
        Kind::Unknown { .. } => (Effect::Keep, "unknown-event-recorded"),
    }
}
