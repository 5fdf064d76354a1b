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
    let output = session.run_headless(&args, Duration::from_secs(120));
    if !output.status.success() {
        session.fail(&format!(
            "kilo run exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
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
    let out = session.sandbox.project().join("out.txt");
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "headless\n" => {}
        other => session.fail(&format!("out.txt after the run: {other:?}")),
    }
    for event in session.all_events() {
        if event.envelope.cli != "kilo" {
            session.fail(&format!("{} was recorded as {}'s", event.label(), event.envelope.cli));
        }
    }
    check_status(&session, "ended");
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
