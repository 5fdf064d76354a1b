//! `hookline serve`: the decision layer for any language. One tracker generation, started with
//! the process and fed by a watcher on a background thread; JSON-line requests on stdin, one
//! JSON-line reply each on stdout (see `hookline::decide::protocol`). EOF on stdin ends it.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use hookline::decide::Decider;
use hookline::decide::protocol::{Hub, MAX_LINE, ServeInfo, Shared};
use hookline::reader::{Reader, ReaderConfig, Start};
use hookline::state::Tracker;
use hookline::watch::{Mode, WatchOptions, Watcher};

use super::watch::report;
use super::{Outcome, events_dir, is_broken_pipe, journal, policy, profiles};
use crate::cli::ServeArgs;

pub fn run(args: ServeArgs) -> Outcome {
    let profiles = profiles()?;
    let policy = policy(&args.policy, &profiles)?;
    let dir = events_dir(&args.source.dir)?;
    let now = hookline::format::relay::now_ns;
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
    let result = answer(&shared);
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Reads requests until EOF, answering each.
fn answer(shared: &Shared) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(());
        }
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
                Ok(text) => shared.handle(text.trim(), &hookline::format::relay::now_ns),
                Err(_) => r#"{"id":null,"ok":false,"error":"request line is not UTF-8"}"#.into(),
            }
        };
        for error in shared.take_journal_errors() {
            eprintln!("hookline: warning: journal: {error}");
        }
        match writeln!(out, "{reply}").and_then(|()| out.flush()) {
            Ok(()) => {}
            Err(e) if is_broken_pipe(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}
