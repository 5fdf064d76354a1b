//! One module per subcommand, plus what they share.

mod cursors;
mod daemon;
mod decide;
mod deliver;
mod demo;
mod doctor;
mod explain;
mod forward;
mod install;
mod lease;
mod notify;
mod pane;
mod profiles;
mod prune;
mod serve;
mod status;
mod tmux;
mod top;
mod uninstall;
mod watch;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use hookline::daemon::{Client, ClientError};
use hookline::engine::{Engine, EngineConfig, History, Purpose};
use hookline::ingest::follow::FollowNotice;
use hookline::ingest::reader::{ReaderConfig, Start};
use hookline::profile::{OverlayDirs, Profiles};

use crate::cli::{Cli, Command, DaemonSocketArgs, DirArgs, PolicyArgs, SourceArgs};

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
        Command::Cursors(args) => cursors::run(&args),
        Command::Install(args) => install::run(&args),
        Command::Uninstall(args) => uninstall::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Decide(args) => decide::run(args),
        Command::Lease(args) => lease::run(&args),
        Command::Serve(args) => serve::run(args),
        Command::Forward(args) => forward::run(args),
        Command::Pane(args) => pane::run(&args),
        Command::Daemon(args) => daemon::run(args),
        Command::Deliver(args) => deliver::run(&args),
        Command::Notify(args) => notify::run(&args),
        Command::Top(args) => top::run(&args),
        Command::Tmux(args) => tmux::run(&args),
        Command::Web(args) => web::run(&args),
        Command::DemoAgent(args) => demo::run_agent(&args),
    }
}

/// How a command reads the events directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// What is there now, once: a directory named that is not there is an error, since it
    /// would look exactly like one with no events.
    Once,
    /// Following what arrives: a directory not there yet is waited for, and said so once.
    Following,
    /// Claiming it (`daemon`): a directory not there yet is created by the command itself.
    Claiming,
}

/// The events directory: `--events-dir`, else `$HOOKLINE_EVENTS_DIR`, else the relay's
/// default; checked as `reading` asks (see [`hookline::paths::check_events_dir`]).
fn events_dir(args: &DirArgs, reading: Reading) -> Result<PathBuf, Box<dyn std::error::Error>> {
    use hookline::EventsDirProblem;
    use hookline::paths;
    let (dir, from) = paths::events_dir(args.events_dir.as_deref())?;
    match paths::check_events_dir(&dir, from) {
        Err(hookline::Error::EventsDir { problem: EventsDirProblem::Missing, .. }) | Ok(())
            if reading == Reading::Following && !dir.exists() =>
        {
            eprintln!("hookline: waiting for {} to appear (it does not exist yet)", dir.display());
        }
        Err(hookline::Error::EventsDir { problem: EventsDirProblem::Missing, .. })
            if reading == Reading::Claiming => {}
        Ok(()) => {}
        Err(e) => return Err(e.into()),
    }
    // A one-shot reader's answer from a directory the relay never wrote looks like a quiet
    // one's (a follower waits for the first event there, as the daemon started first does).
    static NOTED: AtomicBool = AtomicBool::new(false);
    if reading == Reading::Once
        && let Some(note) = paths::unwritten_note(&dir)
        && !NOTED.swap(true, Ordering::Relaxed)
    {
        eprintln!("hookline: warning: {note}");
    }
    Ok(dir)
}

/// The session a SESSION argument names in a read-only command: by its id or tag, else by an
/// unambiguous prefix of either (see [`hookline::state::Tracker::lookup`]); an ambiguous prefix
/// is an error listing the candidates.
fn lookup<'t>(
    tracker: &'t hookline::state::Tracker,
    query: &str,
) -> Result<Option<hookline::state::Found<'t>>, Box<dyn std::error::Error>> {
    Ok(tracker.lookup(query)?)
}

/// Says on stderr that no session has the name `query`, and the known ones it resembles or
/// starts (a lookup's candidates and similar names).
fn say_no_such_session(query: &str, answer: &hookline::protocol::LookupAnswer) {
    let mut line = format!("hookline: no session with id or tag {query:?}");
    if !answer.candidates.is_empty() {
        line.push_str(&format!(
            "; it is the start of {} (input and nudge name a session exactly)",
            answer.candidates.join(", ")
        ));
    } else if !answer.similar.is_empty() {
        line.push_str(&format!("; known sessions it resembles: {}", answer.similar.join(", ")));
    } else {
        line.push_str(" (none resembles it: a session not started yet looks the same)");
    }
    eprintln!("{line}");
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
/// The signal that set [`STOP`].
static SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::Relaxed);
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

