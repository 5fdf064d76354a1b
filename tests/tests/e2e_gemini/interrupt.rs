//! Esc while the answer streams (the mock's `SLOW:`), a next prompt, then API errors (the mock's
//! `APIERROR:`, each cancelled with Escape): what Gemini fires for each, and the chat it writes,
//! captured for the transcript fixtures (`HOOKLINE_E2E_CAPTURE_TRANSCRIPTS`).

use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::gemini::{self, READY};
use hookline_tests::npm_install::Installed;

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = gemini::new_session(installed, "interrupt");
    gemini::install_hooks(&session);
    session.launch_tui(&[]);
    let turn_start = || {
        [
            native("BeforeAgent", "turn_start").state("active"),
            native("PreCompress", "notification(pre_compress)").q("auto").state("active"),
        ]
    };
    let mut steps: Vec<Step> = vec![
        step("launch", Action::Wait, "unknown")
            .expect([native("SessionStart", "session_start").q("startup").state("unknown")])
            .within(Duration::from_secs(30))
            .then_shown(READY),
        step("prompt with a slow answer", Action::Type("stream SLOW: please".into()), "active")
            .expect(turn_start())
            .then_quiet_for(Duration::from_secs(3)),
        // Unlike a denied dialog, an Esc mid-stream ends the turn with AfterAgent: a stop,
        // and Gemini is indeed back at its prompt.
        step("interrupt the stream with Escape", Action::Press("Escape"), "idle")
            .expect([native("AfterAgent", "stop").state("idle")])
            .then_quiet_for(Duration::from_secs(3))
            .then_shown(READY)
            .input(Input::Once),
        step("next prompt after the interrupt", Action::Type("after the interrupt".into()), "idle")
            .when_shown(READY)
            .expect(turn_start().into_iter().chain([native("AfterAgent", "stop").state("idle")]))
            .then_shown(READY)
            .input(Input::Once),
    ];
    // 0.61 retries both errors without end, even with `general.maxAttempts = 1` (the 429 in a
    // tight loop, thousands of requests a minute), firing nothing: Escape cancels the turn.
    for (name, prompt) in [
        ("prompt answered 429 rate limited", "APIERROR: rate_limit"),
        ("prompt answered 503 overloaded", "APIERROR: overloaded"),
    ] {
        steps.push(
            step(name, Action::Type(prompt.into()), "active")
                .when_shown(READY)
                .expect(turn_start())
                .then_quiet_for(Duration::from_secs(4)),
        );
        steps.push(
            step("cancel the retries with Escape", Action::Press("Escape"), "idle")
                .expect([native("AfterAgent", "stop").state("idle")])
                .then_quiet_for(Duration::from_secs(1))
                .then_shown(READY)
                .input(Input::Once),
        );
    }
    let end = native("SessionEnd", "session_end").q("exit").state("ended(exit)");
    steps.push(
        step("/quit", Action::Type("/quit".into()), "ended(exit)")
            .when_shown(READY)
            .expect([end, end, end])
            .then_quiet_for(Duration::from_secs(1)),
    );
    session.run(&steps);
    session.wait_for_exit(Duration::from_secs(15));
    session.check_one_session_one_epoch();
    session.check_clean("after exit");
    session.save_report();
}
