//! The few POSIX calls std does not offer: operations relative to an open directory, so that a
//! directory checked once cannot be swapped for a symlink between the check and the write.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// An open directory, never reached through a symlink.
#[derive(Debug)]
pub(crate) struct DirFd(OwnedFd);

fn cstr(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 { Err(io::Error::last_os_error()) } else { Ok(ret) }
}

impl DirFd {
    /// Opens a directory without following a symlink at its last component.
    pub(crate) fn open_nofollow(path: &Path) -> io::Result<DirFd> {
        let path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
        let fd = check(unsafe { libc::open(path.as_ptr(), flags) })?;
        // SAFETY: `fd` was just returned by open and is owned by nobody else.
        Ok(DirFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// The directory as a `File`, for `fstat` and `fsync`.
    pub(crate) fn as_file(&self) -> io::Result<File> {
        Ok(File::from(self.0.try_clone()?))
    }

    /// The directory's metadata (`fstat`), without duplicating the fd as [`DirFd::as_file`]
    /// does: it runs on every write.
    pub(crate) fn metadata(&self) -> io::Result<std::fs::Metadata> {
        // SAFETY: the fd is open for the lifetime of `self`; the `File` borrowing it is never
        // dropped (so never closes it), and lives only for this call.
        let file = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(self.0.as_raw_fd()) });
        file.metadata()
    }

    fn open_at(&self, name: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
        let name = cstr(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: the directory fd is open for the lifetime of `self`; `name` is NUL-terminated.
        let fd = check(unsafe {
            libc::openat(self.0.as_raw_fd(), name.as_ptr(), flags, libc::c_uint::from(mode))
        })?;
        // SAFETY: `fd` was just returned by openat and is owned by nobody else.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Creates a new file (fails if the name exists, symlink or not) for writing.
    pub(crate) fn create_new(&self, name: &str, mode: libc::mode_t) -> io::Result<File> {
        self.open_at(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, mode)
    }

    /// Opens a file for reading and writing, creating it if needed; never follows a symlink.
    pub(crate) fn open_or_create_rw(&self, name: &str, mode: libc::mode_t) -> io::Result<File> {
        self.open_at(name, libc::O_RDWR | libc::O_CREAT, mode)
    }

    /// Opens an existing file for reading; never follows a symlink, never blocks (on a FIFO).
    pub(crate) fn open_read(&self, name: &str) -> io::Result<File> {
        self.open_at(name, libc::O_RDONLY | libc::O_NONBLOCK, 0)
    }

    /// Opens a sub-directory without following a symlink at `name`.
    pub(crate) fn open_dir_at(&self, name: &str) -> io::Result<DirFd> {
        let name = cstr(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: the directory fd is open for the lifetime of `self`; `name` is NUL-terminated.
        let fd = check(unsafe { libc::openat(self.0.as_raw_fd(), name.as_ptr(), flags) })?;
        // SAFETY: `fd` was just returned by openat and is owned by nobody else.
        Ok(DirFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Creates a sub-directory; fails with `AlreadyExists` when the name is taken.
    pub(crate) fn mkdir_at(&self, name: &str, mode: libc::mode_t) -> io::Result<()> {
        let name = cstr(name)?;
        // SAFETY: the directory fd is open for the lifetime of `self`; `name` is NUL-terminated.
        check(unsafe { libc::mkdirat(self.0.as_raw_fd(), name.as_ptr(), mode) }).map(drop)
    }

    /// Makes `from` visible under `to` in `to_dir` too; fails with `AlreadyExists` rather than
    /// replace `to`.
    pub(crate) fn link_to(&self, from: &str, to_dir: &DirFd, to: &str) -> io::Result<()> {
        let (from, to) = (cstr(from)?, cstr(to)?);
        let (fd, to_fd) = (self.0.as_raw_fd(), to_dir.0.as_raw_fd());
        // SAFETY: both names are NUL-terminated and both fds are open.
        check(unsafe { libc::linkat(fd, from.as_ptr(), to_fd, to.as_ptr(), 0) }).map(drop)
    }

    /// Moves `from` to `to` within the directory, failing with `AlreadyExists` rather than
    /// replace `to` (see [`DirFd::rename_noreplace_to`]).
    pub(crate) fn rename_noreplace(&self, from: &str, to: &str) -> io::Result<()> {
        self.rename_noreplace_to(from, self, to)
    }

    /// Moves `from` to `to` in `to_dir` (this directory or another on the same filesystem),
    /// failing with `AlreadyExists` rather than replace `to`: one `renameat2(RENAME_NOREPLACE)`
    /// where the filesystem has it, else a hard link and an unlink. Afterwards `from` is gone
    /// either way, unless an error is returned.
    pub(crate) fn rename_noreplace_to(
        &self,
        from: &str,
        to_dir: &DirFd,
        to: &str,
    ) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            let (from_c, to_c) = (cstr(from)?, cstr(to)?);
            let (fd, to_fd) = (self.0.as_raw_fd(), to_dir.0.as_raw_fd());
            // SAFETY: both names are NUL-terminated and both fds are open; renameat2 takes two
            // dir fds, two paths and flags.
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    fd,
                    from_c.as_ptr(),
                    to_fd,
                    to_c.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            };
            if ret == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            // Not supported by this kernel or filesystem: the portable way below.
            if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP)) {
                return Err(e);
            }
        }
        self.link_to(from, to_dir, to)?;
        let _ = self.unlink(from);
        Ok(())
    }

    /// Renames `from` to `to` within the directory (replacing `to`).
    pub(crate) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (cstr(from)?, cstr(to)?);
        let fd = self.0.as_raw_fd();
        // SAFETY: both names are NUL-terminated and the fd is open.
        check(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }).map(drop)
    }

    /// Removes a name from the directory.
    pub(crate) fn unlink(&self, name: &str) -> io::Result<()> {
        let name = cstr(name)?;
        // SAFETY: the name is NUL-terminated and the fd is open.
        check(unsafe { libc::unlinkat(self.0.as_raw_fd(), name.as_ptr(), 0) }).map(drop)
    }
}

/// The effective user id of this process, asked once (the relay checks the events directory's
/// owner and its bucket's: one system call saved).
pub(crate) fn euid() -> u32 {
    static EUID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // SAFETY: geteuid has no preconditions and cannot fail.
    *EUID.get_or_init(|| unsafe { libc::geteuid() })
}