/// The exit code of a command stopped by the signal that arrived, as a shell reports a
/// process killed by it (130 for SIGINT, 143 for SIGTERM).
fn stopped_code() -> ExitCode {
    let signal = SIGNAL.load(Ordering::Relaxed).clamp(1, 127);
    ExitCode::from(128 + signal as u8)
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
    reading: Reading,
    start: Start,
    profiles: Profiles,
) -> Result<ReaderConfig, Box<dyn std::error::Error>> {
    let mut config = ReaderConfig::new(events_dir(&source.dir, reading)?, start, profiles);
    config.legacy_dirs = source.legacy_dirs.clone();
    Ok(config)
}

/// The engine configuration the arguments name, and the reader of its events directory.
fn engine_parts(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    reading: Reading,
    purpose: Purpose,
) -> Result<(EngineConfig, ReaderConfig), Box<dyn std::error::Error>> {
    let profiles = profiles()?;
    let policy = policy(policy_args, &profiles)?;
    engine_parts_with(source, reading, purpose, profiles, policy)
}

/// [`engine_parts`], with the profiles and policy already loaded.
fn engine_parts_with(
    source: &SourceArgs,
    reading: Reading,
    purpose: Purpose,
    profiles: Profiles,
    policy: hookline::decide::Policy,
) -> Result<(EngineConfig, ReaderConfig), Box<dyn std::error::Error>> {
    let reader = reader_config(source, reading, Start::Beginning, profiles.clone())?;
    let mut config = EngineConfig::new(profiles, policy, reader.events_dir.clone());
    config.purpose = purpose;
    Ok((config, reader))
}

/// An engine that replays every event present: a one-shot reader's view, never
/// authoritative, for display. Its staleness windows are the policy's, as `decide` and `serve`
/// see them (the defaults, with a warning, when the policy cannot be used).
fn replay(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    history: History,
) -> Result<Engine, Box<dyn std::error::Error>> {
    let profiles = profiles()?;
    let policy = shown_policy(policy_args, &profiles);
    let (mut config, reader) =
        engine_parts_with(source, Reading::Once, Purpose::Display, profiles, policy)?;
    config.history = history;
    replay_with(config, reader)
}

/// [`replay`], with the configuration already made; what the engine says goes to stderr.
fn replay_with(
    config: EngineConfig,
    reader: ReaderConfig,
) -> Result<Engine, Box<dyn std::error::Error>> {
    let mut engine = Engine::replay(config, reader)?;
    for notice in engine.take_notices() {
        eprintln!("hookline: {notice}");
    }
    Ok(engine)
}

/// The fallback producer `--transcripts DIR --transcripts-cli CLI` asks for, if it does.
fn unhooked(
    profiles: &Profiles,
    args: &crate::cli::TranscriptArgs,
) -> Result<Option<hookline::transcript::Unhooked>, Box<dyn std::error::Error>> {
    let (Some(dir), Some(cli)) = (&args.transcripts, &args.transcripts_cli) else {
        return Ok(None);
    };
    let profile = profiles.get(cli).ok_or_else(|| crate::Error::UnknownCli {
        name: cli.to_owned(),
        known: profiles.iter().filter(|p| p.transcript.is_some()).map(|p| p.name.clone()).collect(),
    })?;
    let spec = profile.transcript.clone().ok_or_else(|| {
        format!("profile {cli:?} has no [transcript] table: hookline cannot read its transcripts")
    })?;
    Ok(Some(hookline::transcript::Unhooked::new(cli, dir, spec)))
}

