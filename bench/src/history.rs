//! `history [--events N] [--sessions M] [--runs R] [--baseline PATH] [--baseline-layout
//! flat|buckets] [--dir DIR]`: what a long history costs the readers, against a baseline
//! `hookline` binary, in one run.
//!
//! * **One-shot replay**: `hookline status --json` and `hookline explain session-0001
//!   --json` over a directory of N events from M
//!   sessions (written with the relay's own library, as the watcher benchmark does), run R
//!   times for each binary, interleaved; wall time and peak resident memory (`ru_maxrss` from
//!   `wait4`, the child reaped by this process).
//! * **Idle follower**: `hookline watch` following the same directory with nothing arriving:
//!   CPU time (utime + stime of `/proc/PID/stat`) over 10 s, after it settled.
//! * **Listing from a seq**: what listing costs a reader that starts at the last 10 events
//!   (a resumed cursor, a checkpoint, a follower's rescan), through the library's listing
//!   (`ingest::source::list_after`), in the directory as the relay writes it (buckets) and in a
//!   flat copy of it (hard links at the top, as relays before buckets left it).
//!
//! * **Checkpoints** (`history/checkpoints.rs`): `status` and `decide` before and after a
//!   checkpoint, the time until a starting daemon answers, and the parts of a start (listing,
//!   loading the checkpoint, replaying, saving).
//!
//! The baseline is another build of `hookline`, typically main's, built in a temporary
//! worktree: `git worktree add /tmp/base main && cargo build --release -p hookline-cli
//! --manifest-path /tmp/base/Cargo.toml`. It reads a flat copy of the directory (a baseline
//! from before buckets), or with `--baseline-layout buckets` the directory itself. The
//! directory is written to `/dev/shm` by default (tmpfs: the page cache, not the disk, is
//! measured) and removed afterwards; a `--dir` is written when missing or empty, kept, and
//! reused as it is when it holds events.

mod checkpoints;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;
use crate::relay::wait4;
use crate::stats::{median, mib, ms};
use crate::watcher::write_events_of;

const USAGE: &str = "usage: cargo run --release -p hookline-bench -- history [--events N] \
                     [--sessions M] [--runs R] [--baseline PATH] [--baseline-layout flat|buckets] \
                     [--dir DIR]";
const IDLE: Duration = Duration::from_secs(10);
const SETTLE: Duration = Duration::from_secs(3);

struct Args {
    events: usize,
    sessions: usize,
    runs: usize,
    baseline: Option<PathBuf>,
    /// The baseline reads a flat copy of the directory (it predates buckets).
    baseline_flat: bool,
    dir: Option<PathBuf>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args> {
    let mut parsed = Args {
        events: 200_000,
        sessions: 200,
        runs: 5,
        baseline: None,
        baseline_flat: true,
        dir: None,
    };
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(USAGE)?;
        let count = || value.parse::<usize>().ok().filter(|n| *n > 0).ok_or(USAGE);
        match arg.as_str() {
            "--events" => parsed.events = count()?,
            "--sessions" => parsed.sessions = count()?,
            "--runs" => parsed.runs = count()?,
            "--baseline" => parsed.baseline = Some(value.into()),
            "--baseline-layout" => {
                parsed.baseline_flat = match value.as_str() {
                    "flat" => true,
                    "buckets" => false,
                    _ => return Err(USAGE.into()),
                }
            }
            "--dir" => parsed.dir = Some(value.into()),
            _ => return Err(USAGE.into()),
        }
    }
    Ok(parsed)
}

