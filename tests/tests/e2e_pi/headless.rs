//! `pi -p <prompt>`: no UI, so no dialog (the permission gate is not loaded); the command runs,
//! the turn ends, the process exits with `session_shutdown`.

use std::time::Duration;

use hookline_tests::agent_session::{Action, native, step};
use hookline_tests::npm_install::Installed;
use hookline_tests::pi;
use hookline_tests::plugins::check_status;

/// Runs `pi -p` against `installed`.
pub fn run(installed: &Installed) {
    let mut session = pi::new_session(installed, "print");
    pi::install_extension(&session);
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("please RUNBASH: echo headless > {}", out.display());
    session.run_headless_ok("pi -p", &["-p", &prompt], Duration::from_secs(90));
    session.run(&[step("pi -p", Action::Wait, "ended")
        .expect([
            native("session_start", "session_start").state("unknown"),
            native("before_agent_start", "turn_start").state("active"),
            native("agent_start", "notification(agent_start)").state("active"),
            native("tool_execution_start", "tool_start").state("child_command"),
            native("tool_execution_end", "tool_end").state("active"),
            native("agent_end", "stop").state("idle"),
            native("session_shutdown", "session_end").state("ended"),
        ])
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(1))]);
    check_status(&session, "ended");
    session.finish_headless(&out);
}
