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
use hookline_tests::dialog::{self, Exit, Outcome, dialog_left_open, prompt_for_a_command};
use hookline_tests::gemini::{self, APPROVAL_DIALOG, READY};
use hookline_tests::npm_install::Installed;

/// Gemini is left with `/quit`.
const QUIT: Exit = Exit { cli: "gemini", command: "/quit" };

/// Launch, then a prompt up to the open approval dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        step("launch", Action::Wait, "unknown")
            .expect([native("SessionStart", "session_start").q("startup").state("unknown")])
            .within(Duration::from_secs(30))
            .then_shown(READY),
        prompt_for_a_command(
            out,
            [
                native("BeforeAgent", "turn_start").state("active"),
                native("PreCompress", "notification(pre_compress)").q("auto").state("active"),
                native("BeforeTool", "tool_start").state("child_command"),
                native("Notification", "waiting_for_input(permission)")
                    .q("ToolPermission")
                    .state("waiting_on_human(permission)"),
            ],
            APPROVAL_DIALOG,
        )
        .when_shown(READY),
        dialog_left_open("approval dialog left open"),
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
    let then = [
        step("approve with Enter", Action::Press("Enter"), "idle")
            .expect([
                native("AfterTool", "tool_end").state("active"),
                native("PreCompress", "notification(pre_compress)").q("auto").state("active"),
                native("AfterAgent", "stop").state("idle"),
            ])
            .then_shown(READY)
            .input(Input::Once),
        quit(),
    ];
    dialog::run(&mut session, "out.txt", up_to_the_dialog, &then, QUIT, Outcome::Ran);
}

/// Deny with Escape: nothing fires; the session waits for its human until `/quit`.
pub fn denied(installed: &Installed) {
    let mut session = gemini::new_session(installed, "denied");
    gemini::install_hooks(&session);
    let then = [
        step("deny with Escape", Action::Press("Escape"), "waiting_on_human(permission)")
            .then_quiet_for(Duration::from_secs(3))
            .then_shown("Request cancelled"),
        quit(),
    ];
    dialog::run(&mut session, "denied.txt", up_to_the_dialog, &then, QUIT, Outcome::NotRun);
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
