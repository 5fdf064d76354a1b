//! The interactive TUI, driven in tmux from launch to `/exit`: an approved Bash call, the
//! permission and idle notifications, a denial with Escape, `/compact`, `/exit`.

use std::path::Path;
use std::time::Duration;

use hookline_tests::claude_install::Installed;
use hookline_tests::events::Event;
use hookline_tests::session::{Action, ClaudeSession, Expect, Input, Step, native};

/// `messageIdleNotifThresholdMs`: how long after a turn `idle_prompt` fires.
const IDLE_THRESHOLD: Duration = Duration::from_secs(3);
/// Claude's fixed delay before `Notification(permission_prompt)` while a dialog stays open.
const PERMISSION_NOTIFICATION_DELAY: Duration = Duration::from_secs(6);
/// On screen whenever the prompt input is ready (the footer hint; hidden under dialogs).
pub(crate) const READY: &str = "for shortcuts";
/// On screen while a permission dialog is open.
const PERMISSION_DIALOG: &str = "Do you want to proceed?";

/// A fresh session's `SessionStart`: the session stays unknown until its first turn ends.
pub(crate) fn session_started() -> Expect {
    native("SessionStart")
        .q("startup")
        .canonical("session_start(startup)")
        .state("unknown(session started)")
}

/// `/exit` at the prompt: the session ends.
pub(crate) fn exit() -> Step {
    Step::new("/exit", Action::Type("/exit".into()))
        .when_shown(READY)
        .expect([native("SessionEnd")
            .q("prompt_input_exit")
            .canonical("session_end(prompt_input_exit)")
            .state("ended(prompt_input_exit)")])
        .state("ended(prompt_input_exit)")
        .input(Input::Refused("state is ended"))
}

