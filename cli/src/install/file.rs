//! Reading and writing a settings file without ever damaging it.
//!
//! * A symlink is followed (relative links and chains too) and the file it ends at is
//!   written; the link stays a link. A dangling link is refused: its target may be on a
//!   dotfiles volume that is not mounted, and creating a file there would be a guess.
//! * Only a regular file is read or written. A FIFO, a device, a socket or a directory (at
//!   the path or at the end of its symlinks) is refused before it is opened; the open itself
//!   is non-blocking and checked again, so a FIFO swapped in meanwhile cannot make us wait.
//! * A file with more than one hard link is refused when it would have to change: the
//!   rename that makes the write atomic would give this name a new file and leave the other
//!   names with the old content, and writing in place is not atomic.
//! * The write is a temp file in the target's directory (same filesystem), with the
//!   target's mode and owner, synced, then swapped with the target in one step
//!   (`renameat2(RENAME_EXCHANGE)`; a plain rename where the filesystem cannot swap); the
//!   directory is synced.
//! * The previous content is kept in `<target>.hookline.bak` (one backup, replaced each time).
//! * Writers are serialized by an exclusive lock on the target's directory (no lock file is
//!   left behind). Another program (the CLI itself) does not take that lock, so a change it
//!   makes between our read and our write is looked for twice: the file is read again just
//!   before the swap, and the file the swap took out is compared with what was merged. When
//!   it differs, the other program's file is swapped back (its newest version, should it
//!   have written again meanwhile) and the merge starts again from it, a few times, then the
//!   file is left as the other program wrote it and the command fails.
//! * A file whose permission bits allow no writing is refused, even for root.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::errors::Error;

/// How many times a file that keeps changing under us is merged again before giving up.
pub const ATTEMPTS: u32 = 50;
const MAX_LINKS: usize = 40;
/// How many swaps may be spent putting back a file another program keeps rewriting.
const RESTORE_SWAPS: usize = 64;

/// The suffix of the backup file.
pub const BACKUP_SUFFIX: &str = ".hookline.bak";

/// What a path is, when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A character device (`/dev/null`, a terminal).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A Unix socket.
    Socket,
    /// A symlink where none may be (the file was swapped for one while we looked).
    Symlink,
    /// Anything else.
    Other,
}

/// A test of a file type.
type IsKind = fn(&fs::FileType) -> bool;

/// Each kind with its test, in the order they are tried.
const NODE_KINDS: [(IsKind, NodeKind); 6] = [
    (fs::FileType::is_dir, NodeKind::Directory),
    (<fs::FileType as FileTypeExt>::is_fifo, NodeKind::Fifo),
    (<fs::FileType as FileTypeExt>::is_char_device, NodeKind::CharDevice),
    (<fs::FileType as FileTypeExt>::is_block_device, NodeKind::BlockDevice),
    (<fs::FileType as FileTypeExt>::is_socket, NodeKind::Socket),
    (fs::FileType::is_symlink, NodeKind::Symlink),
];

impl NodeKind {
    /// What a file type is, `None` for a regular file.
    pub fn of(file_type: fs::FileType) -> Option<NodeKind> {
        if file_type.is_file() {
            return None;
        }
        let found = NODE_KINDS.iter().find(|(is, _)| is(&file_type));
        Some(found.map_or(NodeKind::Other, |(_, kind)| *kind))
    }
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NodeKind::Directory => "a directory",
            NodeKind::Fifo => "a named pipe (FIFO)",
            NodeKind::CharDevice => "a character device",
            NodeKind::BlockDevice => "a block device",
            NodeKind::Socket => "a socket",
            NodeKind::Symlink => "a symlink",
            NodeKind::Other => "not a regular file",
        })
    }
}

/// Where a settings path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path given.
    pub given: PathBuf,
    /// The file that is read and written: the end of the symlink chain.
    pub target: PathBuf,
}

impl Resolved {
    /// Whether the path given is a symlink.
    pub fn via_link(&self) -> bool {
        self.given != self.target
    }
}

