//! `hookline watch`: canonical events as NDJSON on stdout, one object per line, flushed per
//! event; the cursor (if any) saved once the lines are flushed.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use hookline::canonical::Event;
use hookline::ingest::reader::{Notice, Reader, ReaderConfig, Start};
use hookline::ingest::retention::{self, RetentionPolicy};
use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
use hookline::units::parse_duration;

use super::{Outcome, catch_signals, events_dir, is_broken_pipe, profiles, stopping};
use crate::cli::WatchArgs;

const PRUNE_EVERY: Duration = Duration::from_secs(600);

pub fn run(args: WatchArgs) -> Outcome {
    let dir = events_dir(&args.source.dir)?;
    let start = match (&args.cursor, args.from_start) {
        (Some(name), _) => Start::Cursor(name.clone()),
        (None, true) => Start::Beginning,
        (None, false) => Start::Now,
    };
    let retention = RetentionPolicy {
        max_age: parse_duration(&args.retention).map_err(|e| format!("--retention: {e}"))?,
        ..RetentionPolicy::default()
    };
    let mut config = ReaderConfig::new(&dir, start, profiles()?);
    config.legacy_dirs = args.source.legacy_dirs.clone();
    let reader = Reader::open(config)?;
    catch_signals();
    let mut out = BufWriter::new(io::stdout().lock());
    if args.no_follow {
        return drain(reader, &mut out);
    }
    let options = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        poll_interval: Duration::from_millis(args.poll_interval.max(1)),
        ..WatchOptions::default()
    };
    let mut watcher = Watcher::new(reader, options)?;
    let mut last_prune = None::<Instant>;
    while !stopping() {
        if args.cursor.is_some() && last_prune.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
            last_prune = Some(Instant::now());
            let report = retention::prune(&dir, &retention, SystemTime::now())?;
            if report.unconsumed > 0 {
                eprintln!(
                    "hookline: {} old events are kept because a cursor has not consumed them",
                    report.unconsumed
                );
            }
        }
        let event = watcher.next_timeout(Duration::from_millis(200))?;
        report(watcher.take_notices());
        let Some(event) = event else { continue };
        if !emit(&mut out, &event)? {
            return Ok(ExitCode::SUCCESS);
        }
        // Saved after every line: only a crash in the microseconds between the flush and the
        // rename of the cursor file can hand a line out twice.
        watcher.commit()?;
    }
    watcher.commit()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes what is there, then returns.
fn drain(mut reader: Reader, out: &mut impl Write) -> Outcome {
    loop {
        let queued = reader.poll()?;
        report(reader.take_notices());
        while let Some(event) = reader.next_event() {
            if !emit(out, &event)? {
                return Ok(ExitCode::SUCCESS);
            }
            reader.commit()?;
        }
        if (queued == 0 && !reader.has_pending()) || stopping() {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// Writes one NDJSON line and flushes it; `false` when the reader of stdout has gone.
fn emit(out: &mut impl Write, event: &Event) -> io::Result<bool> {
    let mut line = serde_json::to_vec(event)?;
    line.push(b'\n');
    match out.write_all(&line).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if is_broken_pipe(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Prints the reader's notices to stderr.
pub(super) fn report(notices: Vec<Notice>) {
    for notice in notices {
        match notice {
            Notice::DirRecreated(dir) => {
                eprintln!("hookline: {} was recreated; reading it from its start", dir.display());
            }
            Notice::DirGone(dir) => {
                eprintln!("hookline: {} disappeared; waiting for it", dir.display())
            }
            Notice::CounterBusy(dir) => eprintln!(
                "hookline: warning: the counter of {} is locked by a stuck writer; ordered events wait",
                dir.display()
            ),
            Notice::Degraded(why) => eprintln!("hookline: warning: {why}"),
            Notice::Quarantined { file, reason } => {
                eprintln!("hookline: warning: quarantined {}: {reason}", file.display());
            }
        }
    }
}
