//! Writing files that other processes read: always atomically.

use std::io::{ErrorKind, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::Error;

/// Writes `bytes` to `path` atomically: a temp file in the same directory, written whole,
/// given `mode`, then renamed over `path`. Readers see the old content or the new, never a
/// mix; on error the temp file is removed and `path` is untouched. Not durable: after a crash
/// of the machine (not of the process) the file may hold its old content.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    write(path, bytes, mode, false)
}

/// [`write_atomic`], durably: the temp file is synced before the rename and the directory
/// after it, so once this returns the new content survives a crash of the machine too.
pub fn write_durable(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    write(path, bytes, mode, true)
}

fn write(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> Result<(), Error> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp-hookline-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    temp.write_all(bytes).map_err(|e| Error::io("write", temp.path().to_owned(), e))?;
    temp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("chmod", temp.path().to_owned(), e))?;
    if durable {
        temp.as_file().sync_all().map_err(|e| Error::io("sync", temp.path().to_owned(), e))?;
    }
    temp.persist(path).map_err(|e| Error::io("replace", path, e.error))?;
    if durable {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Syncs a directory, so that a rename in it is on disk. A filesystem that cannot sync
/// directories (some network and FUSE ones refuse) promises nothing more: not an error.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    let synced = std::fs::File::open(dir).and_then(|d| d.sync_all());
    match synced {
        Err(e) if matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::Unsupported) => Ok(()),
        result => result.map_err(|e| Error::io("sync", dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn the_file_is_replaced_whole_with_its_mode_and_no_temp_is_left() {
        type Write = fn(&Path, &[u8], u32) -> Result<(), Error>;
        for write in [write_atomic as Write, write_durable] {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("state.json");
            std::fs::write(&path, "old").unwrap();
            write(&path, b"new", 0o600).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
            assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
            assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let err = write_atomic(&tmp.path().join("no/such/file"), b"x", 0o600).unwrap_err();
        assert!(err.to_string().contains("no/such"), "{err}");
    }
}