/// Follows symlinks from `path` to the file they end at. A path that does not exist (and is
/// not a link) resolves to itself; a link to nothing is an error.
pub fn resolve(path: &Path) -> Result<Resolved, Error> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next =
                    fs::read_link(&current).map_err(|e| Error::io("read link", &current, e))?;
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            Ok(_) => {
                return Ok(Resolved { given: path.to_owned(), target: current });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if current == path {
                    return Ok(Resolved { given: path.to_owned(), target: current });
                }
                return Err(Error::DanglingSymlink { link: path.to_owned(), target: current });
            }
            Err(e) => return Err(Error::io("stat", &current, e)),
        }
    }
    Err(Error::SymlinkLoop { path: path.to_owned() })
}

/// The backup path of a target.
pub fn backup_path(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_os_string();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// Reads a regular file; `None` when it does not exist. Anything else at `path` (a FIFO, a
/// device, a directory, a symlink) is refused with [`Error::NotRegularFile`], without
/// blocking: it is looked at before it is opened, opened non-blocking and without following a
/// link, and looked at again once open.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    Ok(read_regular(path)?.map(|(bytes, _)| bytes))
}

/// [`read`], following symlinks first (a link to nothing reads as an error).
pub fn read_through(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    read(&resolve(path)?.target)
}

/// [`read`], with the metadata of the file read.
fn read_regular(path: &Path) -> Result<Option<(Vec<u8>, fs::Metadata)>, Error> {
    match fs::symlink_metadata(path) {
        Ok(meta) => refuse_odd(path, meta.file_type())?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("stat", path, e)),
    }
    match open_nonblocking(path) {
        Ok(file) => read_open(file, path).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Err(Error::NotRegularFile { path: path.to_owned(), kind: NodeKind::Symlink })
        }
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// Opens for reading without following a final symlink and without waiting for a FIFO's
/// writer.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

fn read_open(mut file: File, path: &Path) -> Result<(Vec<u8>, fs::Metadata), Error> {
    let meta = file.metadata().map_err(|e| Error::io("stat", path, e))?;
    refuse_odd(path, meta.file_type())?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| Error::io("read", path, e))?;
    Ok((bytes, meta))
}

fn refuse_odd(path: &Path, file_type: fs::FileType) -> Result<(), Error> {
    match NodeKind::of(file_type) {
        None => Ok(()),
        Some(kind) => Err(Error::NotRegularFile { path: path.to_owned(), kind }),
    }
}

/// What [`update`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The new content equals the old: nothing was written.
    Unchanged,
    /// Dry run: what would be written (`None`: the file would be removed).
    Planned {
        /// The content now.
        before: Option<Vec<u8>>,
        /// The content we would write.
        after: Option<Vec<u8>>,
    },
    /// The file was written (or removed).
    Written {
        /// The content before.
        before: Option<Vec<u8>>,
        /// The content written.
        after: Option<Vec<u8>>,
        /// Where the previous content was saved, when there was one.
        backup: Option<PathBuf>,
    },
}

/// Options of [`update`].
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateOptions {
    /// Compute and report, write nothing.
    pub dry_run: bool,
    /// Keep a backup of the previous content.
    pub backup: bool,
    /// Mode of a file that does not exist yet.
    pub new_mode: u32,
}

