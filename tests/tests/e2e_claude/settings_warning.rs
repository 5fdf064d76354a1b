//! An event name the CLI does not know raises a "Settings Warning" dialog that holds back every
//! hook (even `SessionStart`) until dismissed, and lists the names it knows: this checks
//! `hookline_tests::claude_hooks::EVENTS` against the CLI itself, for each version run.

use std::time::Duration;

use hookline_tests::binaries;
use hookline_tests::claude_hooks::{
    EVENTS, hooks_value, known_events, relay_command, valid_events_from_warning,
    write_project_settings,
};
use hookline_tests::claude_install::Installed;
use hookline_tests::session::{Action, ClaudeSession, Step, native};
use serde_json::json;

/// A name no version knows.
const UNKNOWN_EVENT: &str = "HooklineNoSuchEvent";

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "settings-warning", Duration::from_secs(3));
    let session_start = EVENTS.iter().find(|e| e.name == "SessionStart").expect("in the table");
    let unknown = hookline_tests::claude_hooks::HookEvent {
        name: UNKNOWN_EVENT,
        matcher: false,
        since: None,
        register: true,
    };
    let hooks = hooks_value([session_start, &unknown], &relay_command(&binaries::relay()));
    write_project_settings(&session.sandbox.project(), &json!({ "hooks": hooks }));
    session.launch_tui(&["--permission-mode", "default"]);

    let screen = session.wait_for_text("Valid events:", Duration::from_secs(30));
    if !screen.contains(&format!("Unknown hook event \"{UNKNOWN_EVENT}\"")) {
        session.fail("the warning does not name the unknown event");
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
    session.run(&[
        Step::new("settings warning shown", Action::Wait)
            .then_quiet_for(Duration::from_secs(1))
            .state("unknown"),
        Step::new("continue past the warning", Action::Press("Enter"))
            .expect([native("SessionStart").q("startup").canonical("session_start")])
            .then_shown("for shortcuts")
            .state("unknown"),
    ]);
    session.save_report();
}
