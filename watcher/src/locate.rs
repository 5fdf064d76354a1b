//! Finding hookline's own binaries and directories.

use std::path::{Path, PathBuf};

/// The relay binary's file name.
pub const RELAY_BINARY: &str = "hookline-relay";

/// The `hookline-relay` binary: beside the running executable first (a release archive or a
/// cargo target directory keeps them together), then on `PATH`.
pub fn relay_binary() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(|dir| dir.join(RELAY_BINARY)));
    beside.filter(|p| is_executable(p)).or_else(|| on_path(RELAY_BINARY))
}

/// The first executable file named `name` in `$PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
