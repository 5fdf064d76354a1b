//! `hookline watch`: canonical events as NDJSON on stdout, one object per line, flushed per
//! event; the cursor (if any) saved once the lines are flushed.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use hookline::canonical::Event;
use hookline::ingest::follow::{self, Delivery, FollowNotice, Prune, Sink, SinkError};
use hookline::ingest::reader::{Reader, Start};
use hookline::ingest::retention::RetentionPolicy;
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::units::parse_duration;

use super::{
    Outcome, Reading, catch_signals, is_broken_pipe, profiles, reader_config, report, stopping,
};
use crate::cli::WatchArgs;

const PRUNE_EVERY: Duration = Duration::from_secs(600);

pub fn run(args: WatchArgs) -> Outcome {
    if let Some(url) = &args.nats.nats {
        return from_nats(url, &args);
    }
    let start = match (&args.cursor, args.from_start) {
        (Some(name), true) => Start::Cursor(name.clone()),
        (Some(name), false) => Start::CursorFromNow(name.clone()),
        (None, true) => Start::Beginning,
        (None, false) => Start::Now,
    };
    let retention = RetentionPolicy {
        max_age: parse_duration(&args.retention).map_err(|e| format!("--retention: {e}"))?,
        ..RetentionPolicy::default()
    };
    let reading = if args.no_follow { Reading::Once } else { Reading::Following };
    let mut config = reader_config(&args.source, reading, start, profiles()?)?;
    // A directory that is not there yet holds nothing from before this command: whatever
    // appears in it is new, even to a new cursor.
    if let Start::CursorFromNow(name) = &config.start
        && !config.events_dir.is_dir()
    {
        config.start = Start::Cursor(name.clone());
    }
    // Only a consumer with a cursor is registered for retention, so only it prunes.
    let prune = args.cursor.is_some().then(|| Prune {
        events_dir: config.events_dir.clone(),
        policy: retention,
        every: PRUNE_EVERY,
    });
    catch_signals();
    if args.cursor.is_some() {
        // A cursor lives in the events directory: opening one would create it, and a
        // mistyped path would then be followed forever. Wait for the relay to create it.
        while !config.events_dir.is_dir() {
            if stopping() {
                return Ok(ExitCode::SUCCESS);
            }
            std::thread::sleep(follow::TICK);
        }
    }
    let mut reader = Reader::open(config)?;
    let mut sink = Ndjson(BufWriter::new(io::stdout().lock()));
    if args.no_follow {
        follow::drain(&mut reader, &mut sink, &stopping)?;
        return Ok(ExitCode::SUCCESS);
    }
    let options = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        poll_interval: Duration::from_millis(args.poll_interval.max(1)),
        ..WatchOptions::default()
    };
    let mut watcher = Watcher::new(reader, options)?;
    follow::follow(&mut watcher, &mut sink, prune.as_ref(), &stopping)?;
    Ok(ExitCode::SUCCESS)
}

/// `watch --nats`: the consumer's events, as the directory's would be.
#[cfg(feature = "nats")]
fn from_nats(url: &str, args: &WatchArgs) -> Outcome {
    catch_signals();
    let mut sink = Ndjson(BufWriter::new(io::stdout().lock()));
    super::forward::central(url, &args.nats, !args.no_follow, &stopping, &mut sink)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "nats"))]
fn from_nats(_: &str, _: &WatchArgs) -> Outcome {
    Err(super::forward::without_nats().into())
}

/// One NDJSON line per event, flushed before the cursor is saved: only a crash in the
/// microseconds between the flush and the rename of the cursor file can hand a line out twice.
/// Notices go to stderr.
struct Ndjson<W>(W);

impl<W: Write> Sink for Ndjson<W> {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        let mut line = serde_json::to_vec(&event)?;
        line.push(b'\n');
        match self.0.write_all(&line).and_then(|()| self.0.flush()) {
            Ok(()) => Ok(Delivery::Delivered),
            Err(e) if is_broken_pipe(&e) => Ok(Delivery::Closed),
            Err(e) => Err(e.into()),
        }
    }

    fn notice(&mut self, notice: FollowNotice) {
        report([notice]);
    }
}
