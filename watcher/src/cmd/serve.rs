//! `hookline serve`: the decision layer for any language. One tracker generation, started with
//! the process and fed by a watcher on a background thread; JSON-line requests on stdin, one
//! JSON-line reply each on stdout (see `hookline::serve`). A `next_event` that may
//! wait is answered from its own thread, so that it delays no other request. EOF on stdin ends
//! it, once the waits still running are answered.

use std::io;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use hookline::decide::Decider;
use hookline::format::relay::now_ns;
use hookline::ingest::reader::{Reader, ReaderConfig, Start};
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::serve::hub::{Hub, ServeInfo, Shared};
use hookline::serve::server;
use hookline::state::Tracker;

use super::watch::report;
use super::{Outcome, events_dir, journal, policy, profiles};
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
    let result = server::run(&shared, io::stdin().lock(), io::stdout(), now_ns, |error| {
        eprintln!("hookline: warning: journal: {error}");
    });
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
    result?;
    Ok(ExitCode::SUCCESS)
}
