//! The structured layer: what the session's state (from explicit events) and deterministic
//! liveness signals say, question by question, before any caller evidence.
//!
//! Every function returns a [`Ruling`]. Only this layer can allow; it allows `input` and
//! `nudge` only at an explicit, fresh, authoritative `idle` (the tracker's snapshot offers the
//! input slot), and answers `fall_back` ("no structured signal") wherever the CLI, the
//! session or the state cannot say, rather than guessing.

use crate::canonical::{FailureKind, KindName, WaitReason};
use crate::profile::Profile;
use crate::state::{InputSlot, Refusal, Snapshot, State, StateKind};
use crate::units::format_duration;
use crate::vocab::{RuleId, TaskStatus, TaskType};

use super::policy::Policy;
use super::verdict::{
    Action, Counters, HoleNote, PendingWake, Question, QuotaNotice, Ruling, Signal, WakeSource,
};
use crate::evidence::HostStatus;

use Action::{Escalate, FallBack, Hold, Pause, Proceed};
use Signal::StructuredEvent as Structured;

/// What the structured layer looks at.
pub(crate) struct Facts<'a> {
    pub question: Question,
    /// The session as asked.
    pub session: &'a str,
    pub snapshot: Option<&'a Snapshot>,
    pub profile: Option<&'a Profile>,
    pub policy: &'a Policy,
    /// The host pid and what the probe said (`None`: no pid, or probing is off).
    pub host: Option<(u32, HostStatus)>,
    pub window_dead: Option<bool>,
    pub counters: Counters,
    pub quota: Option<&'a QuotaNotice>,
    /// A one-shot reader (history replayed): never authorizes input.
    pub one_shot: bool,
}

/// The structured ruling for a question.
pub(crate) fn rule(f: &Facts) -> Ruling {
    let ruling = match f.question {
        Question::Input => input(f),
        Question::Nudge => nudge(f),
        Question::Crashed => crashed(f),
        Question::EnvFault => env_fault(f),
        Question::Escalate => escalate(f),
        Question::Stall => stall(f),
    };
    let ruling = match f.quota {
        // A quota notification that still stands pauses whatever would type into the session
        // or give up on it; a completion signal (session end, dead host) still counts.
        Some(notice)
            if matches!(
                f.question,
                Question::Input | Question::Nudge | Question::Crashed | Question::Stall
            ) && ruling.action < Pause
                && !(f.question == Question::Crashed && ruling.action == Proceed) =>
        {
            quota_pause(notice)
        }
        _ => ruling,
    };
    if f.one_shot && matches!(f.question, Question::Input | Question::Nudge) {
        return one_shot(ruling, f.question);
    }
    ruling
}

fn quota_pause(notice: &QuotaNotice) -> Ruling {
    Ruling::new(
        Pause,
        Structured,
        RuleId::QuotaNotification,
        format!(
            "a notification reported a quota ({}: {}): pause the run; do not retry",
            notice.notification_type.as_deref().unwrap_or("?"),
            notice.message.as_deref().unwrap_or("")
        ),
    )
}

/// A one-shot rebuilt its state from history: it never authorizes input or a nudge, and says
/// why, naming the question asked.
fn one_shot(ruling: Ruling, question: Question) -> Ruling {
    let why = format!(
        "a one-shot `hookline decide` rebuilds the state from history and can never authorize \
         {}: ask `hookline serve` or the library's Decider, which hold one live generation",
        what_types(question)
    );
    match ruling.action {
        Proceed => Ruling::new(Hold, Structured, RuleId::OneShotNeverAuthorizesInput, why),
        Hold => Ruling { reason: format!("{}; {why}", ruling.reason), ..ruling },
        _ => ruling,
    }
}

/// What a question that types into the session would type, for its reasons.
pub(crate) fn what_types(question: Question) -> &'static str {
    match question {
        Question::Nudge => "a nudge",
        _ => "input",
    }
}

/// Whether the profile can report a permission prompt.
pub(crate) fn reports_permission(profile: &Profile) -> bool {
    profile.rules.iter().any(|r| {
        let reason =
            || r.set.get("reason").and_then(|v| v.as_str()).and_then(WaitReason::from_word);
        r.kind == KindName::PermissionRequest
            || (r.kind == KindName::WaitingForInput && reason() == Some(WaitReason::Permission))
    })
}

