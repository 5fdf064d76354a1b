//! `kilo run <words>` with `bash` allowed: the command runs without asking, the process exits,
//! and the plugin's `hookline.exit` follows. Every event is recorded as Kilo's (`cli: kilo`).
//!
//! The prompt is passed as separate words, as for `opencode run`.

use std::time::Duration;

use hookline_tests::agent_session::{Action, native, step};
use hookline_tests::kilo::{self, Bash, SentinelGuard};
use hookline_tests::npm_install::Installed;
use hookline_tests::plugins::check_status;

/// Runs `kilo run` against `installed`.
pub fn run(installed: &Installed) {
    let mut session = kilo::new_session(installed, "run", Bash::Allowed);
    let _sentinels = SentinelGuard::new(&session);
    kilo::install_plugin(&session);
    let args = ["run", "headless", "RUNBASH:", "echo", "headless", ">", "out.txt"];
    session.run_headless_ok("kilo run", &args, Duration::from_secs(120));
    session.run(&[step("kilo run", Action::Wait, "ended(exit)")
        .expect([
            native("session.created", "session_start").state("unknown"),
            native("chat.message", "turn_start").state("active"),
            native("tool.execute.before", "tool_start").state("child_command"),
            native("tool.execute.after", "tool_end").state("active"),
            native("session.idle", "stop").state("idle"),
            native("hookline.exit", "session_end").state("ended(exit)"),
        ])
        .within(Duration::from_secs(15))
        .then_quiet_for(Duration::from_secs(1))]);
    for event in session.all_events() {
        if event.envelope.cli != "kilo" {
            session.fail(&format!("{} was recorded as {}'s", event.label(), event.envelope.cli));
        }
    }
    check_status(&session, "ended");
    session.finish_headless(&session.sandbox.project().join("out.txt"));
}
