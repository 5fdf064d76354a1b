//! One module per subcommand, plus what they share.

mod daemon;
mod decide;
mod deliver;
mod demo;
mod doctor;
mod explain;
mod install;
mod pane;
mod profiles;
mod prune;
mod serve;
mod status;
mod uninstall;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use hookline::daemon::{Client, ClientError};
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
        Command::Pane(args) => pane::run(&args),
        Command::Daemon(args) => daemon::run(args),
        Command::Deliver(args) => deliver::run(&args),
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
    replay_with(source, profiles, &policy, history)
}

/// [`replay`], with the profiles and policy already loaded.
fn replay_with(
    source: &SourceArgs,
    profiles: Profiles,
    policy: &hookline::decide::Policy,
    history: usize,
) -> Result<hookline::state::Tracker, Box<dyn std::error::Error>> {
    let now = hookline::format::clock::now_ns();
    let mut tracker = hookline::state::Tracker::new(profiles.clone(), now)
        .with_history(history)
        .with_stale_windows_over(&policy.stale);
    follow::replay(reader_config(source, Start::Beginning, profiles)?, |event| {
        tracker.apply(&event);
    })?;
    Ok(tracker)
}

/// Asks the daemon of the events directory, when one answers: its answers are a live
/// generation's, authoritative. When none does (or it fails to answer), says so on stderr in
/// one line and returns `None`: the caller replays history instead, which never authorizes.
/// `--policy` and `--legacy-dir` are the caller's own, for that replay: the daemon's are in
/// force, and a warning says so when they were given.
fn ask_daemon<T>(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    call: impl FnOnce(&mut Client) -> Result<T, ClientError>,
) -> Result<Option<T>, Box<dyn std::error::Error>> {
    let dir = events_dir(&source.dir)?;
    match Client::connect(&dir).and_then(|mut client| call(&mut client)) {
        Ok(answer) => {
            if policy_args.policy.is_some() || !source.legacy_dirs.is_empty() {
                eprintln!(
                    "hookline: warning: the daemon answered with its own policy and legacy \
                     directories; --policy and --legacy-dir apply only when no daemon answers"
                );
            }
            Ok(Some(answer))
        }
        Err(e) => {
            eprintln!("hookline: {e}; answering from replayed history (never authoritative)");
            Ok(None)
        }
    }
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

/// The tmux server the caller's `$TMUX` names (its first comma-separated field), so that a
/// daemon started elsewhere reads and types into the caller's server, not its own default.
fn caller_tmux_socket() -> Option<PathBuf> {
    let tmux = std::env::var_os("TMUX")?;
    let socket = tmux.to_str()?.split(',').next()?;
    (!socket.is_empty()).then(|| PathBuf::from(socket))
}