/// `history`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let args = parse(args)?;
    let exe = std::env::current_exe()?;
    let current = exe.parent().ok_or("no directory for the benchmark binary")?.join("hookline");
    if !current.is_file() {
        return Err(format!(
            "{} not found: cargo build --release -p hookline-cli -p hookline-bench",
            current.display()
        )
        .into());
    }
    let mut binaries = vec![("this branch", current)];
    if let Some(baseline) = &args.baseline {
        binaries.insert(0, ("baseline", baseline.clone()));
    }
    let (dir, owned) = match &args.dir {
        Some(dir) => (dir.clone(), false),
        None => {
            (PathBuf::from(format!("/dev/shm/hookline-bench-history-{}", std::process::id())), true)
        }
    };
    let home = dir.with_extension("home");
    std::fs::create_dir_all(&home)?;
    // A `--dir` that holds events is reused as it is; a missing or empty one is written, and
    // kept for the next run.
    let empty = !dir.is_dir() || std::fs::read_dir(&dir)?.next().is_none();
    if empty {
        let written = Instant::now();
        write_events_of(&dir, 0, args.events, args.sessions)?;
        eprintln!(
            "hookline-bench: {} events written in {:.1} s",
            args.events,
            written.elapsed().as_secs_f64()
        );
    }
    // The baseline may predate buckets: it reads a flat copy (hard links at the top, as the
    // relays before buckets left a directory), the current binary the directory as written.
    let flat = dir.with_extension("baseline-flat");
    let baseline_flat = args.baseline.as_ref().filter(|_| args.baseline_flat);
    if let Some(baseline) = baseline_flat {
        flat_copy(&dir, &flat)?;
        let _ = BASELINE_DIR.set((baseline.clone(), flat.clone()));
    }
    let result = measure(&args, &binaries, &dir, &home);
    if baseline_flat.is_some() {
        std::fs::remove_dir_all(&flat)?;
    }
    if owned {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::remove_dir_all(&home)?;
    result
}

fn measure(args: &Args, binaries: &[(&str, PathBuf)], dir: &Path, home: &Path) -> Result<()> {
    // One untimed run each warms the page cache.
    for (_, binary) in binaries {
        one_shot(binary, dir, home, &["status", "--json"])?;
    }
    for command in [&["status", "--json"][..], &["explain", "session-0001", "--json"]] {
        one_shot_table(args, binaries, dir, home, command)?;
    }
    listing_table(args, dir)?;
    idle_table(args, binaries, dir, home)?;
    checkpoints::tables(args, binaries, dir, home)
}

/// Events at the end of the history a reader starts from, in the listing table.
const LAST_EVENTS: u64 = 10;

fn listing_table(args: &Args, dir: &Path) -> Result<()> {
    use hookline::ingest::source;
    let flat = dir.with_extension("flat");
    flat_copy(dir, &flat)?;
    let newest = source::list_newest(dir)?.events.iter().map(|e| e.name.seq).max().unwrap_or(0);
    let after = newest.saturating_sub(LAST_EVENTS);
    let layouts = [("flat (relays before buckets)", flat.as_path()), ("buckets", dir)];
    let runs = args.runs.max(5);
    let mut times = vec![Vec::new(); layouts.len()];
    let mut names = vec![0; layouts.len()];
    for _ in 0..runs {
        for (i, (_, path)) in layouts.iter().enumerate() {
            let start = Instant::now();
            let listing = source::list_after(path, after)?;
            times[i].push(start.elapsed());
            names[i] = listing.events.len();
        }
    }
    std::fs::remove_dir_all(&flat)?;
    println!(
        "### Listing for a reader after seq {after} of {newest}\n\n`ingest::source::list_after`, \
         median of {runs} runs each, interleaved, warm page cache.\n"
    );
    println!("| Layout | Listing | Event files listed |\n|---|---:|---:|");
    for (i, (label, _)) in layouts.iter().enumerate() {
        println!("| {label} | {} | {} |", ms(median(&times[i])), names[i]);
    }
    println!();
    Ok(())
}

fn one_shot_table(
    args: &Args,
    binaries: &[(&str, PathBuf)],
    dir: &Path,
    home: &Path,
    command: &[&str],
) -> Result<()> {
    let mut times = vec![Vec::new(); binaries.len()];
    let mut peaks = vec![Vec::new(); binaries.len()];
    for _ in 0..args.runs {
        for (i, (_, binary)) in binaries.iter().enumerate() {
            let (time, peak) = one_shot(binary, dir, home, command)?;
            times[i].push(time);
            peaks[i].push(Duration::from_micros(peak as u64));
        }
    }
    println!(
        "### `hookline {}` over {} events of {} sessions\n\nMedian of {} runs each, \
         interleaved, warm page cache.\n",
        command.join(" "),
        args.events,
        args.sessions,
        args.runs
    );
    println!("| Binary | Wall | Peak RSS |\n|---|---:|---:|");
    let mut medians = Vec::new();
    for (i, (label, _)) in binaries.iter().enumerate() {
        let (time, peak) = (median(&times[i]), median(&peaks[i]).as_micros() as i64);
        println!("| {label} | {} | {} |", ms(time), mib(peak));
        medians.push((time, peak));
    }
    if let [(base_time, base_peak), (time, peak)] = medians[..] {
        println!(
            "| ratio (this / baseline) | {:.2}× | {:.2}× |",
            time.as_secs_f64() / base_time.as_secs_f64(),
            peak as f64 / base_peak as f64
        );
    }
    println!();
    Ok(())
}

