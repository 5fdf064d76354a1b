use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the relay library. The relay binary never shows these to
/// its host: they go to the diagnostics file.
#[derive(Debug)]
pub enum Error {
    /// Neither `HOOKLINE_EVENTS_DIR`, `XDG_STATE_HOME` nor an absolute `HOME` is set.
    NoHome,
    /// `HOOKLINE_EVENTS_DIR` is a relative path.
    RelativeEventsDir {
        /// The value given.
        path: PathBuf,
    },
    /// The events directory exists but is not safe to write into.
    UnsafeDir {
        /// The events directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: UnsafeReason,
    },
    /// A filesystem operation failed.
    Io {
        /// What was being done ("create dir", "lock counter", ...).
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// Why an events directory is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsafeReason {
    /// The path is a symbolic link.
    Symlink,
    /// The path is not a directory.
    NotADirectory,
    /// The directory belongs to another user.
    ForeignOwner {
        /// The directory's owner.
        owner: u32,
        /// Our effective uid.
        us: u32,
    },
    /// The directory is writable by its group or by everyone.
    Writable {
        /// The directory's permission bits.
        mode: u32,
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
            Error::NoHome => write!(
                f,
                "no events dir: set HOOKLINE_EVENTS_DIR, XDG_STATE_HOME or HOME to an absolute path"
            ),
            Error::RelativeEventsDir { path } => write!(
                f,
                "HOOKLINE_EVENTS_DIR={} is relative; give an absolute path",
                path.display()
            ),
            Error::UnsafeDir { path, reason } => {
                write!(f, "refusing events dir {}: {reason}", path.display())
            }
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
        }
    }
}

impl fmt::Display for UnsafeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnsafeReason::Symlink => write!(f, "it is a symlink"),
            UnsafeReason::NotADirectory => write!(f, "it is not a directory"),
            UnsafeReason::ForeignOwner { owner, us } => {
                write!(f, "it is owned by uid {owner}, not by us (uid {us})")
            }
            UnsafeReason::Writable { mode } => {
                write!(f, "it is writable by group or others (mode {mode:o}); run chmod 700 on it")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
