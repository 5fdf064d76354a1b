//! `relay [--samples N] [--baseline BIN]...`: what a hook call costs with `hookline-relay`,
//! against two floors measured in the same run, beside a Python relay as projects ship them
//! and optionally other builds of the relay (`--baseline`, repeatable: main's, or this code
//! linked dynamically).
//!
//! Run it with `cargo run --release -p hookline-bench -- relay`. It first builds, with the
//! workspace's release profile, the release `hookline-relay` and the two floors of
//! `hookline-bench-floors`, all three linked statically by `.cargo/static-relay.sh`:
//!
//! * `floor-empty`: starts and exits: what any program costs to start;
//! * `floor-copy`: reads stdin to its end, writes it to a temp file and renames it: the least
//!   any relay can do;
//!
//! and checks that the floors are static and stripped (the report says how each program is
//! linked). Then, in one run:
//!
//! * times every variant on a ~2 KiB Claude `PreToolUse` payload and `PostToolUse` payloads of
//!   64 KiB, 1 MiB and 16 MiB (the relay's input cap), interleaved invocation by invocation
//!   (every variant once per round, the order rotating every round) so that all variants share
//!   the machine's noise; wall time is spawn to reap with the payload written into a pipe, as
//!   the host CLI sees it. Rounds are grouped in samples of [`SAMPLE`]; a ratio between two
//!   variants is the median over samples of the ratio of their medians in each sample (the 16
//!   MiB rows run one round in ten);
//! * measures peak RSS (`ru_maxrss` from `wait4`) in a separate pass, through a small launcher
//!   (this binary, `__rss` mode): a child's `ru_maxrss` also counts the memory of the process
//!   it was spawned from, which for the benchmark itself would be several MiB;
//! * launches 64 relays at once, several times, and checks that all 64 events are there with
//!   `seq` 1..=64;
//!
//! and prints markdown tables, with the targets of issue 34 checked and the load average.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use hookline_relay::filename::{FileKind, classify};

use crate::Result;
use crate::stats::{median, mib, ms, percentile, verdict};

/// Invocations of each variant per sample.
const SAMPLE: usize = 100;
const DEFAULT_SAMPLES: usize = 5;
const RSS_RUNS: usize = 50;
const WARMUP_ROUNDS: usize = 20;
const BURST: usize = 64;
const BURST_REPEATS: usize = 20;
/// Event files are removed (outside the timed region) every this many rounds, as a watcher
/// would consume them, so that the directory does not grow without bound.
const CLEAN_EVERY: usize = 50;
const PAYLOAD_2K: &[u8] = include_bytes!("../payloads/pre-tool-use-2k.json");

// Indices into the variants and payloads below.
const EMPTY: usize = 0;
const COPY: usize = 1;
const RELAY: usize = 2;
const RELAY_FSYNC: usize = 3;
const PYTHON: usize = 4;
const PYTHON_NO_SITE: usize = 5;
/// The first `--baseline`; the others follow.
const BASELINE: usize = 6;
const SMALL: usize = 0;
const KIB_64: usize = 1;
const MIB_1: usize = 2;
const MIB_16: usize = 3;
/// The 16 MiB rows run one round in this many: the Python relay takes most of a second there.
const HUGE_EVERY: usize = 10;

const USAGE: &str =
    "usage: cargo run --release -p hookline-bench -- relay [--samples N] [--baseline BIN]...";

fn exit_with(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2);
}

/// `relay [--samples N] [--baseline BIN]...`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let mut args = args;
    let mut samples = DEFAULT_SAMPLES;
    let mut baselines = Vec::new();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--samples", Some(n)) => match n.parse() {
                Ok(n) if n > 0 => samples = n,
                _ => return Err(USAGE.into()),
            },
            ("--baseline", Some(bin)) => baselines.push(PathBuf::from(bin)),
            _ => return Err(USAGE.into()),
        }
    }
    if let Some(bin) = baselines.iter().find(|bin| !bin.is_file()) {
        return Err(format!("--baseline {}: no such file\n{USAGE}", bin.display()).into());
    }
    bench_relay(samples, baselines)
}

/// One way of handling a hook call.
struct Variant {
    label: String,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    /// Where it writes its events (`None`: it writes nothing).
    events: Option<PathBuf>,
}