/// Reads the file at `path` (through symlinks), computes its new content with `merge`
/// (`None` in, `None` out: the file does not / shall not exist) and writes it as described in
/// the module documentation. `merge` may run more than once when the file changes under us;
/// `before_commit` runs just before the final comparison (tests use it to simulate a CLI
/// rewriting its settings). Removing a file keeps no backup: callers remove only a file that
/// holds nothing but what they wrote.
pub fn update<T>(
    path: &Path,
    options: UpdateOptions,
    mut merge: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), Error>,
    mut before_commit: impl FnMut(&Path),
) -> Result<(Outcome, T), Error> {
    let resolved = resolve(path)?;
    let target = &resolved.target;
    // Refused before a directory is created or locked: nothing is done next to a device.
    if let Ok(meta) = fs::symlink_metadata(target) {
        refuse_odd(target, meta.file_type())?;
    }
    let dir =
        target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
    let _lock = if options.dry_run {
        None
    } else {
        fs::create_dir_all(&dir).map_err(|e| Error::io("create dir", &dir, e))?;
        let lock = File::open(&dir).map_err(|e| Error::io("open dir", &dir, e))?;
        lock.lock().map_err(|e| Error::io("lock dir", &dir, e))?;
        Some(lock)
    };
    for _ in 0..ATTEMPTS {
        let (before, meta) = match read_regular(target)? {
            Some((bytes, meta)) => (Some(bytes), Some(meta)),
            None => (None, None),
        };
        let (after, extra) = merge(before.as_deref())?;
        if after == before {
            return Ok((Outcome::Unchanged, extra));
        }
        if let Some(meta) = &meta
            && meta.nlink() > 1
        {
            return Err(Error::HardLinked { path: target.clone(), links: meta.nlink() });
        }
        if options.dry_run {
            return Ok((Outcome::Planned { before, after }, extra));
        }
        if let Some(meta) = &meta
            && meta.permissions().mode() & 0o222 == 0
        {
            return Err(Error::ReadOnly { path: target.clone() });
        }
        let temp = match &after {
            Some(content) => Some(write_temp(&dir, target, content, meta.as_ref(), options)?),
            None => None,
        };
        before_commit(target);
        // The cheap look first: most changes by another program are seen here, before ours
        // is visible for even a moment.
        if read(target)? != before {
            continue;
        }
        let committed = match (temp, &before) {
            (Some(temp), Some(old)) => swap_in(temp, target, old, options)?,
            (Some(temp), None) => create(temp, target)?,
            (None, Some(old)) => take_out(&dir, target, old)?,
            (None, None) => Commit::Done(None),
        };
        let Commit::Done(backup) = committed else {
            // Another program's change came in between: merge again from it.
            continue;
        };
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        return Ok((Outcome::Written { before, after, backup }, extra));
    }
    Err(Error::KeepsChanging { path: target.clone(), attempts: ATTEMPTS })
}

/// How a commit went.
#[derive(Debug, PartialEq, Eq)]
enum Commit {
    /// Done; where the previous content was kept, if it was.
    Done(Option<PathBuf>),
    /// Another program changed the file first: its file is in place, nothing of ours is.
    Raced,
}

/// Puts `temp` in place of `target`, which held `old` when it was read. [`Commit::Raced`]
/// when the file taken out was not `old` (another program wrote it meanwhile: its file is
/// back in place).
fn swap_in(
    temp: tempfile::NamedTempFile,
    target: &Path,
    old: &[u8],
    options: UpdateOptions,
) -> Result<Commit, Error> {
    let (ours, temp) = temp.into_parts();
    match exchange(&temp, target) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Commit::Raced),
        Err(e) if cannot_swap(&e) => {
            // No atomic swap here: keep the backup, look a last time, then rename.
            let backup = keep_backup(target, old, options)?;
            if read(target)?.as_deref() != Some(old) {
                return Ok(Commit::Raced);
            }
            temp.persist(target).map_err(|e| Error::io("replace", target, e.error))?;
            return Ok(Commit::Done(backup));
        }
        Err(e) => return Err(Error::io("replace", target, e)),
    }
    // `temp` now names the file that was at `target` until the swap.
    let taken = open_nonblocking(&temp).map_err(|e| Error::io("read", &*temp, e))?;
    let unchanged = read_open(taken.try_clone().map_err(|e| Error::io("read", &*temp, e))?, &temp)
        .is_ok_and(|(bytes, _)| bytes == old);
    if unchanged {
        if !options.backup {
            return Ok(Commit::Done(None));
        }
        let backup = backup_path(target);
        temp.persist(&backup).map_err(|e| Error::io("write", &backup, e.error))?;
        return Ok(Commit::Done(Some(backup)));
    }
    put_back(&temp, target, ours, taken)?;
    Ok(Commit::Raced)
}