/// The profile holes that bear on a decision: those of the current state (or of the state that
/// went stale).
pub(crate) fn holes(profile: Option<&Profile>, snapshot: Option<&Snapshot>) -> Vec<HoleNote> {
    let (Some(profile), Some(snapshot)) = (profile, snapshot) else {
        return Vec::new();
    };
    let state = snapshot.stale.as_ref().map_or(snapshot.state.kind(), |s| s.was);
    profile
        .holes_in(state)
        .map(|h| HoleNote { id: h.id.clone(), description: h.description.clone() })
        .collect()
}

fn no_session(f: &Facts) -> Ruling {
    Ruling::new(
        FallBack,
        Signal::None,
        RuleId::NoStructuredSignal,
        format!(
            "no event has been seen for session {:?} (hooks not installed or not trusted, an old \
             relay, another events directory): no structured signal; keep your own behaviour",
            f.session
        ),
    )
}

/// `unknown`: loud, never idle. A state that went stale while waiting on its human keeps
/// that wait as the freshest evidence; otherwise there is no structured signal.
fn unknown(v: &Snapshot) -> Ruling {
    if let Some(stale) = v.stale.as_ref().filter(|s| s.was == StateKind::WaitingOnHuman) {
        return Ruling::new(
            Hold,
            Structured,
            RuleId::LastEvidenceIsAWaitForItsHuman,
            format!(
                "the state went stale (hole {}) while waiting on its human: that wait is the \
                 freshest evidence",
                stale.hole
            ),
        );
    }
    let hole = v.stale.as_ref().map(|s| format!(", hole {}", s.hole)).unwrap_or_default();
    Ruling::new(
        FallBack,
        Signal::None,
        RuleId::UnknownState,
        format!(
            "the state is unknown ({}{hole}): no structured signal says what the session is \
             doing; keep your own behaviour",
            v.detail().as_deref().unwrap_or("no reason given")
        ),
    )
}

/// What an `env_fault` state of error class `class` means for any question.
fn fault(f: &Facts, v: &Snapshot, class: FailureKind) -> Ruling {
    let word = class.as_str();
    let age = format_duration(std::time::Duration::from_millis(v.age_ms()));
    if f.policy.pause_on.contains(&class) {
        return Ruling::new(
            Pause,
            Structured,
            RuleId::EnvFaultPause,
            format!(
                "the turn ended on {word} ({age} ago, stop_failure): pause the run; do not retry \
                 and do not charge an attempt"
            ),
        );
    }
    if f.policy.backoff_on.contains(&class) {
        let backoff = f.policy.backoff.as_millis() as u64;
        if v.age_ms() < backoff {
            return Ruling::new(
                Pause,
                Structured,
                RuleId::EnvFaultBackoff,
                format!(
                    "the turn ended on {word} ({age} ago, stop_failure), the provider's transient \
                     trouble: pause for env-fault.backoff ({})",
                    format_duration(f.policy.backoff)
                ),
            )
            .retry_after(backoff - v.age_ms());
        }
        return Ruling::new(
            Proceed,
            Structured,
            RuleId::EnvFaultBackoffOver,
            format!(
                "the turn ended on {word} {age} ago, longer than env-fault.backoff ({}): a retry \
                 is allowed (not charged to the task)",
                format_duration(f.policy.backoff)
            ),
        );
    }
    Ruling::new(
        Escalate,
        Structured,
        RuleId::EnvFaultUnclassified,
        format!(
            "the turn ended on an API error hookline cannot classify ({word}: {}); a quota \
             cannot be told from a bad request: ask a human",
            v.evidence.native.as_deref().unwrap_or("stop_failure")
        ),
    )
}

/// What an `env_fault` state means for a question that acts on the session (input, nudge,
/// crashed): never an allow. A transient fault whose backoff is over allows a retry, but the
/// session is still not explicitly idle, and it has not crashed.
fn fault_for_action(f: &Facts, v: &Snapshot, class: FailureKind) -> Ruling {
    let ruling = fault(f, v, class);
    if ruling.action != Proceed {
        return ruling;
    }
    let why = if f.question == Question::Crashed {
        "but an env fault is not a crash".to_owned()
    } else {
        format!(
            "but the session is not explicitly idle: {} waits for an input-ready event",
            what_types(f.question)
        )
    };
    Ruling::new(Hold, Structured, RuleId::EnvFaultIsNotIdle, format!("{}; {why}", ruling.reason))
}