/// A variant on a payload, and its measurements.
struct Row {
    payload: usize,
    variant: usize,
    /// Wall time of each run, by sample.
    walls: Vec<Vec<Duration>>,
    /// Peak RSS of each run of the RSS pass, in KiB.
    rss_kib: Vec<i64>,
}

fn bench_relay(samples: usize, baselines: Vec<PathBuf>) -> Result<()> {
    if cfg!(debug_assertions) {
        return Err(format!("build the benchmark in release mode\n{USAGE}").into());
    }
    let bin_dir = build_binaries()?;
    let load_before = load_average();
    let python = python()?;
    let work = WorkDir::new(&bin_dir)?;
    let home = work.path.join("home");
    std::fs::create_dir_all(&home)?;
    let base_env = |events: &Path| {
        vec![
            ("PATH", OsString::from("/usr/local/bin:/usr/bin:/bin")),
            ("HOME", home.clone().into_os_string()),
            ("HOOKLINE_EVENTS_DIR", events.as_os_str().to_owned()),
        ]
    };
    let events = |name: &str| work.path.join(name);
    let relay = bin_dir.join("hookline-relay");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("relay.py");
    let variants = [
        Variant {
            label: "empty floor (`floor-empty`)".into(),
            program: bin_dir.join("floor-empty"),
            args: vec![],
            env: base_env(&events("empty")),
            events: None,
        },
        Variant {
            label: "copy floor (`floor-copy`)".into(),
            program: bin_dir.join("floor-copy"),
            args: vec![],
            env: base_env(&events("copy")),
            events: Some(events("copy")),
        },
        Variant {
            label: "`hookline-relay`".into(),
            program: relay.clone(),
            args: vec![],
            env: base_env(&events("relay")),
            events: Some(events("relay")),
        },
        Variant {
            label: "`hookline-relay`, `HOOKLINE_FSYNC=1`".into(),
            program: relay.clone(),
            args: vec![],
            env: [base_env(&events("relay-fsync")), vec![("HOOKLINE_FSYNC", "1".into())]].concat(),
            events: Some(events("relay-fsync")),
        },
        // As the Python relay it replaces is installed: `python3 hook.py`, site packages
        // loaded (the real interpreter, not a version manager's shim, which would add its own
        // start-up).
        Variant {
            label: "Python 3 relay, as installed (`python3 bench/relay.py`)".into(),
            program: python.exe.clone(),
            args: vec![script.clone().into()],
            env: base_env(&events("python")),
            events: Some(events("python")),
        },
        // -S: no site module, so that packages installed on this machine do not count: a lower
        // bound for Python's start-up, on the small payload only.
        Variant {
            label: "Python 3 relay, no site packages (`python3 -S`)".into(),
            program: python.exe.clone(),
            args: vec!["-S".into(), script.into()],
            env: base_env(&events("python-s")),
            events: Some(events("python-s")),
        },
    ];
    let variants: Vec<Variant> = variants
        .into_iter()
        .chain(baselines.iter().enumerate().map(|(i, bin)| {
            let name = bin.file_name().unwrap_or_default().to_string_lossy();
            let dir = events(&format!("baseline-{i}"));
            Variant {
                label: format!("`hookline-relay`, baseline `{name}`"),
                program: bin.clone(),
                args: vec![],
                env: base_env(&dir),
                events: Some(dir),
            }
        }))
        .collect();
    let payloads: [(&str, Arc<[u8]>); 4] = [
        ("2 KiB `PreToolUse`", PAYLOAD_2K.into()),
        ("64 KiB `PostToolUse`", large_payload(64 << 10).into()),
        ("1 MiB `PostToolUse`", large_payload(1 << 20).into()),
        ("16 MiB `PostToolUse`", large_payload(16 << 20).into()),
    ];
    // The fsync row is only measured on the small payload: its cost does not depend on size
    // in a way that matters here, and it would dominate the run.
    let mut plan = vec![(SMALL, EMPTY), (SMALL, COPY), (SMALL, RELAY), (SMALL, RELAY_FSYNC)];
    plan.extend([(SMALL, PYTHON), (SMALL, PYTHON_NO_SITE)]);
    for payload in [KIB_64, MIB_1, MIB_16] {
        plan.extend([(payload, EMPTY), (payload, COPY), (payload, RELAY), (payload, PYTHON)]);
    }
    for baseline in (BASELINE..variants.len()).rev() {
        for payload in [SMALL, KIB_64, MIB_1, MIB_16] {
            let at = plan.iter().position(|&(p, v)| p == payload && v == RELAY).unwrap_or(0);
            plan.insert(at + 1, (payload, baseline));
        }
    }
    let mut rows: Vec<Row> = plan
        .iter()
        .map(|&(payload, variant)| Row {
            payload,
            variant,
            walls: vec![Vec::with_capacity(SAMPLE); samples],
            rss_kib: Vec::new(),
        })
        .collect();
    // Whether a row runs in a round (the 16 MiB rows one round in HUGE_EVERY).
    let runs_in =
        |row: &Row, round: usize| row.payload != MIB_16 || round.is_multiple_of(HUGE_EVERY);
    // Events written per variant since its directory was last cleaned.
    let mut pending = vec![0; variants.len()];

    for dir in variants.iter().filter_map(|v| v.events.as_ref()) {
        std::fs::create_dir_all(dir)?;
    }
    let rounds = samples * SAMPLE;
    eprintln!(
        "hookline-bench: {} samples of {SAMPLE} rounds of {} runs, {} warm-up rounds; events in {}",
        samples,
        rows.len(),
        WARMUP_ROUNDS,
        work.path.display()
    );
    let started = Instant::now();
    for round in 0..WARMUP_ROUNDS + rounds {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.rotate_left(round % rows.len());
        for i in order {
            let row = &mut rows[i];
            if !runs_in(row, round) {
                continue;
            }
            let variant = &variants[row.variant];
            let wall = run_once(variant, &payloads[row.payload].1)?;
            if let Some(measured) = round.checked_sub(WARMUP_ROUNDS) {
                row.walls[measured / SAMPLE].push(wall);
            }
            pending[row.variant] += 1;
        }
        if (round + 1) % CLEAN_EVERY == 0 {
            for (variant, pending) in variants.iter().zip(&mut pending) {
                check_and_clean(variant, std::mem::take(pending))?;
            }
        }
        if (round + 1) % 100 == 0 {
            eprintln!("  {} rounds, {:.0?}", round + 1, started.elapsed());
        }
    }
    for (variant, pending) in variants.iter().zip(&mut pending) {
        check_and_clean(variant, std::mem::take(pending))?;
    }

    for round in 0..RSS_RUNS {
        for row in &mut rows {
            if !runs_in(row, round) {
                continue;
            }
            let variant = &variants[row.variant];
            row.rss_kib.push(rss_once(variant, &payloads[row.payload].1)?);
            pending[row.variant] += 1;
        }
    }
    for (variant, pending) in variants.iter().zip(&mut pending) {
        check_and_clean(variant, std::mem::take(pending))?;
    }

    let mut bursts = Vec::new();
    for (variant, seqs) in [(EMPTY, false), (COPY, false), (RELAY, true)] {
        let variant = &variants[variant];
        bursts.push((variant.label.clone(), burst(variant, &payloads[SMALL].1, seqs)?));
    }

    let programs = [EMPTY, COPY, RELAY]
        .into_iter()
        .chain(BASELINE..variants.len())
        .map(|v| Ok((variants[v].label.clone(), linkage(&variants[v].program)?)))
        .collect::<Result<Vec<_>>>()?;
    print_report(&Report {
        samples,
        load: (load_before, load_average()),
        programs: &programs,
        python: &python,
        work: &work,
        variants: &variants,
        payloads: &payloads,
        rows: &rows,
        bursts: &bursts,
    });
    Ok(())
}

