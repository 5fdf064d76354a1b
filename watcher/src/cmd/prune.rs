//! `hookline prune`: remove consumed events older than the retention age.

use std::process::ExitCode;
use std::time::SystemTime;

use hookline::retention::{self, RetentionPolicy};
use hookline::units::parse_duration;

use super::{Outcome, events_dir};
use crate::cli::PruneArgs;

pub fn run(args: PruneArgs) -> Outcome {
    let dir = events_dir(&args.dir)?;
    let policy = RetentionPolicy {
        max_age: parse_duration(&args.max_age).map_err(|e| format!("--max-age: {e}"))?,
        ..RetentionPolicy::default()
    };
    let report = retention::prune(&dir, &policy, SystemTime::now())?;
    println!(
        "{}: removed {} events, {} temp files, {} quarantined files; kept {} old events not yet consumed by every cursor",
        dir.display(),
        report.events,
        report.temps,
        report.quarantined,
        report.unconsumed
    );
    Ok(ExitCode::SUCCESS)
}
