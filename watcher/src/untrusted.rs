//! Files and directories on paths someone else controls (transcripts, event files, cursors,
//! checkpoints, the quarantine): opened so that nothing at the path can make hookline wait,
//! write through a link or act outside the directory it means.
//!
//! * A file is opened non-blocking (`O_NONBLOCK`: a FIFO swapped in never blocks the `open`),
//!   close-on-exec, and, unless the caller says a link is expected, without following a
//!   final symlink (`O_NOFOLLOW`). What was opened is then checked on the descriptor
//!   (`fstat`), never on the path: a regular file, or refused ([`is_not_regular`]).
//! * A directory ([`Dir`]) is opened without following a symlink, and what is done in it is
//!   done relative to that descriptor (`openat`, `unlinkat`, `linkat`, `renameat`), so a
//!   directory swapped for a link after it was opened cannot send a removal or a write
//!   elsewhere.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Whether a final symlink is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    /// Followed: the path may be a link (only what it ends at is read, and checked).
    Follow,
    /// Refused (`ELOOP`).
    Refuse,
}

/// What was found instead of a regular file.
#[derive(Debug)]
struct NotRegular(&'static str);

impl fmt::Display for NotRegular {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a regular file ({})", self.0)
    }
}

impl std::error::Error for NotRegular {}

/// Whether an error of this module says the path held something else than a regular file.
pub(crate) fn is_not_regular(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<NotRegular>())
}

fn kind_of(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading, never blocking, and checks on the descriptor that it is a
/// regular file; returns it with its metadata (taken from the descriptor).
pub(crate) fn open_regular(path: &Path, link: Link) -> io::Result<(File, Metadata)> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if link == Link::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(NotRegular(kind_of(&meta))));
    }
    Ok((file, meta))
}

/// Reads a whole regular file (see [`open_regular`]) of at most `max` bytes; a larger one is
/// an error, and is not read.
pub(crate) fn read_regular(path: &Path, max: u64, link: Link) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path, link)?;
    if meta.len() > max {
        return Err(io::Error::other(format!(
            "{} bytes, more than the {max} byte limit",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One more byte than allowed: a file that grew since the fstat is caught too.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::other(format!("more than the {max} byte limit")));
    }
    Ok(bytes)
}

/// An entry's metadata, read without following a symlink.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryStat {
    /// A directory (not a link to one).
    pub directory: bool,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
}

/// A directory opened without following a symlink; what is done in it is done through its
/// descriptor.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK
}