fn idle_table(args: &Args, binaries: &[(&str, PathBuf)], dir: &Path, home: &Path) -> Result<()> {
    println!(
        "### Idle `hookline watch` following {} events\n\nCPU time (utime + stime) over {} s \
         with nothing arriving, after {} s to settle.\n",
        args.events,
        IDLE.as_secs(),
        SETTLE.as_secs()
    );
    println!("| Binary | CPU time | Share of a core |\n|---|---:|---:|");
    let mut shares = Vec::new();
    for (label, binary) in binaries {
        let cpu = idle_cpu(binary, dir, home)?;
        let share = cpu.as_secs_f64() / IDLE.as_secs_f64() * 100.0;
        println!("| {label} | {} | {share:.2} % |", ms(cpu));
        shares.push(share);
    }
    if let [base, share] = shares[..] {
        println!("| ratio (this / baseline) | | {:.3}× |", share / base);
    }
    Ok(())
}

/// The baseline binary and the flat copy of the events directory it reads.
static BASELINE_DIR: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();

/// The events directory `binary` reads for `dir`: the baseline's flat copy, else `dir`.
fn events_dir_for(binary: &Path, dir: &Path) -> PathBuf {
    match BASELINE_DIR.get() {
        Some((baseline, flat)) if baseline == binary => flat.clone(),
        _ => dir.to_owned(),
    }
}

/// Hard links of every event file of `dir` at the top of `flat`, as a relay before buckets
/// would have left them.
fn flat_copy(dir: &Path, flat: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(flat);
    std::fs::create_dir(flat)?;
    std::fs::set_permissions(flat, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    for file in hookline::ingest::source::list(dir)?.events {
        std::fs::hard_link(file.path(dir), flat.join(file.name.to_string()))?;
    }
    // The counter and its witness, so the baseline sees the same committed seq.
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        if name.to_string_lossy().starts_with(".seq") {
            std::fs::copy(dir.join(&name), flat.join(&name))?;
        }
    }
    Ok(())
}

fn command(binary: &Path, dir: &Path, home: &Path) -> Command {
    let dir = &events_dir_for(binary, dir);
    let mut cmd = Command::new(binary);
    cmd.env_clear()
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_RUNTIME_DIR", home)
        .env("HOOKLINE_EVENTS_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    cmd
}

/// One run of a one-shot command: its wall time and peak RSS in KiB.
fn one_shot(binary: &Path, dir: &Path, home: &Path, args: &[&str]) -> Result<(Duration, i64)> {
    let start = Instant::now();
    let child = command(binary, dir, home).args(args).stderr(Stdio::null()).spawn()?;
    let (status, usage) = wait4(child.id())?;
    let time = start.elapsed();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("{} {}: wait status {status}", binary.display(), args.join(" ")).into());
    }
    Ok((time, usage.ru_maxrss))
}

/// The CPU time a following `watch` spends over [`IDLE`], once settled.
fn idle_cpu(binary: &Path, dir: &Path, home: &Path) -> Result<Duration> {
    let mut child = command(binary, dir, home).arg("watch").stderr(Stdio::null()).spawn()?;
    let pid = child.id();
    std::thread::sleep(SETTLE);
    let before = cpu_ticks(pid)?;
    std::thread::sleep(IDLE);
    let after = cpu_ticks(pid)?;
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    child.wait()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok(Duration::from_secs_f64((after - before) as f64 / hz))
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    let rest = stat.rsplit_once(')').ok_or("unreadable /proc/PID/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Result<u64> {
        Ok(fields.get(n - 3).ok_or("short /proc/PID/stat")?.parse::<u64>()?)
    };
    Ok(field(14)? + field(15)?)
}