/// The daemon a display reads: `--daemon SOCKET` (which must answer: an error otherwise),
/// else the events directory's when one answers; `None` when none does (the caller reads the
/// events directory itself).
fn connect_daemon(
    dir: &DirArgs,
    daemon: &DaemonSocketArgs,
) -> Result<Option<Client>, Box<dyn std::error::Error>> {
    if let Some(socket) = &daemon.daemon {
        return Ok(Some(Client::connect_socket(socket)?));
    }
    let (path, _) = hookline::paths::events_dir(dir.events_dir.as_deref())?;
    match Client::connect(&path) {
        Ok(client) => Ok(Some(client)),
        Err(ClientError::NotRunning { .. }) => Ok(None),
        Err(e) => {
            eprintln!("hookline: {}; reading the events directory instead", crate::error_chain(&e));
            Ok(None)
        }
    }
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
    let dir = events_dir(&source.dir, Reading::Once)?;
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

/// The policy for a command that only displays states (`status`, `explain`, `top`, `tmux`):
/// as [`policy`], but a policy that cannot be used is a warning, said once, and the defaults
/// are shown instead of nothing. (`decide`, `serve`, `daemon` and `notify` act on it: for
/// them it stays an error.)
fn shown_policy(args: &PolicyArgs, profiles: &Profiles) -> hookline::decide::Policy {
    policy(args, profiles).unwrap_or_else(|e| {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            let e = crate::error_chain(&*e);
            eprintln!("hookline: warning: {e}; showing states with the default policy");
        }
        hookline::decide::Policy::default()
    })
}

/// The journal the policy asks for, beside the events directory by default.
fn journal(
    policy: &hookline::decide::Policy,
    events_dir: &std::path::Path,
) -> Option<hookline::decide::Journal> {
    hookline::engine::journal_of(policy, events_dir)
}

/// The caller's tmux server: `--tmux-socket`, else `$TMUX`'s, else tmux's default socket as
/// this process sees it; sent to a daemon, which reads and types into that server only,
/// never its own default.
fn caller_tmux_socket(given: Option<&PathBuf>) -> Option<PathBuf> {
    given.cloned().or_else(hookline::pane::caller_socket)
}

/// What a live engine's follow thread says.
enum Update {
    /// An event was applied.
    Event,
    /// A notice of the follow loop.
    Notice(FollowNotice),
    /// The follow loop stopped on an error.
    Failed(String),
}

/// An engine that replayed history, then follows the events directory on a thread of its
/// own, saying on `updates` after each event it applied.
struct Live {
    running: hookline::engine::Running,
}

impl Live {
    /// Starts following; each update goes to `updates`, wrapped by `wrap`.
    fn start<T: Send + 'static>(
        source: &SourceArgs,
        policy_args: &PolicyArgs,
        updates: std::sync::mpsc::Sender<T>,
        wrap: fn(Update) -> T,
    ) -> Result<Live, Box<dyn std::error::Error>> {
        use std::sync::Mutex;

        use hookline::decide::Decider;
        use hookline::engine::{Note, Observer, RunOptions, Source, Step};

        struct Tell<T> {
            updates: Mutex<std::sync::mpsc::Sender<T>>,
            wrap: fn(Update) -> T,
        }
        impl<T: Send> Observer for Tell<T> {
            fn applied(&mut self, _: &Step, _: &Decider) {
                let updates = self.updates.lock().unwrap_or_else(|p| p.into_inner());
                let _ = updates.send((self.wrap)(Update::Event));
            }
        }

        let profiles = profiles()?;
        let policy = shown_policy(policy_args, &profiles);
        let (config, reader) =
            engine_parts_with(source, Reading::Following, Purpose::Display, profiles, policy)?;
        let engine = Engine::open(config, Source::directory(reader))?;
        let notes = Mutex::new(updates.clone());
        let options = RunOptions::new(move |note| {
            let update = match note {
                Note::Follow(notice) => Update::Notice(notice),
                Note::WatcherStopped(e) => Update::Failed(e.to_string()),
                other => Update::Notice(FollowNotice::Reader(
                    hookline::ingest::reader::Notice::Degraded(other.to_string()),
                )),
            };
            let _ = notes.lock().unwrap_or_else(|p| p.into_inner()).send(wrap(update));
        })
        .observed(Tell { updates: Mutex::new(updates), wrap });
        Ok(Live { running: engine.spawn(options) })
    }

    /// Every session's snapshot now, most recently active first.
    fn snapshots(&self) -> Vec<hookline::state::Snapshot> {
        self.running.snapshots()
    }
}
