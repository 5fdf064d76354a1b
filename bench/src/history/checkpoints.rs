//! The checkpoint tables of `history`: `status` and `decide` over the same directory without a
//! checkpoint (each run starts with none, as the first reader after an upgrade does) and with
//! one (written by the run before), the time until a starting `hookline daemon` answers on its
//! socket, both ways, and, in this process, the parts of a reader's start: listing the events
//! directory, loading the checkpoint, replaying what came after it, saving it.
//!
//! The baseline is measured once per command, without a checkpoint: one it left (a baseline
//! that has checkpoints) is removed before each run, as for this branch's "no checkpoint" row.

use std::path::Path;
use std::time::{Duration, Instant};

use hookline::checkpoint::{self, Folder};
use hookline::engine::checkpoint::{Resumed, resume_tracker, save_tracker};
use hookline::ingest::follow;
use hookline::ingest::reader::{ReaderConfig, Start};
use hookline::ingest::source;
use hookline::profile::Profiles;
use hookline::state::Tracker;

use super::{Args, command};
use crate::Result;
use crate::relay::wait4;
use crate::stats::{median, mib, ms};

/// Longest wait for a starting daemon to answer.
const DAEMON_BOUND: Duration = Duration::from_secs(300);

/// Prints every checkpoint table.
pub(super) fn tables(
    args: &Args,
    binaries: &[(&str, std::path::PathBuf)],
    dir: &Path,
    home: &Path,
) -> Result<()> {
    let decide = ["decide", "session-0001", "input", "--json"];
    for (command, folder) in
        [(&["status", "--json"][..], Folder::Tracker), (&decide, Folder::Decider)]
    {
        one_shot_table(args, binaries, dir, home, command, folder)?;
    }
    daemon_table(args, binaries, dir, home)?;
    parts_table(args, dir)?;
    // `decide` journals its withheld verdicts beside the events directory.
    let journal = hookline::decide::Journal::default_path(dir);
    match std::fs::remove_file(&journal) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// Removes a checkpoint, so that the next reader replays everything.
fn forget(dir: &Path, folder: Folder) -> Result<()> {
    match std::fs::remove_file(checkpoint::path(dir, folder)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// One run of a one-shot command, whatever its exit code (`decide` exits 1 on `withhold`):
/// its wall time and peak RSS in KiB.
fn run_once(binary: &Path, dir: &Path, home: &Path, args: &[&str]) -> Result<(Duration, i64)> {
    let start = Instant::now();
    let child =
        command(binary, dir, home).args(args).stderr(std::process::Stdio::null()).spawn()?;
    let (status, usage) = wait4(child.id())?;
    let time = start.elapsed();
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) > 3 {
        return Err(format!("{} {}: wait status {status}", binary.display(), args.join(" ")).into());
    }
    Ok((time, usage.ru_maxrss))
}

fn one_shot_table(
    args: &Args,
    binaries: &[(&str, std::path::PathBuf)],
    dir: &Path,
    home: &Path,
    command: &[&str],
    folder: Folder,
) -> Result<()> {
    // Rows: the baseline, this branch without a checkpoint, this branch with one.
    let rows: Vec<(String, &Path, bool)> = binaries
        .iter()
        .flat_map(|(label, binary)| {
            if *label == "baseline" {
                vec![(format!("{label}, no checkpoint"), binary.as_path(), false)]
            } else {
                vec![
                    (format!("{label}, no checkpoint"), binary.as_path(), false),
                    (format!("{label}, after a checkpoint"), binary.as_path(), true),
                ]
            }
        })
        .collect();
    let mut times = vec![Vec::new(); rows.len()];
    let mut peaks = vec![Vec::new(); rows.len()];
    for _ in 0..args.runs {
        for (i, (_, binary, with)) in rows.iter().enumerate() {
            if *with {
                // The run before leaves one; make sure for the first.
                if !checkpoint::path(dir, folder).is_file() {
                    run_once(binary, dir, home, command)?;
                }
            } else {
                forget(&super::events_dir_for(binary, dir), folder)?;
            }
            let (time, peak) = run_once(binary, dir, home, command)?;
            times[i].push(time);
            peaks[i].push(Duration::from_micros(peak as u64));
        }
    }
    println!(
        "### `hookline {}` over {} events of {} sessions, before and after a checkpoint\n\n\
         Median of {} runs each, interleaved, warm page cache. \"No checkpoint\": removed \
         before each run (the run writes one at exit, included).\n",
        command.join(" "),
        args.events,
        args.sessions,
        args.runs
    );
    println!("| Binary | Wall | Peak RSS |\n|---|---:|---:|");
    for (i, (label, _, _)) in rows.iter().enumerate() {
        let (time, peak) = (median(&times[i]), median(&peaks[i]).as_micros() as i64);
        println!("| {label} | {} | {} |", ms(time), mib(peak));
    }
    println!();
    Ok(())
}

/// Starts `hookline daemon` and times it until a client's handshake succeeds.
fn daemon_start(binary: &Path, dir: &Path, home: &Path) -> Result<Duration> {
    let start = Instant::now();
    let mut child =
        command(binary, dir, home).arg("daemon").stderr(std::process::Stdio::null()).spawn()?;
    let answered = loop {
        if hookline::daemon::Client::connect(&super::events_dir_for(binary, dir)).is_ok() {
            break Ok(start.elapsed());
        }
        if start.elapsed() > DAEMON_BOUND || child.try_wait()?.is_some() {
            break Err(format!("{} daemon did not answer", binary.display()));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    child.wait()?;
    Ok(answered?)
}

fn daemon_table(
    args: &Args,
    binaries: &[(&str, std::path::PathBuf)],
    dir: &Path,
    home: &Path,
) -> Result<()> {
    println!(
        "### `hookline daemon` start over {} events: until its socket answers\n\n\
         Median of {} starts each. \"No checkpoint\": removed before each start.\n",
        args.events, args.runs
    );
    println!("| Binary | No checkpoint | After a checkpoint |\n|---|---:|---:|");
    for (label, binary) in binaries {
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        for _ in 0..args.runs {
            forget(&super::events_dir_for(binary, dir), Folder::Decider)?;
            cold.push(daemon_start(binary, dir, home)?);
            if *label != "baseline" {
                warm.push(daemon_start(binary, dir, home)?);
            }
        }
        let warm = if warm.is_empty() { "–".to_owned() } else { ms(median(&warm)) };
        println!("| {label} | {} | {warm} |", ms(median(&cold)));
    }
    println!();
    Ok(())
}

/// A tracker folded in this process, from the checkpoint when `resume`: the parts timed.
struct Parts {
    listing: Duration,
    load: Duration,
    replay: Duration,
    save: Duration,
    replayed: u64,
}

fn fold(dir: &Path, resume: bool) -> Result<Parts> {
    let profiles = Profiles::shipped()?;
    let listed = Instant::now();
    source::list(dir)?;
    let listing = listed.elapsed();
    let mut config = ReaderConfig::new(dir, Start::Beginning, profiles.clone());
    let mut tracker = Tracker::new(profiles, hookline::format::clock::now_ns());
    let loaded = Instant::now();
    if resume {
        match resume_tracker(&mut config, &mut tracker) {
            Resumed::Checkpoint { .. } => {}
            other => return Err(format!("no checkpoint to resume from: {other:?}").into()),
        }
    }
    let load = loaded.elapsed();
    let replayed_at = Instant::now();
    let mut replayed = 0;
    let (reader, _) = follow::replay(config, |event| {
        tracker.apply(&event);
        replayed += 1;
    })?;
    let replay = replayed_at.elapsed();
    let saved = Instant::now();
    save_tracker(&reader, &tracker)?;
    Ok(Parts { listing, load, replay, save: saved.elapsed(), replayed })
}

fn parts_table(args: &Args, dir: &Path) -> Result<()> {
    println!(
        "### The parts of a tracker's start over {} events, in this process\n\n\
         Median of {} runs. The replay lists the directory itself (the reader does not yet \
         skip what a checkpoint covers): *replay* includes a listing like the one in the \
         first column. The checkpoint file: {}.\n",
        args.events,
        args.runs,
        checkpoint_size(dir)
    );
    println!(
        "| Start | Listing alone | Load checkpoint | Replay (events) | Save checkpoint |\n\
         |---|---:|---:|---:|---:|"
    );
    for (label, resume) in [("no checkpoint", false), ("after a checkpoint", true)] {
        let mut runs = Vec::new();
        for _ in 0..args.runs {
            if !resume {
                forget(dir, Folder::Tracker)?;
            } else if !checkpoint::path(dir, Folder::Tracker).is_file() {
                fold(dir, false)?;
            }
            runs.push(fold(dir, resume)?);
        }
        let part = |f: fn(&Parts) -> Duration| ms(median(&runs.iter().map(f).collect::<Vec<_>>()));
        println!(
            "| {label} | {} | {} | {} ({}) | {} |",
            part(|p| p.listing),
            part(|p| p.load),
            part(|p| p.replay),
            runs[0].replayed,
            part(|p| p.save)
        );
    }
    println!();
    Ok(())
}

fn checkpoint_size(dir: &Path) -> String {
    match std::fs::metadata(checkpoint::path(dir, Folder::Tracker)) {
        Ok(m) => format!("{:.1} MiB", m.len() as f64 / (1024.0 * 1024.0)),
        Err(_) => "none yet".into(),
    }
}
