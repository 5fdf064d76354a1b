//! A hostile or broken filesystem: the relay refuses unsafe directories, survives a read-only
//! one, and lets nothing from a payload reach a path. Always silent, always exit 0.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

use hookline_relay::diag::Level;
use hookline_relay::filename::{bucket_name, counter_witness};

use crate::util::{
    NOBODY, Sandbox, entries, fixture, is_root, is_safe_ordered_name, is_safe_unordered_name,
};

fn mkdir(path: &Path, mode: u32) {
    std::fs::DirBuilder::new().recursive(true).mode(mode).create(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs a relay against the sandbox's events dir, as it is, and checks that it was refused:
/// nothing written into it, and one diagnostics line containing `reason`.
fn assert_refused(sandbox: &Sandbox, reason: &str) {
    let before = entries(&sandbox.events);
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).run();
    assert_eq!(entries(&sandbox.events), before, "nothing written into a refused dir");
    let notes = sandbox.diagnostic_messages();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("refusing events dir"), "{notes:?}");
    assert!(notes[0].contains(reason), "{notes:?} names {reason:?}");
}

#[test]
fn a_symlinked_events_dir_is_refused() {
    let sandbox = Sandbox::new();
    let real = sandbox.root().join("real");
    mkdir(&real, 0o700);
    mkdir(sandbox.events.parent().unwrap(), 0o700);
    std::os::unix::fs::symlink(&real, &sandbox.events).unwrap();
    assert_refused(&sandbox, "it is a symlink");
    assert!(entries(&real).is_empty(), "nothing written through the link");
}

#[test]
fn a_dangling_symlink_is_refused_and_not_created_through() {
    let sandbox = Sandbox::new();
    let target = sandbox.root().join("elsewhere");
    mkdir(sandbox.events.parent().unwrap(), 0o700);
    std::os::unix::fs::symlink(&target, &sandbox.events).unwrap();
    assert_refused(&sandbox, "it is a symlink");
    assert!(!target.exists());
}

#[test]
fn a_foreign_owned_events_dir_is_refused() {
    if is_root() {
        let sandbox = Sandbox::new();
        mkdir(&sandbox.events, 0o700);
        std::os::unix::fs::chown(&sandbox.events, Some(NOBODY), Some(NOBODY)).unwrap();
        assert_refused(&sandbox, &format!("owned by uid {NOBODY}, not by us (uid 0)"));
    } else {
        // An existing root-owned directory. Its diagnostics file (`/usr.relay.log`) cannot be
        // written either, so only the refusal itself is checked.
        let sandbox = Sandbox::new();
        let before = entries(Path::new("/usr"));
        sandbox.relay().env("HOOKLINE_EVENTS_DIR", "/usr").input("{}").run();
        assert_eq!(entries(Path::new("/usr")), before);
    }
}

#[test]
fn a_group_or_world_writable_events_dir_is_refused() {
    for mode in [0o770, 0o720, 0o707, 0o777, 0o1777] {
        let sandbox = Sandbox::new();
        mkdir(&sandbox.events, 0o700);
        std::fs::set_permissions(&sandbox.events, std::fs::Permissions::from_mode(mode)).unwrap();
        assert_refused(&sandbox, &format!("writable by group or others (mode {mode:o})"));
    }
}

#[test]
fn a_file_where_the_dir_should_be_is_refused() {
    let sandbox = Sandbox::new();
    mkdir(sandbox.events.parent().unwrap(), 0o700);
    std::fs::write(&sandbox.events, "not a dir").unwrap();
    sandbox.relay().input("{}").run();
    assert_eq!(std::fs::read_to_string(&sandbox.events).unwrap(), "not a dir");
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("not a directory")), "{notes:?}");
}

