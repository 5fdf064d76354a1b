//! Reading and writing a settings file without ever damaging it.
//!
//! * A symlink is followed (relative links and chains too) and the file it ends at is
//!   written; the link stays a link. A dangling link is refused: its target may be on a
//!   dotfiles volume that is not mounted, and creating a file there would be a guess.
//! * The write is a temp file in the target's directory (same filesystem), with the
//!   target's mode and owner, synced, then renamed over the target; the directory is synced.
//! * The previous content is kept in `<target>.hookline.bak` (one backup, replaced each time).
//! * Writers are serialized by an exclusive lock on the target's directory (no lock file is
//!   left behind). The file is read again just before the rename: when another program (the
//!   CLI itself) changed it meanwhile, the change is merged again from the new content
//!   instead of being overwritten.
//! * A file whose permission bits allow no writing is refused, even for root.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::Error;

/// How many times a file that keeps changing under us is re-read before giving up.
pub const ATTEMPTS: u32 = 5;
const MAX_LINKS: usize = 40;

/// The suffix of the backup file.
pub const BACKUP_SUFFIX: &str = ".hookline.bak";

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

/// Reads a file; `None` when it does not exist.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
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
/// rewriting its settings).
pub fn update<T>(
    path: &Path,
    options: UpdateOptions,
    mut merge: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), Error>,
    mut before_commit: impl FnMut(&Path),
) -> Result<(Outcome, T), Error> {
    let resolved = resolve(path)?;
    let target = &resolved.target;
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
        let before = read(target)?;
        let (after, extra) = merge(before.as_deref())?;
        if after == before {
            return Ok((Outcome::Unchanged, extra));
        }
        if options.dry_run {
            return Ok((Outcome::Planned { before, after }, extra));
        }
        let meta = match fs::metadata(target) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("stat", target, e)),
        };
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
        if read(target)? != before {
            // Someone rewrote the file meanwhile: merge again from what is there now.
            continue;
        }
        let backup = match (&before, options.backup) {
            (Some(old), true) => {
                let backup = backup_path(target);
                let temp = write_temp(&dir, &backup, old, meta.as_ref(), options)?;
                temp.persist(&backup).map_err(|e| Error::io("write", &backup, e.error))?;
                Some(backup)
            }
            _ => None,
        };
        match temp {
            Some(temp) => {
                temp.persist(target).map_err(|e| Error::io("replace", target, e.error))?;
            }
            None => {
                if before.is_some() {
                    fs::remove_file(target).map_err(|e| Error::io("remove", target, e))?;
                }
            }
        }
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        return Ok((Outcome::Written { before, after, backup }, extra));
    }
    Err(Error::KeepsChanging { path: target.clone(), attempts: ATTEMPTS })
}

/// Writes `content` to a new temp file beside `target`, with the mode and owner of `like`.
fn write_temp(
    dir: &Path,
    target: &Path,
    content: &[u8],
    like: Option<&fs::Metadata>,
    options: UpdateOptions,
) -> Result<tempfile::NamedTempFile, Error> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".hookline-tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create a temp file in", dir, e))?;
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
