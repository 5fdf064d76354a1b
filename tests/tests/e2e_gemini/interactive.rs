//! The Gemini TUI, driven in tmux: a prompt asking for a shell command, the approval dialog,
//! approved (Enter) or denied (Escape), then `/quit`.
//!
//! Gemini fires `SessionStart` at launch, `PreCompress` (trigger `auto`) before every model
//! call (it does not mean a compression happened), `Notification` (`ToolPermission`) as the
//! dialog is drawn, nothing at all when the dialog is denied, and `SessionEnd` three times on
//! `/quit`: one session, one epoch, ended.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, Input, Step, native, step};
use hookline_tests::deliver_check::{Daemon, deliver_command_confirmed, deliver_confirmed};
use hookline_tests::gemini::{self, APPROVAL_DIALOG, READY};
use hookline_tests::npm_install::Installed;

/// How long a dialog is left open: nothing may fire meanwhile.
const DIALOG_OPEN: Duration = Duration::from_secs(3);

/// Launch, then a prompt up to the open approval dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        step("launch", Action::Wait, "unknown")
            .expect([native("SessionStart", "session_start").q("startup").state("unknown")])
            .within(Duration::from_secs(30))
            .then_shown(READY),
        step(
            "prompt asking for a shell command",
            Action::Type(format!("please RUNBASH: echo hi > {}", out.display())),
            "waiting_on_human(permission)",
        )
        .when_shown(READY)
        .expect([
            native("BeforeAgent", "turn_start").state("active"),
            native("PreCompress", "notification(pre_compress)").q("auto").state("active"),
            native("BeforeTool", "tool_start").state("child_command"),
            native("Notification", "waiting_for_input(permission)")
                .q("ToolPermission")
                .state("waiting_on_human(permission)"),
        ])
        .then_shown(APPROVAL_DIALOG),
        step("approval dialog left open", Action::Wait, "waiting_on_human(permission)")
            .then_quiet_for(DIALOG_OPEN),
    ]
}

/// `/quit`: `SessionEnd` three times, one end.
fn quit() -> Step {
    let end = native("SessionEnd", "session_end").q("exit").state("ended(exit)");
    step("/quit", Action::Type("/quit".into()), "ended(exit)")
        .when_shown(READY)
        .expect([end, end, end])
        .then_quiet_for(Duration::from_secs(1))
}

/// Approve with Enter: the turn ends, the session is idle with one input slot.
pub fn approved(installed: &Installed) {
    let mut session = gemini::new_session(installed, "approved");
    gemini::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("AfterTool", "tool_end").state("active"),
                native("PreCompress", "notification(pre_compress)").q("auto").state("active"),
                native("AfterAgent", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once),
        quit(),
    ]);
    finish(&session, session.wait_for_exit(Duration::from_secs(20)));
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "hi\n" => {}
        other => session.fail(&format!("the approved command did not write out.txt: {other:?}")),
    }
    session.save_report();
}

/// Deny with Escape: nothing fires; the session waits for its human until `/quit`.
pub fn denied(installed: &Installed) {
    let mut session = gemini::new_session(installed, "denied");
    gemini::install_hooks(&session);
    let out = session.sandbox.project().join("denied.txt");
    session.launch_tui(&[]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("deny with Escape", Action::Press("Escape"), "waiting_on_human(permission)")
            .then_quiet_for(Duration::from_secs(3))
            .then_shown("Request cancelled"),
        quit(),
    ]);
    finish(&session, session.wait_for_exit(Duration::from_secs(20)));
    if out.exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    session.save_report();
}

fn finish(session: &hookline_tests::agent_session::AgentSession, status: Option<i32>) {
    if let Some(status) = status.filter(|s| *s != 0) {
        session.fail(&format!("gemini exited with status {status} after /quit"));
    }
    session.check_one_session_one_epoch();
    session.check_clean("after /quit");
}

/// A two-line prompt delivered with `hookline::deliver`, then a second through the `hookline
/// deliver` command via a real `hookline daemon`, confirmed by its `BeforeAgent`, whose
/// prompt is the delivered text.
pub fn delivered(installed: &Installed) {
    let mut session = gemini::new_session(installed, "deliver");
    gemini::install_hooks(&session);
    session.launch_tui(&[]);
    session.wait_for_text(READY, Duration::from_secs(30));
    let text = "say hello\nin two lines";
    let tmux = session.tmux.as_ref().unwrap();
    // The live authority, started before the first turn ends: that turn end is live.
    let daemon = Daemon::start(session.events.path()).unwrap_or_else(|e| session.fail(&e));
    let report = deliver_confirmed(tmux, session.events.path(), "gemini", &session.tag, text)
        .unwrap_or_else(|e| session.fail(&e));
    println!("[gemini deliver] {report:?}");
    // The second prompt through the `hookline deliver` command, once the daemon allows it.
    let second = "now say goodbye";
    let json =
        deliver_command_confirmed(&daemon, tmux, session.events.path(), &session.tag, second)
            .unwrap_or_else(|e| session.fail(&e));
    println!("[gemini hookline deliver] {json}");
}