/// Builds the release relay and the floors; returns the directory holding them. The floors
/// must be static and stripped, as the relay is built: a floor linked otherwise would not be
/// the floor.
fn build_binaries() -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("no workspace")?;
    eprintln!("hookline-bench: cargo build --release -p hookline-relay -p hookline-bench-floors");
    // From the workspace, so that cargo reads its `.cargo/config.toml` (the static link).
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--release", "--quiet", "-p", "hookline-relay"])
        .args(["-p", "hookline-bench-floors"])
        .status()?;
    if !status.success() {
        return Err(format!("cargo build failed: {status}").into());
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or("no directory for the benchmark binary")?.to_owned();
    for bin in ["hookline-relay", FLOOR_EMPTY, FLOOR_COPY] {
        if !dir.join(bin).is_file() {
            return Err(format!("{} not found beside {}", bin, exe.display()).into());
        }
    }
    for bin in [FLOOR_EMPTY, FLOOR_COPY] {
        let linkage = linkage(&dir.join(bin))?;
        if !linkage.is_static() || !linkage.stripped {
            return Err(format!(
                "{bin} is {}: the floors must be static and stripped (is static glibc, \
                 libc.a, installed? see .cargo/static-relay.sh)",
                linkage.describe()
            )
            .into());
        }
    }
    Ok(dir)
}

