//! Durable cursors: how far a named consumer has read an events directory.
//!
//! A cursor is `<events_dir>/.cursors/<name>.json`, written atomically and durably (the file
//! synced before its rename, the directory after), so a position saved survives a crash of
//! the machine, not only of the consumer. It holds the highest
//! ordered `seq` delivered, the names of the unordered event files delivered (rare: written
//! when the counter lock timed out) and, per legacy directory, the names of its files
//! delivered. While a consumer has a cursor open it holds an exclusive lock on
//! `.cursors/<name>.lock`, so two consumers cannot share one cursor by mistake.
//!
//! The file also names the events directory its position refers to (its [`DirId`]). An events
//! directory deleted and recreated starts its `seq`s again at 1: a position saved for the old
//! one (by a consumer that had not noticed yet) is recognised as foreign and read as the start
//! of the new one, so nothing in the new directory is skipped. Files without that field (older
//! versions) are read as before; older versions ignore it.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::errors::{CursorError, Error};
use crate::format::store::EventsDir;
use crate::fsutil::write_durable;
use crate::ingest::source::{self, DirId};
use crate::paths::CURSORS_DIR;
use crate::untrusted::{self, Link};

/// Whether a cursor named `name` has been saved in `events_dir`.
pub fn exists(events_dir: &Path, name: &str) -> bool {
    events_dir.join(CURSORS_DIR).join(format!("{name}.json")).is_file()
}

/// Longest wait for the counter's shared lock when checking a saved position against it.
const COUNTER_BOUND: Duration = Duration::from_millis(200);

/// How far a consumer has read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// Highest ordered `seq` delivered with every ordered event below it.
    pub seq: u64,
    /// Ordered `seq`s above `seq` already delivered (a consumer that waited for one session's
    /// events took them before others): skipped when read again.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub ahead: BTreeSet<u64>,
    /// Unordered event files delivered.
    #[serde(default)]
    pub unordered: BTreeSet<String>,
    /// Legacy directory → files delivered from it.
    #[serde(default)]
    pub legacy: BTreeMap<PathBuf, BTreeSet<String>>,
}

impl Position {
    /// Whether the event read from `source` is behind this position (was delivered): how a
    /// consumer rebuilding its state from history tells what it had already handled.
    pub fn covers(&self, source: &crate::canonical::SourceRef) -> bool {
        if source.legacy {
            return self.legacy.get(&source.dir).is_some_and(|files| files.contains(&source.file));
        }
        match crate::format::filename::EventFileName::parse(&source.file) {
            Some(name) if name.unordered_ts_ns.is_some() => self.unordered.contains(&source.file),
            _ => source.seq <= self.seq || self.ahead.contains(&source.seq),
        }
    }

    /// Whether the event file `name` of the events directory is behind this position.
    pub fn covers_name(&self, name: &crate::format::filename::EventFileName) -> bool {
        match name.unordered_ts_ns {
            Some(_) => self.unordered.contains(&name.to_string()),
            None => name.seq <= self.seq || self.ahead.contains(&name.seq),
        }
    }

    /// Forgets what belongs to an events directory that is gone (its `seq`s and unordered
    /// files), keeping what was read from legacy directories.
    pub fn forget_events_dir(&mut self) {
        self.seq = 0;
        self.ahead.clear();
        self.unordered.clear();
    }
}

#[derive(Serialize, Deserialize)]
struct CursorFile {
    v: u32,
    /// The events directory the position refers to (absent in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dir: Option<DirId>,
    #[serde(flatten)]
    position: Position,
}

/// A named, durable cursor (or an anonymous one that is never saved).
#[derive(Debug)]
pub struct Cursor {
    name: Option<String>,
    events_dir: PathBuf,
    path: Option<PathBuf>,
    /// Replaced when the events directory was recreated under us (see [`Cursor::save`]).
    lock: RefCell<Option<File>>,
    /// Where the consumer is.
    pub position: Position,
    /// The events directory `position` refers to, saved with it; `None` when unknown.
    pub dir: Option<DirId>,
    /// Whether the saved position belonged to an events directory since deleted and
    /// recreated, and was read as the start of the new one.
    pub recreated: bool,
    /// Whether no position was saved yet: the cursor is not registered for retention.
    pub is_new: bool,
}

/// Checks a cursor name: 1 to 64 letters, digits, `-`, `_`, `.`, not starting with `.`.
pub(crate) fn check_name(name: &str) -> Result<(), CursorError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok { Ok(()) } else { Err(CursorError::BadName { name: name.to_owned() }) }
}

