//! `cursor [--saves N] [--dir DIR]`: what saving a consumer's cursor costs.
//!
//! `hookline watch --cursor` saves its cursor after every line it writes, so one save per
//! event bounds a cursor consumer's rate. A save is durable: the cursor file is written to a
//! temp file, synced, renamed over the old one, and the directory synced. The baseline is the
//! same write without either sync (what a save cost before it was made durable): atomic, but
//! after a crash of the machine the cursor may go back, and events be handed out again.
//!
//! The directory must be on the disk the events directory lives on (the default is one under
//! `$HOME/.cache`, not the temp directory, which may be in memory, where a sync is free).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hookline::ingest::cursor::{Cursor, Position};

use crate::Result;
use crate::stats::{ms, percentile};

const USAGE: &str =
    "usage: cargo run --release -p hookline-bench -- cursor [--saves N] [--dir DIR]";

/// `cursor [--saves N] [--dir DIR]`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let mut args = args;
    let mut saves = 1000;
    let mut parent = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"));
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--saves", Some(n)) => saves = n.parse().ok().filter(|n| *n > 0).ok_or(USAGE)?,
            ("--dir", Some(dir)) => parent = Some(PathBuf::from(dir)),
            _ => return Err(USAGE.into()),
        }
    }
    let parent = parent.ok_or("HOME is unset: pass --dir DIR")?;
    let dir = parent.join(format!("hookline-bench-cursor-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = measure(&dir, saves);
    std::fs::remove_dir_all(&dir)?;
    let (durable, baseline) = result?;

    println!("### Cursor: one save\n");
    println!(
        "{saves} saves of one cursor in {}, each after one more event, as `hookline watch \
         --cursor` saves it after every line; the rate is the most events a second one cursor \
         consumer can take.\n",
        parent.display()
    );
    println!("| Save | p50 | p90 | p99 | events/s at p50 |\n|---|---:|---:|---:|---:|");
    for (label, mut times) in [
        ("durable: sync the file, rename, sync the directory", durable),
        ("atomic only: rename, no sync (baseline)", baseline),
    ] {
        times.sort_unstable();
        let p = |q| percentile(&times, q);
        let rate = 1.0 / p(50.0).as_secs_f64();
        println!("| {label} | {} | {} | {} | {rate:.0} |", ms(p(50.0)), ms(p(90.0)), ms(p(99.0)));
    }
    Ok(())
}

/// The times of `saves` durable saves, then of as many baseline writes of the same bytes.
fn measure(dir: &Path, saves: usize) -> Result<(Vec<Duration>, Vec<Duration>)> {
    let events_dir = dir.join("events");
    let cursor = Cursor::open(&events_dir, "bench")?;
    let mut position = Position::default();
    let mut durable = Vec::with_capacity(saves);
    for seq in 1..=saves as u64 {
        position.seq = seq;
        let start = Instant::now();
        cursor.save(&position)?;
        durable.push(start.elapsed());
    }
    let saved = events_dir.join(".cursors").join("bench.json");
    let bytes = std::fs::read(&saved)?;
    let target = dir.join("baseline.json");
    let mut baseline = Vec::with_capacity(saves);
    for _ in 0..saves {
        let start = Instant::now();
        let temp = dir.join(".tmp-baseline");
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(&bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        drop(file);
        std::fs::rename(&temp, &target)?;
        baseline.push(start.elapsed());
    }
    Ok((durable, baseline))
}
