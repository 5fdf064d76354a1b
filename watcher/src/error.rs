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
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Error::Format(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Format(e) => e.source(),
        }
    }
}

impl From<hookline_relay::Error> for Error {
    fn from(e: hookline_relay::Error) -> Error {
        Error::Format(e)
    }
}