impl Cursor {
    /// A cursor that lives only in memory.
    pub fn anonymous() -> Cursor {
        Cursor {
            name: None,
            events_dir: PathBuf::new(),
            path: None,
            lock: RefCell::new(None),
            position: Position::default(),
            dir: None,
            recreated: false,
            is_new: true,
        }
    }

    /// Opens (or creates) a named cursor of an events directory, creating the directory
    /// (mode 0700) if needed. Fails if another process has it open. A position saved for an
    /// earlier directory of the same path is read as the start of the current one.
    pub fn open(events_dir: &Path, name: &str) -> Result<Cursor, CursorError> {
        check_name(name)?;
        let lock = lock(events_dir, name)?;
        let path = events_dir.join(CURSORS_DIR).join(format!("{name}.json"));
        let current = source::dir_id(events_dir)?;
        let saved = read_file(&path)?;
        let is_new = saved.is_none();
        let (position, recreated) = match saved {
            Some(file) => for_current_dir(events_dir, current, file)?,
            None => (Position::default(), false),
        };
        Ok(Cursor {
            name: Some(name.to_owned()),
            events_dir: events_dir.to_owned(),
            path: Some(path),
            lock: RefCell::new(Some(lock)),
            position,
            dir: current,
            recreated,
            is_new,
        })
    }

    /// The cursor's name, if it is durable.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Saves `position`, as a position in the directory `self.dir` (a durable cursor only; an
    /// anonymous one does nothing). If the events directory was deleted since the cursor was
    /// opened, the directory and `.cursors/` are created again, with the same checks as
    /// [`Cursor::open`], and the cursor's lock is taken again there.
    pub fn save(&self, position: &Position) -> Result<(), Error> {
        let (Some(path), Some(name)) = (&self.path, &self.name) else {
            return Ok(());
        };
        let file = CursorFile { v: 1, dir: self.dir, position: position.clone() };
        let mut bytes =
            serde_json::to_vec_pretty(&file).map_err(|e| Error::io("encode", path, e.into()))?;
        bytes.push(b'\n');
        let relock = || -> Result<(), Error> {
            *self.lock.borrow_mut() = Some(lock(&self.events_dir, name)?);
            Ok(())
        };
        if std::fs::symlink_metadata(lock_path(&self.events_dir, name)).is_err() {
            relock()?;
        }
        match write_durable(path, &bytes, 0o600) {
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                relock()?;
                write_durable(path, &bytes, 0o600)
            }
            result => result,
        }
    }
}

/// Creates the events directory and its `.cursors/` if needed (mode 0700, refusing a symlink,
/// another user's directory or one writable by others), and takes the cursor's lock.
fn lock(events_dir: &Path, name: &str) -> Result<File, Error> {
    EventsDir::create(events_dir)?;
    EventsDir::create(&events_dir.join(CURSORS_DIR))?;
    let lock_path = lock_path(events_dir, name);
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&lock_path)
        .map_err(|e| Error::io("open", &lock_path, e))?;
    if lock.try_lock().is_err() {
        return Err(CursorError::InUse { name: name.to_owned(), lock: lock_path }.into());
    }
    Ok(lock)
}

fn lock_path(events_dir: &Path, name: &str) -> PathBuf {
    events_dir.join(CURSORS_DIR).join(format!("{name}.lock"))
}

