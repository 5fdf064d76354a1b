//! One module per subcommand, plus what they share.

mod decide;
mod demo;
mod doctor;
mod explain;
mod forward;
mod install;
mod profiles;
mod prune;
mod serve;
mod status;
mod uninstall;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use hookline::ingest::follow::{self, FollowNotice};
use hookline::ingest::reader::{ReaderConfig, Start};
use hookline::profile::{OverlayDirs, Profiles};

use crate::cli::{Cli, Command, DirArgs, PolicyArgs, SourceArgs};

/// The result of a subcommand: an exit code, or an error printed by `main`.
pub type Outcome = Result<ExitCode, Box<dyn std::error::Error>>;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Outcome {
    match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Status(args) => status::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Profiles(args) => profiles::run(args),
        Command::Prune(args) => prune::run(args),
        Command::Install(args) => install::run(&args),
        Command::Uninstall(args) => uninstall::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Decide(args) => decide::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Forward(args) => forward::run(args),
    }
}

/// The events directory: `--events-dir`, else the relay's own resolution.
fn events_dir(args: &DirArgs) -> Result<PathBuf, Box<dyn std::error::Error>> {
    match &args.events_dir {
        Some(dir) => Ok(dir.clone()),
        None => Ok(hookline::format::location::events_dir()?),
    }
}

/// The profiles in force, with overlay warnings printed to stderr.
fn profiles() -> Result<Profiles, Box<dyn std::error::Error>> {
    let profiles = Profiles::load(&OverlayDirs::standard())?;
    for warning in &profiles.warnings {
        eprintln!("hookline: warning: {warning}");
    }
    Ok(profiles)
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Makes SIGINT and SIGTERM set a flag instead of killing the process, so that a command can
/// finish the line it is writing and save its cursor.
fn catch_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether SIGINT or SIGTERM arrived since `catch_signals`.
fn stopping() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Prints notices to stderr.
fn report(notices: impl IntoIterator<Item = FollowNotice>) {
    for notice in notices {
        if notice.is_warning() {
            eprintln!("hookline: warning: {notice}");
        } else {
            eprintln!("hookline: {notice}");
        }
    }
}

/// Whether an error is the reader of our stdout going away.
fn is_broken_pipe(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

/// A reader of the events directory (and the legacy directories) the arguments name.
fn reader_config(
    source: &SourceArgs,
    start: Start,
    profiles: Profiles,
) -> Result<ReaderConfig, Box<dyn std::error::Error>> {
    let mut config = ReaderConfig::new(events_dir(&source.dir)?, start, profiles);
    config.legacy_dirs = source.legacy_dirs.clone();
    Ok(config)
}

/// A tracker rebuilt from every event present: a one-shot reader's view, replayed, never
/// authoritative. Its staleness windows are the policy's, as `decide` and `serve` see them.
fn replay(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    history: usize,
) -> Result<hookline::state::Tracker, Box<dyn std::error::Error>> {
    let profiles = profiles()?;
    let policy = policy(policy_args, &profiles)?;
    let now = hookline::format::clock::now_ns();
    let mut tracker = hookline::state::Tracker::new(profiles.clone(), now)
        .with_history(history)
        .with_stale_windows_over(&policy.stale);
    follow::replay(reader_config(source, Start::Beginning, profiles)?, |event| {
        tracker.apply(&event);
    })?;
    Ok(tracker)
}

/// The decision policy: `--policy`, else the user's file when it exists, else the defaults;
/// its `[stale]` windows checked against the profiles in force.
fn policy(
    args: &PolicyArgs,
    profiles: &Profiles,
) -> Result<hookline::decide::Policy, Box<dyn std::error::Error>> {
    use hookline::decide::Policy;
    let Some(path) = args.policy.clone().or_else(hookline::paths::user_policy) else {
        return Ok(Policy::default());
    };
    let policy = Policy::load(&path)?;
    policy.check_profiles(profiles, &path.display().to_string())?;
    Ok(policy)
}

/// The journal the policy asks for, beside the events directory by default.
fn journal(
    policy: &hookline::decide::Policy,
    events_dir: &std::path::Path,
) -> Option<hookline::decide::Journal> {
    use hookline::decide::Journal;
    policy.journal_enabled.then(|| {
        let path = policy.journal_path.clone().unwrap_or_else(|| Journal::default_path(events_dir));
        Journal::new(path, policy.journal_max_bytes)
    })
}
