//! Many relays writing into one directory at once: every event is written, `seq` is unique and
//! strictly increasing, names sort by `seq`.

use std::collections::BTreeSet;
use std::fs::File;
use std::time::Duration;

use hookline_relay::filename::COUNTER_FILE;
use hookline_relay::store::EventsDir;

use crate::util::{Sandbox, fixture, is_safe_ordered_name, names};

#[test]
fn sixty_four_relays_at_once_write_sixty_four_events_with_distinct_increasing_seqs() {
    let sandbox = Sandbox::new();
    let payload = fixture("claude-code/PreToolUse.json");
    let running: Vec<_> = (0..64)
        .map(|i| {
            sandbox.relay().env("HOOKLINE_TAG", format!("relay-{i}")).input(payload.clone()).spawn()
        })
        .collect();
    let pids: BTreeSet<u32> = running.iter().map(|r| r.pid()).collect();
    for relay in running {
        relay.wait();
    }

    let events = sandbox.events();
    assert_eq!(events.len(), 64, "{:?}", names(&events));
    assert!(sandbox.temp_files().is_empty());
    for event in &events {
        assert!(is_safe_ordered_name(&event.file), "no unordered name: {}", event.file);
        assert_eq!(event.name.seq, event.envelope.seq, "the name carries the seq");
        assert_eq!(event.name.pid, event.envelope.pid, "and the writer's pid");
        assert_eq!(event.envelope.event.as_deref(), Some("PreToolUse"));
    }
    // Sorted by name, the seqs are exactly 1..=64: distinct, strictly increasing, no gap.
    let seqs: Vec<u64> = events.iter().map(|e| e.envelope.seq).collect();
    assert_eq!(seqs, (1..=64).collect::<Vec<u64>>());
    let writers: BTreeSet<u32> = events.iter().map(|e| e.envelope.pid).collect();
    assert_eq!(writers, pids, "one event from each relay");
    let tags: BTreeSet<String> = events.iter().filter_map(|e| e.envelope.tag.clone()).collect();
    assert_eq!(tags.len(), 64);
    let events_dir = EventsDir::open(&sandbox.events).unwrap();
    assert_eq!(events_dir.committed_seq(Duration::from_millis(100)).unwrap(), Some(64));
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostics());
}

#[test]
fn a_counter_lock_held_too_long_gives_an_unordered_event_not_a_lost_one() {
    let sandbox = Sandbox::new();
    sandbox.relay().input("{}").run();
    let holder = File::options().write(true).open(sandbox.events.join(COUNTER_FILE)).unwrap();
    holder.lock().unwrap();
    let run = sandbox.relay().input(r#"{"hook_event_name":"Stop"}"#).run();
    holder.unlock().unwrap();
    assert!(run.elapsed >= Duration::from_millis(500), "waited the lock bound: {:?}", run.elapsed);

    let events = sandbox.events();
    assert_eq!(events.len(), 2, "{:?}", names(&events));
    let late = &events[1];
    assert!(late.envelope.seq_unordered);
    assert_eq!(late.envelope.seq, 1, "the counter value the writer saw");
    assert_eq!(late.name.unordered_ts_ns, Some(late.envelope.ts_ns));
    assert_eq!(late.envelope.event.as_deref(), Some("Stop"));
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("unordered")), "{notes:?}");

    // The next writer takes the lock again and continues the sequence.
    sandbox.relay().input("{}").run();
    let events = sandbox.events();
    assert_eq!(events.last().unwrap().envelope.seq, 2);
    assert!(!events.last().unwrap().envelope.seq_unordered);
}

#[test]
fn two_hundred_fifty_six_relays_of_four_mebibytes_at_once_are_all_ordered() {
    // Each writer used to hold the counter lock while it wrote its whole file: 256 of them at
    // 4 MiB queued past the lock bound and wrote unordered names. The body is now written
    // before the lock is taken.
    let sandbox = Sandbox::new();
    let bulk = "x".repeat(4 << 20);
    let payload =
        format!(r#"{{"hook_event_name":"PostToolUse","session_id":"s","tool_response":"{bulk}"}}"#);
    let running: Vec<_> =
        (0..256).map(|_| sandbox.relay().input(payload.clone().into_bytes()).spawn()).collect();
    for relay in running {
        relay.wait();
    }
    let names: Vec<String> = sandbox.events().into_iter().map(|e| e.file).collect();
    assert_eq!(names.len(), 256);
    let unordered: Vec<&String> = names.iter().filter(|n| !is_safe_ordered_name(n)).collect();
    assert!(
        unordered.is_empty(),
        "{} unordered: {:?}",
        unordered.len(),
        &unordered[..unordered.len().min(3)]
    );
    let events_dir = EventsDir::open(&sandbox.events).unwrap();
    assert_eq!(events_dir.committed_seq(Duration::from_millis(100)).unwrap(), Some(256));
    assert!(sandbox.temp_files().is_empty());
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostics());
}