/// The saved position as a position in the events directory as it is now, and whether it had
/// to be reset because it belonged to an earlier directory: one with another identity, or one
/// whose counter had gone further than the current directory's (a lost counter is rebuilt
/// from the files, and retention always keeps the newest, so a counter never goes back).
fn for_current_dir(
    events_dir: &Path,
    current: Option<DirId>,
    file: CursorFile,
) -> Result<(Position, bool), Error> {
    let mut position = file.position;
    let foreign = match (file.dir, current) {
        (Some(saved), Some(current)) => !current.same_dir(&saved),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let behind = || -> Result<bool, Error> {
        if position.seq == 0 || current.is_none() {
            return Ok(false);
        }
        let counter = EventsDir::open(events_dir)?.committed_seq(COUNTER_BOUND)?;
        Ok(counter.is_some_and(|c| c < position.seq))
    };
    let reset = foreign || behind()?;
    if reset {
        position.forget_events_dir();
    }
    Ok((position, reset))
}

/// The largest cursor file read.
const MAX_BYTES: u64 = 64 << 20;

fn read_file(path: &Path) -> Result<Option<CursorFile>, Error> {
    match untrusted::read_regular(path, MAX_BYTES, Link::Refuse) {
        Ok(bytes) => serde_json::from_slice::<CursorFile>(&bytes)
            .map(Some)
            .map_err(|source| CursorError::Damaged { path: path.to_owned(), source }.into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// Every cursor saved in an events directory, by name, each as a position in the directory as
/// it is now (one saved for an earlier directory of the same path reads as its start).
pub fn all(events_dir: &Path) -> Result<Vec<(String, Position)>, Error> {
    let current = source::dir_id(events_dir)?;
    let dir = events_dir.join(CURSORS_DIR);
    // Never through a link: the cursors say what retention may remove.
    let names = match untrusted::Dir::open(&dir).and_then(|d| d.map(|d| d.names()).transpose()) {
        Ok(Some(names)) => names,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", &dir, e)),
    };
    let mut cursors = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(name) = name.strip_suffix(".json") else {
            continue;
        };
        if check_name(name).is_err() {
            continue;
        }
        if let Some(file) = read_file(&path)? {
            let (position, _) = for_current_dir(events_dir, current, file)?;
            cursors.push((name.to_owned(), position));
        }
    }
    cursors.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(cursors)
}

/// A saved cursor, as `hookline cursors` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// Its name.
    pub name: String,
    /// Its position in the events directory as it is now (see [`all`]).
    pub position: Position,
    /// When it was last saved (its file's modification time).
    pub saved: Option<std::time::SystemTime>,
    /// Whether a process has it open now (holds its lock).
    pub in_use: bool,
}

/// Every cursor saved in an events directory with when it was last saved and whether a
/// process has it open, by name.
pub fn saved(events_dir: &Path) -> Result<Vec<Saved>, Error> {
    all(events_dir)?
        .into_iter()
        .map(|(name, position)| {
            let file = events_dir.join(CURSORS_DIR).join(format!("{name}.json"));
            let saved = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
            let in_use = held(&lock_path(events_dir, &name))?.is_none();
            Ok(Saved { name, position, saved, in_use })
        })
        .collect()
}

/// Takes a cursor's lock if nobody holds it: `Some(lock)` (held until dropped), `None` when
/// another process holds it; no lock file is held by nobody.
fn held(lock_path: &Path) -> Result<Option<Option<File>>, Error> {
    match File::options().write(true).open(lock_path) {
        Ok(lock) => Ok(lock.try_lock().is_ok().then_some(Some(lock))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(None)),
        Err(e) => Err(Error::io("open", lock_path, e)),
    }
}

/// Removes a saved cursor, so that it no longer holds back retention: its position file, then
/// its lock file. Refused while a process has it open.
pub fn remove(events_dir: &Path, name: &str) -> Result<(), CursorError> {
    check_name(name)?;
    let file = events_dir.join(CURSORS_DIR).join(format!("{name}.json"));
    if !file.exists() {
        let known = all(events_dir)?.into_iter().map(|(name, _)| name).collect();
        return Err(CursorError::NoSuch { name: name.to_owned(), known });
    }
    let lock_path = lock_path(events_dir, name);
    let Some(_lock) = held(&lock_path)? else {
        return Err(CursorError::InUse { name: name.to_owned(), lock: lock_path });
    };
    std::fs::remove_file(&file).map_err(|e| Error::io("remove", &file, e))?;
    match std::fs::remove_file(&lock_path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", &lock_path, e).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_listed_with_its_use_and_removed_only_when_unused() {
        let tmp = tempfile::tempdir().unwrap();
        let mut open = Cursor::open(tmp.path(), "busy").unwrap();
        open.position.seq = 3;
        open.save(&open.position).unwrap();
        drop(Cursor::open(tmp.path(), "idle").map(|c| c.save(&Position::default())).unwrap());
        let listed = saved(tmp.path()).unwrap();
        let names: Vec<(&str, u64, bool)> =
            listed.iter().map(|s| (s.name.as_str(), s.position.seq, s.in_use)).collect();
        assert_eq!(names, [("busy", 3, true), ("idle", 0, false)]);
        assert!(listed.iter().all(|s| s.saved.is_some()));
        let err = remove(tmp.path(), "busy").unwrap_err();
        assert!(matches!(err, CursorError::InUse { .. }), "{err}");
        remove(tmp.path(), "idle").unwrap();
        assert_eq!(all(tmp.path()).unwrap().len(), 1);
        assert!(!tmp.path().join(CURSORS_DIR).join("idle.lock").exists());
        let err = remove(tmp.path(), "idle").unwrap_err();
        assert_eq!(err.to_string(), "no cursor named \"idle\" (cursors: busy)");
        drop(open);
        remove(tmp.path(), "busy").unwrap();
        assert!(saved(tmp.path()).unwrap().is_empty());
    }

    #[test]
    fn a_position_covers_what_was_delivered_and_nothing_after() {
        use crate::canonical::SourceRef;
        let mut position = Position { seq: 4, ..Position::default() };
        position.ahead.insert(7);
        let ordered = |seq: u64| SourceRef {
            dir: "/ev".into(),
            seq,
            file: crate::format::filename::EventFileName::ordered(seq, 1).to_string(),
            legacy: false,
        };
        assert!(position.covers(&ordered(4)) && position.covers(&ordered(7)));
        assert!(!position.covers(&ordered(5)) && !position.covers(&ordered(8)));
        let unordered = |ts: u64| {
            let name = crate::format::filename::EventFileName::unordered(5, ts, 9);
            SourceRef { dir: "/ev".into(), seq: 5, file: name.to_string(), legacy: false }
        };
        position.unordered.insert(unordered(1_000).file);
        // An unordered event is covered by its name, never by its seq.
        assert!(position.covers(&unordered(1_000)));
        assert!(!position.covers(&unordered(2_000)));
        position.seq = 9;
        assert!(!position.covers(&unordered(2_000)));
        let legacy =
            SourceRef { dir: "/old".into(), seq: 0, file: "1-t-stop.json".into(), legacy: true };
        assert!(!position.covers(&legacy));
        position.legacy.entry("/old".into()).or_default().insert("1-t-stop.json".into());
        assert!(position.covers(&legacy));
    }

    #[test]
    fn a_cursor_saves_and_reopens_with_its_position() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("events");
        let mut cursor = Cursor::open(&dir, "orchestrator").unwrap();
        assert_eq!(cursor.position, Position::default());
        cursor.position.seq = 41;
        cursor.position.unordered.insert("x.json".into());
        cursor.save(&cursor.position).unwrap();
        drop(cursor);
        let cursor = Cursor::open(&dir, "orchestrator").unwrap();
        assert_eq!(cursor.position.seq, 41);
        assert_eq!(all(&dir).unwrap().len(), 1);
    }

    #[test]
    fn one_cursor_cannot_be_opened_twice_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let _first = Cursor::open(tmp.path(), "a").unwrap();
        let err = Cursor::open(tmp.path(), "a").unwrap_err();
        assert!(err.to_string().contains("in use"), "{err}");
    }

    #[test]
    fn a_save_after_the_dir_was_deleted_recreates_it_safely_and_keeps_the_lock() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("events");
        let cursor = Cursor::open(&dir, "c").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        cursor.save(&Position::default()).unwrap();
        for path in [dir.clone(), dir.join(CURSORS_DIR)] {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", path.display());
        }
        let err = Cursor::open(&dir, "c").unwrap_err();
        assert!(err.to_string().contains("in use"), "{err}");
    }

    #[test]
    fn a_cursors_dir_writable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let cursors = tmp.path().join(CURSORS_DIR);
        std::fs::create_dir(&cursors).unwrap();
        std::fs::set_permissions(&cursors, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = Cursor::open(tmp.path(), "c").unwrap_err();
        assert!(err.to_string().contains(".cursors"), "{err}");
    }

    #[test]
    fn a_position_saved_for_another_dir_reads_as_the_start_and_old_files_as_before() {
        let tmp = tempfile::tempdir().unwrap();
        let cursors = tmp.path().join(CURSORS_DIR);
        std::fs::create_dir(&cursors).unwrap();
        let legacy = r#"{"v":1,"seq":0,"unordered":[],"legacy":{"/run/events":["1-a-b.json"]}}"#;
        std::fs::write(cursors.join("old.json"), legacy).unwrap();
        let cursor = Cursor::open(tmp.path(), "old").unwrap();
        assert!(!cursor.recreated && !cursor.is_new);
        assert_eq!(cursor.position.legacy.len(), 1);
        drop(cursor);
        let other = r#"{"v":1,"dir":{"dev":1,"ino":1,"born_ns":1},"seq":9,"unordered":["x.json"],
            "legacy":{"/run/events":["1-a-b.json"]}}"#;
        std::fs::write(cursors.join("moved.json"), other).unwrap();
        let cursor = Cursor::open(tmp.path(), "moved").unwrap();
        assert!(cursor.recreated);
        assert_eq!((cursor.position.seq, cursor.position.unordered.len()), (0, 0));
        assert_eq!(cursor.position.legacy.len(), 1, "legacy dirs were not recreated");
        assert_eq!(all(tmp.path()).unwrap()[0].1.seq, 0, "retention reads it the same way");
    }

    #[test]
    fn names_that_could_reach_a_path_are_refused() {
        for bad in ["", "../x", ".hidden", "a/b", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        check_name("ci-loop_2.main").unwrap();
    }

    #[test]
    fn a_damaged_cursor_is_an_error_not_a_silent_restart() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(CURSORS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("c.json"), "{").unwrap();
        let err = Cursor::open(tmp.path(), "c").unwrap_err();
        assert!(err.to_string().contains("c.json"), "{err}");
    }
}
