//! `droid exec --auto high -m custom:mock-model …`: the command runs without asking;
//! `SessionStart`, no `UserPromptSubmit` (the hole `exec-no-prompt-event`), the tool, `Stop`,
//! `SessionEnd`.

use std::time::Duration;

use hookline_tests::agent_session::{Action, native, step};
use hookline_tests::claude_style::run_checked;
use hookline_tests::droid::{self, CUSTOM_MODEL};
use hookline_tests::npm_install::Installed;

/// Runs the case against `installed`.
pub fn run(installed: &Installed) {
    let mut session = droid::new_session(installed, "exec");
    droid::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("headless RUNBASH: echo headless > {}", out.display());
    let args = ["exec", "--auto", "high", "-m", CUSTOM_MODEL, prompt.as_str()];
    let output = session.run_headless(&args, Duration::from_secs(120));
    if !output.status.success() {
        session.fail(&format!(
            "droid exec exited with {}: {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    run_checked(
        &mut session,
        &[step("droid exec", Action::Wait, "ended(other)")
            .expect([
                native("SessionStart", "session_start").q("startup").state("unknown"),
                native("PreToolUse", "tool_start").state("child_command"),
                native("PostToolUse", "tool_end").state("active"),
                native("Stop", "stop").state("idle"),
                native("SessionEnd", "session_end").q("other").state("ended(other)"),
            ])
            .within(Duration::from_secs(10))
            .then_quiet_for(Duration::from_secs(2))],
    );
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "headless\n" => {}
        other => session.fail(&format!("out.txt after the run: {other:?}")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
