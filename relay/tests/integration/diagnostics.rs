//! The diagnostics file replaces stderr; however many failures happen, it stays bounded.

use hookline_relay::diag::{self, Level, MAX_BYTES};

use crate::util::{Sandbox, Stdin};

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Debug builds (the tests') panic on demand: the binary as built, statically linked with its
/// own `main`, must unwind, note the panic and exit 0 (checked by `run`), printing nothing.
#[cfg(debug_assertions)]
#[test]
fn a_panic_is_caught_noted_and_the_exit_is_still_0() {
    let sandbox = Sandbox::new();
    // A first run makes the events directory, beside which the diagnostics file goes.
    sandbox.relay().input("{}").run();
    sandbox.relay().env("HOOKLINE_RELAY_TEST_PANIC", "1").input("{}").run();
    let records = sandbox.diagnostics();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].level, Level::Error);
    assert_eq!(records[0].message, "relay panicked: HOOKLINE_RELAY_TEST_PANIC=1");
    assert_eq!(sandbox.events().len(), 1, "the second run stopped at the panic");
}

/// With no stdin, stdout or stderr at all, the relay opens `/dev/null` on them before anything
/// else (as std's start-up would), so that none of its own files gets those numbers: it reads
/// an empty input and writes a complete event.
#[test]
fn closed_standard_descriptors_are_opened_on_dev_null_first() {
    let sandbox = Sandbox::new();
    sandbox.relay().stdin(Stdin::Closed).close_output().run();
    let event = sandbox.only_event();
    assert_eq!(event.envelope.error.as_deref(), Some("empty input"));
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostics());
}

#[test]
fn many_failures_keep_the_diagnostics_file_bounded() {
    let sandbox = Sandbox::new();
    // A symlinked events dir: every run is refused and says so, plus one line per bad flag.
    let real = sandbox.root().join("real");
    std::fs::create_dir_all(sandbox.events.parent().unwrap()).unwrap();
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, &sandbox.events).unwrap();
    let flags: Vec<String> =
        (0..6).map(|i| format!("--unknown-flag-{i}={}", "v".repeat(100))).collect();
    let log = sandbox.diagnostics_path();
    let mut runs = 0;
    while size(&diag::rotated_path(&log)) == 0 || runs < 120 {
        let batch: Vec<_> =
            (0..4).map(|_| sandbox.relay().args(&flags).input("{}").spawn()).collect();
        for relay in batch {
            relay.wait();
        }
        runs += 4;
        assert!(runs < 1000, "the log never rotated");
    }
    // One more, with an argument far larger than the cap.
    sandbox.relay().arg(format!("--huge={}", "h".repeat(100 << 10))).input("{}").run();

    let line_bound: usize = 2 << 10;
    // Concurrent writers may each add a line past the cap before one of them rotates.
    let slack = 4 * line_bound;
    assert!(size(&log) <= MAX_BYTES + slack as u64, "{}", size(&log));
    assert!(size(&diag::rotated_path(&log)) <= MAX_BYTES + slack as u64);
    for path in [log.clone(), diag::rotated_path(&log)] {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            assert!(line.len() <= line_bound, "a line of {} bytes", line.len());
            serde_json::from_str::<diag::Record>(line).expect("every line is a record");
        }
    }
    let records = sandbox.diagnostics();
    let last = records.last().unwrap();
    assert_eq!(last.level, Level::Error);
    assert!(last.message.contains("it is a symlink"), "{last:?}");
    assert!(records.iter().any(|r| r.message.contains("--huge=hhh")), "the huge flag is named");
    assert!(entries_empty(&real));
}

fn entries_empty(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}
