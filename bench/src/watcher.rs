//! `watcher [--events N] [--latency-events N] [--backlog N] [--runs N] [--dir DIR]
//! [--backlog-only]`: what the watcher costs, in one run.
//!
//! * **Latency**: a writer thread publishes events with the relay's own library (the same
//!   temp file + hard link + counter protocol as `hookline-relay`), a few milliseconds apart;
//!   a `Watcher` in the main thread receives them. Latency is from the moment the event became
//!   visible under its final name to its delivery as a canonical event, in inotify mode and in
//!   polling mode (the baseline: what a poller sees).
//! * **Backlog**: `--backlog` queued events (100,000 by default) read, parsed, mapped and
//!   handed out from a cold start, and the same folded into session state, in one thread (the
//!   baseline: read-ahead off), with one worker reading ahead and with the default workers (one
//!   per core, at least two), alternating, `--runs` times each (3 by default); medians. `--dir` keeps the backlog
//!   in a directory that outlives the run, so a later run with the same `--backlog` reuses it
//!   (writing a million files takes minutes); `--backlog-only` skips latency and memory.
//! * **Memory**: `--events` events (1,000,000 by default) over 1,000 sessions, written and read
//!   in rounds of 100,000 (consumed files removed between rounds, as retention does), folded
//!   into a `Tracker`; resident memory after, against what it was before.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hookline::canonical::SourceRef;
use hookline::format::envelope::RawEnvelope;
use hookline::format::rawjson;
use hookline::ingest::echo::{Echoes, payload_digest, payload_text_digest};
use hookline::ingest::mapping::map_envelope;
use hookline::ingest::reader::{DEFAULT_READ_AHEAD, Reader, ReaderConfig, Start};
use hookline::ingest::source;
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::profile::Profiles;
use hookline::state::Tracker;
use hookline_relay::clock::now_ns;
use hookline_relay::store::{EventsDir, WriteOptions, write_payload};
use serde_json::value::RawValue;

use crate::Result;
use crate::stats::{mib, ms, percentile, verdict};

const USAGE: &str = "usage: cargo run --release -p hookline-bench -- watcher [--events N] \
                     [--latency-events N] [--backlog N] [--runs N] [--dir DIR] [--backlog-only]";
const ROUND: usize = 100_000;
const SESSIONS: usize = 1000;
/// The events of a Claude turn, cycled through by the writers.
const STORY: &[&str] =
    &["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"];

/// What `watcher` was asked for.
struct Options {
    events: usize,
    latency_events: usize,
    backlog: usize,
    runs: usize,
    dir: Option<PathBuf>,
    backlog_only: bool,
}

fn options(mut args: impl Iterator<Item = String>) -> Result<Options> {
    let mut options = Options {
        events: 1_000_000,
        latency_events: 1000,
        backlog: ROUND,
        runs: 3,
        dir: None,
        backlog_only: false,
    };
    while let Some(arg) = args.next() {
        let count = |value: Option<String>| match value.map(|n| n.parse::<usize>()) {
            Some(Ok(n)) if n > 0 => Ok(n),
            _ => Err(USAGE),
        };
        match arg.as_str() {
            "--events" => options.events = count(args.next())?,
            "--latency-events" => options.latency_events = count(args.next())?,
            "--backlog" => options.backlog = count(args.next())?,
            "--runs" => options.runs = count(args.next())?,
            "--dir" => options.dir = Some(args.next().ok_or(USAGE)?.into()),
            "--backlog-only" => options.backlog_only = true,
            _ => return Err(USAGE.into()),
        }
    }
    Ok(options)
}

/// `watcher [--events N] [--latency-events N] [--backlog N] [--runs N] [--dir DIR]
/// [--backlog-only]`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let options = options(args)?;
    let (events, latency_events) = (options.events, options.latency_events);
    let profiles = Profiles::shipped()?;
    let tmp = tempdir()?;
    let (read_rate, _) = backlog(&tmp, &profiles, &options)?;
    if options.backlog_only {
        std::fs::remove_dir_all(&tmp)?;
        return Ok(());
    }

    println!("\n### Watcher: rename-to-delivery latency\n");
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
        "| ≥ 150k events/s from backlog | {read_rate:.0}/s | {} |",
        verdict(read_rate >= 150_000.0)
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

