//! Esc while the answer streams (the mock's `SLOW:`), a next prompt, then API errors (the mock's
//! `APIERROR:`; the sandbox's provider sets no retries): what Codex fires for each, and the
//! rollout it writes, captured for the transcript fixtures
//! (`HOOKLINE_E2E_CAPTURE_TRANSCRIPTS`).

use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::codex::{self, BYPASS_TRUST, DaemonGuard, READY};
use hookline_tests::npm_install::Installed;

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = codex::new_session(installed, "interrupt");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    session.launch_tui(&[BYPASS_TRUST]);
    let mut steps: Vec<Step> = vec![
        step("launch", Action::Wait, "none")
            .when_shown(READY)
            .then_quiet_for(Duration::from_secs(2)),
        step("prompt with a slow answer", Action::Type("stream SLOW: please".into()), "active")
            .expect([
                native("SessionStart", "session_start").q("startup").state("unknown"),
                native("UserPromptSubmit", "turn_start").state("active"),
            ])
            .then_quiet_for(Duration::from_secs(3)),
        // Codex fires its Interrupt hook for an Esc mid-stream too.
        step("interrupt the stream with Escape", Action::Press("Escape"), "waiting_on_human")
            .expect([native("Interrupt", "waiting_for_input(other)")])
            .then_quiet_for(Duration::from_secs(3))
            .then_shown(READY),
        step("next prompt after the interrupt", Action::Type("after the interrupt".into()), "idle")
            .expect([
                native("UserPromptSubmit", "turn_start").state("active"),
                native("Stop", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once),
    ];
    for (name, prompt) in [
        ("prompt answered 503 overloaded", "APIERROR: overloaded"),
        ("prompt answered 429 rate limited", "APIERROR: rate_limit"),
    ] {
        steps.push(
            step(name, Action::Type(prompt.into()), "active")
                .when_shown(READY)
                .expect([native("UserPromptSubmit", "turn_start").state("active")])
                .then_quiet_for(Duration::from_secs(3)),
        );
    }
    steps.push(
        step("/exit", Action::Type("/exit".into()), "ended(other)")
            .when_shown(READY)
            .expect([native("SessionEnd", "session_end").q("other").state("ended")])
            .then_quiet_for(Duration::from_secs(1)),
    );
    session.run(&steps);
    session.wait_for_exit(Duration::from_secs(15));
    session.check_one_session_one_epoch();
    session.check_clean("after exit");
    session.save_report();
}
