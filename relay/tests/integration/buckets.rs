//! The layout: each ordered event goes into the bucket of its `seq`, created on demand with the
//! events directory's checks; a bucket that fails them is never written into, and the event
//! goes to the top of the directory instead, never lost.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use hookline_relay::filename::{BUCKET_SPAN, COUNTER_FILE, bucket_name, bucket_of};

use crate::util::{NOBODY, Sandbox, fixture, is_root, is_safe_ordered_name, names};

/// Sets the counter (without a witness: the relay then checks it against the files, finds
/// none above it, and continues after it).
fn set_counter(sandbox: &Sandbox, seq: u64) {
    std::fs::create_dir_all(&sandbox.events).unwrap();
    std::fs::set_permissions(&sandbox.events, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(sandbox.events.join(COUNTER_FILE), format!("{seq:020}\n")).unwrap();
}

#[test]
fn ordered_events_go_into_the_bucket_of_their_seq_created_private() {
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 2);
    for _ in 0..4 {
        sandbox.relay().input(fixture("claude-code/PreToolUse.json")).run();
    }
    let events = sandbox.events();
    let seqs: Vec<u64> = events.iter().map(|e| e.envelope.seq).collect();
    assert_eq!(seqs, (BUCKET_SPAN - 1..BUCKET_SPAN + 3).collect::<Vec<_>>());
    for event in &events {
        assert_eq!(event.dir, sandbox.events.join(bucket_name(bucket_of(event.envelope.seq))));
    }
    for first in [0, BUCKET_SPAN] {
        let meta = std::fs::symlink_metadata(sandbox.events.join(bucket_name(first))).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.mode() & 0o7777, 0o700);
    }
}

#[test]
fn concurrent_writers_across_a_bucket_boundary_are_all_ordered_and_none_lost() {
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 24);
    let payload = fixture("claude-code/PreToolUse.json");
    let running: Vec<_> = (0..48).map(|_| sandbox.relay().input(payload.clone()).spawn()).collect();
    for relay in running {
        relay.wait();
    }
    let events = sandbox.events();
    assert!(events.iter().all(|e| is_safe_ordered_name(&e.file)), "{:?}", names(&events));
    let seqs: Vec<u64> = events.iter().map(|e| e.envelope.seq).collect();
    assert_eq!(seqs, (BUCKET_SPAN - 23..BUCKET_SPAN + 25).collect::<Vec<_>>(), "none lost");
    for event in &events {
        assert_eq!(event.dir, sandbox.events.join(bucket_name(bucket_of(event.envelope.seq))));
    }
    assert!(sandbox.temp_files().is_empty());
}

/// Runs the relay with `hostile` in place of the bucket of its event, and checks the event
/// went to the top of the directory, nothing went through or into `hostile`, and the next
/// bucket is used as usual.
fn the_event_goes_to_the_top(sandbox: &Sandbox, hostile: &Path, check: impl Fn()) {
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).run();
    let events = sandbox.events();
    assert_eq!(events.len(), 1, "{:?}", names(&events));
    assert_eq!(events[0].dir, sandbox.events, "written at the top, not through {hostile:?}");
    assert_eq!(events[0].envelope.seq, BUCKET_SPAN - 1);
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostic_messages());
    check();
    sandbox.relay().input(fixture("claude-code/PreToolUse.json")).run();
    let events = sandbox.events();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].dir, sandbox.events.join(bucket_name(BUCKET_SPAN)));
}

#[test]
fn a_symlink_in_place_of_a_bucket_is_never_followed() {
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 2);
    let elsewhere = sandbox.root().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = sandbox.events.join(bucket_name(0));
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    the_event_goes_to_the_top(&sandbox, &link, || {
        assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none(), "nothing through it");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "left as it is");
    });
}

#[test]
fn a_file_in_place_of_a_bucket_is_left_alone() {
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 2);
    let file = sandbox.events.join(bucket_name(0));
    std::fs::write(&file, "precious\n").unwrap();
    the_event_goes_to_the_top(&sandbox, &file, || {
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious\n");
    });
}

#[test]
fn a_bucket_writable_by_others_is_never_written_into() {
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 2);
    let open = sandbox.events.join(bucket_name(0));
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    the_event_goes_to_the_top(&sandbox, &open, || {
        assert!(std::fs::read_dir(&open).unwrap().next().is_none(), "nothing written into it");
        let mode = std::fs::symlink_metadata(&open).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o777, "left as it is");
    });
}

#[test]
fn a_bucket_of_another_user_is_never_written_into() {
    if !is_root() {
        // Only root can give a directory away; the owner check is the same code as the mode's.
        return;
    }
    let sandbox = Sandbox::new();
    set_counter(&sandbox, BUCKET_SPAN - 2);
    let foreign = sandbox.events.join(bucket_name(0));
    std::fs::create_dir(&foreign).unwrap();
    std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&foreign, Some(NOBODY), Some(NOBODY)).unwrap();
    the_event_goes_to_the_top(&sandbox, &foreign, || {
        assert!(std::fs::read_dir(&foreign).unwrap().next().is_none(), "nothing written into it");
    });
}
