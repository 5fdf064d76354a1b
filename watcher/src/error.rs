use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in hookline's library.
#[derive(Debug)]
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
    Sink(crate::ingest::follow::SinkError),
    /// A cursor name that could reach outside the cursors directory.
    BadCursorName {
        /// The name given.
        name: String,
    },
    /// Another process has this cursor open.
    CursorInUse {
        /// The cursor.
        name: String,
        /// Its lock file.
        path: PathBuf,
    },
    /// No cursor of that name is saved.
    NoSuchCursor {
        /// The name given.
        name: String,
        /// The cursors saved.
        known: Vec<String>,
    },
    /// A cursor file that cannot be read back.
    BadCursor {
        /// The cursor file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// No profile has this name.
    UnknownCli {
        /// The name given.
        name: String,
        /// The profiles that can be installed.
        known: Vec<String>,
    },
    /// The profile has no `[install]` table.
    NotInstallable {
        /// The profile name.
        name: String,
    },
    /// The profile has no such scope.
    UnknownScope {
        /// The profile name.
        cli: String,
        /// The scope given.
        scope: String,
        /// The scopes the profile declares.
        known: Vec<String>,
    },
    /// A settings path template needs `$HOME`, which is unset or relative.
    NoHome {
        /// The template.
        template: String,
    },
    /// No `hookline-relay` executable was found.
    NoRelay {
        /// Where it was looked for.
        searched: Vec<PathBuf>,
    },
    /// The relay path given is not an executable file.
    BadRelay {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A settings file cannot be edited safely: it is not JSON, not UTF-8, or not shaped as
    /// expected. It was left untouched.
    Settings {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        problem: DocError,
    },
    /// The settings file is read-only; it was left untouched.
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// The settings path is a symlink whose target does not exist.
    DanglingSymlink {
        /// The link.
        link: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// Following the settings path's symlinks did not end (a loop or a very long chain).
    SymlinkLoop {
        /// The path given.
        path: PathBuf,
    },
    /// A tmux command failed or did not answer (no such pane, no server).
    Tmux {
        /// What was being done ("capture", "paste into", ...).
        op: &'static str,
        /// The tmux target.
        target: String,
        /// What tmux said.
        reason: String,
    },
    /// No tmux server answers on the socket (none was started, or it was killed).
    NoTmuxServer {
        /// The socket tmux tried, as it named it.
        socket: String,
    },
    /// The settings file kept changing while we tried to write it.
    KeepsChanging {
        /// The file.
        path: PathBuf,
        /// How many times it was re-read.
        attempts: u32,
    },
    /// The settings path (or the end of its symlinks) is not a regular file; it was neither
    /// opened for reading in a way that could block nor written.
    NotRegularFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: crate::install::file::NodeKind,
    },
    /// The settings file has other hard links, which an atomic write would split from it.
    HardLinked {
        /// The file.
        path: PathBuf,
        /// How many names it has.
        links: u64,
    },
    /// Talking to the NATS server (or cluster) failed.
    Nats {
        /// What was being done ("create stream", "publish", ...).
        op: &'static str,
        /// The stream, consumer or subject involved.
        target: String,
        /// The client's reason.
        reason: String,
    },
    /// A durable consumer is already being read by another process.
    ConsumerInUse {
        /// The consumer.
        name: String,
        /// Who reads it (host and pid), as it answered.
        holder: String,
    },
    /// Another `hookline daemon` holds the events directory.
    DaemonRunning {
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
        from: crate::paths::EventsDirFrom,
        /// What is wrong with it.
        problem: crate::paths::EventsDirProblem,
    },
    /// A session prefix that more than one session's id or tag begins with.
    AmbiguousSession {
        /// The prefix given.
        query: String,
        /// The sessions it names, as [`SessionKey::describe`](crate::canonical::SessionKey::describe) writes them.
        candidates: Vec<String>,
    },
    /// A file is where hookline's plugin goes, but it is not hookline's plugin; it was left
    /// untouched.
    NotOurPlugin {
        /// The file.
        path: PathBuf,
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
            Error::UnknownCli { known, .. } => format!("use one of: {}", known.join(", ")),
            Error::UnknownScope { known, .. } => format!("use one of: {}", known.join(", ")),
            Error::NoHome { .. } => "set HOME, or pass --settings PATH".into(),
            Error::NoRelay { .. } => {
                format!("{}, or pass --relay PATH", crate::install::PUT_ON_PATH)
            }
            Error::Settings { problem, .. } => problem.fix().to_owned(),
            Error::ReadOnly { path } => format!(
                "make it writable (chmod u+w {}) and run again, or leave it as it is",
                path.display()
            ),
            Error::DanglingSymlink { link, .. } => {
                format!("create the file the link points to, or remove the link {}", link.display())
            }
            Error::Tmux { .. } => "check the target with `tmux list-panes -a`; pass --tmux-socket PATH when the pane is on another server than $TMUX's".into(),
            Error::KeepsChanging { .. } => {
                "close the CLI's running sessions and run the command again".into()
            }
            Error::NoTmuxServer { .. } => "start tmux first, or name the server's socket with \
                                           --tmux-socket PATH (the PATH of `tmux -S PATH`)"
                .into(),
            Error::ConsumerInUse { .. } => {
                "stop the other reader, or give this one its own --consumer NAME".into()
            }
            Error::NotRegularFile { path, .. } => format!(
                "move {} out of the way (or point the link at a regular file), or pass --settings PATH",
                path.display()
            ),
            Error::EventsDir { from, problem, .. } => {
                use crate::paths::EventsDirProblem;
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
            Error::HardLinked { path, .. } => format!(
                "keep one copy and make the other names symlinks to it (ln -sf {} OTHER-NAME), then run again",
                path.display()
            ),
            Error::DaemonRunning { pid: Some(pid), .. } => {
                format!("use it (decide and status talk to it), or stop it first (kill {pid})")
            }
            Error::SocketPathTooLong { .. } => "use a shorter --events-dir".into(),
            Error::SocketInTheWay { path } => {
                format!("move {} out of the way and start the daemon again", path.display())
            }
            Error::NotOurPlugin { path } => format!(
                "move {} away if it is not needed, or install into another file with --settings PATH",
                path.display()
            ),
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
            Error::Nats { op, target, reason } => write!(f, "cannot {op} {target}: {reason}"),
            Error::ConsumerInUse { name, holder } => {
                write!(f, "consumer {name} is being read by {holder}")
            }
            Error::BadCursorName { name } => write!(
                f,
                "bad cursor name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'"
            ),
            Error::CursorInUse { name, path } => write!(
                f,
                "cursor {name:?} is in use by another process (lock {}); give each consumer its own cursor",
                path.display()
            ),
            Error::NoSuchCursor { name, known } if known.is_empty() => {
                write!(f, "no cursor named {name:?} (none is saved)")
            }
            Error::NoSuchCursor { name, known } => {
                write!(f, "no cursor named {name:?} (cursors: {})", known.join(", "))
            }
            Error::BadCursor { path, reason } => write!(
                f,
                "cursor file {} is damaged ({reason}); delete it to restart that consumer from the beginning",
                path.display()
            ),
            Error::UnknownCli { name, .. } => write!(f, "no profile for {name:?}"),
            Error::NotInstallable { name } => {
                write!(f, "the {name} profile has no [install] table")
            }
            Error::UnknownScope { cli, scope, .. } => {
                write!(f, "{cli} has no scope {scope:?}")
            }
            Error::NoHome { template } => {
                write!(f, "{template} needs HOME, which is unset or relative")
            }
            Error::NoRelay { searched } => {
                let list: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
                write!(f, "hookline-relay not found (looked in {})", list.join(", "))
            }
            Error::BadRelay { path, reason } => {
                write!(f, "relay {}: {reason}", path.display())
            }
            Error::Settings { path, problem } => write!(f, "{}:{problem}", path.display()),
            Error::ReadOnly { path } => {
                write!(f, "{} is read-only; left untouched", path.display())
            }
            Error::DanglingSymlink { link, target } => write!(
                f,
                "{} is a symlink to {}, which does not exist; left untouched",
                link.display(),
                target.display()
            ),
            Error::SymlinkLoop { path } => {
                write!(f, "{}: too many levels of symlinks", path.display())
            }
            Error::Tmux { op, target, reason } => {
                write!(f, "cannot {op} tmux pane {target:?}: {reason}")
            }
            Error::NoTmuxServer { socket } => {
                write!(f, "no tmux server is running (none answers on {socket})")
            }
            Error::KeepsChanging { path, attempts } => {
                write!(f, "{} changed under us {attempts} times; not written", path.display())
            }
            Error::NotRegularFile { path, kind } => {
                write!(f, "{} is {kind}, not a regular file; left untouched", path.display())
            }
            Error::EventsDir { path, from, problem } => {
                use crate::paths::EventsDirProblem;
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
            Error::NotOurPlugin { path } => write!(
                f,
                "{} is not hookline's plugin (its first line differs); left untouched",
                path.display()
            ),
            Error::HardLinked { path, links } => write!(
                f,
                "{} has {links} hard links; left untouched (an atomic write would split them, and writing in place is not atomic)",
                path.display()
            ),
            Error::DaemonRunning { dir, pid, lock } => {
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
            Error::SocketPathTooLong { path, max } => write!(
                f,
                "socket path {} is longer than the {max} bytes a Unix socket address holds",
                path.display()
            ),
            Error::SocketInTheWay { path } => {
                write!(f, "{} is not a socket; left alone", path.display())
            }
            Error::EventsStopped { why } => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Format(e) => e.source(),
            Error::Sink(e) => e.source(),
            _ => None,
        }
    }
}

impl From<hookline_relay::Error> for Error {
    fn from(e: hookline_relay::Error) -> Error {
        Error::Format(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Error {
        Error::Config(e)
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
            ClientError::Protocol { socket, problem } => {
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
            _ => None,
        }
    }
}

/// Why a settings document cannot be edited. Positions are 1-based; columns count characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocError {
    /// The bytes are not UTF-8.
    NotUtf8 {
        /// Line of the first invalid byte.
        line: usize,
        /// Column of the first invalid byte.
        column: usize,
    },
    /// The text is not strict JSON.
    Syntax {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// serde_json's description, without its position.
        message: String,
    },
    /// A value we must edit has the wrong type.
    Shape {
        /// The JSON path (`hooks.Stop`), or `the top level`.
        json_path: String,
        /// What it should be (`an array`).
        expected: &'static str,
        /// Line of the value.
        line: usize,
        /// Column of the value.
        column: usize,
    },
    /// An object on the path we edit has the same key twice.
    DuplicateKey {
        /// The JSON path of the key.
        json_path: String,
        /// Line of the second occurrence.
        line: usize,
        /// Column of the second occurrence.
        column: usize,
    },
    /// An edit produced invalid JSON (a bug in hookline; nothing was written).
    Internal(String),
}

impl DocError {
    /// How the user can fix the file.
    pub fn fix(&self) -> &'static str {
        match self {
            DocError::NotUtf8 { .. } => "save the file as UTF-8",
            DocError::Syntax { .. } => {
                "settings files are strict JSON (no comments, no trailing commas): fix the file and run again"
            }
            DocError::Shape { .. } => "fix the value by hand (see the CLI's hooks documentation)",
            DocError::DuplicateKey { .. } => "merge the two keys by hand",
            DocError::Internal(_) => "please report this bug",
        }
    }
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocError::NotUtf8 { line, column } => write!(f, "{line}:{column}: not UTF-8"),
            DocError::Syntax { line, column, message } => {
                write!(f, "{line}:{column}: not valid JSON: {message}")
            }
            DocError::Shape { json_path, expected, line, column } => {
                write!(f, "{line}:{column}: {json_path} is not {expected}")
            }
            DocError::DuplicateKey { json_path, line, column } => {
                write!(f, "{line}:{column}: duplicate key {json_path}")
            }
            DocError::Internal(what) => write!(f, " internal error: {what}"),
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
/// (did you mean nudge.min-idle?)`.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

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

impl std::error::Error for ConfigError {}

/// A checkpoint a reader did not start from: it replays the whole history instead (see
/// [`crate::checkpoint`]). Never fatal; said on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointIgnored {
    /// The checkpoint file.
    pub path: PathBuf,
    /// Why it was not used.
    pub why: CheckpointProblem,
}

/// Why a checkpoint was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointProblem {
    /// Not a checkpoint file at all (another program's file, or another kind of checkpoint).
    Foreign(String),
    /// Shorter or longer than its header says: a write cut short.
    Truncated {
        /// The length the header gives.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// Its content does not match its digest, or cannot be read back.
    Damaged(String),
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
            CheckpointProblem::Damaged(why) => write!(f, "damaged ({why})"),
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

impl std::error::Error for CheckpointIgnored {}

/// Why a running engine ([`crate::engine::Running`]) cannot answer a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnswerError {
    /// Events stopped arriving: an answer would be stale.
    Stale {
        /// Why they stopped.
        why: String,
    },
    /// The session's pane cannot be read.
    Pane {
        /// The pane as the request named it.
        target: String,
        /// The cause.
        source: Box<Error>,
    },
    /// A lease cannot be used or given back.
    Lease(crate::decide::LeaseProblem),
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Stale { why } => write!(
                f,
                "events stopped arriving ({why}): answers would be stale; restart hookline serve \
                 (or the daemon)"
            ),
            AnswerError::Pane { target, .. } => write!(f, "cannot read tmux pane {target:?}"),
            AnswerError::Lease(problem) => write!(f, "{problem}"),
        }
    }
}

impl std::error::Error for AnswerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnswerError::Pane { source, .. } => Some(source.as_ref()),
            AnswerError::Lease(problem) => Some(problem),
            AnswerError::Stale { .. } => None,
        }
    }
}

