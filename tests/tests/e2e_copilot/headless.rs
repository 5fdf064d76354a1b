//! `copilot -p …`: with `--allow-all-tools` the command runs without asking; without it there
//! is nobody to approve, so Copilot denies the call ("Denied, no one to approve"), yet fires
//! `notification` (`permission_prompt`) first, and nothing for the denied call itself (neither
//! `postToolUse` nor `postToolUseFailure`). Either way `agentStop`, then `sessionEnd`
//! (`complete`).

use std::time::Duration;

use hookline_tests::agent_session::{Action, Expect, native, step};
use hookline_tests::copilot;
use hookline_tests::npm_install::Installed;

/// Whether the command may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// `--allow-all-tools`.
    AllowAll,
    /// No flag: nobody can approve it.
    NoApprover,
}

/// Runs the case against `installed`.
pub fn run(installed: &Installed, case: Case) {
    let scenario = match case {
        Case::AllowAll => "prompt",
        Case::NoApprover => "prompt-no-approver",
    };
    let mut session = copilot::new_session(installed, scenario);
    copilot::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("headless RUNBASH: echo headless > {}", out.display());
    let mut args = vec!["-p", prompt.as_str()];
    if case == Case::AllowAll {
        args.push("--allow-all-tools");
    }
    let output = session.run_headless_ok("copilot -p", &args, Duration::from_secs(90));
    let mut expected: Vec<Expect> = vec![
        native("sessionStart", "session_start").q("new").state("unknown"),
        native("userPromptSubmitted", "turn_start").state("active"),
        native("preToolUse", "tool_start").state("child_command"),
    ];
    expected.push(match case {
        Case::AllowAll => native("postToolUse", "tool_end").state("active"),
        Case::NoApprover => native("notification", "waiting_for_input(permission)")
            .q("permission_prompt")
            .state("waiting_on_human(permission)"),
    });
    expected.extend([
        native("agentStop", "stop").state("idle"),
        native("sessionEnd", "session_end").q("complete").state("ended(complete)"),
    ]);
    session.run(&[step("copilot -p", Action::Wait, "ended(complete)")
        .expect(expected)
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(1))]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    match (case, std::fs::read_to_string(&out)) {
        (Case::AllowAll, Ok(text)) if text == "headless\n" => {}
        (Case::NoApprover, Err(_)) if stdout.contains("no one to approve") => {}
        (_, other) => session.fail(&format!("out.txt after the run: {other:?}\n{stdout}")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