const FLOOR_EMPTY: &str = "floor-empty";
const FLOOR_COPY: &str = "floor-copy";

/// How an executable is linked, from its ELF headers.
struct Linkage {
    /// It names a program interpreter (`PT_INTERP`): the dynamic loader maps its libraries.
    dynamic: bool,
    /// Position-independent (`ET_DYN`): relocated at start-up, loaded at a random address.
    pie: bool,
    /// No symbol table.
    stripped: bool,
    /// Dynamic relocations applied at start (`.rela.dyn` and `.rela.plt` entries).
    relocations: u64,
    size: u64,
}

impl Linkage {
    fn is_static(&self) -> bool {
        !self.dynamic
    }

    fn describe(&self) -> String {
        let kind = match (self.dynamic, self.pie) {
            (true, _) => "dynamic",
            (false, true) => "static-pie",
            (false, false) => "static",
        };
        format!(
            "{kind}{}, {} relocations, {:.0} KiB",
            if self.stripped { ", stripped" } else { "" },
            self.relocations,
            self.size as f64 / 1024.0
        )
    }
}

/// Reads the ELF headers of a 64-bit little-endian executable.
fn linkage(path: &Path) -> Result<Linkage> {
    let bytes = std::fs::read(path)?;
    let bad = || format!("{}: not a 64-bit little-endian ELF file", path.display());
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err(bad().into());
    }
    let u16_at = |at: usize| -> Result<u64> {
        let b = bytes.get(at..at + 2).ok_or_else(bad)?;
        Ok(u64::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let u32_at = |at: usize| -> Result<u64> {
        let b = bytes.get(at..at + 4).ok_or_else(bad)?;
        Ok(u64::from(u32::from_le_bytes(b.try_into()?)))
    };
    let u64_at = |at: usize| -> Result<u64> {
        let b = bytes.get(at..at + 8).ok_or_else(bad)?;
        Ok(u64::from_le_bytes(b.try_into()?))
    };
    let (phoff, shoff) = (u64_at(0x20)? as usize, u64_at(0x28)? as usize);
    let (phentsize, phnum) = (u16_at(0x36)? as usize, u16_at(0x38)? as usize);
    let (shentsize, shnum) = (u16_at(0x3a)? as usize, u16_at(0x3c)? as usize);
    const PT_INTERP: u64 = 3;
    const ET_DYN: u64 = 3;
    const SHT_SYMTAB: u64 = 2;
    const SHT_RELA: u64 = 4;
    let mut dynamic = false;
    for i in 0..phnum {
        dynamic |= u32_at(phoff + i * phentsize)? == PT_INTERP;
    }
    let (mut stripped, mut relocations) = (true, 0);
    for i in 0..shnum {
        let header = shoff + i * shentsize;
        match u32_at(header + 4)? {
            SHT_SYMTAB => stripped = false,
            SHT_RELA => relocations += u64_at(header + 0x20)? / u64_at(header + 0x38)?.max(1),
            _ => {}
        }
    }
    Ok(Linkage {
        dynamic,
        pie: u16_at(0x10)? == ET_DYN,
        stripped,
        relocations,
        size: bytes.len() as u64,
    })
}

/// The load average over the last minute, 5 and 15 minutes (`/proc/loadavg`).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

struct Python {
    exe: PathBuf,
    version: String,
}

/// The real interpreter behind `python3`: a version-manager shim (pyenv, asdf) would add its
/// own start-up cost, which is not Python's.
fn python() -> Result<Python> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, platform; print(sys.executable); print(platform.python_version())",
        ])
        .output()
        .map_err(|e| format!("python3 is needed for the baseline: {e}"))?;
    let text = String::from_utf8(out.stdout)?;
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(exe), Some(version)) if out.status.success() => {
            Ok(Python { exe: exe.into(), version: version.into() })
        }
        _ => Err(format!("python3 failed: {}", String::from_utf8_lossy(&out.stderr)).into()),
    }
}

