//! `hookline serve`: the decision layer for any language. One tracker generation, started with
//! the process and fed by a watcher on a background thread; JSON-line requests on stdin, one
//! JSON-line reply each on stdout (see `hookline::serve::protocol`). A `next_event` that may
//! wait is answered from its own thread, so that it delays no other request. EOF on stdin ends
//! it, once the waits still running are answered.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use hookline::decide::Decider;
use hookline::format::relay::now_ns;
use hookline::ingest::reader::{Reader, ReaderConfig, Start};
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::serve::hub::{Hub, ServeInfo, Shared};
use hookline::serve::protocol::{self, MAX_LINE};
use hookline::state::Tracker;

use super::watch::report;
use super::{Outcome, events_dir, is_broken_pipe, journal, policy, profiles};
use crate::cli::ServeArgs;

pub fn run(args: ServeArgs) -> Outcome {
    let profiles = profiles()?;
    let policy = policy(&args.policy, &profiles)?;
    let dir = events_dir(&args.source.dir)?;
    let now = now_ns;
    // The generation starts now: events older than this are history, shown but never
    // authorizing; only events that arrive while serving can authorize input.
    let tracker = Tracker::new(profiles.clone(), now());
    let journal = journal(&policy, &dir);
    let journal_path = journal.as_ref().map(|j| j.path().to_owned());
    let mut decider = Decider::new(tracker, policy);
    if let Some(journal) = journal {
        decider = decider.with_journal(journal);
    }
    let mut config = ReaderConfig::new(&dir, Start::Beginning, profiles);
    config.legacy_dirs = args.source.legacy_dirs.clone();
    let mut reader = Reader::open(config)?;
    loop {
        let queued = reader.poll()?;
        report(reader.take_notices());
        while let Some(event) = reader.next_event() {
            decider.apply(&event);
        }
        if queued == 0 && !reader.has_pending() {
            break;
        }
    }
    let options = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        ..WatchOptions::default()
    };
    let mut watcher = Watcher::new(reader, options)?;
    let info = ServeInfo { events_dir: dir, journal: journal_path };
    let shared = Arc::new(Shared::new(Hub::new(decider, info)));
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = {
        let shared = Arc::clone(&shared);
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match watcher.next_timeout(Duration::from_millis(200)) {
                    Ok(Some(event)) => shared.apply(&event),
                    Ok(None) => {}
                    Err(e) => {
                        eprintln!("hookline: error: the watcher stopped: {e}");
                        shared.fail(e.to_string());
                        return;
                    }
                }
                report(watcher.take_notices());
            }
        })
    };
    let result = answer(Arc::clone(&shared));
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
    result?;
    Ok(ExitCode::SUCCESS)
}

/// The most `next_event` requests waiting at once (each holds a thread while it waits).
const MAX_WAITING: usize = 64;

/// Reads requests until EOF, answering each: at once, or, for a `next_event` that may wait,
/// from a thread of its own. At EOF the waits still running are answered before it returns.
fn answer(shared: Arc<Shared>) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let out = Arc::new(Mutex::new(io::stdout()));
    let mut waiting: Vec<JoinHandle<()>> = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            for wait in waiting {
                let _ = wait.join();
            }
            return Ok(());
        }
        waiting.retain(|wait| !wait.is_finished());
        let reply = if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            input.read_until(b'\n', &mut rest)?;
            format!(
                r#"{{"id":null,"ok":false,"error":"request line longer than {MAX_LINE} bytes"}}"#
            )
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => match protocol::parse(text.trim()) {
                    Ok((id, request)) if request.may_wait() => {
                        if waiting.len() >= MAX_WAITING {
                            serde_json::json!({
                                "id": id, "op": "next_event", "ok": false,
                                "error": format!(
                                    "{MAX_WAITING} next_event requests are already waiting; \
                                     wait for one of their replies"
                                ),
                            })
                            .to_string()
                        } else {
                            let (shared, out) = (Arc::clone(&shared), Arc::clone(&out));
                            waiting.push(thread::spawn(move || {
                                let reply = shared.reply(Ok((id, request)), &now_ns);
                                // A client gone away is the main loop's business.
                                let _ = send(&out, &reply);
                            }));
                            continue;
                        }
                    }
                    parsed => shared.reply(parsed, &now_ns),
                },
                Err(_) => r#"{"id":null,"ok":false,"error":"request line is not UTF-8"}"#.into(),
            }
        };
        for error in shared.take_journal_errors() {
            eprintln!("hookline: warning: journal: {error}");
        }
        match send(&out, &reply) {
            Ok(()) => {}
            // Nobody reads the replies any more: the waits are not joined.
            Err(e) if is_broken_pipe(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Writes one reply line, whole, and flushes it.
fn send(out: &Mutex<io::Stdout>, reply: &str) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    writeln!(out, "{reply}").and_then(|()| out.flush())
}
