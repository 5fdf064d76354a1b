//! Durable cursors: how far a named consumer has read an events directory.
//!
//! A cursor is `<events_dir>/.cursors/<name>.json`, written atomically. It holds the highest
//! ordered `seq` delivered, the names of the unordered event files delivered (rare: written
//! when the counter lock timed out) and, per legacy directory, the names of its files
//! delivered. While a consumer has a cursor open it holds an exclusive lock on
//! `.cursors/<name>.lock`, so two consumers cannot share one cursor by mistake.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::fsutil::write_atomic;

/// Sub-directory of an events directory holding the cursors.
pub const CURSORS_DIR: &str = ".cursors";

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

#[derive(Serialize, Deserialize)]
struct CursorFile {
    v: u32,
    #[serde(flatten)]
    position: Position,
}

/// A named, durable cursor (or an anonymous one that is never saved).
#[derive(Debug)]
pub struct Cursor {
    name: Option<String>,
    path: Option<PathBuf>,
    _lock: Option<File>,
    /// Where the consumer is.
    pub position: Position,
}

/// Checks a cursor name: 1 to 64 letters, digits, `-`, `_`, `.`, not starting with `.`.
pub fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok { Ok(()) } else { Err(Error::BadCursorName { name: name.to_owned() }) }
}

impl Cursor {
    /// A cursor that lives only in memory.
    pub fn anonymous() -> Cursor {
        Cursor { name: None, path: None, _lock: None, position: Position::default() }
    }

    /// Opens (or creates) a named cursor of an events directory, creating the directory
    /// (mode 0700) if needed. Fails if another process has it open.
    pub fn open(events_dir: &Path, name: &str) -> Result<Cursor, Error> {
        check_name(name)?;
        crate::format::store::EventsDir::create(events_dir)?;
        let dir = events_dir.join(CURSORS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
        let lock_path = dir.join(format!("{name}.lock"));
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io("open", &lock_path, e))?;
        if lock.try_lock().is_err() {
            return Err(Error::CursorInUse { name: name.to_owned(), path: lock_path });
        }
        let path = dir.join(format!("{name}.json"));
        let position = read_position(&path)?.unwrap_or_default();
        Ok(Cursor { name: Some(name.to_owned()), path: Some(path), _lock: Some(lock), position })
    }

    /// The cursor's name, if it is durable.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Saves `position` (a durable cursor only; an anonymous one does nothing).
    pub fn save(&self, position: &Position) -> Result<(), Error> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let file = CursorFile { v: 1, position: position.clone() };
        let mut bytes =
            serde_json::to_vec_pretty(&file).map_err(|e| Error::io("encode", path, e.into()))?;
        bytes.push(b'\n');
        write_atomic(path, &bytes, 0o600)
    }
}

fn read_position(path: &Path) -> Result<Option<Position>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<CursorFile>(&bytes)
            .map(|f| Some(f.position))
            .map_err(|e| Error::BadCursor { path: path.to_owned(), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// Every cursor saved in an events directory, by name.
pub fn all(events_dir: &Path) -> Result<Vec<(String, Position)>, Error> {
    let dir = events_dir.join(CURSORS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", &dir, e)),
    };
    let mut cursors = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io("list", &dir, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(name) = name.strip_suffix(".json") else {
            continue;
        };
        if check_name(name).is_err() {
            continue;
        }
        if let Some(position) = read_position(&path)? {
            cursors.push((name.to_owned(), position));
        }
    }
    cursors.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(cursors)
}

#[cfg(test)]
mod tests {
    use super::*;

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
