//! Size-capped NDJSON logs: one JSON object per line, rotated once.
//!
//! When appending a line would take the file past its cap, the file is renamed to `….1`
//! (replacing the previous one) and a new file is started, so the two together stay within
//! about twice the cap. The file is created with mode 0600 and never reached through a symlink;
//! it is opened non-blocking and used only when the open descriptor is a regular file, so a
//! FIFO in its place never makes a writer or a reader wait.
//! Used by the relay's diagnostics and by `hookline`'s decision journal.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
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
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path)
            .and_then(regular)
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

/// The most bytes read of one file by [`read`] (far above any cap a writer uses).
const MAX_READ: u64 = 64 << 20;

/// A file opened on a path, refused unless it is a regular file (judged on the descriptor).
fn regular(file: File) -> io::Result<File> {
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"))
    }
}

/// A whole log file's text, at most 64 MiB: never through a symlink, never
/// blocking, only a regular file.
fn read_text(path: &Path) -> io::Result<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .and_then(regular)?;
    let mut bytes = Vec::new();
    file.take(MAX_READ).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The records of the rotated copy and the file, oldest first; lines that do not parse as a
/// `T` are skipped. A file that is a symlink, a FIFO or anything but a regular file reads as
/// empty.
pub fn read<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    [rotated_path(path), path.to_owned()]
        .iter()
        .filter_map(|p| read_text(p).ok())
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

    #[test]
    fn a_fifo_in_the_logs_place_is_refused_without_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("log");
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path string; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Nobody reads the FIFO: a blocking open for writing would wait here for good.
        assert!(append_line(&path, b"{}", 1024).is_err());
        // Nobody writes it either: a blocking open for reading would wait too.
        assert!(read::<serde_json::Value>(&path).is_empty());
    }
}