fn tempdir() -> Result<PathBuf> {
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

/// The backlog table: `--backlog` events read in one thread, with one worker reading ahead and
/// with the default workers, alternating, `--runs` times each. Returns the median events/s with
/// the default workers (read and map, then with folding).
fn backlog(tmp: &Path, profiles: &Profiles, options: &Options) -> Result<(f64, f64)> {
    let n = options.backlog;
    let dir = match &options.dir {
        Some(dir) => dir.join(format!("backlog-{n}")),
        None => tmp.join("backlog"),
    };
    // Whatever an earlier run left (at the top and in buckets).
    let present = source::list(&dir).map_or(0, |listing| listing.events.len());
    let written = Instant::now();
    if present < n {
        write_events(&dir, present, n - present)?;
    }
    let write_time = written.elapsed();
    let load_before = load_average();
    let defaults = ReaderConfig::new(&dir, Start::Beginning, profiles.clone());
    let (ahead, threads) =
        (defaults.read_ahead.max(DEFAULT_READ_AHEAD), defaults.read_ahead_threads);
    // One thread (the baseline), one worker reading ahead (as before several), the default.
    let ways = [(0, 1), (ahead, 1), (ahead, threads.max(2))];
    let mut rates = [[Vec::new(), Vec::new(), Vec::new()], [Vec::new(), Vec::new(), Vec::new()]];
    let mut cpus = rates.clone();
    for _ in 0..options.runs {
        for ((fold, rates), cpus) in [false, true].into_iter().zip(&mut rates).zip(&mut cpus) {
            for (way, &(read_ahead, threads)) in ways.iter().enumerate() {
                let (rate, cpu) = drain(&dir, profiles, fold, read_ahead, threads)?;
                rates[way].push(rate);
                cpus[way].push(cpu);
            }
        }
    }
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates[rates.len() / 2]
    };
    println!("### Watcher: backlog\n");
    println!(
        "{n} events queued in one directory ({}), then read from a cold start in one thread \
         (read-ahead off), with one worker thread reading ahead ({ahead} files ahead) and with \
         {} (the default here: {threads}), alternating; median of {} runs each. Load average \
         {} before, {} after.\n",
        if present >= n {
            "written by an earlier run".to_owned()
        } else {
            format!("{} written in {:.1} s", n - present, write_time.as_secs_f64())
        },
        threads.max(2),
        options.runs,
        load_before,
        load_average(),
    );
    println!(
        "| Work | One thread (baseline) | One worker | {} workers | Speed-up |\n|---|---:|---:|---:|---:|",
        threads.max(2)
    );
    let mut new = [0.0; 2];
    let labels = ["read, parse, map, hand out", "… and fold into session state"];
    for (index, (label, rates)) in labels.iter().zip(&mut rates).enumerate() {
        let [one, worker, workers] = rates;
        let (one, worker, workers) = (median(one), median(worker), median(workers));
        println!("| {label} | {one:.0} | {worker:.0} | {workers:.0} | {:.2}× |", workers / one);
        new[index] = workers;
    }
    println!(
        "\nThe CPU time those runs took per event (µs, user and system, every thread of the \
         process; medians): what a shared machine's other load does not change as much.\n"
    );
    println!(
        "| Work | One thread (baseline) | One worker | {} workers |\n|---|---:|---:|---:|",
        threads.max(2)
    );
    for (label, cpus) in labels.iter().zip(&mut cpus) {
        let [one, worker, workers] = cpus;
        let (one, worker, workers) = (median(one), median(worker), median(workers));
        println!("| {label} | {one:.2} | {worker:.2} | {workers:.2} |");
    }
    phases(&dir, profiles)?;
    if options.dir.is_none() {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok((new[0], new[1]))
}

/// Where one thread's time goes: each step of reading the backlog in `dir` timed on its own,
/// over every file, in one thread.
fn phases(dir: &Path, profiles: &Profiles) -> Result<()> {
    let names = source::list(dir)?.events;
    let n = names.len() as f64;
    let timed = |step: &mut dyn FnMut(&source::EventFile) -> Result<()>| {
        let start = Instant::now();
        for name in &names {
            step(name)?;
        }
        Ok::<_, Box<dyn std::error::Error>>(start.elapsed().as_secs_f64() * 1e6 / n)
    };
    let path = |file: &source::EventFile| file.path(dir);
    let read = timed(&mut |name| {
        black_box(source::read_file(&path(name))?);
        Ok(())
    })?;
    let mut files = source::FileReader::new(dir);
    let read_at = timed(&mut |name| {
        black_box(files.read(name)?);
        Ok(())
    })?;
    // Parsing is timed as read + parse less a read pass of the same kind just before it: the
    // first pass above also warms the caches, so subtracting it could go below zero.
    let read_again = timed(&mut |name| {
        black_box(files.read(name)?);
        Ok(())
    })?;
    let mut envelopes = Vec::with_capacity(names.len());
    let parse = timed(&mut |name| {
        envelopes.push(RawEnvelope::parse(&files.read(name)?)?);
        Ok(())
    })? - read_again;
    let source_of =
        |seq| SourceRef { dir: dir.to_owned(), seq, file: String::new(), legacy: false };
    let mut envelope = envelopes.iter();
    let map = timed(&mut |_| {
        let envelope = envelope.next().ok_or("fewer envelopes")?;
        drop(map_envelope(profiles, envelope, source_of(envelope.seq)));
        Ok(())
    })?;
    let payload = |envelope: &RawEnvelope| envelope.payload.as_deref().map(|p| p.get().to_owned());
    let mut envelope = envelopes.iter();
    let decoded = timed(&mut |_| {
        let text = payload(envelope.next().ok_or("fewer envelopes")?).unwrap_or_default();
        black_box(rawjson::decode(&text).map(|v| payload_digest(&v)));
        Ok(())
    })?;
    let mut envelope = envelopes.iter();
    let streamed = timed(&mut |_| {
        let text = payload(envelope.next().ok_or("fewer envelopes")?).unwrap_or_default();
        black_box(payload_text_digest(&text));
        Ok(())
    })?;
    let mut envelope = envelopes.iter();
    let copy = timed(&mut |_| {
        drop(payload(envelope.next().ok_or("fewer envelopes")?));
        Ok(())
    })?;
    let mut events: Vec<_> = envelopes
        .iter()
        .map(|e| {
            (
                map_envelope(profiles, e, source_of(e.seq)),
                payload_text_digest(e.payload.as_deref().map_or("", |p| p.get())),
            )
        })
        .collect();
    let mut echoes = Echoes::new();
    let mut event = events.iter_mut();
    let mark = timed(&mut |_| {
        let (event, digest) = event.next().ok_or("fewer events")?;
        echoes.mark(event, *digest);
        Ok(())
    })?;
    let mut tracker = Tracker::new(profiles.clone(), now_ns());
    let mut event = events.iter();
    let fold = timed(&mut |_| {
        tracker.apply(&event.next().ok_or("fewer events")?.0);
        Ok(())
    })?;
    println!(
        "\nEach step of reading those {n} events timed on its own, in one thread (µs per event).\n"
    );
    println!("| Step | µs per event |\n|---|---:|");
    for (step, us) in [
        ("open (by its path), read and close the file", read),
        ("open (by its name in its open bucket), read into a kept buffer, close", read_at),
        ("parse the envelope (payload left raw)", parse),
        ("map (only the members profiles name decoded)", map),
        ("echo digest, payload decoded whole (before)", decoded - copy),
        ("echo digest, computed while parsing (now)", streamed - copy),
        ("echo check (consumer)", mark),
        ("fold into session state (consumer)", fold),
    ] {
        println!("| {step} | {us:.2} |");
    }
    Ok(())
}

/// The load average over the last minute, 5 and 15 minutes (`/proc/loadavg`).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Reads everything in `dir` from a cold start, `read_ahead` files ahead on `threads` workers;
/// returns events/s and the CPU time (user and system, every thread of this process) per event
/// in µs.
fn drain(
    dir: &Path,
    profiles: &Profiles,
    fold: bool,
    read_ahead: usize,
    threads: usize,
) -> Result<(f64, f64)> {
    let cpu_before = cpu_seconds();
    let start = Instant::now();
    let mut reader = Reader::open(ReaderConfig {
        read_ahead,
        read_ahead_threads: threads,
        ..ReaderConfig::new(dir, Start::Beginning, profiles.clone())
    })?;
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
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    drop(black_box(tracker));
    Ok((count as f64 / elapsed, cpu * 1e6 / count.max(1) as f64))
}

/// The CPU time this process has used so far (user and system, all threads), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
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
        for file in source::list(dir)?.events {
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
