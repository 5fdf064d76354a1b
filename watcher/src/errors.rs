//! The library's error types, together in one place: [`Error`] and the small types of single
//! operations beside it, each naming the path or value at fault and keeping its cause as the
//! error's [`source`](std::error::Error::source). [`Error::fix`] is the one place a fix for the
//! user is written.
//!
//! This module is part of the model layer (see "Layers" in the crate docs): it imports nothing
//! from the modules above it. The errors of the engine's operations, which name types of the
//! layers below the engine, live with it in `engine/errors.rs`.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

/// Everything that can go wrong in hookline's library.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A filesystem operation failed.
    Io {
        /// What was being done ("read", "create dir", ...).
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The events format library refused something.
    Format(hookline_relay::Error),
    /// A configuration file (a profile, the policy, the notifications) is wrong.
    Config(ConfigError),
    /// A [`Sink`](crate::ingest::follow::Sink) could not take an event.
    Sink(Box<dyn std::error::Error + Send + Sync>),
    /// A durable cursor cannot be opened or removed.
    Cursor(CursorError),
    /// A tmux command failed or did not answer (no such pane, no server).
    Tmux {
        /// What was being done ("capture", "paste into", ...).
        op: &'static str,
        /// The tmux target.
        target: String,
        /// What went wrong.
        source: TmuxProblem,
    },
    /// Talking to the NATS server (or cluster) failed.
    Nats {
        /// What was being done ("create stream", "publish", ...).
        op: &'static str,
        /// The stream, consumer or subject involved.
        target: String,
        /// The client's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A durable consumer is already being read by another process.
    ConsumerInUse {
        /// The consumer.
        name: String,
        /// Who reads it (host and pid), as it answered.
        holder: String,
    },
    /// A daemon cannot start.
    DaemonStart(DaemonStartError),
    /// The live events a confirmation waits for stopped arriving (the daemon's watcher
    /// failed or it is shutting down): nothing can be confirmed any more.
    EventsStopped {
        /// Why.
        why: String,
    },
    /// An events directory that cannot be read as one.
    EventsDir {
        /// The path.
        path: PathBuf,
        /// Who named it.
        from: EventsDirFrom,
        /// What is wrong with it.
        problem: EventsDirProblem,
    },
    /// A session prefix that more than one session's id or tag begins with.
    AmbiguousSession {
        /// The prefix given.
        query: String,
        /// The sessions it names, as [`SessionKey::describe`](crate::canonical::SessionKey::describe) writes them.
        candidates: Vec<String>,
    },
    /// A transcript path names something that is not a regular file (a directory, a FIFO
    /// that would block a reader): it is not followed.
    TranscriptNotAFile {
        /// The path.
        path: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io { op, path: path.into(), source }
    }

    /// How the user can fix this error, when there is something to say.
    pub fn fix(&self) -> Option<String> {
        Some(match self {
            Error::Tmux { .. } => "check the target with `tmux list-panes -a`; pass --tmux-socket PATH when the pane is on another server than $TMUX's".into(),
            Error::ConsumerInUse { .. } => {
                "stop the other reader, or give this one its own --consumer NAME".into()
            }
            Error::EventsDir { from, problem, .. } => {
                match problem {
                    EventsDirProblem::Relative => format!("give {from} an absolute path"),
                    _ => format!(
                        "check the path: it must be the directory the relay writes to (as \
                         `hookline doctor` shows it), or leave {from} unset for the default"
                    ),
                }
            }
            Error::AmbiguousSession { .. } => {
                "give more of the session id or tag (or all of it)".into()
            }
            Error::DaemonStart(DaemonStartError::Running { pid: Some(pid), .. }) => {
                format!("use it (decide and status talk to it), or stop it first (kill {pid})")
            }
            Error::DaemonStart(DaemonStartError::SocketPathTooLong { .. }) => {
                "use a shorter --events-dir".into()
            }
            Error::DaemonStart(DaemonStartError::SocketInTheWay { path }) => {
                format!("move {} out of the way and start the daemon again", path.display())
            }
            Error::Cursor(CursorError::Damaged { .. }) => {
                "delete it to restart that consumer from the beginning".into()
            }
            _ => return None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Error::Format(e) => write!(f, "{e}"),
            Error::Config(e) => write!(f, "{e}"),
            Error::Sink(e) => write!(f, "{e}"),
            Error::Nats { op, target, .. } => write!(f, "cannot {op} {target}"),
            Error::ConsumerInUse { name, holder } => {
                write!(f, "consumer {name} is being read by {holder}")
            }
            Error::Cursor(e) => write!(f, "{e}"),
            Error::Tmux { op, target, .. } => write!(f, "cannot {op} tmux pane {target:?}"),
            Error::EventsDir { path, from, problem } => {
                let problem = match problem {
                    EventsDirProblem::Relative => "not an absolute path",
                    EventsDirProblem::Missing => "no such directory",
                    EventsDirProblem::NotADirectory => "not a directory",
                };
                write!(f, "{from} {}: {problem}", path.display())
            }
            Error::TranscriptNotAFile { path } => {
                write!(f, "transcript {} is not a regular file; not followed", path.display())
            }
            Error::AmbiguousSession { query, candidates } => {
                let list: Vec<String> = candidates.iter().map(|c| format!("{c:?}")).collect();
                write!(
                    f,
                    "{query:?} is the start of {} sessions' ids or tags: {}",
                    candidates.len(),
                    list.join(", ")
                )
            }
            Error::DaemonStart(e) => write!(f, "{e}"),
            Error::EventsStopped { why } => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Tmux { source, .. } => Some(source),
            Error::Nats { source, .. } => Some(source.as_ref()),
            // Shown as themselves: their causes are the error's.
            Error::Format(e) => e.source(),
            Error::Config(e) => e.source(),
            Error::Sink(e) => e.source(),
            Error::Cursor(e) => e.source(),
            Error::DaemonStart(e) => e.source(),
            Error::ConsumerInUse { .. }
            | Error::EventsStopped { .. }
            | Error::EventsDir { .. }
            | Error::AmbiguousSession { .. }
            | Error::TranscriptNotAFile { .. } => None,
        }
    }
}

impl From<hookline_relay::Error> for Error {
    fn from(e: hookline_relay::Error) -> Error {
        Error::Format(e)
    }
}

impl From<CursorError> for Error {
    fn from(e: CursorError) -> Error {
        match e {
            CursorError::Events(e) => *e,
            e => Error::Cursor(e),
        }
    }
}

impl From<DaemonStartError> for Error {
    fn from(e: DaemonStartError) -> Error {
        match e {
            DaemonStartError::Events(e) => *e,
            e => Error::DaemonStart(e),
        }
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Error {
        Error::Config(e)
    }
}

/// Why a durable cursor ([`Cursor::open`](crate::ingest::cursor::Cursor::open),
/// [`cursor::remove`](crate::ingest::cursor::remove)) cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum CursorError {
    /// A name that could reach outside the cursors directory.
    BadName {
        /// The name given.
        name: String,
    },
    /// Another process has this cursor open.
    InUse {
        /// The cursor.
        name: String,
        /// Its lock file.
        lock: PathBuf,
    },
    /// No cursor of that name is saved.
    NoSuch {
        /// The name given.
        name: String,
        /// The cursors saved.
        known: Vec<String>,
    },
    /// The cursor file cannot be read back.
    Damaged {
        /// The cursor file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// The events directory, or the cursor's files in it, cannot be used (an I/O error, a
    /// directory another user owns); shown as that error.
    Events(Box<Error>),
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CursorError::BadName { name } => write!(
                f,
                "bad cursor name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'"
            ),
            CursorError::InUse { name, lock } => write!(
                f,
                "cursor {name:?} is in use by another process (lock {}); give each consumer its own cursor",
                lock.display()
            ),
            CursorError::NoSuch { name, known } if known.is_empty() => {
                write!(f, "no cursor named {name:?} (none is saved)")
            }
            CursorError::NoSuch { name, known } => {
                write!(f, "no cursor named {name:?} (cursors: {})", known.join(", "))
            }
            CursorError::Damaged { path, .. } => {
                write!(f, "cursor file {} is damaged", path.display())
            }
            CursorError::Events(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CursorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CursorError::Damaged { source, .. } => Some(source),
            CursorError::Events(e) => e.source(),
            CursorError::BadName { .. }
            | CursorError::InUse { .. }
            | CursorError::NoSuch { .. } => None,
        }
    }
}

impl From<Error> for CursorError {
    fn from(e: Error) -> CursorError {
        match e {
            Error::Cursor(e) => e,
            e => CursorError::Events(Box::new(e)),
        }
    }
}

/// Why a daemon cannot claim its events directory
/// ([`Claim::take`](crate::daemon::Claim::take)) or listen on its socket
/// ([`Claim::listen`](crate::daemon::Claim::listen)).
#[derive(Debug)]
#[non_exhaustive]
pub enum DaemonStartError {
    /// Another `hookline daemon` holds the events directory.
    Running {
        /// The events directory.
        dir: PathBuf,
        /// The pid its pid file names, when it can be read.
        pid: Option<u32>,
        /// The lock file it holds.
        lock: PathBuf,
    },
    /// The daemon's socket path is longer than a Unix socket address holds.
    SocketPathTooLong {
        /// The path.
        path: PathBuf,
        /// The most bytes a socket path may have.
        max: usize,
    },
    /// Something other than a socket is where the daemon's socket goes; it was left alone.
    SocketInTheWay {
        /// The path.
        path: PathBuf,
    },
    /// The events directory, the lock, the pid file or the socket cannot be used (an I/O
    /// error, a directory others can write); shown as that error.
    Events(Box<Error>),
}

impl fmt::Display for DaemonStartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DaemonStartError::Running { dir, pid, lock } => {
                let who = pid.map_or("a process whose pid is not recorded".into(), |pid| {
                    format!("pid {pid}")
                });
                write!(
                    f,
                    "another hookline daemon ({who}) holds {} (lock {}); one daemon per events directory",
                    dir.display(),
                    lock.display()
                )
            }
            DaemonStartError::SocketPathTooLong { path, max } => write!(
                f,
                "socket path {} is longer than the {max} bytes a Unix socket address holds",
                path.display()
            ),
            DaemonStartError::SocketInTheWay { path } => {
                write!(f, "{} is not a socket; left alone", path.display())
            }
            DaemonStartError::Events(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DaemonStartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DaemonStartError::Events(e) => e.source(),
            DaemonStartError::Running { .. }
            | DaemonStartError::SocketPathTooLong { .. }
            | DaemonStartError::SocketInTheWay { .. } => None,
        }
    }
}