/// The caller reports the window dead: there is nothing to type into.
fn window_dead(f: &Facts) -> Option<Ruling> {
    (f.window_dead == Some(true)).then(|| {
        Ruling::new(
            Hold,
            Signal::Window,
            RuleId::WindowDead,
            "the caller reports the session's window dead: nothing to type into (ask crashed)",
        )
    })
}

fn input(f: &Facts) -> Ruling {
    if let Some(ruling) = window_dead(f) {
        return ruling;
    }
    let Some(v) = f.snapshot else { return no_session(f) };
    match &v.state {
        State::Unknown(_) => unknown(v),
        State::EnvFault(class) => fault_for_action(f, v, *class),
        State::Idle => idle_slot(f, v, RuleId::InputAtExplicitIdle),
        _ if f.profile.is_some_and(|p| p.input_ready.is_empty()) => Ruling::new(
            FallBack,
            Signal::None,
            RuleId::CliHasNoInputReadyEvent,
            format!("the {} profile has no input-ready event: no structured signal", v.cli),
        ),
        state => Ruling::new(
            Hold,
            Structured,
            RuleId::NotIdle,
            match v.detail() {
                Some(detail) => {
                    format!("the session is {} ({detail}), not explicitly idle", state.kind())
                }
                None => format!("the session is {}, not explicitly idle", state.kind()),
            },
        ),
    }
}

/// At `idle`: allowed only when the tracker offers the slot.
fn idle_slot(f: &Facts, v: &Snapshot, rule: RuleId) -> Ruling {
    if let InputSlot::Refused(refusal) = &v.input {
        return Ruling::new(
            Hold,
            Structured,
            RuleId::InputSlotRefused,
            slot_refused(f.question, refusal),
        );
    }
    let max = f.policy.max_idle_age;
    if !max.is_zero() && u128::from(v.age_ms()) > max.as_millis() {
        return Ruling::new(
            Hold,
            Structured,
            RuleId::IdleTooOld,
            format!(
                "idle for {}, longer than input.max-idle-age ({}): ask again after a fresh event",
                v.age(),
                format_duration(max)
            ),
        );
    }
    Ruling::new(
        Proceed,
        Structured,
        rule,
        format!(
            "explicitly idle for {} ({} event {}, authoritative, generation {} epoch {})",
            v.age(),
            v.evidence.kind,
            v.evidence.native.as_deref().unwrap_or("?"),
            v.generation,
            v.epoch
        ),
    )
}

/// Why the input slot a question needs was refused, naming the question.
pub(crate) fn slot_refused(question: Question, refusal: &Refusal) -> String {
    format!("no slot for {}: {refusal}", what_types(question))
}

fn nudge(f: &Facts) -> Ruling {
    if let Some(ruling) = window_dead(f) {
        return ruling;
    }
    let Some(v) = f.snapshot else { return no_session(f) };
    let held = |rule: RuleId, reason: String| Ruling::new(Hold, Structured, rule, reason);
    match &v.state {
        State::WaitingOnHuman(reason) => held(
            RuleId::NudgeNeverWhileWaitingOnHuman,
            format!(
                "waiting on its human ({reason}) for {}: a nudge would type into a prompt it \
                 cannot see",
                v.age()
            ),
        ),
        State::ChildCommand { tool } => held(
            RuleId::NudgeNeverWhileChildCommand,
            format!(
                "a tool is running ({}) for {}: silence is normal",
                tool.as_deref().unwrap_or("?"),
                v.age()
            ),
        ),
        State::EnvFault(class) => fault_for_action(f, v, *class),
        State::Ended(reason) => held(
            RuleId::NudgeNeverAfterSessionEnd,
            format!("the session ended ({})", reason.as_ref().map_or("?", |r| r.as_str())),
        ),
        State::Active => {
            let mut reason =
                format!("a turn is in progress ({} since the last state change)", v.age());
            if f.profile.is_some_and(|p| !reports_permission(p)) {
                reason.push_str(&format!(
                    "; and the {} profile cannot report permission prompts, so an active session \
                     may be waiting on its human",
                    v.cli
                ));
            }
            held(RuleId::NudgeNeverDuringATurn, reason)
        }
        State::Unknown(_) => unknown(v),
        State::Idle => {
            let wakes = pending_wakes(f.policy, v);
            if wakes.iter().any(|w| w.gates) {
                return held(RuleId::NudgeNeverWithPendingWake, pending_reason(&wakes));
            }
            let ruling = idle_slot(f, v, RuleId::NudgeAtExplicitIdle);
            if ruling.action != Proceed {
                return ruling;
            }
            let min = f.policy.nudge_min_idle.as_millis() as u64;
            if v.age_ms() < min {
                return held(
                    RuleId::NudgeWaitsForMinIdle,
                    format!(
                        "idle for {} only; a stall nudge waits for nudge.min-idle ({})",
                        v.age(),
                        format_duration(f.policy.nudge_min_idle)
                    ),
                )
                .retry_after(min - v.age_ms());
            }
            if f.counters.nudges_in_a_row >= f.policy.nudge_max_in_a_row {
                return Ruling::new(
                    Escalate,
                    Structured,
                    RuleId::NudgeCapReached,
                    format!(
                        "{} nudges in a row with no real input in between (nudge.max-in-a-row = \
                         {}): ask a human",
                        f.counters.nudges_in_a_row, f.policy.nudge_max_in_a_row
                    ),
                );
            }
            ruling
        }
    }
}