#[test]
fn a_read_only_events_dir_writes_nothing_and_prints_nothing() {
    let sandbox = Sandbox::new();
    let relay = if is_root() {
        // Root writes through permission bits: drop to another user who owns a read-only dir.
        // The other user must reach the dir: every ancestor is traversable by others.
        std::fs::set_permissions(sandbox.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        mkdir(&sandbox.root().join("state"), 0o755);
        let parent = sandbox.events.parent().unwrap();
        mkdir(parent, 0o700);
        mkdir(&sandbox.events, 0o500);
        for dir in [parent, &sandbox.events] {
            std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        sandbox.relay().run_as(NOBODY, sandbox.root())
    } else {
        mkdir(sandbox.events.parent().unwrap(), 0o700);
        mkdir(&sandbox.events, 0o500);
        sandbox.relay()
    };
    relay.input(fixture("claude-code/PreToolUse.json")).run();
    assert!(entries(&sandbox.events).is_empty(), "{:?}", entries(&sandbox.events));
    let notes = sandbox.diagnostic_messages();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("cannot open counter"), "{notes:?}");
    assert!(notes[0].contains("Permission denied"), "{notes:?}");
    std::fs::set_permissions(&sandbox.events, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn nothing_from_a_payload_or_the_environment_reaches_a_path() {
    let sandbox = Sandbox::new();
    let hostile = [
        r#"{"session_id":"../../x","hook_event_name":"../../evil","cwd":"../..","tool_use_id":"/tmp/x"}"#,
        r#"{"session_id":"/etc/passwd","hook_event_name":"Stop/../../../x","transcript_path":"../t"}"#,
        r#"{"session_id":"a\u0000b","hook_event_name":"x\ny","hookEventName":".."}"#,
        r#"{"session_id":"..","type":"../../../../../../tmp/pwned"}"#,
        r#"{"session_id":"\u202e\ud83d\ude00","hook_event_name":"\\..\\..\\x"}"#,
    ];
    for payload in hostile {
        sandbox
            .relay()
            .args(["--cli", "../../cli"])
            .env("HOOKLINE_TAG", "../../tag")
            .env("CLAUDE_CODE_SESSION_ID", "../../session")
            .env("CLAUDE_PID", "../1")
            .input(payload)
            .run();
    }
    sandbox
        .relay()
        .args(["--event", "../../../x/y"])
        .env("HOOKLINE_TAG", "../../tag")
        .input(hostile[0])
        .run();

    let events = sandbox.events();
    assert_eq!(events.len(), hostile.len() + 1);
    for event in &events {
        assert!(is_safe_ordered_name(&event.file), "{}", event.file);
        assert_eq!(event.envelope.tag.as_deref(), Some("../../tag"), "recorded, as data");
        assert_eq!(event.envelope.host_pid, None, "a non-numeric CLAUDE_PID is ignored");
    }
    assert_eq!(events[0].envelope.event.as_deref(), Some("../../evil"), "recorded, as data");
    let mut expected = vec![
        "home".to_owned(),
        "state".to_owned(),
        "state/hookline".to_owned(),
        "state/hookline/events".to_owned(),
        "state/hookline/events/.seq".to_owned(),
        // The counter's witness, named after its value.
        format!("state/hookline/events/{}", counter_witness(events.len() as u64)),
        // The bucket of the first seqs, named after the first.
        format!("state/hookline/events/{}", bucket_name(0)),
    ];
    let root = sandbox.root();
    expected.extend(
        events.iter().map(|e| {
            e.dir.join(&e.file).strip_prefix(root).unwrap().to_string_lossy().into_owned()
        }),
    );
    expected.sort();
    assert_eq!(sandbox.all_paths(), expected, "no other path was created");
}

/// A file outside the events directory that a symlink planted inside it points at.
fn victim(sandbox: &Sandbox, name: &str) -> std::path::PathBuf {
    let victim = sandbox.root().join(name);
    std::fs::write(&victim, "precious\n").unwrap();
    victim
}

fn assert_untouched_through(link: &Path, victim: &Path) {
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious\n", "the victim is untouched");
}

#[test]
fn a_symlink_at_the_counter_is_not_followed_and_the_event_is_still_written() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.events, 0o700);
    let victim = victim(&sandbox, "victim");
    let counter = sandbox.events.join(".seq");
    std::os::unix::fs::symlink(&victim, &counter).unwrap();
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).run();
    assert_untouched_through(&counter, &victim);
    let event = sandbox.only_event();
    assert!(is_safe_unordered_name(&event.file), "{}: ordered by time", event.file);
    assert!(event.envelope.seq_unordered);
    assert_eq!(event.envelope.event.as_deref(), Some("PreToolUse"));
    let notes = sandbox.diagnostic_messages();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains(".seq") && notes[0].contains("wrote unordered"), "{notes:?}");
    // Readers are not stopped by it either: nothing can be in flight under a counter no
    // writer can open.
    let dir = hookline_relay::store::EventsDir::open(&sandbox.events).unwrap();
    let bound = std::time::Duration::from_millis(100);
    assert_eq!(dir.committed_seq(bound).unwrap(), Some(u64::MAX));
}

#[test]
fn a_symlink_at_the_diagnostics_file_is_not_followed_and_the_event_is_still_written() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.events, 0o700);
    let victim = victim(&sandbox, "victim");
    let log = sandbox.diagnostics_path();
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    // An unknown flag: the relay has a warning to record.
    sandbox.relay().arg("--bogus").input(fixture("claude-code/PreToolUse.json")).run();
    assert_untouched_through(&log, &victim);
    assert_eq!(sandbox.only_event().envelope.event.as_deref(), Some("PreToolUse"));
}