impl Dir {
    /// Opens the directory at `path`; `None` when nothing is there. A symlink (even to a
    /// directory) or anything but a directory is an error (`ENOTDIR`, or `ELOOP`).
    pub(crate) fn open(path: &Path) -> io::Result<Option<Dir>> {
        match rustix::fs::open(path, dir_flags(), Mode::empty()) {
            Ok(fd) => Ok(Some(Dir { fd })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the directory at `path`, creating it (mode `mode`, not its parents) when it is
    /// missing. A symlink in its place is refused, not followed.
    pub(crate) fn open_or_create(path: &Path, mode: u32) -> io::Result<Dir> {
        match rustix::fs::mkdir(path, Mode::from_raw_mode(mode)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        Dir::open(path)?.ok_or_else(|| io::ErrorKind::NotFound.into())
    }

    /// The names in the directory (`.` and `..` aside), in no particular order.
    pub(crate) fn names(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(&name).to_owned());
            }
        }
        Ok(names)
    }

    /// An entry's metadata, not following a symlink; `None` when it is gone.
    pub(crate) fn stat(&self, name: &OsStr) -> io::Result<Option<EntryStat>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(EntryStat {
                directory: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
                // Not an i64 on every target.
                #[allow(clippy::unnecessary_cast)]
                mtime: st.st_mtime as i64,
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes a (non-directory) entry: a link is removed, never what it points to. `false`
    /// when it was already gone.
    pub(crate) fn remove(&self, name: &OsStr) -> io::Result<bool> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether an entry of that name exists (a link counts, not followed).
    pub(crate) fn contains(&self, name: &OsStr) -> io::Result<bool> {
        Ok(self.stat(name)?.is_some())
    }

    /// Gives the file at `from` a second name, `name`, in this directory (a hard link; a
    /// symlink at `from` is linked as itself, not followed). `AlreadyExists` when `name` is
    /// taken: nothing is replaced.
    pub(crate) fn link_from(&self, from: &Path, name: &OsStr) -> io::Result<()> {
        rustix::fs::linkat(rustix::fs::CWD, from, &self.fd, name, AtFlags::empty())
            .map_err(Into::into)
    }

    /// Writes `bytes` to `name` atomically: a new temp file in this directory (never reached
    /// through a link), written whole, given `mode`, then renamed over `name`. On error the
    /// temp file is removed.
    pub(crate) fn write_atomic(&self, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(mode);
        let (temp, fd) = (0..100)
            .find_map(|attempt| {
                let mut temp =
                    OsString::from(format!(".tmp-hookline-{}-{attempt}-", std::process::id()));
                temp.push(name);
                match rustix::fs::openat(&self.fd, &temp, flags, mode) {
                    Err(rustix::io::Errno::EXIST) => None,
                    opened => Some(opened.map(|fd| (temp, fd))),
                }
            })
            .unwrap_or_else(|| Err(rustix::io::Errno::EXIST))?;
        let written = (|| {
            rustix::fs::fchmod(&fd, mode)?;
            File::from(fd).write_all(bytes)?;
            rustix::fs::renameat(&self.fd, &temp, &self.fd, name)?;
            Ok(())
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &temp, AtFlags::empty());
        }
        written
    }

    /// The descriptor, for `fstat`.
    pub(crate) fn metadata(&self) -> io::Result<Metadata> {
        File::from(self.fd.as_fd().try_clone_to_owned()?).metadata()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path string; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking_and_a_link_only_where_it_is_not_expected() {
        let tmp = tempfile::tempdir().unwrap();
        let (file, pipe, link) =
            (tmp.path().join("file"), tmp.path().join("pipe"), tmp.path().join("link"));
        std::fs::write(&file, "abc").unwrap();
        fifo(&pipe);
        symlink(&file, &link).unwrap();
        let refused = open_regular(&pipe, Link::Follow).unwrap_err();
        assert!(is_not_regular(&refused), "{refused}");
        assert!(refused.to_string().contains("named pipe"), "{refused}");
        assert_eq!(read_regular(&link, 10, Link::Follow).unwrap(), b"abc");
        let looped = read_regular(&link, 10, Link::Refuse).unwrap_err();
        assert_eq!(looped.raw_os_error(), Some(libc::ELOOP));
        assert!(!is_not_regular(&looped));
        // A link to the FIFO: followed, then refused on the descriptor.
        std::fs::remove_file(&link).unwrap();
        symlink(&pipe, &link).unwrap();
        assert!(is_not_regular(&read_regular(&link, 10, Link::Follow).unwrap_err()));
        let dir = read_regular(tmp.path(), 10, Link::Follow).unwrap_err();
        assert!(is_not_regular(&dir) && dir.to_string().contains("directory"), "{dir}");
        let large = read_regular(&file, 2, Link::Refuse).unwrap_err();
        assert!(large.to_string().contains("limit"), "{large}");
    }

    #[test]
    fn a_directory_behind_a_link_is_not_opened_and_nothing_is_done_through_one() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep"), "mine").unwrap();
        let linked = tmp.path().join("linked");
        symlink(&elsewhere, &linked).unwrap();
        let refused = |e: io::Error| matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR));
        assert!(refused(Dir::open(&linked).unwrap_err()));
        assert!(refused(Dir::open_or_create(&linked, 0o700).unwrap_err()));
        assert!(Dir::open(&tmp.path().join("none")).unwrap().is_none());

        let real = Dir::open_or_create(&tmp.path().join("real"), 0o700).unwrap();
        real.write_atomic(OsStr::new("note"), b"why", 0o600).unwrap();
        real.link_from(&elsewhere.join("keep"), OsStr::new("copy")).unwrap();
        let mut names = real.names().unwrap();
        names.sort();
        assert_eq!(names, [OsString::from("copy"), OsString::from("note")]);
        assert!(!real.stat(OsStr::new("note")).unwrap().unwrap().directory);
        // A link inside: removed as a link, its target untouched.
        symlink(elsewhere.join("keep"), tmp.path().join("real/link")).unwrap();
        assert!(real.stat(OsStr::new("link")).unwrap().unwrap().mtime > 0);
        assert!(real.remove(OsStr::new("link")).unwrap());
        assert!(!real.remove(OsStr::new("link")).unwrap());
        assert_eq!(std::fs::read_to_string(elsewhere.join("keep")).unwrap(), "mine");
        // The directory swapped for a link after it was opened: still the one opened.
        std::fs::rename(tmp.path().join("real"), tmp.path().join("moved")).unwrap();
        symlink(&elsewhere, tmp.path().join("real")).unwrap();
        assert!(real.remove(OsStr::new("note")).unwrap());
        assert!(!tmp.path().join("moved/note").exists());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 1);
    }
}