impl From<Error> for DaemonStartError {
    fn from(e: Error) -> DaemonStartError {
        match e {
            Error::DaemonStart(e) => e,
            e => DaemonStartError::Events(Box::new(e)),
        }
    }
}

impl From<hookline_relay::Error> for DaemonStartError {
    fn from(e: hookline_relay::Error) -> DaemonStartError {
        DaemonStartError::Events(Box::new(Error::Format(e)))
    }
}

/// What went wrong running a tmux command ([`Error::Tmux`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum TmuxProblem {
    /// tmux could not be started, written to or waited for.
    Io {
        /// What was being done ("run", "write to", "wait for").
        op: &'static str,
        /// The cause.
        source: io::Error,
    },
    /// tmux did not answer in time; it was killed.
    Timeout {
        /// How long it was given.
        after: Duration,
    },
    /// tmux exited with a failure.
    Failed {
        /// How it exited.
        status: ExitStatus,
        /// What it wrote on stderr (trimmed; empty when it said nothing), as tmux words it:
        /// `no server running on /tmp/tmux-1000/default`, `can't find pane: %9`.
        stderr: String,
    },
    /// tmux answered, but not with what was asked for.
    Unexpected {
        /// What was asked for ("a pid", "a pane id").
        wanted: &'static str,
        /// What tmux gave.
        answer: String,
    },
}

