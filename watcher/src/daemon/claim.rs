//! One daemon per events directory: the lock it holds and the pid file that names it.

use std::fs::{File, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{LOCK, PID};
use crate::errors::{DaemonStartError, Error};
use crate::format::store::EventsDir;

/// The events directory, held by this process as its daemon: the lock on [`LOCK`] is held
/// until the claim is dropped, which also removes the pid file.
#[derive(Debug)]
pub struct Claim {
    dir: PathBuf,
    pid_file: PathBuf,
    /// Unlocked when closed, on every way out of the process, a crash included.
    _lock: File,
}

impl Claim {
    /// Claims `dir`: creates it if needed (mode 0700) and refuses it when it fails the relay's
    /// own checks (a symlink, another user's, writable by group or others); takes the lock,
    /// or refuses with [`DaemonStartError::Running`] naming the pid that holds it; then writes this
    /// process's pid, atomically.
    pub fn take(dir: &Path) -> Result<Claim, DaemonStartError> {
        EventsDir::create(dir)?;
        let lock_path = dir.join(LOCK);
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&lock_path)
            .map_err(|e| Error::io("open", &lock_path, e))?;
        let pid_file = dir.join(PID);
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(DaemonStartError::Running {
                    dir: dir.to_owned(),
                    pid: read_pid(&pid_file),
                    lock: lock_path,
                });
            }
            Err(TryLockError::Error(e)) => return Err(Error::io("lock", &lock_path, e).into()),
        }
        let pid = std::process::id();
        crate::fsutil::write_atomic(&pid_file, format!("{pid}\n").as_bytes(), 0o600)?;
        Ok(Claim { dir: dir.to_owned(), pid_file, _lock: lock })
    }

    /// The events directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Still ours: nobody else writes it while we hold the lock.
        let _ = std::fs::remove_file(&self.pid_file);
    }
}

/// The pid a daemon's pid file names, when it can be read.
pub(super) fn read_pid(path: &Path) -> Option<u32> {
    let bytes = crate::untrusted::read_regular(path, 64, crate::untrusted::Link::Refuse).ok()?;
    String::from_utf8(bytes).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_second_claim_on_one_directory_is_refused_naming_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("events");
        let first = Claim::take(&dir).unwrap();
        assert_eq!(read_pid(&dir.join(PID)), Some(std::process::id()));
        // The lock is per open file: a second open in this process conflicts like another
        // process would.
        let err = Claim::take(&dir).unwrap_err();
        let DaemonStartError::Running { pid, .. } = &err else { panic!("{err}") };
        assert_eq!(*pid, Some(std::process::id()));
        assert!(err.to_string().contains(&format!("pid {}", std::process::id())), "{err}");
        drop(first);
        assert!(!dir.join(PID).exists(), "the pid file goes with the claim");
        // The lock goes with the last descriptor of the lock file's open: a child another
        // test forks just then holds a copy until its exec closes it, a moment later.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match Claim::take(&dir) {
                Ok(_) => break,
                Err(DaemonStartError::Running { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("a released directory can be claimed again: {e}"),
            }
        }
    }

    #[test]
    fn a_directory_others_can_write_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("events");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = Claim::take(&dir).unwrap_err();
        assert!(
            matches!(&err, DaemonStartError::Events(e) if matches!(**e, Error::Format(_))),
            "{err}"
        );
        assert!(!dir.join(LOCK).exists(), "nothing is written into a refused directory");
    }
}
