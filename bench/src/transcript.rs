//! `transcript [--gib N] [--runs N]`: the cost of reading a session's transcript when it is
//! huge. A sparse file of N GiB (default 4) ending in Claude's interrupt marker is read the way
//! `status` reads each session's transcript (`hookline::transcript::read_tail`), then followed
//! after it grew by N GiB more at once; the time per read and this process's peak resident
//! memory must not grow with the file.
//!
//! Targets: a read under 10 ms and peak RSS under 32 MiB whatever the size (the follower reads
//! at most the last 256 KiB, and 4 MiB per poll).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::time::{Duration, Instant};

use hookline::transcript::{Follower, TailLimits, read_tail};
use hookline::vocab::TranscriptFormat;

use crate::Result;
use crate::stats::{median, mib, ms, verdict};

const MARKER: &str = r#"{"type":"user","sessionId":"s1","timestamp":"2026-12-01T10:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#;

pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let (mut gib, mut runs) = (4u64, 20usize);
    let mut args = args.peekable();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--gib" => gib = value.parse()?,
            "--runs" => runs = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let path = std::env::temp_dir().join(format!("hookline-bench-{}.jsonl", std::process::id()));
    let result = measure(&path, gib, runs);
    let _ = std::fs::remove_file(&path);
    result
}

fn measure(path: &std::path::Path, gib: u64, runs: usize) -> Result<()> {
    File::create(path)?.set_len(gib << 30)?;
    OpenOptions::new().append(true).open(path)?.write_all(format!("\n{MARKER}\n").as_bytes())?;
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let follower =
            read_tail(path, TranscriptFormat::ClaudeJsonl, None, TailLimits::default(), 1)?;
        times.push(start.elapsed());
        if follower.reading().interrupted.is_none() {
            return Err("the marker at the tail was not read".into());
        }
    }
    let mut follower =
        Follower::new(path, TranscriptFormat::ClaudeJsonl, None, TailLimits::default(), 1);
    follower.poll(1)?;
    File::options().write(true).open(path)?.set_len((2 * gib) << 30)?;
    OpenOptions::new().append(true).open(path)?.write_all(format!("\n{MARKER}\n").as_bytes())?;
    let start = Instant::now();
    let update = follower.poll(2)?;
    let grown = start.elapsed();
    if update.entries != 1 {
        return Err(format!("after growing, {} entries read, not 1", update.entries).into());
    }
    // SAFETY: getrusage writes the struct it is given.
    let rss = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_maxrss
    };
    let read = median(&times);
    println!("| transcript | read (median of {runs}) | poll after +{gib} GiB | peak RSS |");
    println!("|---|---|---|---|");
    println!("| sparse {gib} GiB + marker | {} | {} | {} |", ms(read), ms(grown), mib(rss));
    println!();
    println!(
        "read < 10 ms: **{}**; peak RSS < 32 MiB: **{}**",
        verdict(read < Duration::from_millis(10) && grown < Duration::from_millis(10)),
        verdict(rss < 32 * 1024)
    );
    Ok(())
}