/// The directory the events are written to: inside the target directory (so on the disk the
/// project is on, not a tmpfs), removed at the end.
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn new(bin_dir: &Path) -> Result<WorkDir> {
        let path = bin_dir.join(format!("hookline-bench-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(WorkDir { path })
    }

    /// The filesystem the events are written to, by name when it is a common one.
    fn filesystem(&self) -> String {
        let Ok(path) = std::ffi::CString::new(self.path.as_os_str().as_bytes()) else {
            return "unknown".into();
        };
        // SAFETY: statfs only writes into the zeroed struct we pass; the path is NUL-terminated.
        let kind = unsafe {
            let mut stat: libc::statfs = std::mem::zeroed();
            if libc::statfs(path.as_ptr(), &mut stat) != 0 {
                return "unknown".into();
            }
            stat.f_type as i64
        };
        match kind {
            0xEF53 => "ext4".into(),
            0x5846_5342 => "xfs".into(),
            0x9123_683E => "btrfs".into(),
            0x0102_1994 => "tmpfs".into(),
            0x794C_7630 => "overlayfs".into(),
            0x6573_5546 => "fuse".into(),
            0x2FC1_2FC1 => "zfs".into(),
            other => format!("filesystem 0x{other:x}"),
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A `PostToolUse` payload of exactly `size` bytes: a file read back, with the escapes real
/// source text has.
fn large_payload(size: usize) -> Vec<u8> {
    let line = r#"    let counter = self.open_counter()?; // \"seq\" lock\n"#;
    let head = r#"{"session_id":"75a87ff6-e914-427f-a8ca-ad0fcf16e284","transcript_path":"/home/dev/work/home/.claude/projects/-home-dev-work-proj/75a87ff6-e914-427f-a8ca-ad0fcf16e284.jsonl","cwd":"/home/dev/work/proj","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/work/proj/relay/src/store.rs"},"tool_response":{"type":"text","file":{"filePath":"/home/dev/work/proj/relay/src/store.rs","content":""#;
    let tail = r#""}},"tool_use_id":"toolu_01HkQv3mZp8W2xYbN4cR7sTd"}"#;
    let mut text = head.to_owned();
    while text.len() + line.len() + tail.len() <= size {
        text.push_str(line);
    }
    text.push_str(&" ".repeat(size - text.len() - tail.len()));
    text.push_str(tail);
    debug_assert_eq!(text.len(), size);
    text.into_bytes()
}

fn command(variant: &Variant) -> Command {
    let mut cmd = Command::new(&variant.program);
    cmd.args(&variant.args);
    with_env(&mut cmd, variant);
    cmd
}

fn with_env(cmd: &mut Command, variant: &Variant) {
    cmd.env_clear()
        .envs(variant.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
}

/// Writes the payload to a child's stdin and closes it. A pipe holds 64 KiB: a larger payload
/// gets its own writer thread, as the host has.
fn feed(stdin: std::process::ChildStdin, payload: &Arc<[u8]>) -> Option<thread::JoinHandle<()>> {
    let mut stdin = stdin;
    if payload.len() < 32 << 10 {
        let _ = stdin.write_all(payload);
        return None;
    }
    let payload = Arc::clone(payload);
    Some(thread::spawn(move || {
        let _ = stdin.write_all(&payload);
    }))
}

/// Spawns the variant, feeds it the payload and reaps it: the wall time the host sees.
fn run_once(variant: &Variant, payload: &Arc<[u8]>) -> Result<Duration> {
    let start = Instant::now();
    let mut child = command(variant).spawn()?;
    let writer = feed(child.stdin.take().ok_or("no stdin")?, payload);
    let (status, _) = wait4(child.id())?;
    let wall = start.elapsed();
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{} failed (wait status {status})", variant.label).into());
    }
    Ok(wall)
}

/// Runs the variant through the `__rss` launcher and returns its peak RSS in KiB.
fn rss_once(variant: &Variant, payload: &Arc<[u8]>) -> Result<i64> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("__rss").arg(&variant.program).args(&variant.args);
    with_env(&mut cmd, variant);
    let mut child = cmd.stdout(Stdio::piped()).spawn()?;
    let writer = feed(child.stdin.take().ok_or("no stdin")?, payload);
    let out = child.wait_with_output()?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().parse() {
        Ok(kib) if out.status.success() => Ok(kib),
        _ => Err(format!("{} failed under the RSS launcher: {}", variant.label, out.status).into()),
    }
}

/// `__rss PROGRAM ARGS...`: runs PROGRAM on this process's stdin and prints its `ru_maxrss`
/// (KiB). This process stays small, so little of its own memory leaks into the child's figure
/// (the empty floor's row shows how much: the floor of the method).
pub fn rss_launcher(args: Vec<OsString>) -> ! {
    let Some((program, args)) = args.split_first() else { exit_with(USAGE) };
    let child = match Command::new(program).args(args).stdout(Stdio::null()).spawn() {
        Ok(child) => child,
        Err(e) => exit_with(&format!("__rss: {e}")),
    };
    match wait4(child.id()) {
        Ok((status, usage)) if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 => {
            println!("{}", usage.ru_maxrss);
            std::process::exit(0);
        }
        Ok((status, _)) => exit_with(&format!("__rss: wait status {status}")),
        Err(e) => exit_with(&format!("__rss: {e}")),
    }
}

/// Reaps a child, returning its wait status and resource usage.
pub fn wait4(pid: u32) -> Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: both pointers are valid for writes for the duration of the call.
        let ret = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if ret == pid as libc::pid_t {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err.into());
        }
    }
}

