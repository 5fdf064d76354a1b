//! Where hookline installed: `<state home>/hookline/installs.json`.
//!
//! `install` records each settings file it registered the relay in and `uninstall` forgets
//! it, so `doctor` can tell a file whose hooks were stripped by someone else (running Claude
//! Code sessions have been seen to rewrite settings from a stale copy) from one hookline was
//! never installed in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::errors::Error;
use crate::install::file;
use crate::install::merge::Scaffolding;

/// One settings file hookline installed into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The profile name.
    pub cli: String,
    /// The scope, or `custom` for `--settings`.
    pub scope: String,
    /// The settings path as given (absolute).
    pub path: PathBuf,
    /// What install created in the file, so that uninstall takes away that and nothing else.
    #[serde(default)]
    pub scaffolding: Scaffolding,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RecordFile {
    v: u32,
    installs: Vec<Record>,
}

/// The records file, from the environment (`None` without a state home).
pub fn records_path(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    hookline::format::location::state_home_from(&|k: &str| env(k))
        .ok()
        .map(|state| state.join("hookline").join("installs.json"))
}

/// The records; an unreadable file counts as none.
pub fn load(path: &Path) -> Vec<Record> {
    file::read_through(path)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<RecordFile>(&b).ok())
        .map(|f| f.installs)
        .unwrap_or_default()
}

/// The record of a CLI's install into a settings path.
pub fn find(records: &Path, cli: &str, path: &Path) -> Option<Record> {
    load(records).into_iter().find(|r| r.cli == cli && r.path == path)
}

/// Adds (`present`) or removes a record.
pub fn set(path: &Path, record: &Record, present: bool) -> Result<(), Error> {
    let options = file::UpdateOptions { dry_run: false, backup: false, new_mode: 0o600 };
    file::update(
        path,
        options,
        |before| {
            let mut records: RecordFile =
                before.and_then(|b| serde_json::from_slice(b).ok()).unwrap_or_default();
            records.v = 1;
            records.installs.retain(|r| !(r.cli == record.cli && r.path == record.path));
            if present {
                records.installs.push(record.clone());
            }
            let mut text = serde_json::to_vec_pretty(&records).unwrap_or_default();
            text.push(b'\n');
            if before.is_none() && records.installs.is_empty() {
                return Ok((None, ()));
            }
            Ok((Some(text), ()))
        },
        |_| {},
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_added_once_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("state/hookline/installs.json");
        let r = Record {
            cli: "claude".into(),
            scope: "user".into(),
            path: "/h/.claude/settings.json".into(),
            scaffolding: Scaffolding { file: true, containers: vec!["hooks".into()], blank: None },
        };
        set(&file, &r, true).unwrap();
        set(&file, &r, true).unwrap();
        assert_eq!(load(&file), std::slice::from_ref(&r));
        assert_eq!(find(&file, "claude", &r.path), Some(r.clone()));
        set(&file, &r, false).unwrap();
        assert_eq!(load(&file), []);
    }
}
