//! Size-capped NDJSON logs: one JSON object per line, rotated once.
//!
//! When appending a line would take the file past its cap, the file is renamed to `….1`
//! (replacing the previous one) and a new file is started, so the two together stay within
//! about twice the cap. The file is created with mode 0600 and never reached through a symlink.
//! Used by the relay's diagnostics and by `hookline`'s decision journal.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// Appends one line (a newline is added), rotating first when the file would pass `max_bytes`.
pub fn append_line(path: &Path, line: &[u8], max_bytes: u64) -> io::Result<()> {
    let open = || {
        OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    let mut file = open()?;
    if file.metadata()?.size() + line.len() as u64 + 1 > max_bytes {
        std::fs::rename(path, rotated_path(path))?;
        file = open()?;
    }
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    file.write_all(&bytes)
}

/// The rotated copy's path: the same name with `.1` appended.
pub fn rotated_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".1");
    PathBuf::from(name)
}

/// The records of the rotated copy and the file, oldest first; lines that do not parse as a
/// `T` are skipped.
pub fn read<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    [rotated_path(path), path.to_owned()]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| {
            text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect::<Vec<T>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_once_and_stays_within_twice_its_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("log.ndjson");
        for i in 0..2000 {
            append_line(&path, format!("{{\"n\":{i}}}").as_bytes(), 4096).unwrap();
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(size(&path) <= 4096 && size(&rotated_path(&path)) <= 4096);
        let records: Vec<serde_json::Value> = read(&path);
        assert_eq!(records.last().unwrap()["n"], 1999);
        assert!(records.windows(2).all(|w| w[0]["n"].as_u64() < w[1]["n"].as_u64()));
    }

    #[test]
    fn a_symlinked_log_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "").unwrap();
        let path = tmp.path().join("log");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(append_line(&path, b"{}", 1024).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }
}