/// The event files in a directory, at its top and in its buckets (temp files, the counter and
/// the buckets themselves excluded).
fn event_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if entry.file_type()?.is_dir() {
            for inner in std::fs::read_dir(entry.path())? {
                paths.push(inner?.path());
            }
        } else {
            paths.push(entry.path());
        }
    }
    Ok(paths)
}

/// Checks that a variant wrote one event per run, then removes them, keeping the counter.
fn check_and_clean(variant: &Variant, expected: usize) -> Result<()> {
    let Some(dir) = &variant.events else { return Ok(()) };
    let names = event_files(dir)?;
    if names.len() != expected {
        return Err(format!("{}: {} events for {expected} runs", variant.label, names.len()).into());
    }
    for path in names {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// 64 relays launched at once.
struct Burst {
    /// Wall time of each repetition, first spawn to last reap.
    walls: Vec<Duration>,
    /// Every repetition left 64 events with `seq` exactly the next 64 numbers (`None`: the
    /// variant writes no numbered events; a floor's 64 files are counted all the same).
    complete: Option<bool>,
}

/// Launches 64 of `variant` at once, [`BURST_REPEATS`] times; `seqs`: check the `seq`s of the
/// events written.
fn burst(variant: &Variant, payload: &Arc<[u8]>, seqs: bool) -> Result<Burst> {
    let mut walls = Vec::new();
    let mut complete = (seqs && variant.events.is_some()).then_some(true);
    let mut next_seq = None;
    for _ in 0..BURST_REPEATS {
        let start = Instant::now();
        let mut pids = Vec::with_capacity(BURST);
        for _ in 0..BURST {
            let mut child = command(variant).spawn()?;
            let mut stdin = child.stdin.take().ok_or("no stdin")?;
            let _ = stdin.write_all(payload);
            pids.push(child.id());
        }
        for pid in pids {
            let (status, _) = wait4(pid)?;
            if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                return Err(format!("{} failed (wait status {status})", variant.label).into());
            }
        }
        walls.push(start.elapsed());
        let Some(dir) = &variant.events else { continue };
        if complete.is_none() {
            check_and_clean(variant, BURST)?;
            continue;
        }
        let mut seqs: Vec<u64> = event_files(dir)?
            .iter()
            .filter_map(|path| match classify(&path.file_name()?.to_string_lossy()) {
                FileKind::Event(event) if event.is_ordered() => Some(event.seq),
                _ => None,
            })
            .collect();
        seqs.sort_unstable();
        let first = next_seq.unwrap_or_else(|| seqs.first().copied().unwrap_or(1));
        let expected: Vec<u64> = (first..first + BURST as u64).collect();
        complete = complete.map(|ok| ok && seqs == expected);
        next_seq = Some(first + BURST as u64);
        check_and_clean(variant, BURST)?;
    }
    Ok(Burst { walls, complete })
}

struct Report<'a> {
    samples: usize,
    /// The load average before and after the timed runs.
    load: (String, String),
    programs: &'a [(String, Linkage)],
    python: &'a Python,
    work: &'a WorkDir,
    variants: &'a [Variant],
    payloads: &'a [(&'static str, Arc<[u8]>)],
    rows: &'a [Row],
    bursts: &'a [(String, Burst)],
}