fn crashed(f: &Facts) -> Ruling {
    if f.window_dead == Some(true) {
        return Ruling::new(
            Proceed,
            Signal::Window,
            RuleId::WindowDead,
            "the caller reports the session's window dead: a deterministic completion signal",
        );
    }
    // `/clear` ends a session id while the CLI process goes on under a new one.
    if let Some(v) = f.snapshot
        && let State::Ended(reason) = &v.state
        && !reason.as_ref().is_some_and(|r| r.process_goes_on())
    {
        return Ruling::new(
            Proceed,
            Structured,
            RuleId::SessionEnded,
            format!(
                "the session ended ({}, {} ago): a deterministic completion signal",
                reason.as_ref().map_or("no reason given", |r| r.as_str()),
                v.age()
            ),
        );
    }
    match f.host {
        Some((pid, HostStatus::Dead)) => {
            return Ruling::new(
                Proceed,
                Signal::HostProcess,
                RuleId::HostProcessDead,
                format!(
                    "the host CLI's process (pid {pid}) is gone: a deterministic completion signal"
                ),
            );
        }
        Some((pid, HostStatus::Reused)) => {
            return Ruling::new(
                Proceed,
                Signal::HostProcess,
                RuleId::HostPidReused,
                format!(
                    "pid {pid} now belongs to a process that started after this session's \
                     events: the host CLI is gone"
                ),
            );
        }
        _ => {}
    }
    let Some(v) = f.snapshot else { return no_session(f) };
    let liveness = match (f.host, v.host_pid) {
        (Some((pid, HostStatus::Alive)), _) => format!("host pid {pid} alive"),
        (Some((pid, _)), _) => format!("host pid {pid} cannot be checked"),
        (None, Some(pid)) => format!("host pid {pid} not checked (crashed.check-host-pid = false)"),
        (None, None) => "no host pid to check".to_owned(),
    };
    match &v.state {
        State::WaitingOnHuman(reason) => Ruling::new(
            Hold,
            Structured,
            RuleId::NeverCrashedWhileWaitingOnHuman,
            format!(
                "waiting on its human ({reason}) for {}, the freshest evidence: not crashed",
                v.age()
            ),
        ),
        State::EnvFault(class) => fault_for_action(f, v, *class),
        State::Unknown(_) => unknown(v),
        State::Ended(reason) => Ruling::new(
            Hold,
            Structured,
            RuleId::SessionClearedProcessGoesOn,
            format!(
                "the session id ended ({}) but the CLI goes on under a new session id (ask by \
                 tag); {liveness}",
                reason.as_ref().map_or("?", |r| r.as_str())
            ),
        ),
        state => {
            let mut reason = format!(
                "{} for {}; no session end, {liveness}, no dead window reported",
                state.kind(),
                v.age()
            );
            if *state == State::Active && f.profile.is_some_and(|p| !reports_permission(p)) {
                reason.push_str(&format!(
                    "; the {} profile cannot report permission prompts, so it may be waiting on \
                     its human",
                    v.cli
                ));
            }
            Ruling::new(Hold, Structured, RuleId::NoCompletionSignal, reason)
        }
    }
}