impl fmt::Display for TmuxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmuxProblem::Io { op, .. } => write!(f, "cannot {op} tmux"),
            TmuxProblem::Timeout { after } => write!(f, "tmux did not answer within {after:?}"),
            TmuxProblem::Failed { status, stderr } if stderr.is_empty() => {
                write!(f, "tmux exited with {status}")
            }
            TmuxProblem::Failed { stderr, .. } => f.write_str(stderr),
            TmuxProblem::Unexpected { wanted, answer } => {
                write!(f, "tmux gave {answer:?}, not {wanted}")
            }
        }
    }
}

impl std::error::Error for TmuxProblem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TmuxProblem::Io { source, .. } => Some(source),
            TmuxProblem::Timeout { .. }
            | TmuxProblem::Failed { .. }
            | TmuxProblem::Unexpected { .. } => None,
        }
    }
}

/// Why a [`daemon::Client`](crate::daemon::Client) got no answer from a daemon. Every one of
/// them means "no live authority answered": a caller falls back to replayed history, which
/// never authorizes input.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// No daemon listens on the socket: it does not exist, or nobody accepts on it (a daemon
    /// that died left it behind).
    NotRunning {
        /// The socket.
        socket: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Talking to the daemon failed (it went away, or did not reply in time).
    Io {
        /// The socket.
        socket: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The daemon's reply cannot be read, or the connection ended before it.
    Protocol {
        /// The socket.
        socket: PathBuf,
        /// What was wrong.
        problem: String,
        /// The cause, when the reply (or the request) could not be decoded (or encoded).
        source: Option<serde_json::Error>,
    },
    /// The daemon answered with an error (a bad request, a stopped watcher, too many clients).
    Refused {
        /// The socket.
        socket: PathBuf,
        /// The daemon's error.
        error: String,
    },
}

impl ClientError {
    /// Whether no daemon listens at all (as opposed to one that failed to answer).
    pub fn is_not_running(&self) -> bool {
        matches!(self, ClientError::NotRunning { .. })
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::NotRunning { socket, .. } => {
                write!(f, "no hookline daemon answers on {}", socket.display())
            }
            ClientError::Io { socket, .. } => {
                write!(f, "the hookline daemon on {} did not answer", socket.display())
            }
            ClientError::Protocol { socket, problem, .. } => {
                write!(f, "the hookline daemon on {}: {problem}", socket.display())
            }
            ClientError::Refused { socket, error } => {
                write!(f, "the hookline daemon on {} refused: {error}", socket.display())
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::NotRunning { source, .. } | ClientError::Io { source, .. } => Some(source),
            ClientError::Protocol { source, .. } => {
                source.as_ref().map(|e| e as &(dyn std::error::Error + 'static))
            }
            ClientError::Refused { .. } => None,
        }
    }
}

/// Which of hookline's TOML files a [`ConfigError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigKind {
    /// The decision policy (`policy.toml`).
    Policy,
    /// The notifications file (`notify.toml`, `[[notify]]` rules).
    Notifications,
    /// A profile or a profile overlay.
    Profile,
}

impl ConfigKind {
    /// The word errors start with: `policy`, `notifications`, `profile`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigKind::Policy => "policy",
            ConfigKind::Notifications => "notifications",
            ConfigKind::Profile => "profile",
        }
    }
}