/// The ratio of two rows' medians, sample by sample: the median over samples, and the lowest
/// and highest.
#[derive(Clone, Copy)]
struct Ratio {
    median: f64,
    low: f64,
    high: f64,
}

impl Ratio {
    fn of(row: &Row, floor: &Row) -> Ratio {
        let mut ratios: Vec<f64> = row
            .walls
            .iter()
            .zip(&floor.walls)
            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
            .map(|(a, b)| median(a).as_secs_f64() / median(b).as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let n = ratios.len();
        match (ratios.first(), ratios.last()) {
            (Some(&low), Some(&high)) => {
                let median = (ratios[(n - 1) / 2] + ratios[n / 2]) / 2.0;
                Ratio { median, low, high }
            }
            _ => Ratio { median: f64::NAN, low: f64::NAN, high: f64::NAN },
        }
    }

    fn spread(&self) -> String {
        format!("{:.2}× ({:.2}–{:.2})", self.median, self.low, self.high)
    }
}

fn print_report(r: &Report<'_>) {
    struct Stats {
        median: Duration,
        p99: Duration,
        max_rss_kib: i64,
    }
    let stats: Vec<Stats> = r
        .rows
        .iter()
        .map(|row| {
            let mut walls = row.walls.concat();
            walls.sort_unstable();
            Stats {
                median: percentile(&walls, 50.0),
                p99: percentile(&walls, 99.0),
                max_rss_kib: row.rss_kib.iter().copied().max().unwrap_or(0),
            }
        })
        .collect();
    let row_of = |payload: usize, variant: usize| {
        let i = r.rows.iter().position(|row| row.payload == payload && row.variant == variant);
        i.expect("every combination used below is measured")
    };
    let ratio = |payload: usize, variant: usize, floor: usize| {
        Ratio::of(&r.rows[row_of(payload, variant)], &r.rows[row_of(payload, floor)])
    };

    let mut uname: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes into the struct we pass.
    let system = if unsafe { libc::uname(&mut uname) } == 0 {
        let field = |f: &[libc::c_char]| {
            // SAFETY: uname fills NUL-terminated strings.
            unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }.to_string_lossy().into_owned()
        };
        format!("{} {} {}", field(&uname.sysname), field(&uname.release), field(&uname.machine))
    } else {
        "unknown system".into()
    };
    let cpus = thread::available_parallelism().map_or(0, |n| n.get());