fn env_fault(f: &Facts) -> Ruling {
    if let Some(notice) = f.quota {
        return quota_pause(notice);
    }
    let Some(v) = f.snapshot else { return no_session(f) };
    if let State::EnvFault(class) = v.state {
        return fault(f, v, class);
    }
    if let Some(profile) = f.profile.filter(|p| !p.produces(KindName::StopFailure)) {
        return Ruling::new(
            FallBack,
            Signal::None,
            RuleId::CliReportsNoEnvFault,
            format!(
                "the {} profile maps no event to stop_failure: a quota or API error is invisible \
                 to hookline; no structured signal",
                profile.name
            ),
        );
    }
    if let State::Unknown(_) = v.state {
        return unknown(v);
    }
    Ruling::new(
        Proceed,
        Structured,
        RuleId::NoEnvFaultEvidence,
        format!(
            "the session is {} and no stop_failure or quota notification stands",
            v.state.kind()
        ),
    )
}

fn escalate(f: &Facts) -> Ruling {
    let policy = f.policy;
    if f.counters.withheld_in_a_row >= policy.escalate_withheld_in_a_row {
        return Ruling::new(
            Escalate,
            Structured,
            RuleId::WithheldInARow,
            format!(
                "{} nudge/crashed verdicts withheld in a row while the state stayed the same \
                 (escalate.withheld-in-a-row = {})",
                f.counters.withheld_in_a_row, policy.escalate_withheld_in_a_row
            ),
        );
    }
    if f.counters.nudges_in_a_row >= policy.nudge_max_in_a_row {
        return Ruling::new(
            Escalate,
            Structured,
            RuleId::NudgeCapReached,
            format!(
                "{} nudges in a row with no real input in between (nudge.max-in-a-row = {})",
                f.counters.nudges_in_a_row, policy.nudge_max_in_a_row
            ),
        );
    }
    let Some(v) = f.snapshot else { return no_session(f) };
    let over = |limit: std::time::Duration| u128::from(v.age_ms()) >= limit.as_millis();
    match &v.state {
        State::Unknown(_) if over(policy.escalate_unknown_after) => Ruling::new(
            Escalate,
            Structured,
            RuleId::UnknownTooLong,
            format!(
                "unknown for {} (escalate.unknown-after = {}): {}",
                v.age(),
                format_duration(policy.escalate_unknown_after),
                v.detail().as_deref().unwrap_or("no reason given")
            ),
        ),
        State::WaitingOnHuman(reason) if over(policy.escalate_waiting_after) => Ruling::new(
            Escalate,
            Structured,
            RuleId::WaitingOnHumanTooLong,
            format!(
                "waiting on its human ({reason}) for {} (escalate.waiting-after = {})",
                v.age(),
                format_duration(policy.escalate_waiting_after)
            ),
        ),
        State::EnvFault(class) if fault(f, v, *class).action == Escalate => fault(f, v, *class),
        State::Unknown(_) => Ruling::new(
            Proceed,
            Structured,
            RuleId::UnknownNotYetTooLong,
            format!(
                "unknown for {} only (escalate.unknown-after = {})",
                v.age(),
                format_duration(policy.escalate_unknown_after)
            ),
        )
        .retry_after((policy.escalate_unknown_after.as_millis() as u64).saturating_sub(v.age_ms())),
        state => Ruling::new(
            Proceed,
            Structured,
            RuleId::NothingToEscalate,
            format!("{} for {}; nothing calls for a human", state.kind(), v.age()),
        ),
    }
}