/// Swaps back, after a swap took out another program's file (`taken`) instead of the one we
/// read: swaps until what comes out is what went in at the swap before, so that the newest
/// file the other program wrote is the one left at `target`. `pushed` is the file we put in;
/// holding each file open keeps its inode from being reused by a new file.
fn put_back(temp: &Path, target: &Path, pushed: File, taken: File) -> Result<(), Error> {
    let (mut pushed, mut at_temp) = (pushed, taken);
    for _ in 0..RESTORE_SWAPS {
        match exchange(temp, target) {
            Ok(()) => {}
            // The other program removed the file meanwhile: that is the newest state.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("put back", target, e)),
        }
        let out = open_nonblocking(temp).map_err(|e| Error::io("put back", target, e))?;
        if same_file(&out, &pushed) {
            return Ok(());
        }
        pushed = at_temp;
        at_temp = out;
    }
    Err(Error::KeepsChanging { path: target.to_owned(), attempts: ATTEMPTS })
}

/// Creates `target` from `temp` unless a file appeared there meanwhile.
fn create(temp: tempfile::NamedTempFile, target: &Path) -> Result<Commit, Error> {
    let temp = temp.into_temp_path();
    match rename_noreplace(&temp, target) {
        Ok(()) => {
            let _ = temp.keep();
            Ok(Commit::Done(None))
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Commit::Raced),
        Err(e) if cannot_swap(&e) => match fs::hard_link(&temp, target) {
            Ok(()) => Ok(Commit::Done(None)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Commit::Raced),
            Err(_) => {
                temp.persist(target).map_err(|e| Error::io("create", target, e.error))?;
                Ok(Commit::Done(None))
            }
        },
        Err(e) => Err(Error::io("create", target, e)),
    }
}

/// Removes `target`, which held `old` when it was read: it is first moved aside, and put back
/// ([`Commit::Raced`]) when it is not `old` any more.
fn take_out(dir: &Path, target: &Path, old: &[u8]) -> Result<Commit, Error> {
    let aside = temp_in(dir, target)?.into_temp_path();
    match fs::rename(target, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Commit::Raced),
        Err(e) => return Err(Error::io("remove", target, e)),
    }
    if read(&aside).is_ok_and(|bytes| bytes.as_deref() == Some(old)) {
        return Ok(Commit::Done(None));
    }
    // Put back without replacing: a file there now is newer than the one moved aside.
    match fs::hard_link(&aside, target) {
        Ok(()) => Ok(Commit::Raced),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Commit::Raced),
        Err(_) => match rename_noreplace(&aside, target) {
            Ok(()) => {
                let _ = aside.keep();
                Ok(Commit::Raced)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Commit::Raced),
            Err(e) => Err(Error::io("put back", target, e)),
        },
    }
}

/// Writes the backup of `old` (when asked to) as its own atomic file.
fn keep_backup(
    target: &Path,
    old: &[u8],
    options: UpdateOptions,
) -> Result<Option<PathBuf>, Error> {
    if !options.backup {
        return Ok(None);
    }
    let backup = backup_path(target);
    let dir = backup.parent().unwrap_or(Path::new("."));
    let like = fs::metadata(target).ok();
    let temp = write_temp(dir, &backup, old, like.as_ref(), options)?;
    temp.persist(&backup).map_err(|e| Error::io("write", &backup, e.error))?;
    Ok(Some(backup))
}

fn same_file(a: &File, b: &File) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether a swap or no-replace rename failed because the system or filesystem cannot do it.
fn cannot_swap(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP))
        || e.kind() == io::ErrorKind::Unsupported
}

/// The two renames `renameat2` does that a plain rename cannot.
#[derive(Debug, Clone, Copy)]
enum Rename {
    /// Swap the two paths in one step.
    Exchange,
    /// Rename unless the destination exists.
    NoReplace,
}

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, how: Rename) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (from, to) = (c(from)?, c(to)?);
    let flags = match how {
        Rename::Exchange => libc::RENAME_EXCHANGE,
        Rename::NoReplace => libc::RENAME_NOREPLACE,
    };
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Elsewhere: not available, callers fall back to a plain rename after a last look.
#[cfg(not(target_os = "linux"))]
fn renameat2(_from: &Path, _to: &Path, _how: Rename) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Swaps two paths in one step.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    renameat2(a, b, Rename::Exchange)
}

/// Renames unless `to` exists.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    renameat2(from, to, Rename::NoReplace)
}

