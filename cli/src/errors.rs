//! The errors only the command line raises: installing into a CLI's settings file (and the
//! checks of `doctor`), and tmux marks. What the library raises stays a [`hookline::Error`],
//! carried as [`Error::Library`].

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::install::file::NodeKind;

/// Everything that can go wrong in the command line's own modules.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The library failed (events, profiles, a tmux command...).
    Library(hookline::Error),
    /// A filesystem operation failed.
    Io {
        /// What was being done ("read", "create dir", ...).
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The cause.
        source: io::Error,
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
        kind: NodeKind,
    },
    /// The settings file has other hard links, which an atomic write would split from it.
    HardLinked {
        /// The file.
        path: PathBuf,
        /// How many names it has.
        links: u64,
    },
    /// A file is where hookline's plugin goes, but it is not hookline's plugin; it was left
    /// untouched.
    NotOurPlugin {
        /// The file.
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
            Error::Library(e) => return e.fix(),
            Error::UnknownCli { known, .. } => format!("use one of: {}", known.join(", ")),
            Error::UnknownScope { known, .. } => format!("use one of: {}", known.join(", ")),
            Error::NoHome { .. } => "set HOME, or pass --settings PATH".into(),
            Error::NotInstallable { name } => format!(
                "hookline does not write {name}'s settings: docs/install.md says why, and how to \
                 register the relay by hand where that can be done"
            ),
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
            Error::KeepsChanging { .. } => {
                "close the CLI's running sessions and run the command again".into()
            }
            Error::NoTmuxServer { .. } => "start tmux first, or name the server's socket with \
                                           --tmux-socket PATH (the PATH of `tmux -S PATH`)"
                .into(),
            Error::NotRegularFile { path, .. } => format!(
                "move {} out of the way (or point the link at a regular file), or pass --settings PATH",
                path.display()
            ),
            Error::HardLinked { path, .. } => format!(
                "keep one copy and make the other names symlinks to it (ln -sf {} OTHER-NAME), then run again",
                path.display()
            ),
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
            Error::Library(e) => write!(f, "{e}"),
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
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
            Error::NoTmuxServer { socket } => {
                write!(f, "no tmux server is running (none answers on {socket})")
            }
            Error::KeepsChanging { path, attempts } => {
                write!(f, "{} changed under us {attempts} times; not written", path.display())
            }
            Error::NotRegularFile { path, kind } => {
                write!(f, "{} is {kind}, not a regular file; left untouched", path.display())
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Library(e) => e.source(),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<hookline::Error> for Error {
    fn from(e: hookline::Error) -> Error {
        Error::Library(e)
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
