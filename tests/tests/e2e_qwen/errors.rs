//! API errors in the Qwen Code TUI. One Qwen does not retry (the mock's `APIERROR: invalid`, a
//! 400) ends the turn with `StopFailure` (`invalid_request`): `env_fault`, then its
//! `idle_prompt` makes the session idle. One it retries (`APIERROR: overloaded`, a 503) fires
//! nothing for minutes: the hooks leave the session `active`, but the chat log gets a
//! `qwen-code.api_error` entry per attempt, and `hookline status` (which reads it) shows
//! `env_fault(overloaded)` with the transcript as its evidence. Escape cancels the retries:
//! `idle_prompt`, idle; Qwen puts the prompt back in the composer, which Ctrl+U clears.

use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, native, step};
use hookline_tests::claude_style::{check_status, expect_status_from_transcript, run_checked};
use hookline_tests::dialog;
use hookline_tests::npm_install::Installed;
use hookline_tests::qwen::{self, READY};

use crate::interactive::{EXIT, launch, quit};

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = qwen::new_session(installed, "api-errors");
    qwen::install_hooks(&session);
    session.launch_tui(&[]);
    run_checked(
        &mut session,
        &[
            launch(),
            step("prompt answered 400", Action::Type("APIERROR: invalid".into()), "idle")
                .expect([
                    native("UserPromptSubmit", "turn_start").state("active"),
                    native("StopFailure", "stop_failure").state("env_fault(other)"),
                    native("Notification", "idle_prompt").q("idle_prompt").state("idle"),
                ])
                .then_shown(READY)
                .input(Input::Once),
        ],
    );
    session.run_step(
        &step(
            "prompt answered 503, retried",
            Action::Type("APIERROR: overloaded".into()),
            "active",
        )
        .when_shown(READY)
        .expect([native("UserPromptSubmit", "turn_start").state("active")])
        .then_quiet_for(Duration::from_secs(3)),
    );
    expect_status_from_transcript(&session, "env_fault(overloaded)", Duration::from_secs(30));
    run_checked(
        &mut session,
        &[
            step("Escape during the retries", Action::Press("Escape"), "idle")
                .expect([native("Notification", "idle_prompt").q("idle_prompt").state("idle")])
                .then_shown("APIERROR: overloaded")
                .input(Input::Once),
            step("clear the restored prompt", Action::Press("C-u"), "idle")
                .then_quiet_for(Duration::from_secs(1))
                .then_shown(READY),
            quit(),
        ],
    );
    dialog::finish(&session, EXIT);
    check_status(&session);
    session.save_report();
}
