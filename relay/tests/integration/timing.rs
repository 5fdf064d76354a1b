//! Some Claude Code versions never close a hook's stdin: the relay must stop at a complete
//! JSON value, and give up at its 2 s deadline when none completes, writing the event anyway.

use std::time::Duration;

use hookline_relay::envelope::RawEncoding;

use crate::util::{Sandbox, Stdin, fixture};

/// The deadline is 2 s; these bounds leave room for a loaded machine.
const AT_DEADLINE: (Duration, Duration) = (Duration::from_millis(1500), Duration::from_secs(5));

#[test]
fn stdin_held_open_after_a_complete_object_returns_promptly() {
    let sandbox = Sandbox::new();
    let payload = fixture("claude-code/PreToolUse.json");
    let run = sandbox.relay().stdin(Stdin::HeldOpen(payload)).run();
    assert!(run.elapsed < Duration::from_secs(1), "took {:?}", run.elapsed);
    let e = sandbox.only_event().envelope;
    assert_eq!(e.error, None);
    assert_eq!(e.event.as_deref(), Some("PreToolUse"));
}

#[test]
fn stdin_held_open_with_nothing_returns_at_the_deadline_with_an_event() {
    let sandbox = Sandbox::new();
    let run = sandbox.relay().stdin(Stdin::HeldOpen(Vec::new())).run();
    assert!((AT_DEADLINE.0..AT_DEADLINE.1).contains(&run.elapsed), "took {:?}", run.elapsed);
    let e = sandbox.only_event().envelope;
    assert_eq!(e.error.as_deref(), Some("no input before the 2s deadline"));
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("deadline")), "{notes:?}");
}

#[test]
fn stdin_held_open_with_an_incomplete_object_returns_at_the_deadline_keeping_it() {
    let sandbox = Sandbox::new();
    let partial = r#"{"session_id": "s", "hook_event_name": "SessionEnd", "reason": "cle"#;
    let run = sandbox.relay().stdin(Stdin::HeldOpen(partial.into())).run();
    assert!((AT_DEADLINE.0..AT_DEADLINE.1).contains(&run.elapsed), "took {:?}", run.elapsed);
    let e = sandbox.only_event().envelope;
    assert_eq!(e.error.as_deref(), Some("input incomplete at the 2s deadline"));
    assert_eq!(e.event.as_deref(), Some("SessionEnd"), "salvaged");
    assert_eq!(e.raw_encoding, Some(RawEncoding::Utf8));
    assert_eq!(e.raw.as_deref(), Some(partial));
}
