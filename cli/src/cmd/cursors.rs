//! `hookline cursors [remove NAME]`: the durable cursors of an events directory, and removing
//! one that no consumer uses any more (it would hold back `prune` forever).

use std::process::ExitCode;
use std::time::SystemTime;

use hookline::ingest::{cursor, source};
use hookline::units::{format_age, rfc3339};

use super::{Outcome, Reading, events_dir};
use crate::cli::{CursorsAction, CursorsArgs};

pub fn run(args: &CursorsArgs) -> Outcome {
    if let Some(CursorsAction::Remove { name }) = &args.action {
        let dir = events_dir(&args.dir, Reading::Once)?;
        cursor::remove(&dir, name).map_err(|e| match e {
            hookline::CursorError::InUse { name, lock } => format!(
                "cursor {name:?} is open in another process (lock {}): stop that consumer first",
                lock.display()
            )
            .into(),
            e => Box::<dyn std::error::Error>::from(hookline::Error::from(e)),
        })?;
        println!("removed cursor {name} of {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let dir = events_dir(&args.dir, Reading::Once)?;
    let saved = cursor::saved(&dir)?;
    let listing = source::list(&dir)?;
    let now = SystemTime::now();
    let rows: Vec<Row> = saved
        .into_iter()
        .map(|s| Row {
            unread: listing.events.iter().filter(|e| !s.position.covers_name(&e.name)).count(),
            saved_ns: s
                .saved
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            age: s.saved.and_then(|t| now.duration_since(t).ok()).map(format_age),
            seq: s.position.seq,
            in_use: s.in_use,
            name: s.name,
        })
        .collect();
    if args.json {
        let json: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name, "seq": r.seq, "saved_ns": r.saved_ns,
                    "unread": r.unread, "in_use": r.in_use,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no cursors in {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(6);
    println!(
        "{:<width$}  {:>10}  {:<34}  {:>8}  in use",
        "cursor", "at seq", "last saved", "unread"
    );
    for r in &rows {
        let saved = match (r.saved_ns, &r.age) {
            (Some(ns), Some(age)) => format!("{} ({age} ago)", rfc3339(ns)),
            (Some(ns), None) => rfc3339(ns),
            _ => "-".to_owned(),
        };
        let in_use = if r.in_use { "yes" } else { "no" };
        println!("{:<width$}  {:>10}  {saved:<34}  {:>8}  {in_use}", r.name, r.seq, r.unread);
    }
    Ok(ExitCode::SUCCESS)
}

/// One cursor, as listed.
struct Row {
    name: String,
    seq: u64,
    saved_ns: Option<u64>,
    age: Option<String>,
    /// Events present it has not read (what retention keeps for it).
    unread: usize,
    in_use: bool,
}
