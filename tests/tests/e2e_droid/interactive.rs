//! The Droid TUI, driven in tmux: the folder-trust screen, a prompt asking for a shell command,
//! the approval dialog, approved (Enter, "Yes, allow") or denied (Escape), or approved and then
//! interrupted with Escape while the command runs, followed by API errors; then `/quit`.
//!
//! Droid fires nothing on the trust screen, `SessionStart` once it is answered, `PreToolUse`
//! before the dialog and `Notification` (`permission_prompt`) as it is drawn (it has no
//! `PermissionRequest`), nothing when the dialog is answered (an approved command reads
//! `waiting_on_human` until it ends: the profile's hole `approved-tool-silent`), `Stop` for a
//! denial and for an Esc while the command runs, and `SessionEnd` twice on `/quit`. Every hook
//! run is printed in the TUI with its exit code, which must be 0.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, Expect, Input, Step, native, step};
use hookline_tests::claude_style::{run_checked, run_dialog};
use hookline_tests::dialog::{
    self, DIALOG_OPEN, Exit, Outcome, dialog_left_open, prompt_for_a_command,
};
use hookline_tests::droid::{self, APPROVAL_DIALOG, CANCELLED, READY, TRUST};
use hookline_tests::npm_install::Installed;

/// Droid is left with `/quit`.
const EXIT: Exit = Exit { cli: "droid", command: "/quit" };

/// The launch and the trust screen: nothing fires until the folder is trusted.
fn launch() -> [Step; 2] {
    [
        step("launch", Action::Wait, "none")
            .when_shown(TRUST)
            .then_quiet_for(Duration::from_secs(1)),
        step("trust the folder", Action::Press("Enter"), "unknown")
            .expect([native("SessionStart", "session_start").q("startup").state("unknown")])
            .then_shown(READY),
    ]
}

/// `/quit`: `SessionEnd` (`other`) twice, one end.
fn quit() -> Step {
    let end = native("SessionEnd", "session_end").q("other").state("ended(other)");
    step("/quit", Action::Type("/quit".into()), "ended(other)")
        .when_shown(READY)
        .expect([end, end])
        .then_quiet_for(Duration::from_secs(1))
}

/// The events of a prompt up to its open dialog.
fn prompt_events() -> [Expect; 3] {
    [
        native("UserPromptSubmit", "turn_start").state("active"),
        native("PreToolUse", "tool_start").state("child_command"),
        native("Notification", "waiting_for_input(permission)")
            .q("permission_prompt")
            .state("waiting_on_human(permission)"),
    ]
}

/// Launch, trust, then a prompt up to the open approval dialog, left open.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    let mut steps = Vec::from(launch());
    steps.push(prompt_for_a_command(out, prompt_events(), APPROVAL_DIALOG));
    steps.push(dialog_left_open("approval dialog left open"));
    steps
}

/// Approve with Enter: the command runs, the turn ends, idle with one input slot. Then a
/// two-line prompt typed with `hookline::deliver` (the profile's `[pane]` and `[deliver]`),
/// confirmed by its `UserPromptSubmit`. Droid's rewrite of its settings at start kept the
/// hooks: `hookline doctor droid` passes.
pub fn approved(installed: &Installed) {
    let mut session = droid::new_session(installed, "approved");
    droid::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[]);
    run_checked(&mut session, &up_to_the_dialog(&out));
    run_checked(
        &mut session,
        &[step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("PostToolUse", "tool_end").state("active"),
                native("Stop", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once)],
    );
    let delivered = [
        native("UserPromptSubmit", "turn_start").state("active"),
        native("Stop", "stop").state("idle"),
    ];
    dialog::deliver_two_lines_then_quit(&mut session, EXIT, READY, delivered, quit(), &out);
}

/// Deny with Escape: `Stop`, idle with one input slot.
pub fn denied(installed: &Installed) {
    let mut session = droid::new_session(installed, "denied");
    droid::install_hooks(&session);
    let then = [
        step("deny with Escape", Action::Press("Escape"), "idle")
            .expect([native("Stop", "stop").state("idle")])
            .then_shown(READY)
            .input(Input::Once),
        quit(),
    ];
    run_dialog(&mut session, &[], "denied.txt", up_to_the_dialog, &then, EXIT, Outcome::NotRun);
}

/// Approve a command that runs for 30 s: nothing fires, the session reads waiting_on_human
/// (never idle); Escape while it runs: `Stop`, idle. Then a 503, which Droid retries with no
/// hook (active) until Escape: `Notification` (`idle_prompt`), idle; and a 400, which ends the
/// turn with a plain `Stop` (the hole `api-error-plain-stop`).
pub fn interrupted_then_api_errors(installed: &Installed) {
    let mut session = droid::new_session(installed, "interrupted-api-errors");
    droid::install_hooks(&session);
    session.launch_tui(&[]);
    let mut steps = Vec::from(launch());
    steps.extend([
        step(
            "prompt asking for a long command",
            Action::Type("please RUNBASH: sleep 30".into()),
            "waiting_on_human(permission)",
        )
        .expect(prompt_events())
        .then_shown(APPROVAL_DIALOG),
        step("approve with Enter", Action::Press("Enter"), "waiting_on_human(permission)")
            .then_shown("Executing")
            .then_quiet_for(DIALOG_OPEN),
        step("Escape while the command runs", Action::Press("Escape"), "idle")
            .expect([native("Stop", "stop").state("idle")])
            .then_shown(CANCELLED)
            .input(Input::Once),
        step("prompt answered 503, retried", Action::Type("APIERROR: overloaded".into()), "active")
            .when_shown(READY)
            .expect([native("UserPromptSubmit", "turn_start").state("active")])
            .then_shown("Retrying the model request")
            .then_quiet_for(Duration::from_secs(2)),
        step("Escape during the retries", Action::Press("Escape"), "idle")
            .expect([native("Notification", "idle_prompt").q("idle_prompt").state("idle")])
            .then_shown(CANCELLED)
            .input(Input::Once),
        step("prompt answered 400", Action::Type("APIERROR: invalid".into()), "idle")
            .when_shown(READY)
            .expect([
                native("UserPromptSubmit", "turn_start").state("active"),
                native("Stop", "stop").state("idle"),
            ])
            .then_shown("BYOK Error")
            .input(Input::Once),
        quit(),
    ]);
    run_checked(&mut session, &steps);
    dialog::finish(&session, EXIT);
    session.save_report();
}
