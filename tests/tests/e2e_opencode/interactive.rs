//! The OpenCode TUI, driven in tmux, with `bash` set to ask: a prompt asking for a shell
//! command, the permission dialog, approved (Enter, "Allow once") or denied (Escape, "Reject"),
//! then `/exit`.
//!
//! The TUI creates its session at the first prompt (nothing fires at launch), fires nothing
//! while the dialog is open, and nothing on exit but the plugin's own `hookline.exit`. A denied
//! call ends the turn: `permission.replied` (reject), then `session.idle`, and the prompt is the
//! human's again.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, AgentSession, Input, Step, native, step};
use hookline_tests::npm_install::Installed;
use hookline_tests::opencode::{self, APPROVAL_DIALOG, Bash, READY, SentinelGuard};

/// How long a dialog is left open: nothing may fire meanwhile.
const DIALOG_OPEN: Duration = Duration::from_secs(3);

/// Launch, then a prompt up to the open permission dialog.
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
            native("session.created", "session_start").state("unknown"),
            native("chat.message", "turn_start").state("active"),
            native("tool.execute.before", "tool_start").state("child_command"),
            native("permission.asked", "permission_request").state("waiting_on_human(permission)"),
        ])
        .then_shown(APPROVAL_DIALOG),
        step("permission dialog left open", Action::Wait, "waiting_on_human(permission)")
            .then_quiet_for(DIALOG_OPEN),
    ]
}

/// `/exit`: OpenCode fires nothing; the plugin's sentinel sends `hookline.exit`.
fn exit() -> Step {
    step("/exit", Action::Type("/exit".into()), "ended(exit)")
        .when_shown(READY)
        .expect([native("hookline.exit", "session_end").state("ended(exit)")])
        .then_quiet_for(Duration::from_secs(1))
}

/// Approve with Enter: the command runs, the turn ends, the session is idle with one input
/// slot.
pub fn approved(installed: &Installed) {
    let mut session = opencode::new_session(installed, "approved", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    opencode::install_plugin(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("permission.replied", "notification(permission_replied)")
                    .state("waiting_on_human(permission)"),
                native("tool.execute.after", "tool_end").state("active"),
                native("session.idle", "stop").state("idle"),
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

/// Deny with Escape: the call is rejected and the turn ends at once; the session is idle with
/// one input slot.
pub fn denied(installed: &Installed) {
    let mut session = opencode::new_session(installed, "denied", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    opencode::install_plugin(&session);
    let out = session.sandbox.project().join("denied.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("deny with Escape", Action::Press("Escape"), "idle")
            .expect([
                native("permission.replied", "notification(permission_replied)")
                    .state("waiting_on_human(permission)"),
                native("session.idle", "stop").state("idle"),
            ])
            .then_quiet_for(Duration::from_secs(2))
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
        Some(status) => session.fail(&format!("opencode exited with status {status} after /exit")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after /exit");
}
