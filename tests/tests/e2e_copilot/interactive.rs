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

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::copilot::{self, APPROVAL_DIALOG, READY};
use hookline_tests::dialog::{
    self, Exit, Outcome, dialog_left_open, prompt_for_a_command, quiet_launch,
};
use hookline_tests::npm_install::Installed;

/// Copilot is left with `/exit`.
const EXIT: Exit = Exit { cli: "copilot", command: "/exit" };

/// Launch, then a prompt up to the open approval dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        quiet_launch(READY),
        prompt_for_a_command(
            out,
            [
                native("sessionStart", "session_start").q("new").state("unknown"),
                native("userPromptSubmitted", "turn_start").state("active"),
                native("preToolUse", "tool_start").state("child_command"),
                native("notification", "waiting_for_input(permission)")
                    .q("permission_prompt")
                    .state("waiting_on_human(permission)"),
            ],
            APPROVAL_DIALOG,
        ),
        dialog_left_open("approval dialog left open"),
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
    let then = [
        step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("postToolUse", "tool_end").state("active"),
                native("agentStop", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once),
        exit(),
    ];
    dialog::run(&mut session, "out.txt", up_to_the_dialog, &then, EXIT, Outcome::Ran);
}

/// Deny with Escape: nothing fires; the session reads waiting_on_human until `/exit`.
pub fn denied(installed: &Installed) {
    let mut session = copilot::new_session(installed, "denied");
    copilot::install_hooks(&session);
    let then = [
        step("deny with Escape", Action::Press("Escape"), "waiting_on_human(permission)")
            .then_quiet_for(Duration::from_secs(3))
            .then_shown("Confirmation cancelled"),
        exit(),
    ];
    dialog::run(&mut session, "denied.txt", up_to_the_dialog, &then, EXIT, Outcome::NotRun);
}

/// Deny with "2. No, and tell Copilot what to do differently" and a reason: the call is
/// rejected (no tool end fires), the model gets the reason and the turn goes on to its end:
/// `agentStop`, idle with one input slot.
pub fn denied_with_feedback(installed: &Installed) {
    let mut session = copilot::new_session(installed, "denied-feedback");
    copilot::install_hooks(&session);
    let then = [
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
    ];
    dialog::run(&mut session, "denied.txt", up_to_the_dialog, &then, EXIT, Outcome::NotRun);
}
