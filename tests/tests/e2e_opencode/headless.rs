//! `opencode run <words>`: with `bash` allowed (OpenCode's default) the command runs without
//! asking; with `bash` set to ask, `opencode run` rejects the ask at once ("auto-rejecting") and
//! the turn ends. Either way the process exits, and the plugin's `hookline.exit` follows.
//!
//! The prompt is passed as separate words: `opencode run` quotes a message argument that
//! holds a space, and the quotes would reach the model.

use std::time::Duration;

use hookline_tests::agent_session::{Action, Expect, native, step};
use hookline_tests::npm_install::Installed;
use hookline_tests::opencode::{self, Bash, SentinelGuard};

/// What `bash` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Allowed: the command runs.
    Allowed,
    /// Set to ask: `opencode run` rejects it.
    Ask,
}

/// Runs the case against `installed`.
pub fn run(installed: &Installed, case: Case) {
    let (scenario, bash) = match case {
        Case::Allowed => ("run", Bash::Allowed),
        Case::Ask => ("run-ask", Bash::Ask),
    };
    let mut session = opencode::new_session(installed, scenario, bash);
    let _sentinels = SentinelGuard::new(&session);
    opencode::install_plugin(&session);
    let out = session.sandbox.project().join("out.txt");
    let out_arg = out.to_str().expect("UTF-8 path");
    let args = ["run", "headless", "RUNBASH:", "echo", "headless", ">", out_arg];
    let output = session.run_headless_ok("opencode run", &args, Duration::from_secs(90));
    let mut expected: Vec<Expect> = vec![
        native("session.created", "session_start").state("unknown"),
        native("chat.message", "turn_start").state("active"),
        native("tool.execute.before", "tool_start").state("child_command"),
    ];
    match case {
        Case::Allowed => expected.push(native("tool.execute.after", "tool_end").state("active")),
        Case::Ask => expected.extend([
            native("permission.asked", "permission_request").state("waiting_on_human(permission)"),
            native("permission.replied", "notification(permission_replied)")
                .state("waiting_on_human(permission)"),
        ]),
    }
    expected.extend([
        native("session.idle", "stop").state("idle"),
        native("hookline.exit", "session_end").state("ended(exit)"),
    ]);
    session.run(&[step("opencode run", Action::Wait, "ended(exit)")
        .expect(expected)
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(1))]);
    let written = std::fs::read_to_string(&out);
    match (case, written) {
        (Case::Allowed, Ok(text)) if text == "headless\n" => {}
        (Case::Ask, Err(_)) => {}
        (_, other) => session.fail(&format!("out.txt after the run: {other:?}")),
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if case == Case::Ask && !stderr.contains("auto-rejecting") {
        session.fail(&format!("opencode run did not say it rejected the ask:\n{stderr}"));
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