    println!("### `hookline-relay` per hook call\n");
    println!(
        "{} samples of {SAMPLE} invocations of each row after {} warm-up rounds, all rows \
         interleaved invocation by invocation; wall time from spawn to reap with the payload \
         written into a pipe. Median and p99 over all samples; a ratio is the median over \
         samples of the ratio of the two rows' medians in a sample. Peak RSS: the largest \
         `ru_maxrss` of {} more runs through a small launcher, whose own size is the floor \
         (the empty floor's row). {}, {} CPUs, load average {} before and {} after; events on \
         {}; Python {}.\n",
        r.samples,
        WARMUP_ROUNDS,
        RSS_RUNS,
        system,
        cpus,
        r.load.0,
        r.load.1,
        r.work.filesystem(),
        r.python.version
    );
    println!("| Program | Linked |\n|---|---|");
    for (label, linkage) in r.programs {
        println!("| {label} | {} |", linkage.describe());
    }
    println!();
    println!(
        "| Payload | Command | Runs | Median | p99 | × empty floor | × copy floor | Peak RSS |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (row, s) in r.rows.iter().zip(&stats) {
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× | {:.2}× | {} |",
            r.payloads[row.payload].0,
            r.variants[row.variant].label,
            row.walls.iter().map(Vec::len).sum::<usize>(),
            ms(s.median),
            ms(s.p99),
            ratio(row.payload, row.variant, EMPTY).median,
            ratio(row.payload, row.variant, COPY).median,
            mib(s.max_rss_kib)
        );
    }

    println!("\n### 64 relays launched at once\n");
    println!(
        "| Command | Wall, median of {BURST_REPEATS} | Events/s | All 64 events, `seq` 1..=64 |"
    );
    println!("|---|---:|---:|---|");
    for (label, burst) in r.bursts {
        let wall = median(&burst.walls);
        let check = match burst.complete {
            None => "—",
            Some(true) => "yes, every time",
            Some(false) => "**no**",
        };
        println!("| {label} | {} | {:.0} | {check} |", ms(wall), BURST as f64 / wall.as_secs_f64());
    }

    let relay = &stats[row_of(SMALL, RELAY)];
    let fsync = &stats[row_of(SMALL, RELAY_FSYNC)];
    let (copy_2k, copy_64k, copy_1m) =
        (ratio(SMALL, RELAY, COPY), ratio(KIB_64, RELAY, COPY), ratio(MIB_1, RELAY, COPY));
    let vs_python = 1.0 / ratio(SMALL, RELAY, PYTHON).median;
    let vs_python_1m = 1.0 / ratio(MIB_1, RELAY, PYTHON).median;
    println!("\n### The relay against its floors, median of per-sample ratios (lowest–highest)\n");
    println!("| Payload | × empty floor | × copy floor | copy floor × empty floor |");
    println!("|---|---:|---:|---:|");
    for payload in [SMALL, KIB_64, MIB_1] {
        println!(
            "| {} | {} | {} | {} |",
            r.payloads[payload].0,
            ratio(payload, RELAY, EMPTY).spread(),
            ratio(payload, RELAY, COPY).spread(),
            ratio(payload, COPY, EMPTY).spread(),
        );
    }
    println!("\n### Targets\n");
    println!("| Target | Measured | |");
    println!("|---|---:|---|");
    println!(
        "| 2 KiB: ≤ 1.1× the copy floor (issue 34) | {} | {} |",
        copy_2k.spread(),
        verdict(copy_2k.median <= 1.1)
    );
    println!("| 64 KiB: (no target) | {} | |", copy_64k.spread());
    println!(
        "| 1 MiB: ≤ 1.1× the copy floor (issue 34) | {} | {} |",
        copy_1m.spread(),
        verdict(copy_1m.median <= 1.1)
    );
    println!(
        "| ≥ 20× faster than the Python relay as installed | {vs_python:.0}× (1 MiB: {vs_python_1m:.0}×) | {} |",
        verdict(vs_python >= 20.0)
    );
    println!(
        "| peak RSS < 8 MiB (2 KiB) | {} | {} |",
        mib(relay.max_rss_kib),
        verdict(relay.max_rss_kib < 8 * 1024)
    );
    println!(
        "\n`HOOKLINE_FSYNC=1` adds {} to the median call ({:.1}× the relay without it).",
        ms(fsync.median.saturating_sub(relay.median)),
        ratio(SMALL, RELAY_FSYNC, RELAY).median
    );

    for baseline in BASELINE..r.variants.len() {
        println!("\n### Before and after ({} against this build)\n", r.variants[baseline].label);
        println!("| Payload | Baseline | × copy floor | This build | × copy floor | Ratio |");
        println!("|---|---:|---:|---:|---:|---:|");
        for (payload, (name, _)) in r.payloads.iter().enumerate() {
            println!(
                "| {name} | {} | {:.2}× | {} | {:.2}× | {} |",
                ms(stats[row_of(payload, baseline)].median),
                ratio(payload, baseline, COPY).median,
                ms(stats[row_of(payload, RELAY)].median),
                ratio(payload, RELAY, COPY).median,
                ratio(payload, RELAY, baseline).spread()
            );
        }
    }
}