fn temp_in(dir: &Path, target: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".hookline-tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create a temp file in", dir, e))
}

/// Writes `content` to a new temp file beside `target`, with the mode and owner of `like`.
fn write_temp(
    dir: &Path,
    target: &Path,
    content: &[u8],
    like: Option<&fs::Metadata>,
    options: UpdateOptions,
) -> Result<tempfile::NamedTempFile, Error> {
    let mut temp = temp_in(dir, target)?;
    let mode = like.map_or(options.new_mode, |m| m.permissions().mode() & 0o7777);
    let file = temp.as_file();
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("chmod", temp.path(), e))?;
    if let Some(like) = like {
        let ours = file.metadata().map_err(|e| Error::io("stat", temp.path(), e))?;
        if ours.uid() != like.uid() || ours.gid() != like.gid() {
            std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid()))
                .map_err(|e| Error::io("keep the owner of", target, e))?;
        }
    }
    temp.write_all(content)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| Error::io("write", temp.path(), e))?;
    Ok(temp)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn opts() -> UpdateOptions {
        UpdateOptions { dry_run: false, backup: true, new_mode: 0o644 }
    }

    fn append_x(before: Option<&[u8]>) -> Result<(Option<Vec<u8>>, ()), Error> {
        let mut v = before.unwrap_or_default().to_vec();
        v.push(b'x');
        Ok((Some(v), ()))
    }

    #[test]
    fn a_symlink_chain_is_written_through_and_stays_a_chain() {
        let tmp = tempfile::tempdir().unwrap();
        let dotfiles = tmp.path().join("dotfiles");
        fs::create_dir(&dotfiles).unwrap();
        fs::write(dotfiles.join("settings.json"), "a").unwrap();
        let home = tmp.path().join("home");
        fs::create_dir(&home).unwrap();
        symlink("../dotfiles/settings.json", home.join("middle")).unwrap();
        symlink("middle", home.join("settings.json")).unwrap();
        let link = home.join("settings.json");
        let resolved = resolve(&link).unwrap();
        assert_eq!(resolved.target, home.join("../dotfiles/settings.json"));
        update(&link, opts(), append_x, |_| {}).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(fs::symlink_metadata(home.join("middle")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(dotfiles.join("settings.json")).unwrap(), "ax");
        assert_eq!(fs::read_to_string(dotfiles.join("settings.json.hookline.bak")).unwrap(), "a");
    }

    #[test]
    fn a_dangling_symlink_is_refused_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("settings.json");
        symlink("missing/settings.json", &link).unwrap();
        let err = update(&link, opts(), append_x, |_| {}).unwrap_err();
        assert!(matches!(err, Error::DanglingSymlink { .. }), "{err}");
        assert!(!tmp.path().join("missing").exists());
        assert_eq!(fs::read_link(&link).unwrap(), Path::new("missing/settings.json"));
    }

    #[test]
    fn a_symlink_loop_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        symlink("b", tmp.path().join("a")).unwrap();
        symlink("a", tmp.path().join("b")).unwrap();
        let err = resolve(&tmp.path().join("a")).unwrap_err();
        assert!(matches!(err, Error::SymlinkLoop { .. }), "{err}");
    }

    #[test]
    fn the_mode_is_kept_and_no_temp_file_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        fs::write(&path, "a").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        update(&path, opts(), append_x, |_| {}).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_read_only_file_is_refused_even_for_root() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        fs::write(&path, "a").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let err = update(&path, opts(), append_x, |_| {}).unwrap_err();
        assert!(matches!(err, Error::ReadOnly { .. }), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "a");
        assert!(!backup_path(&path).exists());
    }

    #[test]
    fn a_file_changed_before_the_rename_is_merged_again_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        fs::write(&path, "a").unwrap();
        let mut rewrites = 0;
        let (outcome, ()) = update(&path, opts(), append_x, |target| {
            if rewrites == 0 {
                fs::write(target, "b").unwrap();
            }
            rewrites += 1;
        })
        .unwrap();
        assert_eq!(rewrites, 2);
        assert_eq!(fs::read_to_string(&path).unwrap(), "bx");
        assert!(matches!(outcome, Outcome::Written { before: Some(b), .. } if b == b"b"));
    }

    #[test]
    fn a_file_that_never_settles_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        fs::write(&path, "0").unwrap();
        let mut n = 0;
        let err = update(&path, opts(), append_x, |target| {
            n += 1;
            fs::write(target, n.to_string()).unwrap();
        })
        .unwrap_err();
        assert!(matches!(err, Error::KeepsChanging { attempts: ATTEMPTS, .. }), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), ATTEMPTS.to_string());
    }

    fn temp_with(dir: &Path, content: &str) -> tempfile::NamedTempFile {
        let mut temp = temp_in(dir, &dir.join("s.json")).unwrap();
        temp.write_all(content.as_bytes()).unwrap();
        temp
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_change_that_lands_after_the_last_look_is_swapped_back_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        // Read as "old"; another program renamed "theirs" in after our last look.
        fs::write(&path, "theirs").unwrap();
        let temp = temp_with(tmp.path(), "ours");
        assert_eq!(swap_in(temp, &path, b"old", opts()).unwrap(), Commit::Raced);
        assert_eq!(fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(names(tmp.path()), ["s.json"], "no temp and no backup left");
        // Unchanged since the read: swapped in, and the file taken out is the backup.
        let temp = temp_with(tmp.path(), "ours");
        let backup = swap_in(temp, &path, b"theirs", opts()).unwrap();
        assert_eq!(backup, Commit::Done(Some(backup_path(&path))));
        assert_eq!(fs::read_to_string(&path).unwrap(), "ours");
        assert_eq!(fs::read_to_string(backup_path(&path)).unwrap(), "theirs");
    }

    #[test]
    fn a_file_that_appears_or_changes_before_a_create_or_a_removal_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        fs::write(&path, "theirs").unwrap();
        assert_eq!(create(temp_with(tmp.path(), "ours"), &path).unwrap(), Commit::Raced);
        assert_eq!(fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(take_out(tmp.path(), &path, b"old").unwrap(), Commit::Raced);
        assert_eq!(fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(names(tmp.path()), ["s.json"]);
        assert_eq!(take_out(tmp.path(), &path, b"theirs").unwrap(), Commit::Done(None));
        assert!(names(tmp.path()).is_empty());
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_without_blocking_and_a_hardlink_is_not_split() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let link = tmp.path().join("link");
        symlink(&fifo, &link).unwrap();
        for path in [&fifo, &link] {
            let err = update(path, opts(), append_x, |_| {}).unwrap_err();
            assert!(matches!(err, Error::NotRegularFile { kind: NodeKind::Fifo, .. }), "{err}");
        }
        let err = read(Path::new("/dev/null")).unwrap_err();
        assert!(matches!(err, Error::NotRegularFile { kind: NodeKind::CharDevice, .. }), "{err}");
        let file = tmp.path().join("s.json");
        fs::write(&file, "a").unwrap();
        fs::hard_link(&file, tmp.path().join("other")).unwrap();
        let err = update(&file, opts(), append_x, |_| {}).unwrap_err();
        assert!(matches!(err, Error::HardLinked { links: 2, .. }), "{err}");
        assert_eq!(fs::read_to_string(tmp.path().join("other")).unwrap(), "a");
        // Nothing to change: nothing refused.
        let same = |b: Option<&[u8]>| Ok((b.map(<[u8]>::to_vec), ()));
        assert!(matches!(update(&file, opts(), same, |_| {}).unwrap().0, Outcome::Unchanged));
    }

    #[test]
    fn a_dry_run_writes_nothing_and_creates_no_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("new/s.json");
        let dry = UpdateOptions { dry_run: true, ..opts() };
        let (outcome, ()) = update(&path, dry, append_x, |_| {}).unwrap();
        assert!(matches!(outcome, Outcome::Planned { before: None, .. }));
        assert!(!tmp.path().join("new").exists());
    }

    #[test]
    fn a_new_file_gets_the_new_mode_and_no_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("d/s.json");
        let (outcome, ()) = update(&path, opts(), append_x, |_| {}).unwrap();
        assert!(matches!(outcome, Outcome::Written { backup: None, .. }));
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }
}
