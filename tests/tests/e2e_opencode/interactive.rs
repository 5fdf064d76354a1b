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

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::dialog::{
    self, Exit, Outcome, dialog_left_open, prompt_for_a_command, quiet_launch,
};
use hookline_tests::npm_install::Installed;
use hookline_tests::opencode::{self, APPROVAL_DIALOG, Bash, READY, SentinelGuard};

/// OpenCode is left with `/exit`.
const EXIT: Exit = Exit { cli: "opencode", command: "/exit" };

/// Launch, then a prompt up to the open permission dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        quiet_launch(READY),
        prompt_for_a_command(
            out,
            [
                native("session.created", "session_start").state("unknown"),
                native("chat.message", "turn_start").state("active"),
                native("tool.execute.before", "tool_start").state("child_command"),
                native("permission.asked", "permission_request")
                    .state("waiting_on_human(permission)"),
            ],
            APPROVAL_DIALOG,
        ),
        dialog_left_open("permission dialog left open"),
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
    let then = [
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
    ];
    dialog::run(&mut session, "out.txt", up_to_the_dialog, &then, EXIT, Outcome::Ran);
}

/// Deny with Escape: the call is rejected and the turn ends at once; the session is idle with
/// one input slot.
pub fn denied(installed: &Installed) {
    let mut session = opencode::new_session(installed, "denied", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    opencode::install_plugin(&session);
    let then = [
        step("deny with Escape", Action::Press("Escape"), "idle")
            .expect([
                native("permission.replied", "notification(permission_replied)")
                    .state("waiting_on_human(permission)"),
                native("session.idle", "stop").state("idle"),
            ])
            .then_quiet_for(Duration::from_secs(2))
            .input(Input::Once),
        exit(),
    ];
    dialog::run(&mut session, "denied.txt", up_to_the_dialog, &then, EXIT, Outcome::NotRun);
}