/// A configuration file (the policy, the notifications file, a profile or overlay) that
/// cannot be used, or a warning about one: `policy p.toml:3:1: nudge.min-idel: unknown key
/// (did you mean nudge.min-idle?)`. The one config error of hookline's TOML files.
///
/// A TOML error (bad syntax, a value of the wrong type) is not kept as the source: the
/// message is that error said again at its key, with what was expected instead. A file that
/// cannot be read keeps the I/O error as its [`source`](std::error::Error::source).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfigError {
    /// Which kind of file.
    pub kind: ConfigKind,
    /// The file (`<text>`, `embedded:claude.toml` for a shipped profile).
    pub file: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// The 1-based column (in characters), when known.
    pub column: Option<usize>,
    /// The key path at fault (`notify[0].run`, `classifier.command`), when one is.
    pub key: Option<String>,
    /// What is wrong, and how to fix it when that is not obvious.
    pub message: String,
    /// The cause, when the file could not be read.
    pub source: Option<Arc<io::Error>>,
}

/// Equal when they say the same thing (two I/O causes of the same kind are the same).
impl PartialEq for ConfigError {
    fn eq(&self, other: &ConfigError) -> bool {
        let cause = |e: &ConfigError| e.source.as_ref().map(|e| e.kind());
        (self.kind, &self.file, self.line, self.column, &self.key, &self.message)
            == (other.kind, &other.file, other.line, other.column, &other.key, &other.message)
            && cause(self) == cause(other)
    }
}