#[test]
fn a_symlink_at_the_rotated_diagnostics_file_is_replaced_not_written_through() {
    let sandbox = Sandbox::new();
    mkdir(&sandbox.events, 0o700);
    let victim = victim(&sandbox, "victim");
    let log = sandbox.diagnostics_path();
    let rotated = hookline_relay::diag::rotated_path(&log);
    std::os::unix::fs::symlink(&victim, &rotated).unwrap();
    // A full log: the next line rotates it onto the link's name.
    std::fs::write(&log, "x".repeat(hookline_relay::diag::MAX_BYTES as usize)).unwrap();
    sandbox.relay().arg("--bogus").input(fixture("claude-code/PreToolUse.json")).run();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "the victim is untouched");
    assert!(!rotated.symlink_metadata().unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(sandbox.only_event().envelope.event.as_deref(), Some("PreToolUse"));
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("--bogus")), "{notes:?}");
}

#[test]
fn an_event_too_big_for_the_room_left_is_written_without_its_bulk() {
    // A host's RLIMIT_FSIZE below the event's size stands in for a nearly full disk (EFBIG
    // there, ENOSPC here: the same path). Without care the kernel kills the relay with SIGXFSZ
    // mid-write (exit 153, a temp file left behind).
    let sandbox = Sandbox::new();
    let payload = format!(
        r#"{{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"{}","tool_use_id":"t1"}}"#,
        "x".repeat(64 * 1024)
    );
    let size = payload.len() as u64;
    sandbox.relay().input(payload).file_size_limit(16 * 1024).run();
    assert!(sandbox.temp_files().is_empty(), "no temp file left: {:?}", sandbox.temp_files());
    let event = sandbox.only_event();
    assert_eq!(event.envelope.event.as_deref(), Some("PostToolUse"));
    assert_eq!(event.envelope.dropped, ["tool_response"]);
    assert_eq!(
        event.envelope.payload,
        Some(serde_json::json!({
            "session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_use_id": "t1"
        }))
    );
    assert_eq!(event.envelope.bytes, size, "the size received is still told");
    let notes = sandbox.diagnostics();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].level, Level::Warn, "an event was written");
    let message = &notes[0].message;
    assert!(message.starts_with("cannot write event"), "{message}");
    assert!(message.contains("File too large"), "{message}");
    assert!(message.ends_with("writing it without payload members tool_response"), "{message}");
}

#[test]
fn raw_input_too_big_for_the_room_left_is_left_out() {
    let sandbox = Sandbox::new();
    let text = "not json ".repeat(8 * 1024);
    sandbox.relay().arg("--event").arg("Stop").input(text).file_size_limit(16 * 1024).run();
    let event = sandbox.only_event();
    assert_eq!(event.envelope.event.as_deref(), Some("Stop"));
    assert_eq!(event.envelope.raw, None);
    let error = event.envelope.error.unwrap();
    assert!(error.starts_with("invalid JSON"), "{error}");
    assert!(error.ends_with("the raw input (73728 bytes) was left out: the event did not fit"));
}

#[test]
fn an_event_that_cannot_shrink_is_not_written_and_the_relay_stays_silent() {
    let sandbox = Sandbox::new();
    // Every member is small: there is nothing to leave out, and the file does not fit.
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).file_size_limit(600).run();
    assert!(sandbox.events().is_empty(), "no event file under a final name");
    assert!(sandbox.temp_files().is_empty(), "no temp file left: {:?}", sandbox.temp_files());
    let notes = sandbox.diagnostic_messages();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("cannot write event"), "{notes:?}");
    assert!(notes[0].contains("File too large"), "{notes:?}");

    // An event below the limit is written as usual.
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).file_size_limit(16 * 1024).run();
    assert!(sandbox.only_event().envelope.dropped.is_empty());
}

#[test]
fn a_relay_that_can_write_neither_its_event_nor_its_diagnostics_leaves_a_trace_in_the_fallback_log()
{
    let sandbox = Sandbox::new();
    let parent = sandbox.events.parent().unwrap().to_owned();
    let relay = if is_root() {
        std::fs::set_permissions(sandbox.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        mkdir(&sandbox.root().join("state"), 0o755);
        mkdir(&parent, 0o500);
        mkdir(&sandbox.events, 0o500);
        for dir in [&parent, &sandbox.events, &sandbox.runtime().to_owned()] {
            std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        sandbox.relay().run_as(NOBODY, sandbox.root())
    } else {
        mkdir(&parent, 0o700);
        mkdir(&sandbox.events, 0o500);
        std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o500)).unwrap();
        sandbox.relay()
    };
    relay.input(fixture("claude-code/PreToolUse.json")).run();
    assert!(entries(&sandbox.events).is_empty(), "{:?}", entries(&sandbox.events));
    assert!(sandbox.diagnostics().is_empty());
    let records = sandbox.fallback_records();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].level, Level::Error);
    assert!(records[0].message.contains("cannot open counter"), "{records:?}");
    assert!(records[0].message.contains("cannot write"), "{records:?}");
    assert!(records[0].message.contains("events.relay.log"), "{records:?}");
    for dir in [&parent, &sandbox.events] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
