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

use super::{Outcome, Reading, journal, policy, profiles, reader_config, report};
use crate::cli::{PolicyArgs, ServeArgs, SourceArgs};

pub fn run(args: ServeArgs) -> Outcome {
    if let Some(url) = &args.nats.nats {
        return from_nats(url, &args);
    }
    let mode = if args.poll { Mode::Poll } else { Mode::Notify };
    let (shared, watcher) = hub(&args.source, &args.policy, mode)?;
    if let Some(producer) = super::unhooked(&profiles()?, &args.transcripts)? {
        shared.follow_unhooked(producer, now_ns());
    }
    server::run(&shared, watcher, io::stdin().lock(), io::stdout(), now_ns, tell)?;
    Ok(ExitCode::SUCCESS)
}

/// A hub caught up with history, and the watcher that keeps it live: `serve`'s and `daemon`'s.
pub(super) fn hub(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    mode: Mode,
) -> Result<(Arc<Shared>, Watcher), Box<dyn std::error::Error>> {
    let profiles = profiles()?;
    let policy = policy(policy_args, &profiles)?;
    let config = reader_config(source, Reading::Following, Start::Beginning, profiles.clone())?;
    let dir = config.events_dir.clone();
    // The generation starts now: the events present are history, shown but never
    // authorizing; only events that arrive while serving can authorize input. Arrival, not
    // the clock, tells them apart, so a clock stepped back or forward changes nothing.
    let tracker = Tracker::new(profiles, now_ns()).live_by_arrival();
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
    decider.caught_up();
    let watcher = Watcher::new(reader, WatchOptions { mode, ..WatchOptions::default() })?;
    let info = ServeInfo { events_dir: dir, journal: journal_path };
    Ok((Arc::new(Shared::new(Hub::new(decider, info))), watcher))
}

/// Prints what the server tells its operator on stderr.
pub(super) fn tell(note: Note) {
    match note {
        Note::Follow(notice) => report([notice]),
        Note::Journal(_) | Note::Connection(_) => eprintln!("hookline: warning: {note}"),
        Note::WatcherStopped(_) => eprintln!("hookline: error: {note}"),
    }
}

/// `serve --nats`: the same hub, fed by a durable consumer instead of the directory. The
/// messages already in the stream when it starts are history; only those that arrive while
/// serving can authorize input.
#[cfg(feature = "nats")]
fn from_nats(url: &str, args: &ServeArgs) -> Outcome {
    let (shared, feed) = nats_hub(url, &args.nats, &args.source, &args.policy)?;
    server::run_fed(&shared, feed, io::stdin().lock(), io::stdout(), now_ns, tell)?;
    Ok(ExitCode::SUCCESS)
}

/// A hub with no history yet, and the feed that reads a durable consumer into it (history
/// first, then live): `serve --nats`'s and `daemon --nats`'s.
#[cfg(feature = "nats")]
#[allow(clippy::type_complexity)]
pub(super) fn nats_hub(
    url: &str,
    central: &crate::cli::CentralArgs,
    source: &SourceArgs,
    policy_args: &PolicyArgs,
) -> Result<
    (
        Arc<Shared>,
        impl FnOnce(&mut server::Feed, &dyn Fn() -> bool) -> Result<(), hookline::Error>
        + Send
        + 'static,
    ),
    Box<dyn std::error::Error>,
> {
    let profiles = profiles()?;
    let policy = policy(policy_args, &profiles)?;
    let dir = super::events_dir(&source.dir, Reading::Following)?;
    let tracker = Tracker::new(profiles, now_ns()).live_by_arrival();
    let started_ns = tracker.generation().started_ns;
    let journal = journal(&policy, &dir);
    let journal_path = journal.as_ref().map(|j| j.path().to_owned());
    let mut decider = Decider::new(tracker, policy);
    if let Some(journal) = journal {
        decider = decider.with_journal(journal);
    }
    let info = ServeInfo { events_dir: dir, journal: journal_path };
    let shared = Arc::new(Shared::new(Hub::new(decider, info)));
    let (url, central, hub) = (url.to_owned(), central.clone(), Arc::clone(&shared));
    let feed = move |sink: &mut server::Feed, stop: &dyn Fn() -> bool| {
        // The history read, what arrives next is live.
        let on_caught_up = move || hub.caught_up();
        super::forward::central(&url, &central, Some(started_ns), true, stop, sink, on_caught_up)
    };
    Ok((shared, feed))
}

#[cfg(not(feature = "nats"))]
fn from_nats(_: &str, _: &ServeArgs) -> Outcome {
    Err(super::forward::without_nats().into())
}
