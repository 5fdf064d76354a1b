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

/// A copy of the built relay in `dir` (as `cargo install` would put it outside the build
/// directory, so `hookline install` has no reason to warn that `cargo clean` breaks the hooks).
pub fn relay_copied_to(dir: &Path) -> PathBuf {
    let copy = dir.join("hookline-relay");
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::copy(relay(), &copy))
        .unwrap_or_else(|e| panic!("copying the relay to {}: {e}", copy.display()));
    copy
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
