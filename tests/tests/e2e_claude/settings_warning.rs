//! Every event `hookline install` registers is one the CLI accepts.
//!
//! An event name the CLI does not know raises a blocking "Settings Warning" dialog that holds
//! back every hook (even `SessionStart`) until dismissed, and lists the names it knows. So:
//! 1. with the settings exactly as `hookline install` wrote them, the CLI starts, fires
//!    `SessionStart`, and the screen never shows the warning;
//! 2. with one unknown name added by hand, the warning appears, names that one event only
//!    (none of install's), and lists the valid names: they must be
//!    `hookline_tests::claude_hooks::EVENTS` for this version, and hold everything install
//!    registered.

use std::time::Duration;

use hookline_tests::claude_hooks::{
    hookline_registers, known_events, register_also, valid_events_from_warning,
};
use hookline_tests::claude_install::Installed;
use hookline_tests::session::{Action, ClaudeSession, Input, SETTINGS_WARNING, Step};

use crate::interactive::{READY, exit, session_started};

/// A name no version knows.
const UNKNOWN_EVENT: &str = "HooklineNoSuchEvent";

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "settings-warning", Duration::from_secs(3));
    let args = ["--permission-mode", "default"];

    // 1. As installed: no warning, hooks fire at once.
    session.launch_tui(&args);
    session.run(&[
        Step::new("launch with the settings hookline install wrote", Action::Wait)
            .expect([session_started()])
            .within(Duration::from_secs(30))
            .then_shown(READY)
            .state("unknown(session started)"),
        exit(),
    ]);
    // `check_clean` (run by every step) already fails on the warning; say it here too.
    let screen = session.tmux.as_ref().and_then(|t| t.screen_with_history().ok());
    if screen.is_none_or(|s| s.contains(SETTINGS_WARNING)) {
        session.fail("cannot read the screen, or it showed a settings warning");
    }
    session.wait_for_exit(Duration::from_secs(15));

    // 2. One unknown name added: the warning names it alone and lists the valid names.
    register_also(&session.sandbox.project(), "SessionStart", UNKNOWN_EVENT);
    session.settings_warning_expected = true;
    session.launch_tui(&args);
    let screen = session.wait_for_text("Valid events:", Duration::from_secs(30));
    let reported = screen.matches("Unknown hook event").count();
    if reported != 1 || !screen.contains(&format!("Unknown hook event \"{UNKNOWN_EVENT}\"")) {
        session.fail(&format!(
            "the warning should name {UNKNOWN_EVENT} and nothing else, it names {reported} events"
        ));
    }
    let listed = valid_events_from_warning(&screen)
        .unwrap_or_else(|| session.fail("cannot read the list of valid events"));
    let known: Vec<&str> = known_events(session.version).iter().map(|e| e.name).collect();
    if listed != known {
        session.fail(&format!(
            "the CLI knows other events than claude_hooks::EVENTS says for {}:\n  CLI:   {listed:?}\n  table: {known:?}",
            session.version
        ));
    }
    let registered = hookline_registers(session.version);
    if let Some(rejected) = registered.iter().find(|e| !listed.contains(e)) {
        session.fail(&format!("hookline install registers {rejected}, which the CLI rejects"));
    }
    session.run(&[
        // Held back by the dialog: nothing fires, the tag still names the session that ended.
        Step::new("settings warning shown", Action::Wait)
            .then_quiet_for(Duration::from_secs(1))
            .state("ended(prompt_input_exit)"),
        Step::new("continue past the warning", Action::Press("Enter"))
            .expect([session_started()])
            .then_shown(READY)
            .state("unknown(session started)")
            .input(Input::Refused("state is unknown")),
    ]);
    session.finish();
}