/// The scenario: per step the native events, the canonical event `hookline watch` gives each
/// and the state once the tracker applied it; the state after the step and the input slot.
fn steps(project: &Path) -> Vec<Step> {
    let out = project.join("out.txt");
    let denied = project.join("denied.txt");
    let notification_wait = PERMISSION_NOTIFICATION_DELAY + Duration::from_secs(6);
    let idle_wait = IDLE_THRESHOLD + Duration::from_secs(5);
    let prompt_for_bash = [
        native("UserPromptSubmit").canonical("turn_start").state("active"),
        native("PreToolUse").canonical("tool_start(Bash)").state("child_command(Bash)"),
        native("PermissionRequest")
            .canonical("permission_request(Bash)")
            .state("waiting_on_human(permission)"),
    ];
    let idle_prompt =
        native("Notification").q("idle_prompt").canonical("idle_prompt").state("idle");
    // What the session waits on while a permission dialog is open, and after it was denied.
    let permission = "waiting_on_human(permission)";
    vec![
        // A session that just started is unknown until its first turn ends.
        Step::new("launch", Action::Wait)
            .expect([session_started()])
            .within(Duration::from_secs(30))
            .then_shown(READY)
            .state("unknown(session started)")
            .input(Input::Refused("state is unknown")),
        Step::new(
            "prompt asking for a Bash command",
            Action::Type(format!("please RUNBASH: echo hi > {}", out.display())),
        )
        .when_shown(READY)
        .expect(prompt_for_bash)
        .then_shown(PERMISSION_DIALOG)
        .state(permission)
        .input(Input::Refused("state is waiting_on_human")),
        Step::new("permission dialog left open", Action::Wait)
            .expect([native("Notification")
                .q("permission_prompt")
                .canonical("waiting_for_input(permission)")
                .state(permission)])
            .within(notification_wait)
            .state(permission)
            .input(Input::Refused("state is waiting_on_human")),
        // The turn ends on Stop, an input-ready event: idle, and one input may be delivered.
        Step::new("approve with Enter", Action::Press("Enter"))
            .expect([
                native("PostToolUse").canonical("tool_end(Bash, ok)").state("active"),
                native("Stop").canonical("stop").state("idle"),
            ])
            .state("idle")
            .input(Input::Once),
        // Still the same idle: its slot was taken at Stop, idle_prompt gives no second one.
        Step::new("idle threshold passes", Action::Wait)
            .expect([idle_prompt])
            .within(idle_wait)
            .state("idle")
            .input(Input::Refused("already taken")),
        Step::new(
            "second prompt asking for a Bash command",
            Action::Type(format!("now RUNBASH: echo denied > {}", denied.display())),
        )
        .when_shown(READY)
        .expect(prompt_for_bash)
        .then_shown(PERMISSION_DIALOG)
        .state(permission)
        .input(Input::Refused("state is waiting_on_human")),
        // Nothing fires after a denial: no PostToolUse*, no Stop, no PermissionDenied, and
        // neither the permission notification (6 s) nor idle_prompt (the threshold). The wait
        // covers both timers, and the state is checked at every poll: never idle.
        Step::new("deny with Escape", Action::Press("Escape"))
            .then_quiet_for(PERMISSION_NOTIFICATION_DELAY + Duration::from_secs(1))
            .then_shown("Interrupted")
            .state(permission)
            .input(Input::Refused("state is waiting_on_human")),
        // `/compact` fires no UserPromptSubmit. The compaction runs as a subagent (its
        // SubagentStop has an agent_id and `agent_type: ""`) and restarts the session
        // (`SessionStart(compact)`, same session id): none of the four changes the state —
        // still the permission wait of the denied call, same evidence — and none is idle.
        Step::new("/compact", Action::Type("/compact".into()))
            .when_shown(READY)
            .expect([
                native("PreCompact").q("manual").canonical("compact(pre, manual)").unchanged(),
                native("SubagentStop").canonical(r#"subagent_stop("")"#).unchanged(),
                native("SessionStart").q("compact").canonical("session_start(compact)").unchanged(),
                native("PostCompact").q("manual").canonical("compact(post, manual)").unchanged(),
            ])
            .within(Duration::from_secs(20))
            .then_shown("Compacted")
            .state(permission)
            .input(Input::Refused("state is waiting_on_human")),
        // Claude re-arms its idle timer after a compaction: idle_prompt, the threshold after
        // PostCompact, is Claude saying it sits at its input prompt. That is an input-ready
        // event, so the session is idle — a new idle (it was waiting on its human), with a new
        // slot.
        Step::new("idle threshold passes after the compaction", Action::Wait)
            .expect([idle_prompt])
            .within(idle_wait)
            .state("idle")
            .input(Input::Once),
        exit(),
    ]
}

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "interactive", IDLE_THRESHOLD);
    let project = session.sandbox.project();
    session.launch_tui(&["--permission-mode", "default"]);
    session.run(&steps(&project));

    match session.wait_for_exit(Duration::from_secs(15)) {
        Some(0) => {}
        None => println!("[{}] note: tmux did not report the exit status", session.label),
        Some(status) => session.fail(&format!("the CLI exited with status {status} after /exit")),
    }
    match std::fs::read_to_string(project.join("out.txt")) {
        Ok(text) if text == "hi\n" => {}
        other => session.fail(&format!("the approved command did not write out.txt: {other:?}")),
    }
    if project.join("denied.txt").exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    check_timers(&session);
    session.check_status("ended(prompt_input_exit)");
    session.finish();
}

/// The timers: the permission notification ~6 s after the dialog, `idle_prompt` the threshold
/// after `Stop`, and again the threshold after `PostCompact` (Claude's own timer, re-armed by
/// the compaction: not something hookline synthesizes).
fn check_timers(session: &ClaudeSession) {
    let events = session.all_events();
    let find = |label: &str| -> &Event {
        events
            .iter()
            .find(|e| e.label() == label)
            .unwrap_or_else(|| session.fail(&format!("no {label} event")))
    };
    let delay = find("Notification(permission_prompt)").secs_since(find("PermissionRequest"));
    let min = PERMISSION_NOTIFICATION_DELAY.as_secs_f64() - 0.5;
    if !(min..min + 4.0).contains(&delay) {
        session.fail(&format!(
            "the permission notification came {delay:.2} s after PermissionRequest, expected ~6 s"
        ));
    }
    let threshold = session.idle_threshold.as_secs_f64();
    let idle_prompts: Vec<&Event> =
        events.iter().filter(|e| e.label() == "Notification(idle_prompt)").collect();
    for (idle, after) in idle_prompts.iter().zip(["Stop", "PostCompact(manual)"]) {
        let delay = idle.secs_since(find(after));
        if !(threshold - 0.3..threshold + 3.0).contains(&delay) {
            session.fail(&format!(
                "idle_prompt #{} came {delay:.2} s after {after}, expected the {threshold} s threshold",
                idle.envelope.seq
            ));
        }
    }
}
