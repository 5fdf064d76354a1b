//! A real Claude Code payload, end to end: one file, every envelope field, the permissions.

use std::os::unix::fs::MetadataExt;

use crate::util::{Sandbox, fixture, payload_text};

#[test]
fn a_claude_pre_tool_use_payload_becomes_one_complete_private_event() {
    let sandbox = Sandbox::new();
    let payload = fixture("claude-code/PreToolUse.json");
    let run = sandbox
        .relay()
        .env("HOOKLINE_TAG", "task-42")
        .env("CLAUDE_PID", "4242")
        .env("CLAUDE_CODE_SESSION_ID", "75a87ff6-e914-427f-a8ca-ad0fcf16e284")
        .input(payload.clone())
        .run();

    let event = sandbox.only_event();
    let e = &event.envelope;
    assert_eq!(e.v, 1);
    assert_eq!(e.seq, 1);
    assert!(!e.seq_unordered);
    assert_eq!(e.cli, "claude");
    assert_eq!(e.event.as_deref(), Some("PreToolUse"));
    assert_eq!(e.tag.as_deref(), Some("task-42"));
    assert_eq!(e.pid, run.pid);
    assert_eq!(e.ppid, std::process::id());
    assert_eq!(e.host_pid, Some(4242));
    assert_eq!(e.host_session_id.as_deref(), Some("75a87ff6-e914-427f-a8ca-ad0fcf16e284"));
    assert_eq!(e.relay_version, env!("CARGO_PKG_VERSION"));
    assert!(!e.truncated);
    assert_eq!(e.bytes, payload.len() as u64);
    assert_eq!((&e.error, &e.raw, &e.raw_encoding), (&None, &None, &None));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let age = now.as_nanos() as u64 - e.ts_ns;
    assert!(age < 60_000_000_000, "ts_ns is the relay's wall clock: {age} ns old");

    // Verbatim: the payload's own bytes, whitespace and key order included.
    let verbatim = format!("\"payload\":{}}}\n", payload_text(&payload));
    assert!(event.text.ends_with(&verbatim), "{}", event.text);
    let expected: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(e.payload.as_ref(), Some(&expected));

    assert_eq!(event.name.seq, 1);
    assert_eq!(event.name.pid, run.pid);
    assert_eq!(event.file, format!("{:020}-{:010}.json", 1, run.pid));
    assert_eq!(event.mode, 0o600, "event files are private");
    for dir in ["state", "state/hookline", "state/hookline/events"] {
        let mode = std::fs::metadata(sandbox.root().join(dir)).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o700, "{dir} is created private");
    }
    assert!(sandbox.temp_files().is_empty());
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostics());
}

#[test]
fn consecutive_events_get_consecutive_seqs_and_sort_by_name() {
    let sandbox = Sandbox::new();
    for name in ["PreToolUse", "PostToolUse", "PreToolUse"] {
        let payload = fixture(&format!("claude-code/{name}.json"));
        sandbox.relay().input(payload).run();
    }
    let events = sandbox.events();
    let seqs: Vec<u64> = events.iter().map(|e| e.envelope.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    let kinds: Vec<_> = events.iter().map(|e| e.envelope.event.clone().unwrap()).collect();
    assert_eq!(kinds, ["PreToolUse", "PostToolUse", "PreToolUse"]);
}
