//! The Qwen Code TUI, driven in tmux: a prompt asking for a shell command, the approval dialog,
//! approved (Enter, "1. Yes, allow once") or denied (Escape); then `/quit`.
//!
//! Qwen fires `SessionStart` at launch, `PermissionRequest` then `Notification`
//! (`permission_prompt`) as the dialog is drawn, and `PreToolUse` only once it is approved
//! (the profile's `tool-start-after-approval`: it ends the wait). A denial and an Esc fire no
//! `Stop`: `Notification` (`idle_prompt`) is what says the prompt is back.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::claude_style::{run_checked, run_dialog};
use hookline_tests::dialog::{self, Exit, Outcome, dialog_left_open, prompt_for_a_command};
use hookline_tests::npm_install::Installed;
use hookline_tests::qwen::{self, APPROVAL_DIALOG, READY};

/// Qwen is left with `/quit`.
pub const EXIT: Exit = Exit { cli: "qwen", command: "/quit" };

/// The launch: `SessionStart` (startup), the session `unknown` until a turn ends.
pub fn launch() -> Step {
    step("launch", Action::Wait, "unknown")
        .expect([native("SessionStart", "session_start").q("startup").state("unknown")])
        .within(Duration::from_secs(90))
        .then_shown(READY)
        .then_quiet_for(Duration::from_secs(1))
}

/// `/quit`: `SessionEnd` (`prompt_input_exit`).
pub fn quit() -> Step {
    step("/quit", Action::Type("/quit".into()), "ended(prompt_input_exit)")
        .when_shown(READY)
        .expect([native("SessionEnd", "session_end")
            .q("prompt_input_exit")
            .state("ended(prompt_input_exit)")])
        .then_quiet_for(Duration::from_secs(1))
}

/// The events of a prompt up to its open dialog.
pub fn prompt_events() -> [hookline_tests::agent_session::Expect; 3] {
    [
        native("UserPromptSubmit", "turn_start").state("active"),
        native("PermissionRequest", "permission_request").state("waiting_on_human(permission)"),
        native("Notification", "waiting_for_input(permission)")
            .q("permission_prompt")
            .state("waiting_on_human(permission)"),
    ]
}

/// Launch, then a prompt up to the open approval dialog, left open.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        launch(),
        prompt_for_a_command(out, prompt_events(), APPROVAL_DIALOG),
        dialog_left_open("approval dialog left open"),
    ]
}

/// Approve with Enter: the tool starts (ending the wait), runs, the turn goes on with an
/// empty-prompt continuation and stops: idle with one input slot; the `idle_prompt` after the
/// `Stop` gives no second one. Then a two-line prompt typed with `hookline::deliver` (the
/// profile's `[pane]` and `[deliver]`), confirmed by its `UserPromptSubmit`.
pub fn approved(installed: &Installed) {
    let mut session = qwen::new_session(installed, "approved");
    qwen::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[]);
    run_checked(&mut session, &up_to_the_dialog(&out));
    run_checked(
        &mut session,
        &[step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("PreToolUse", "tool_start").state("child_command"),
                native("PostToolUse", "tool_end").state("active"),
                native("UserPromptSubmit", "notification(continuation)").state("active"),
                native("Stop", "stop").state("idle"),
                native("Notification", "idle_prompt").q("idle_prompt").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once)],
    );
    let delivered = [
        native("UserPromptSubmit", "turn_start").state("active"),
        native("Stop", "stop").state("idle"),
        native("Notification", "idle_prompt").q("idle_prompt").state("idle"),
    ];
    dialog::deliver_two_lines_then_quit(&mut session, EXIT, READY, delivered, quit(), &out);
}

/// Deny with Escape: no `Stop`, only `idle_prompt`, which makes the session idle (one slot).
pub fn denied(installed: &Installed) {
    let mut session = qwen::new_session(installed, "denied");
    qwen::install_hooks(&session);
    let then = [
        step("deny with Escape", Action::Press("Escape"), "idle")
            .expect([native("Notification", "idle_prompt").q("idle_prompt").state("idle")])
            .then_shown(READY)
            .input(Input::Once),
        quit(),
    ];
    run_dialog(&mut session, &[], "denied.txt", up_to_the_dialog, &then, EXIT, Outcome::NotRun);
}
