//! `codex exec … </dev/null`: the approval policy is forced to `never`, so a command the sandbox
//! allows runs without asking, and one asking to leave the sandbox is rejected at once (no
//! `PermissionRequest`, no `PostToolUse`).

use std::time::Duration;

use hookline_tests::agent_session::{Action, native, step};
use hookline_tests::codex::{self, BYPASS_TRUST, DaemonGuard};
use hookline_tests::npm_install::Installed;

/// Which command the prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// One the sandbox allows (`RUNBASH:`).
    Sandboxed,
    /// One asking to run outside the sandbox (`RUNBASH_ESC:`), which needs an approval.
    Escalated,
}

/// Runs the case against `installed`.
pub fn run(installed: &Installed, case: Case) {
    let scenario = match case {
        Case::Sandboxed => "exec",
        Case::Escalated => "exec-escalated",
    };
    let mut session = codex::new_session(installed, scenario);
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    let marker = match case {
        Case::Sandboxed => "RUNBASH:",
        Case::Escalated => "RUNBASH_ESC:",
    };
    let prompt = format!("headless {marker} echo headless > {}", out.display());
    let output = session.run_headless_ok(
        "codex exec",
        &["exec", BYPASS_TRUST, &prompt],
        Duration::from_secs(90),
    );
    let mut expected = vec![
        native("SessionStart", "session_start").q("startup").state("unknown"),
        native("UserPromptSubmit", "turn_start").state("active"),
        native("PreToolUse", "tool_start").state("child_command"),
    ];
    if case == Case::Sandboxed {
        expected.push(native("PostToolUse", "tool_end").state("active"));
    }
    expected.extend([
        native("Stop", "stop").state("idle"),
        native("SessionEnd", "session_end").q("other").state("ended"),
    ]);
    session.run(&[step("codex exec", Action::Wait, "ended(other)")
        .expect(expected)
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(2))]);
    let ran = std::fs::read_to_string(&out).ok();
    match (case, ran.as_deref()) {
        (Case::Sandboxed, Some("headless\n")) | (Case::Escalated, None) => {}
        (_, ran) => session.fail(&format!("out.txt after the run: {ran:?}")),
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.contains("done") {
        session.fail(&format!("codex exec did not print the final answer: {stdout:?}"));
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