/// What the last stop reported pending, item by item, and whether each gates a stall nudge:
/// a running `shell` task (not a `stall.services` one), a running `monitor` or subagent, a
/// one-shot cron; and, counted and said so, what the payload cannot tell (a task of another
/// type or with no status, a cron that does not say whether it recurs, a count with no items).
pub(crate) fn pending_wakes(policy: &Policy, v: &Snapshot) -> Vec<PendingWake> {
    let mut wakes = Vec::new();
    let mut running = 0;
    for task in &v.pending.background_tasks {
        let status = task.task_status();
        if status == Some(TaskStatus::Finished) {
            continue;
        }
        running += 1;
        // The CLI's words, for the reason.
        let word = task.status.as_deref().unwrap_or_default().to_ascii_lowercase();
        let kind = task.task_type.as_deref().unwrap_or_default();
        let (gates, why) = match (task.kind(), status, task.command.as_deref()) {
            (_, None, _) => (true, "its status was missing: counted as pending work".to_owned()),
            (Some(TaskType::Shell), Some(_), Some(command)) => match policy.service_in(command) {
                Some(service) => (
                    false,
                    format!(
                        "`{command}` is a long-lived service (stall.services: {service:?}): it \
                         never ends, so it never wakes the session"
                    ),
                ),
                None => (true, format!("`{command}` is running: its end wakes the session")),
            },
            (Some(TaskType::Shell), Some(_), None) => {
                (true, "a shell task with no command is running".to_owned())
            }
            (Some(TaskType::Monitor), Some(_), _) => {
                (true, "a monitor is running: each of its lines wakes the session".to_owned())
            }
            (Some(TaskType::Subagent), Some(_), _) => {
                (true, "a background subagent is running: its end wakes the session".to_owned())
            }
            (Some(TaskType::Unknown), Some(_), _) => {
                (true, format!("a task of a type hookline does not know ({kind}, {word}): counted"))
            }
            (None, Some(_), _) => (true, format!("a task whose type is missing ({word}): counted")),
        };
        wakes.push(PendingWake {
            source: WakeSource::BackgroundTask,
            id: task.id.clone(),
            description: task.description.clone(),
            gates,
            why,
        });
    }
    // What a count says beyond the items listed: pending, and said so.
    let counted = |n: u32, what: &str| PendingWake {
        source: WakeSource::Count,
        id: None,
        description: None,
        gates: true,
        why: format!("{n} {what} counted but not listed: counted as pending"),
    };
    if v.pending.tasks > running {
        wakes.push(counted(v.pending.tasks - running, "background task(s)"));
    }
    for cron in &v.pending.crons {
        let (gates, why) = match cron.recurring {
            Some(true) => (
                false,
                "a recurring cron is a periodic wake, not a wake for the work in hand".to_owned(),
            ),
            Some(false) => (true, "a one-shot scheduled wake: it wakes the session".to_owned()),
            None => (true, "the cron does not say whether it recurs: counted".to_owned()),
        };
        wakes.push(PendingWake {
            source: WakeSource::Cron,
            id: cron.id.clone(),
            description: cron.prompt.clone(),
            gates,
            why,
        });
    }
    let listed = v.pending.crons.len() as u32;
    if v.pending.wakes > listed {
        wakes.push(counted(v.pending.wakes - listed, "scheduled wake(s)"));
    }
    wakes
}

/// The reason of a withheld nudge or stall: what gates, by id and description.
fn pending_reason(wakes: &[PendingWake]) -> String {
    let gating: Vec<&PendingWake> = wakes.iter().filter(|w| w.gates).collect();
    let tasks = gating.iter().filter(|w| w.source != WakeSource::Cron).count();
    let crons = gating.len() - tasks;
    let named: Vec<String> = gating
        .iter()
        .map(|w| {
            let what = match w.source {
                WakeSource::BackgroundTask => "task",
                WakeSource::Cron => "cron",
                WakeSource::Count => "",
            };
            match (&w.id, &w.description) {
                (Some(id), Some(d)) => format!("{what} {id} {d:?}: {}", w.why),
                (Some(id), None) => format!("{what} {id}: {}", w.why),
                (None, Some(d)) => format!("{what} {d:?}: {}", w.why),
                (None, None) if w.source == WakeSource::Count => w.why.clone(),
                (None, None) => format!("a {what} with no id: {}", w.why),
            }
        })
        .collect();
    let mut reason = format!(
        "the last stop reported {tasks} background task(s) and {crons} scheduled wake(s) \
         pending ({}): the session will wake itself",
        named.join("; ")
    );
    let ignored: Vec<String> = wakes
        .iter()
        .filter(|w| !w.gates)
        .map(|w| format!("{} ({})", w.id.as_deref().unwrap_or("?"), w.why))
        .collect();
    if !ignored.is_empty() {
        reason.push_str(&format!("; not counted: {}", ignored.join("; ")));
    }
    reason
}

/// The last sentence of a message: what a turn that stopped mid-way left dangling
/// ("Let me look at how X renders."), capped. Of a message cut for length, the sentence is
/// taken from its tail, which the cut keeps (see [`cap_text`](crate::ingest::mapping::cap_text)).
pub(crate) fn last_sentence(message: &str) -> Option<String> {
    let text = crate::ingest::mapping::after_cut(message).trim();
    let body = text.trim_end_matches(['.', '!', '?', ':', '…']);
    let start = body
        .char_indices()
        .filter(|(i, c)| {
            matches!(c, '.' | '!' | '?' | '\n')
                && body[i + c.len_utf8()..].starts_with(char::is_whitespace)
        })
        .map(|(i, c)| i + c.len_utf8())
        .next_back()
        .or_else(|| body.rfind('\n').map(|i| i + 1))
        .unwrap_or(0);
    let sentence = text[start..].trim();
    if sentence.is_empty() {
        return None;
    }
    let mut sentence = sentence.to_owned();
    if sentence.len() > 300 {
        let mut end = 300;
        while !sentence.is_char_boundary(end) {
            end -= 1;
        }
        sentence.truncate(end);
        sentence.push('…');
    }
    Some(sentence)
}

