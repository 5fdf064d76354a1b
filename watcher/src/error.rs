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
    /// A profile file is wrong.
    Profile(crate::profile::ProfileError),
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
    /// A cursor file that cannot be read back.
    BadCursor {
        /// The cursor file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io { op, path: path.into(), source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Error::Format(e) => write!(f, "{e}"),
            Error::Profile(e) => write!(f, "{e}"),
            Error::BadCursorName { name } => write!(
                f,
                "bad cursor name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'"
            ),
            Error::CursorInUse { name, path } => write!(
                f,
                "cursor {name:?} is in use by another process (lock {}); give each consumer its own cursor",
                path.display()
            ),
            Error::BadCursor { path, reason } => write!(
                f,
                "cursor file {} is damaged ({reason}); delete it to restart that consumer from the beginning",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Format(e) => e.source(),
            _ => None,
        }
    }
}

impl From<hookline_relay::Error> for Error {
    fn from(e: hookline_relay::Error) -> Error {
        Error::Format(e)
    }
}

impl From<crate::profile::ProfileError> for Error {
    fn from(e: crate::profile::ProfileError) -> Error {
        Error::Profile(e)
    }
}
