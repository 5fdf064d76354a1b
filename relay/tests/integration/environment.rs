//! Where events go, and when the relay does nothing at all.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};

use crate::util::{Sandbox, events_in, fixture};

#[test]
fn without_hookline_events_dir_events_go_under_home() {
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .env_remove("HOOKLINE_EVENTS_DIR")
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    let events = events_in(&sandbox.home.join(".local/state/hookline/events"));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].envelope.event.as_deref(), Some("PreToolUse"));
}

#[test]
fn xdg_state_home_wins_over_home_when_absolute() {
    let sandbox = Sandbox::new();
    let xdg = sandbox.root().join("xdg");
    sandbox.relay().env("HOOKLINE_EVENTS_DIR", "").env("XDG_STATE_HOME", &xdg).input("{}").run();
    assert_eq!(events_in(&xdg.join("hookline/events")).len(), 1);

    sandbox
        .relay()
        .env_remove("HOOKLINE_EVENTS_DIR")
        .env("XDG_STATE_HOME", "xdg")
        .input("{}")
        .run();
    assert_eq!(
        events_in(&sandbox.home.join(".local/state/hookline/events")).len(),
        1,
        "a relative XDG_STATE_HOME is ignored"
    );
}

#[test]
fn hookline_disable_makes_the_relay_a_silent_no_op() {
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .env("HOOKLINE_DISABLE", "1")
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    sandbox.assert_untouched();
    // Only "1" disables.
    sandbox.relay().env("HOOKLINE_DISABLE", "0").input("{}").run();
    assert_eq!(sandbox.events().len(), 1);
}

#[test]
fn with_no_home_and_no_events_dir_the_relay_exits_silently_writing_nothing() {
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .env_remove("HOME")
        .env_remove("HOOKLINE_EVENTS_DIR")
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    sandbox.relay().env_clear_all().input("{}").run();
    sandbox.assert_untouched();
}

#[test]
fn a_relative_events_dir_is_refused_and_noted_beside_the_default_dir() {
    let sandbox = Sandbox::new();
    let state = sandbox.home.join(".local/state/hookline");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&state).unwrap();
    sandbox
        .relay()
        .env("HOOKLINE_EVENTS_DIR", "events")
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    let mut expected =
        vec!["home", "home/.local", "home/.local/state", "home/.local/state/hookline"];
    expected.push("home/.local/state/hookline/events.relay.log");
    assert_eq!(sandbox.all_paths(), expected, "nothing in the working directory");
    let records = hookline_relay::diag::read(&state.join("events.relay.log"));
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].message.contains("HOOKLINE_EVENTS_DIR=events is relative"), "{records:?}");
    assert_eq!(records[0].event.as_deref(), Some("PreToolUse"));
}

#[test]
fn a_relative_events_dir_with_no_state_dir_leaves_a_trace_in_the_fallback_log() {
    // Nowhere beside the default events dir to write to: the note goes to the fallback log.
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .env("HOOKLINE_EVENTS_DIR", "events")
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    sandbox.assert_untouched();
    let records = sandbox.fallback_records();
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].message.contains("HOOKLINE_EVENTS_DIR=events is relative"), "{records:?}");
    assert!(records[0].message.contains("cannot write"), "{records:?}");
    assert_eq!(records[0].event.as_deref(), Some("PreToolUse"));
    let log = sandbox.runtime().join("hookline");
    assert_eq!(std::fs::metadata(&log).unwrap().mode() & 0o777, 0o700, "owner-only");
}

#[test]
fn a_fallback_dir_that_is_a_symlink_or_open_to_others_is_not_used() {
    let sandbox = Sandbox::new();
    let elsewhere = sandbox.runtime().join("elsewhere");
    std::fs::DirBuilder::new().mode(0o700).create(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, sandbox.runtime().join("hookline")).unwrap();
    sandbox.relay().env("HOOKLINE_EVENTS_DIR", "events").input("{}").run();
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none(), "not written through");
    assert!(sandbox.fallback_records().is_empty());
    std::fs::remove_file(sandbox.runtime().join("hookline")).unwrap();
    std::fs::DirBuilder::new().mode(0o755).create(sandbox.runtime().join("hookline")).unwrap();
    sandbox.relay().env("HOOKLINE_EVENTS_DIR", "events").input("{}").run();
    assert!(sandbox.fallback_records().is_empty(), "a directory others can read is refused");
}