/// `stall`, asked at the end of a turn: is a nudge wanted? In this order: not at an explicit
/// idle → withhold; `unknown` or no events → fall back; a pending wake → withhold; a livelock →
/// allow; an open item of its own task list → allow; otherwise fall back. It authorizes no
/// keystroke (the later `nudge` or delivery does), so it reads replayed history as a live
/// generation does, takes no slot and does not wait for `nudge.min-idle`.
fn stall(f: &Facts) -> Ruling {
    let Some(v) = f.snapshot else { return no_session(f) };
    let held = |rule: RuleId, reason: String| Ruling::new(Hold, Structured, rule, reason);
    match &v.state {
        State::WaitingOnHuman(reason) => {
            return held(
                RuleId::StallNeverWhileWaitingOnHuman,
                format!(
                    "waiting on its human ({reason}) for {}: it is not stalled, its human is \
                     asked",
                    v.age()
                ),
            );
        }
        State::ChildCommand { tool } => {
            return held(
                RuleId::StallNeverWhileChildCommand,
                format!(
                    "a tool is running ({}) for {}: the turn has not ended",
                    tool.as_deref().unwrap_or("?"),
                    v.age()
                ),
            );
        }
        State::Active => {
            return held(
                RuleId::StallNeverDuringATurn,
                format!("a turn is in progress ({} since the last state change)", v.age()),
            );
        }
        State::EnvFault(class) => return fault_for_action(f, v, *class),
        State::Ended(reason) => {
            return held(
                RuleId::StallNeverAfterSessionEnd,
                format!("the session ended ({})", reason.as_ref().map_or("?", |r| r.as_str())),
            );
        }
        State::Unknown(_) => return unknown(v),
        State::Idle => {}
    }
    let wakes = pending_wakes(f.policy, v);
    if wakes.iter().any(|w| w.gates) {
        return held(RuleId::StallWithheldPendingWake, pending_reason(&wakes));
    }
    if let Some(run) = v.repeated_call.as_ref().filter(|r| r.count >= f.policy.livelock_repeats) {
        let tool = run.tool.as_deref().unwrap_or("a tool");
        return Ruling::new(
            Proceed,
            Structured,
            RuleId::StallLivelock,
            format!(
                "the turn ended after {} identical consecutive calls of {tool} (same input; \
                 stall.livelock-repeats = {}): a livelock, a definite stall",
                run.count, f.policy.livelock_repeats
            ),
        )
        .nudge_text(format!(
            "You called {tool} {} times in a row with the same input, and nothing changed. Stop \
             repeating it: say what is blocking you, then try a different approach.",
            run.count
        ));
    }
    if let Some(item) = v.open_todos.first() {
        let subject = item.subject.clone().unwrap_or_else(|| format!("task {}", item.id));
        let status = item.status.map_or("?", |s| s.as_str());
        let more = match v.open_todos.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let dangling = v.last_message.as_deref().and_then(last_sentence);
        let text = match &dangling {
            Some(said) => format!(
                "You ended your turn on {said:?} while {subject:?} is still {status} on your task \
                 list{more}. Please carry on with it, or mark it completed if it is done."
            ),
            None => format!(
                "{subject:?} is still {status} on your task list{more}. Please carry on with it, \
                 or mark it completed if it is done."
            ),
        };
        return Ruling::new(
            Proceed,
            Structured,
            RuleId::StallOpenTodoItem,
            format!(
                "the turn ended with {} open item(s) on the session's own task list: task {} \
                 {subject:?} is {status}",
                v.open_todos.len(),
                item.id
            ),
        )
        .nudge_text(text);
    }
    Ruling::new(
        FallBack,
        Signal::None,
        RuleId::StallNoStructuralSignal,
        "the turn ended with no pending wake, no livelock and no open item on its task list: \
         no structural signal either way; let the classifier or your own behaviour decide",
    )
}
