//! `qwen -p … --approval-mode yolo` (without yolo `-p` offers no shell tool): the command runs
//! without a dialog; the turn ends with `Stop`, and `-p` fires no `SessionEnd`, so the session
//! is left idle when the process exits.

use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, native, step};
use hookline_tests::claude_style::run_checked;
use hookline_tests::npm_install::Installed;
use hookline_tests::qwen;

/// Runs the case against `installed`.
pub fn run(installed: &Installed) {
    let mut session = qwen::new_session(installed, "prompt");
    qwen::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("headless RUNBASH: echo headless > {}", out.display());
    session.run_headless_ok(
        "qwen -p",
        &["-p", &prompt, "--approval-mode", "yolo"],
        Duration::from_secs(120),
    );
    run_checked(
        &mut session,
        &[step("qwen -p", Action::Wait, "idle")
            .expect([
                native("SessionStart", "session_start").q("startup").state("unknown"),
                native("Notification", "notification(auth_success)").q("auth_success"),
                native("UserPromptSubmit", "turn_start").state("active"),
                native("PreToolUse", "tool_start").state("child_command"),
                native("PostToolUse", "tool_end").state("active"),
                native("UserPromptSubmit", "notification(continuation)").state("active"),
                native("Stop", "stop").state("idle"),
            ])
            .within(Duration::from_secs(10))
            .then_quiet_for(Duration::from_secs(2))
            // The process is gone, yet nothing said so (hole headless-no-session-end): the
            // session reads idle, with its slot.
            .input(Input::Once)],
    );
    session.finish_headless(&out);
}
