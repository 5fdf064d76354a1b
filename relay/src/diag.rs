//! The relay's diagnostics file: where its failures go instead of stderr.
//!
//! One JSON object per line (`ts_ns`, `pid`, `cli`, `event`, `level`, `message`), appended to
//! [`location::diagnostics_path`](crate::location::diagnostics_path), a [`caplog`] capped at
//! [`MAX_BYTES`] (a message is cut at [`MAX_MESSAGE_BYTES`], so no single line can be larger
//! than the cap). Writing it never fails loudly: if it cannot be written, the record goes to a
//! fallback log ([`append_fallback`]), and is dropped only when that cannot be written either.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::caplog;

use serde::{Deserialize, Serialize};

/// Size at which the diagnostics file is rotated: 64 KiB.
pub const MAX_BYTES: u64 = 64 << 10;
/// Longest message kept; the rest is cut and marked with `…`.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The event was written, but something was off (stdin deadline, truncation, lock timeout).
    Warn,
    /// The event could not be written.
    Error,
}

/// One line of the diagnostics file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// The relay's pid.
    pub pid: u32,
    /// The profile name.
    pub cli: String,
    /// The native event name, when known.
    pub event: Option<String>,
    /// Warning or error.
    pub level: Level,
    /// What happened.
    pub message: String,
    /// The events directory the run was for, in a record of the fallback log (shared by
    /// every events directory of the user): whose loss it is. Absent in the diagnostics file
    /// beside the directory, and when no events directory could be resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_dir: Option<String>,
}

/// Appends a record; silently does nothing when it cannot.
pub fn append(path: &Path, record: &Record) {
    let _ = try_append(path, record);
}

/// Appends a record, saying whether it could.
pub fn try_append(path: &Path, record: &Record) -> io::Result<()> {
    let line = if record.message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES;
        while !record.message.is_char_boundary(end) {
            end -= 1;
        }
        let message = format!("{}…", &record.message[..end]);
        serde_json::to_vec(&Record { message, ..record.clone() })
    } else {
        serde_json::to_vec(record)
    };
    caplog::append_line(path, &line.map_err(io::Error::other)?, MAX_BYTES)
}

/// Appends a record to the fallback log
/// ([`location::fallback_log_path_from`](crate::location::fallback_log_path_from)), for a relay
/// that could not write its diagnostics file. The log's directory is created owner-only (0700)
/// when missing, and used only when it is a real directory (not a symlink) owned by this user
/// and closed to group and others; the log itself is never reached through a symlink.
pub fn append_fallback(env: impl Fn(&str) -> Option<OsString>, record: &Record) -> io::Result<()> {
    let path = crate::location::fallback_log_path_from(env);
    match path.parent() {
        Some(dir) if private_dir(dir) => try_append(&path, record),
        _ => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
    }
}

/// Creates `dir` (not its parents) mode 0700 if missing; whether it is then a directory, not a
/// symlink, owned by this user, with no access for group or others.
fn private_dir(dir: &Path) -> bool {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return false,
    }
    std::fs::symlink_metadata(dir).is_ok_and(|meta| {
        meta.is_dir() && meta.uid() == crate::sys::euid() && meta.mode() & 0o077 == 0
    })
}

/// The rotated copy's path: the same name with `.1` appended.
pub fn rotated_path(path: &Path) -> PathBuf {
    caplog::rotated_path(path)
}

/// Reads the records of a diagnostics file and its rotated copy, oldest first. Lines that do
/// not parse are skipped.
pub fn read(path: &Path) -> Vec<Record> {
    caplog::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(message: &str) -> Record {
        Record {
            ts_ns: 1,
            pid: 2,
            cli: "claude".into(),
            event: Some("Stop".into()),
            level: Level::Error,
            message: message.into(),
            events_dir: None,
        }
    }

    #[test]
    fn the_file_never_grows_past_twice_its_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("events.relay.log");
        for i in 0..5000 {
            append(&path, &record(&format!("failure number {i}")));
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(size(&path) <= MAX_BYTES);
        assert!(size(&rotated_path(&path)) <= MAX_BYTES);
        let records = read(&path);
        assert_eq!(records.last().unwrap().message, "failure number 4999");
        assert!(records.len() > 500, "{}", records.len());
    }

    #[test]
    fn a_huge_message_is_cut_so_one_line_never_exceeds_the_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("events.relay.log");
        append(&path, &record(&"é".repeat(100_000)));
        let records = read(&path);
        assert!(records[0].message.ends_with('…'));
        assert!(records[0].message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
    }

    #[test]
    fn a_symlinked_log_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "").unwrap();
        let path = tmp.path().join("events.relay.log");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        append(&path, &record("x"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }
}
