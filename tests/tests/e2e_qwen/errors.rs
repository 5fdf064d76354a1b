//! An Esc while an approved command runs, then API errors, in one Qwen Code TUI session.
//!
//! The command (`sleep 30`, with the comment Qwen wants) is approved: `PreToolUse`, the wait
//! ends, `child_command`; Escape while it runs: `PostToolUseFailure` (`is_interrupt`), no
//! `Stop`, then `idle_prompt`: idle. An API error Qwen does not retry (the mock's
//! `APIERROR: invalid`, a 400) ends the turn with `StopFailure` (`invalid_request`):
//! `env_fault(other)`, and `idle_prompt`, relayed in either order. One it retries
//! (`APIERROR: overloaded`, a 503) fires nothing for minutes: the hooks leave the session
//! `active`, but the chat log gets a `qwen-code.api_error` entry per attempt, and
//! `hookline status` (which reads it) shows `env_fault(overloaded)` with the transcript as its
//! evidence. Escape cancels the retries: `idle_prompt`, idle; Qwen puts the prompt back in the
//! composer, which Ctrl+U clears.

use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::claude_style::{check_status, expect_status_from_transcript, run_checked};
use hookline_tests::dialog;
use hookline_tests::dialog::DIALOG_OPEN;
use hookline_tests::npm_install::Installed;
use hookline_tests::qwen::{self, APPROVAL_DIALOG, CANCELLED, READY, SLEEP_30};

use crate::interactive::{EXIT, launch, prompt_events, quit};

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = qwen::new_session(installed, "interrupted-api-errors");
    qwen::install_hooks(&session);
    session.launch_tui(&[]);
    run_checked(
        &mut session,
        &[
            launch(),
            step(
                "prompt asking for a long command",
                Action::Type(format!("please RUNBASH: {SLEEP_30}")),
                "waiting_on_human(permission)",
            )
            .expect(prompt_events())
            .then_shown(APPROVAL_DIALOG),
            step("approve with Enter", Action::Press("Enter"), "child_command")
                .expect([native("PreToolUse", "tool_start").state("child_command")])
                .then_quiet_for(DIALOG_OPEN),
            step("Escape while the command runs", Action::Press("Escape"), "idle")
                .expect([
                    native("PostToolUseFailure", "tool_end(failed)").state("active"),
                    native("Notification", "idle_prompt").q("idle_prompt").state("idle"),
                ])
                .then_shown(CANCELLED)
                .input(Input::Once),
            // StopFailure is fire-and-forget: its relay and idle_prompt's run at once, and land
            // in either order (hole stop-failure-races-idle-prompt). The input slot follows.
            Step::new("prompt answered 400", Action::Type("APIERROR: invalid".into()))
                .when_shown(READY)
                .within(Duration::from_secs(20))
                .expect([
                    native("UserPromptSubmit", "turn_start").state("active"),
                    native("StopFailure", "stop_failure").any_order(),
                    native("Notification", "idle_prompt").q("idle_prompt").any_order(),
                ])
                .then_shown(READY)
                .state("idle|env_fault(other)"),
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
