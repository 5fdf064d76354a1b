//! `hookline serve`: the decision layer for any language. One tracker generation, started with
//! the process and fed by a watcher on a background thread; JSON-line requests on stdin, one
//! JSON-line reply each on stdout (see `hookline::serve`). EOF on stdin ends it, once the waits
//! still running are answered.

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use hookline::decide::Decider;
use hookline::format::clock::now_ns;
use hookline::ingest::follow;
use hookline::ingest::reader::Start;
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::serve::hub::{Hub, ServeInfo, Shared};
use hookline::serve::server::{self, Note};
use hookline::state::Tracker;

use super::{Outcome, journal, policy, profiles, reader_config, report};
use crate::cli::ServeArgs;

pub fn run(args: ServeArgs) -> Outcome {
    let profiles = profiles()?;
    let policy = policy(&args.policy, &profiles)?;
    let config = reader_config(&args.source, Start::Beginning, profiles.clone())?;
    let dir = config.events_dir.clone();
    // The generation starts now: events older than this are history, shown but never
    // authorizing; only events that arrive while serving can authorize input.
    let tracker = Tracker::new(profiles, now_ns());
    if let Some(url) = args.nats.nats.clone() {
        return from_nats(url, args, tracker, policy, dir);
    }
    let journal = journal(&policy, &dir);
    let journal_path = journal.as_ref().map(|j| j.path().to_owned());
    let mut decider = Decider::new(tracker, policy);
    if let Some(journal) = journal {
        decider = decider.with_journal(journal);
    }
    let (reader, notices) = follow::replay(config, |event| {
        decider.apply(&event);
    })?;
    report(notices);
    let options = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        ..WatchOptions::default()
    };
    let watcher = Watcher::new(reader, options)?;
    let info = ServeInfo { events_dir: dir, journal: journal_path };
    let shared = Arc::new(Shared::new(Hub::new(decider, info)));
    server::run(&shared, watcher, io::stdin().lock(), io::stdout(), now_ns, print_note)?;
    Ok(ExitCode::SUCCESS)
}

fn print_note(note: Note) {
    match note {
        Note::Follow(notice) => report([notice]),
        Note::Journal(_) => eprintln!("hookline: warning: {note}"),
        Note::WatcherStopped(_) => eprintln!("hookline: error: {note}"),
    }
}

/// `serve --nats`: the same hub, fed by a durable consumer. The messages already in the
/// stream are history (their time clamped below the generation's start); only those that
/// arrive while serving can authorize input.
#[cfg(feature = "nats")]
fn from_nats(
    url: String,
    args: ServeArgs,
    tracker: Tracker,
    policy: hookline::decide::Policy,
    dir: std::path::PathBuf,
) -> Outcome {
    let started_ns = tracker.generation().started_ns;
    let journal = journal(&policy, &dir);
    let journal_path = journal.as_ref().map(|j| j.path().to_owned());
    let mut decider = Decider::new(tracker, policy);
    if let Some(journal) = journal {
        decider = decider.with_journal(journal);
    }
    let info = ServeInfo { events_dir: dir, journal: journal_path };
    let shared = Arc::new(Shared::new(Hub::new(decider, info)));
    let central = args.nats;
    let feed = move |sink: &mut server::Feed, stop: &dyn Fn() -> bool| {
        super::forward::central(&url, &central, Some(started_ns), true, stop, sink)
    };
    server::run_fed(&shared, feed, io::stdin().lock(), io::stdout(), now_ns, print_note)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "nats"))]
fn from_nats(
    _: String,
    _: ServeArgs,
    _: Tracker,
    _: hookline::decide::Policy,
    _: std::path::PathBuf,
) -> Outcome {
    Err(super::forward::without_nats().into())
}
