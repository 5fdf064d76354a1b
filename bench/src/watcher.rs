//! `watcher [--events N] [--latency-events N]`: what the watcher costs, in one run.
//!
//! * **Latency**: a writer thread publishes events with the relay's own library (the same
//!   temp file + hard link + counter protocol as `hookline-relay`), a few milliseconds apart;
//!   a `Watcher` in the main thread receives them. Latency is from the moment the event became
//!   visible under its final name to its delivery as a canonical event, in inotify mode and in
//!   polling mode (the baseline: what a poller sees).
//! * **Backlog**: 100,000 queued events read, parsed, mapped and handed out from a cold start,
//!   and the same folded into session state.
//! * **Memory**: `--events` events (1,000,000 by default) over 1,000 sessions, written and read
//!   in rounds of 100,000 (consumed files removed between rounds, as retention does), folded
//!   into a `Tracker`; resident memory after, against what it was before.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hookline::ingest::reader::{Reader, ReaderConfig, Start};
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::profile::Profiles;
use hookline::state::Tracker;
use hookline_relay::clock::now_ns;
use hookline_relay::store::{EventsDir, WriteOptions, write_payload};
use serde_json::value::RawValue;

use crate::Result;
use crate::stats::{mib, ms, percentile, verdict};

const USAGE: &str =
    "usage: cargo run --release -p hookline-bench -- watcher [--events N] [--latency-events N]";
const ROUND: usize = 100_000;
const SESSIONS: usize = 1000;
/// The events of a Claude turn, cycled through by the writers.
const STORY: &[&str] =
    &["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"];

/// `watcher [--events N] [--latency-events N]`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let (events, latency_events) = counts(args, (1_000_000, 1000), USAGE)?;
    let profiles = Profiles::shipped()?;
    let tmp = tempdir()?;

    println!("### Watcher: rename-to-delivery latency\n");
    println!(
        "{latency_events} events per mode, published 3 ms apart by a writer thread with the relay's \
         own library; latency from the moment an event is visible under its final name to its \
         delivery as a canonical event.\n"
    );
    println!("| Mode | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|");
    let mut notify_p99 = Duration::MAX;
    for (label, options) in [
        ("inotify (`notify`) + 1 s rescan", WatchOptions::default()),
        (
            "polling every 100 ms (baseline)",
            WatchOptions {
                mode: Mode::Poll,
                poll_interval: Duration::from_millis(100),
                ..WatchOptions::default()
            },
        ),
    ] {
        let dir = tmp.join(format!("latency-{}", options.mode as u8));
        let mut latencies = latency(&dir, &profiles, options, latency_events)?;
        latencies.sort_unstable();
        let p = |q| ms(percentile(&latencies, q));
        println!("| {label} | {} | {} | {} | {} |", p(50.0), p(90.0), p(99.0), p(100.0));
        if options.mode == Mode::Notify {
            notify_p99 = percentile(&latencies, 99.0);
        }
    }

    println!("\n### Watcher: backlog\n");
    let dir = tmp.join("backlog");
    let written = Instant::now();
    write_events(&dir, 0, ROUND)?;
    let write_time = written.elapsed();
    let (read_rate, _) = drain(&dir, &profiles, false)?;
    let (state_rate, _) = drain(&dir, &profiles, true)?;
    println!(
        "{ROUND} events queued in one directory (written in {:.1} s), then read from a cold \
         start.\n",
        write_time.as_secs_f64()
    );
    println!("| Work | Events/s |\n|---|---:|");
    println!("| read, parse, map, hand out | {read_rate:.0} |");
    println!("| … and fold into session state | {state_rate:.0} |");

    println!("\n### Watcher: memory\n");
    let before = rss_kib();
    let peak = memory(&tmp.join("memory"), &profiles, events)?;
    let after = rss_kib();
    println!(
        "{events} events over {SESSIONS} sessions, written and read in rounds of {ROUND} \
         (consumed files removed between rounds), folded into one tracker.\n"
    );
    println!("| | Resident memory |\n|---|---:|");
    println!("| before | {} |", mib(before));
    println!("| highest after a round | {} |", mib(peak));
    println!("| after all {events} events | {} |", mib(after));

    println!("\n### Watcher: targets\n");
    println!("| Target | Measured | |\n|---|---:|---|");
    println!(
        "| inotify p99 < 10 ms | {} | {} |",
        ms(notify_p99),
        verdict(notify_p99 < Duration::from_millis(10))
    );
    println!(
        "| ≥ 50k events/s from backlog | {read_rate:.0}/s | {} |",
        verdict(read_rate >= 50_000.0)
    );
    println!(
        "| < 50 MiB at 1k sessions | {} | {} |",
        mib(peak.max(after)),
        verdict(peak.max(after) < 50 * 1024)
    );
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}

/// `--events N` and `--latency-events N`, over their defaults.
pub fn counts(
    mut args: impl Iterator<Item = String>,
    (mut events, mut latency_events): (usize, usize),
    usage: &str,
) -> Result<(usize, usize)> {
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().map(|n| n.parse::<usize>())) {
            ("--events", Some(Ok(n))) if n > 0 => events = n,
            ("--latency-events", Some(Ok(n))) if n > 0 => latency_events = n,
            _ => return Err(usage.into()),
        }
    }
    Ok((events, latency_events))
}