/// Why a delivery ([`crate::engine::Running::deliver`]) could not run at all. Nothing was
/// typed: a delivery that may have typed anything ends with an outcome, never with this.
#[derive(Debug)]
#[non_exhaustive]
pub enum DeliverError {
    /// The text cannot be typed.
    Text(crate::deliver::TextProblem),
    /// A nudge with no text, and nothing for it to quote.
    NothingToQuote {
        /// The session.
        session: String,
    },
    /// The pane cannot be read or found.
    Pane {
        /// The pane as the request named it.
        target: String,
        /// The cause.
        source: Box<Error>,
    },
    /// The session's CLI has no profile here.
    NoProfile {
        /// The CLI.
        cli: String,
    },
    /// Events stopped arriving: nothing may be typed.
    Stale {
        /// Why they stopped.
        why: String,
    },
}

impl fmt::Display for DeliverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeliverError::Text(problem) => write!(f, "nothing typed: {problem}"),
            DeliverError::NothingToQuote { session } => write!(
                f,
                "nothing typed: the nudge of {session:?} has no text to quote (no open item of its \
                 task list, no livelock); give the text to type"
            ),
            DeliverError::Pane { target, source } => {
                write!(f, "nothing typed: cannot use tmux pane {target:?}: {source}")
            }
            DeliverError::NoProfile { cli } => {
                write!(f, "nothing typed: the session's CLI {cli:?} has no profile here")
            }
            DeliverError::Stale { why } => {
                write!(f, "events stopped arriving ({why}): nothing may be typed")
            }
        }
    }
}

impl std::error::Error for DeliverError {}
