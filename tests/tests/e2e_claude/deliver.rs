//! Input delivered with `hookline::deliver` into the real TUI: two prompts, each confirmed by
//! its `UserPromptSubmit` (whose prompt is the delivered text); then a delivery while the
//! permission dialog is open is refused and the dialog stays, untouched.

use std::time::Duration;

use hookline::deliver::{Outcome, Rule};
use hookline_tests::claude_install::Installed;
use hookline_tests::deliver_check::{deliver_confirmed, deliver_text};
use hookline_tests::session::ClaudeSession;

use crate::interactive::READY;

const PERMISSION_DIALOG: &str = "Do you want to proceed?";

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "deliver", Duration::from_secs(3));
    let project = session.sandbox.project();
    session.launch_tui(&["--permission-mode", "default"]);
    session.wait_for_text(READY, Duration::from_secs(30));
    let tmux = session.tmux.as_ref().unwrap();
    let events = session.events.path().to_owned();
    let deliver = |text: &str| {
        deliver_text(tmux, &events, "claude", &session.tag, text, Duration::from_secs(15))
            .unwrap_or_else(|e| session.fail(&format!("deliver {text:?}: {e}")))
    };
    let confirmed = |text: &str| {
        let report = deliver_confirmed(tmux, &events, "claude", &session.tag, text)
            .unwrap_or_else(|e| session.fail(&e));
        println!("[{}] delivered {text:?}: {report:?}", session.label);
    };
    confirmed("say hello, then stop");
    // The turn ends on Stop; the TUI is back at its prompt.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !session.all_events().iter().any(|e| e.name() == "Stop") {
        if std::time::Instant::now() > deadline {
            session.fail("the delivered prompt's turn never stopped");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    session.wait_for_text(READY, Duration::from_secs(20));
    let out = project.join("out.txt");
    confirmed(&format!("please RUNBASH: echo hi > {}", out.display()));
    session.wait_for_text(PERMISSION_DIALOG, Duration::from_secs(20));
    let report = deliver("1");
    match &report.outcome {
        Outcome::Refused { rule: Rule::Dialog, .. } if !report.delivered => {}
        _ => session.fail(&format!("a delivery into the dialog was not refused: {report:?}")),
    }
    std::thread::sleep(Duration::from_secs(2));
    let screen = tmux.screen().unwrap_or_default();
    if !screen.contains(PERMISSION_DIALOG) || out.exists() {
        session.fail(&format!("the dialog was touched:\n{screen}"));
    }
    tmux.press("Escape").unwrap_or_else(|e| session.fail(&e));
}