impl Eq for ConfigError {}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.as_str(), self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A checkpoint a reader did not start from: it replays the whole history instead (see
/// [`crate::checkpoint`]). Never fatal; said on stderr.
#[derive(Debug, Clone)]
pub struct CheckpointIgnored {
    /// The checkpoint file.
    pub path: PathBuf,
    /// Why it was not used.
    pub why: CheckpointProblem,
}

/// Why a checkpoint was not used.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CheckpointProblem {
    /// Not a checkpoint file at all (another program's file, or another kind of checkpoint).
    Foreign(String),
    /// The file cannot be read.
    Unreadable(Arc<io::Error>),
    /// Shorter or longer than its header says: a write cut short.
    Truncated {
        /// The length the header gives.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// Its content does not match its digest, or cannot be read back.
    Damaged {
        /// What is wrong ("its content does not match its digest", "cannot be read back").
        why: &'static str,
        /// The cause, when a decoder gave one.
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// Folded by another state format, hookline version, set of profiles, policy, legacy
    /// directories or history length than this reader's.
    Mismatch {
        /// What differs.
        what: &'static str,
        /// The checkpoint's.
        saved: String,
        /// This reader's.
        current: String,
    },
    /// Saved for another events directory (one deleted and created again at the same path),
    /// or ahead of the directory's counter.
    OtherDirectory(String),
    /// This reader keeps every transition of some sessions (`explain`), which a checkpoint
    /// does not.
    NeedsFullHistory,
}

impl fmt::Display for CheckpointIgnored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "checkpoint {} not used: ", self.path.display())?;
        match &self.why {
            CheckpointProblem::Foreign(why) => write!(f, "not a hookline checkpoint ({why})"),
            CheckpointProblem::Truncated { expected, found } => {
                write!(f, "truncated ({found} bytes of {expected})")
            }
            CheckpointProblem::Unreadable(_) => write!(f, "cannot be read"),
            CheckpointProblem::Damaged { why, .. } => write!(f, "damaged ({why})"),
            CheckpointProblem::Mismatch { what, saved, current } => {
                write!(f, "built with {what} {saved}, this reader has {current}")
            }
            CheckpointProblem::OtherDirectory(why) => write!(f, "another events directory ({why})"),
            CheckpointProblem::NeedsFullHistory => {
                write!(f, "it keeps the last transitions of each session, this reader needs all")
            }
        }
    }
}

impl std::error::Error for CheckpointIgnored {
    /// The cause of the problem, which the message says itself.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            CheckpointProblem::Unreadable(e) => Some(e.as_ref()),
            CheckpointProblem::Damaged { source: Some(e), .. } => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// An error and its causes on one line (`cannot X: because: deeper`), a cause left out when
/// the line already says it.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    causes.fold(error.to_string(), |line, cause| {
        let cause = cause.to_string();
        if line.contains(&cause) { line } else { format!("{line}: {cause}") }
    })
}

/// Who chose the events directory a command reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventsDirFrom {
    /// The `--events-dir` flag.
    Flag,
    /// The `HOOKLINE_EVENTS_DIR` variable.
    Env,
    /// The relay's default under the state directory (`$XDG_STATE_HOME`, else `~/.local/state`).
    Default,
}

impl fmt::Display for EventsDirFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EventsDirFrom::Flag => "--events-dir",
            EventsDirFrom::Env => crate::format::location::ENV_EVENTS_DIR,
            EventsDirFrom::Default => "the default events directory",
        })
    }
}

/// What is wrong with an events directory someone named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventsDirProblem {
    /// The path is relative: the relay, run by a CLI in another directory, would not find it.
    Relative,
    /// Nothing is there.
    Missing,
    /// Something that is not a directory is there.
    NotADirectory,
}
