//! A relay killed with SIGKILL at any moment leaves no partial file under a final name: at
//! worst a `.tmp-` file, which readers skip.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use hookline_relay::envelope::Envelope;
use hookline_relay::filename::{FileKind, classify};

use crate::util::{Running, Sandbox, Stdin, entries};

const ITERATIONS: usize = 40;

/// A valid ~1 MiB payload, as a large `PostToolUse` (a file read back) would be.
fn large_payload() -> String {
    let line = r#"fn main() { println!(\"hello, \\\"world\\\"\"); }\n"#;
    let body = line.repeat((1 << 20) / line.len());
    format!(
        r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{{"content":"{body}"}}}}"#
    )
}

/// Waits until relay `pid`'s temp file appears in `dir` (it is writing), or `limit` passes.
fn wait_for_temp_file(dir: &std::path::Path, pid: u32, limit: Duration) -> bool {
    let prefix = format!(".tmp-{pid}-");
    let start = Instant::now();
    while start.elapsed() < limit {
        if entries(dir).iter().any(|n| classify(n) == FileKind::Temp && n.starts_with(&prefix)) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    false
}

#[test]
fn a_relay_killed_at_any_point_leaves_no_partial_event_file() {
    let sandbox = Sandbox::new();
    let payload = large_payload();
    let verbatim = format!("\"payload\":{payload}}}\n");
    // One relay first, so the directory exists for the watchers below, and to know how long
    // a whole run takes, so that kills can be spread over all of it and a bit beyond.
    let whole = sandbox.relay().input(payload.clone()).run().elapsed;
    let spread = whole.as_micros() as u64 * 3 / 2;

    let mut seen_mid_write = 0;
    let mut checked = BTreeSet::new();
    for i in 0..ITERATIONS {
        let pieces = payload.as_bytes().chunks(64 << 10).map(<[u8]>::to_vec).collect();
        let relay: Running =
            sandbox.relay().stdin(Stdin::Pieces(pieces, Duration::from_micros(200))).spawn();
        if i % 2 == 0 {
            // Anywhere: while stdin is fed, while it is parsed, while the file is written.
            std::thread::sleep(Duration::from_micros(spread * i as u64 / ITERATIONS as u64));
        } else if wait_for_temp_file(&sandbox.events, relay.pid(), Duration::from_secs(3)) {
            // Inside the write itself, at varied depths.
            seen_mid_write += 1;
            std::thread::sleep(Duration::from_micros((i as u64 % 7) * 300));
        }
        relay.kill();

        for event in hookline_relay::layout::list(&sandbox.events, 0).unwrap().events {
            let file = event.name.to_string();
            if !checked.insert(file.clone()) {
                continue;
            }
            let bytes = std::fs::read(event.path(&sandbox.events)).unwrap();
            Envelope::from_slice(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                bytes.ends_with(verbatim.as_bytes()),
                "{file} holds the whole payload ({} bytes)",
                bytes.len()
            );
        }
    }
    assert!(checked.len() > 1, "some relays finished before their kill: {checked:?}");
    assert!(seen_mid_write > 0, "some kills landed while a temp file existed");

    // The lock died with its holders: the next relay writes normally, after every seq taken.
    // Every final name parses (checked again, all together, by `events`).
    let max_seq = sandbox.events().iter().map(|e| e.envelope.seq).max().unwrap();
    sandbox.relay().input(r#"{"hook_event_name":"Stop"}"#).run();
    let last = sandbox.events().pop().unwrap();
    assert_eq!(last.envelope.event.as_deref(), Some("Stop"));
    assert!(last.envelope.seq > max_seq);
    assert!(!last.envelope.seq_unordered);
}
