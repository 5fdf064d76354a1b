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
    session.run_headless_ok("droid exec", &args, Duration::from_secs(120));
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
    session.finish_headless(&out);
}
