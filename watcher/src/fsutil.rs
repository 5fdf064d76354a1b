//! Writing files that other processes read: always atomically.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::Error;

/// Writes `bytes` to `path` atomically: a temp file in the same directory, written whole,
/// given `mode`, then renamed over `path`. Readers see the old content or the new, never a
/// mix; on error the temp file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp-hookline-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    temp.write_all(bytes).map_err(|e| Error::io("write", temp.path().to_owned(), e))?;
    temp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("chmod", temp.path().to_owned(), e))?;
    temp.persist(path).map_err(|e| Error::io("replace", path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn the_file_is_replaced_whole_with_its_mode_and_no_temp_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let err = write_atomic(&tmp.path().join("no/such/file"), b"x", 0o600).unwrap_err();
        assert!(err.to_string().contains("no/such"), "{err}");
    }
}
