//! `hookline prune`: remove consumed events older than the retention age.

use std::process::ExitCode;
use std::time::SystemTime;

use hookline::ingest::cursor;
use hookline::ingest::retention::{self, RetentionPolicy};
use hookline::units::parse_duration;

use super::{Outcome, Reading, events_dir};
use crate::cli::PruneArgs;

pub fn run(args: PruneArgs) -> Outcome {
    let dir = events_dir(&args.dir, Reading::Once)?;
    let mut policy = RetentionPolicy::default();
    if let Some(age) = &args.max_age {
        policy.max_age = parse_duration(age).map_err(|e| format!("--max-age: {e}"))?;
        policy.without_cursors = true;
    }
    let report = retention::prune(&dir, &policy, SystemTime::now())?;
    println!(
        "{}: removed {} events, {} temp files, {} quarantined files; kept {} old events not yet consumed by every cursor",
        dir.display(),
        report.events,
        report.temps,
        report.quarantined,
        report.unconsumed
    );
    // Who holds the directory back, the slowest first: a cursor no consumer uses any more
    // would do so forever.
    let mut held: Vec<(&String, &usize)> = report.held_back_by.iter().collect();
    held.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    if !held.is_empty() {
        let saved = cursor::saved(&dir)?;
        for (name, count) in held {
            let about = saved.iter().find(|s| &s.name == name).map(|s| {
                let age = s
                    .saved
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .map(|d| format!(", saved {} ago", hookline::units::format_age(d)))
                    .unwrap_or_default();
                let using = if s.in_use { ", open now" } else { "" };
                format!("at seq {}{age}{using}", s.position.seq)
            });
            eprintln!(
                "hookline: cursor {name} ({}) has not read {count} of them; if nothing reads it \
                 any more: hookline cursors remove {name}",
                about.unwrap_or_default()
            );
        }
    }
    if report.quarantine_refused {
        eprintln!(
            "hookline: warning: {} is not a directory of the events directory's own (a \
             symlink?): left alone, and whatever it points to",
            dir.join(hookline::ingest::source::QUARANTINE_DIR).display()
        );
    }
    if report.unconsumed > 0 && !policy.without_cursors && cursor::all(&dir)?.is_empty() {
        eprintln!(
            "hookline: no cursor is registered, so nothing counts as consumed; \
             pass --max-age AGE to remove events older than AGE anyway"
        );
    }
    Ok(ExitCode::SUCCESS)
}
