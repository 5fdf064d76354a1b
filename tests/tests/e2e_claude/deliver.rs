//! Input delivered into the real TUI: the first prompt with the library's `hookline::deliver`
//! (a session at launch has no idle a live authority can allow input on), the second through
//! the `hookline deliver` command via a real `hookline daemon`, each confirmed by its
//! `UserPromptSubmit` (whose prompt is the delivered text); then a `hookline deliver` while the
//! permission dialog is open is refused (exit 1, nothing typed) and the dialog stays,
//! untouched.

use std::time::Duration;

use hookline_tests::claude_install::Installed;
use hookline_tests::deliver_check::{Daemon, deliver_confirmed};
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
    // The live authority, started before the first turn ends: that Stop is live.
    let daemon = Daemon::start(&events).unwrap_or_else(|e| session.fail(&e));
    let deliver = |text: &str| {
        daemon
            .deliver(tmux, &events, &session.tag, text, &["--wait", "20s"])
            .unwrap_or_else(|e| session.fail(&format!("hookline deliver {text:?}: {e}")))
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
    let second = format!("please RUNBASH: echo hi > {}", out.display());
    let (code, json, stderr) = deliver(&second);
    if code != Some(0) || json["confirmed"] != true || json["event"]["prompt"] != second.as_str() {
        session.fail(&format!(
            "hookline deliver {second:?} was not confirmed: {code:?} {json} {stderr}"
        ));
    }
    println!("[{}] hookline deliver {second:?}: {json}", session.label);
    session.wait_for_text(PERMISSION_DIALOG, Duration::from_secs(20));
    let (code, json, stderr) = {
        let asked = std::time::Instant::now();
        let answer = daemon
            .deliver(tmux, &events, &session.tag, "1", &[])
            .unwrap_or_else(|e| session.fail(&e));
        println!(
            "[{}] deliver into the dialog ({:?}): {}",
            session.label,
            asked.elapsed(),
            answer.1
        );
        answer
    };
    if code != Some(1) || json["delivered"] != false {
        session
            .fail(&format!("a delivery into the dialog was not refused: {code:?} {json} {stderr}"));
    }
    std::thread::sleep(Duration::from_secs(2));
    let screen = tmux.screen().unwrap_or_default();
    if !screen.contains(PERMISSION_DIALOG) || out.exists() {
        session.fail(&format!("the dialog was touched:\n{screen}"));
    }
    tmux.press("Escape").unwrap_or_else(|e| session.fail(&e));
}