fn tempdir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("hookline-bench-watcher-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Publishes one event the relay's way; returns when it is visible.
pub fn publish(events: &EventsDir, index: usize) -> Result<u64> {
    publish_of(events, index, SESSIONS)
}

/// [`publish`], the events spread over `sessions` sessions.
pub fn publish_of(events: &EventsDir, index: usize, sessions: usize) -> Result<u64> {
    let native = STORY[index % STORY.len()];
    let session = index % sessions;
    let payload = format!(
        r#"{{"session_id":"session-{session:04}","transcript_path":"/home/dev/.claude/projects/p/session-{session:04}.jsonl","cwd":"/home/dev/work/proj","permission_mode":"default","hook_event_name":"{native}","tool_name":"Bash","tool_input":{{"command":"cargo test --workspace","description":"Run the tests"}},"tool_use_id":"toolu_{index:08}"}}"#
    );
    let payload = RawValue::from_string(payload)?;
    let written =
        write_payload(events, "claude", native, None, &payload, &WriteOptions::default())?;
    Ok(written.name.seq)
}

pub fn write_events(dir: &Path, from: usize, n: usize) -> Result<()> {
    write_events_of(dir, from, n, SESSIONS)
}

/// [`write_events`], the events spread over `sessions` sessions.
pub fn write_events_of(dir: &Path, from: usize, n: usize, sessions: usize) -> Result<()> {
    let events = EventsDir::create(dir)?;
    for index in from..from + n {
        publish_of(&events, index, sessions)?;
    }
    Ok(())
}

fn latency(
    dir: &Path,
    profiles: &Profiles,
    options: WatchOptions,
    n: usize,
) -> Result<Vec<Duration>> {
    let events = EventsDir::create(dir)?;
    let reader = Reader::open(ReaderConfig::new(dir, Start::Now, profiles.clone()))?;
    let mut watcher = Watcher::new(reader, options)?;
    // Let the watcher settle (first listing, watches armed).
    watcher.next_timeout(Duration::from_millis(50))?;
    let visible: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; n + 1]));
    let writer = {
        let visible = Arc::clone(&visible);
        thread::spawn(move || -> std::result::Result<(), String> {
            for index in 0..n {
                let seq = publish(&events, index).map_err(|e| e.to_string())? as usize;
                let at = Instant::now();
                if let Some(slot) = visible.lock().map_err(|e| e.to_string())?.get_mut(seq) {
                    *slot = Some(at);
                }
                thread::sleep(Duration::from_millis(3));
            }
            Ok(())
        })
    };
    let mut delivered = vec![None; n + 1];
    for _ in 0..n {
        let event =
            watcher.next_timeout(Duration::from_secs(10))?.ok_or("an event never arrived")?;
        let at = Instant::now();
        if let Some(slot) = delivered.get_mut(event.source.seq as usize) {
            *slot = Some(at);
        }
    }
    writer.join().map_err(|_| "the writer panicked")??;
    let visible = visible.lock().map_err(|e| e.to_string())?;
    Ok((1..=n)
        .filter_map(|seq| Some(delivered[seq]?.saturating_duration_since(visible[seq]?)))
        .collect())
}

/// Reads everything in `dir` from a cold start; returns events/s and the tracker's size.
fn drain(dir: &Path, profiles: &Profiles, fold: bool) -> Result<(f64, usize)> {
    let start = Instant::now();
    let mut reader = Reader::open(ReaderConfig::new(dir, Start::Beginning, profiles.clone()))?;
    let mut tracker = Tracker::new(profiles.clone(), now_ns());
    let mut count = 0usize;
    loop {
        let queued = reader.poll()?;
        while let Some(event) = reader.next_event() {
            if fold {
                tracker.apply(&event);
            }
            count += 1;
        }
        if queued == 0 && !reader.has_pending() {
            break;
        }
    }
    Ok((count as f64 / start.elapsed().as_secs_f64(), tracker.len()))
}

/// Writes and reads `total` events in rounds, folding them into one tracker; returns the
/// highest resident memory seen after a round, in KiB.
fn memory(dir: &Path, profiles: &Profiles, total: usize) -> Result<i64> {
    let mut reader = Reader::open(ReaderConfig::new(dir, Start::Beginning, profiles.clone()))?;
    let mut tracker = Tracker::new(profiles.clone(), now_ns());
    let mut peak = 0;
    let mut done = 0;
    while done < total {
        let n = ROUND.min(total - done);
        write_events(dir, done, n)?;
        let mut read = 0;
        while read < n {
            reader.poll()?;
            while let Some(event) = reader.next_event() {
                tracker.apply(&event);
                read += 1;
            }
        }
        done += n;
        // Consumed: remove the files as retention would (keeping the counter).
        for file in hookline::ingest::source::list(dir)?.events {
            std::fs::remove_file(file.path(dir))?;
        }
        peak = peak.max(rss_kib());
    }
    if tracker.len() != SESSIONS.min(total) {
        return Err(format!("expected {SESSIONS} sessions, tracked {}", tracker.len()).into());
    }
    Ok(peak)
}

/// This process's resident memory, in KiB (`VmRSS` of /proc/self/status).
fn rss_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
