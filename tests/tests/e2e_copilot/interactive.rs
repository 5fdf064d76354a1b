//! The Copilot TUI, driven in tmux: a prompt asking for a shell command, the approval dialog,
//! approved (Enter, "1. Yes"), denied (Escape) or denied with a reason ("2. No, and tell
//! Copilot what to do differently"), then `/exit`.
//!
//! Copilot fires nothing at launch (`sessionStart` comes with the first prompt),
//! `notification` (`permission_prompt`) as the dialog is drawn, nothing at all when the dialog
//! is denied with Escape (the screen says "Confirmation cancelled for shell command": the
//! session is back at its prompt but reads waiting_on_human, the profile's `permission-denied`
//! hole), and `sessionEnd` (`user_exit`) on `/exit`.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, AgentSession, Input, Step, native, step};
use hookline_tests::copilot::{self, APPROVAL_DIALOG, READY};
use hookline_tests::npm_install::Installed;

/// How long a dialog is left open: nothing may fire meanwhile.
const DIALOG_OPEN: Duration = Duration::from_secs(3);

/// Launch, then a prompt up to the open approval dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        step("launch", Action::Wait, "none")
            .when_shown(READY)
            .then_quiet_for(Duration::from_secs(2)),
        step(
            "prompt asking for a shell command",
            Action::Type(format!("please RUNBASH: echo hi > {}", out.display())),
            "waiting_on_human(permission)",
        )
        .expect([
            native("sessionStart", "session_start").q("new").state("unknown"),
            native("userPromptSubmitted", "turn_start").state("active"),
            native("preToolUse", "tool_start").state("child_command"),
            native("notification", "waiting_for_input(permission)")
                .q("permission_prompt")
                .state("waiting_on_human(permission)"),
        ])
        .then_shown(APPROVAL_DIALOG),
        step("approval dialog left open", Action::Wait, "waiting_on_human(permission)")
            .then_quiet_for(DIALOG_OPEN),
    ]
}

/// `/exit`: `sessionEnd` (`user_exit`).
fn exit() -> Step {
    step("/exit", Action::Type("/exit".into()), "ended(user_exit)")
        .when_shown(READY)
        .expect([native("sessionEnd", "session_end").q("user_exit").state("ended(user_exit)")])
        .then_quiet_for(Duration::from_secs(1))
}

/// Approve with Enter: the command runs, the turn ends, the session is idle with one input
/// slot.
pub fn approved(installed: &Installed) {
    let mut session = copilot::new_session(installed, "approved");
    copilot::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("postToolUse", "tool_end").state("active"),
                native("agentStop", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once),
        exit(),
    ]);
    finish(&session);
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "hi\n" => {}
        other => session.fail(&format!("the approved command did not write out.txt: {other:?}")),
    }
    session.save_report();
}

/// Deny with Escape: nothing fires; the session reads waiting_on_human until `/exit`.
pub fn denied(installed: &Installed) {
    let mut session = copilot::new_session(installed, "denied");
    copilot::install_hooks(&session);
    let out = session.sandbox.project().join("denied.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("deny with Escape", Action::Press("Escape"), "waiting_on_human(permission)")
            .then_quiet_for(Duration::from_secs(3))
            .then_shown("Confirmation cancelled"),
        exit(),
    ]);
    finish(&session);
    if out.exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    session.save_report();
}

/// Deny with "2. No, and tell Copilot what to do differently" and a reason: the call is
/// rejected (no tool end fires), the model gets the reason and the turn goes on to its end:
/// `agentStop`, idle with one input slot.
pub fn denied_with_feedback(installed: &Installed) {
    let mut session = copilot::new_session(installed, "denied-feedback");
    copilot::install_hooks(&session);
    let out = session.sandbox.project().join("denied.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step(
            "select 2. No, and tell Copilot",
            Action::Press("Down"),
            "waiting_on_human(permission)",
        )
        .then_quiet_for(Duration::from_secs(1)),
        step("type the reason", Action::Type("do not write that file".into()), "idle")
            .expect([native("agentStop", "stop").state("idle")])
            .then_shown("The user rejected this tool call")
            .input(Input::Once),
        exit(),
    ]);
    finish(&session);
    if out.exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    session.save_report();
}

fn finish(session: &AgentSession) {
    match session.wait_for_exit(Duration::from_secs(20)) {
        Some(0) | None => {}
        Some(status) => session.fail(&format!("copilot exited with status {status} after /exit")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after /exit");
}
