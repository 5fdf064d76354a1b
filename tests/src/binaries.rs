//! The workspace's built binaries, found beside the running test executable.
//!
//! A test executable lives in `target/<profile>/deps/`; the workspace binaries are in
//! `target/<profile>/`. `cargo test -p hookline-tests` does not build them (they belong to
//! other packages), so the suite asks for `cargo build --workspace` first.

use std::path::{Path, PathBuf};

/// `target/<profile>/`, from the running executable's path.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let dir = exe.parent().expect("the test executable's folder");
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.parent().unwrap_or(dir).to_owned()
    } else {
        dir.to_owned()
    }
}

/// The built `hookline-relay`. Panics with how to build it when it is missing.
pub fn relay() -> PathBuf {
    built("hookline-relay")
}

/// The built `hookline`. Panics with how to build it when it is missing.
pub fn hookline() -> PathBuf {
    built("hookline")
}

fn built(name: &str) -> PathBuf {
    let path = profile_dir().join(name);
    assert!(
        is_executable(&path),
        "{name} not found at {}: run `cargo build --workspace` first (with the same profile as \
         the tests, e.g. `--release` for `cargo test --release`)",
        path.display()
    );
    path
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
