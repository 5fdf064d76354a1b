//! Installs pinned Claude Code versions from npm into a cache folder, one folder per version.
//!
//! Layout: `<cache>/claude-code/<version>/` holds a `package.json`, `node_modules/`, the npm
//! log `npm-install.log` and, last, the stamp [`STAMP_FILE`], written atomically once npm has
//! succeeded and the binary has answered `--version` with the right number. A folder without
//! the stamp is a half-finished install and is wiped and redone. `<cache>/claude-code/<version>.lock`
//! serializes installers across threads and processes.
//!
//! The cache is `$HOOKLINE_E2E_CACHE` when set, else `<workspace root>/.e2e-cache/`
//! (gitignored). When npm cannot reach the registry the install fails with a message that says
//! so: the suite never skips.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::version::Version;

/// The Claude Code version the suite runs by default: the newest on npm when pinned.
pub const PRIMARY_VERSION: &str = "2.1.332";
/// The second version: the newest whose `engines` field accepts Node 20.
pub const SECOND_VERSION: &str = "2.1.197";
/// Overrides [`PRIMARY_VERSION`].
pub const ENV_VERSION: &str = "HOOKLINE_E2E_CLAUDE_VERSION";
/// Overrides [`SECOND_VERSION`].
pub const ENV_VERSION_2: &str = "HOOKLINE_E2E_CLAUDE_VERSION_2";
/// Overrides the cache folder.
pub const ENV_CACHE: &str = "HOOKLINE_E2E_CACHE";
/// The npm package.
pub const PACKAGE: &str = "@anthropic-ai/claude-code";
/// Written last into a version's folder: its presence means the install is complete.
pub const STAMP_FILE: &str = ".hookline-install-complete";

/// One of the two pinned versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// [`PRIMARY_VERSION`], or `$HOOKLINE_E2E_CLAUDE_VERSION`.
    Primary,
    /// [`SECOND_VERSION`], or `$HOOKLINE_E2E_CLAUDE_VERSION_2`.
    Second,
}

impl Pin {
    /// The version to test, after the environment override. Panics on an invalid override.
    pub fn version(self) -> Version {
        let (var, default) = match self {
            Pin::Primary => (ENV_VERSION, PRIMARY_VERSION),
            Pin::Second => (ENV_VERSION_2, SECOND_VERSION),
        };
        match std::env::var(var) {
            Ok(text) if !text.trim().is_empty() => {
                text.parse().unwrap_or_else(|e| panic!("${var}: {e}"))
            }
            _ => Version::lit(default),
        }
    }
}

/// A complete install.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The version installed.
    pub version: Version,
    /// Its cache folder.
    pub dir: PathBuf,
    /// The native `claude` binary.
    pub binary: PathBuf,
    /// How long npm took, when this call installed it; `None` when the cache was reused.
    pub install_time: Option<Duration>,
}

/// Why a version could not be installed.
#[derive(Debug)]
pub enum InstallError {
    /// A file operation in the cache failed.
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// `npm` could not be started.
    NpmMissing(io::Error),
    /// `npm install` failed.
    Npm {
        /// The version asked for.
        version: Version,
        /// npm's exit status.
        status: String,
        /// Whether the log shows that the registry could not be reached.
        offline: bool,
        /// The npm log file.
        log: PathBuf,
        /// The end of the log.
        log_tail: String,
    },
    /// npm succeeded but no `claude` binary is where it should be.
    NoBinary {
        /// The version folder.
        dir: PathBuf,
    },
    /// The binary did not answer `--version` with the version asked for.
    WrongVersion {
        /// The binary.
        binary: PathBuf,
        /// The version asked for.
        expected: Version,
        /// What it printed (or why it could not run).
        output: String,
    },
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            InstallError::NpmMissing(e) => write!(
                f,
                "cannot run npm ({e}): the Claude Code e2e suite installs the CLI with npm; \
                 install Node.js and npm (tests/e2e-prereqs.sh does)"
            ),
            InstallError::Npm { version, status, offline, log, log_tail } => {
                if *offline {
                    write!(
                        f,
                        "npm could not reach the registry to install {PACKAGE}@{version} \
                         ({status}). The Claude Code e2e suite needs the npm registry the first \
                         time a version is installed into the cache; it does not skip. Check \
                         the network or the npm registry setting, or point {ENV_CACHE} at a \
                         cache that already holds this version."
                    )?;
                } else {
                    write!(f, "npm install {PACKAGE}@{version} failed ({status})")?;
                }
                write!(f, "\nnpm log {}:\n{log_tail}", log.display())
            }
            InstallError::NoBinary { dir } => write!(
                f,
                "npm installed {PACKAGE} into {} but neither node_modules/.bin/claude nor \
                 node_modules/@anthropic-ai/claude-code-linux-x64/claude is a native binary \
                 (was the optional platform package skipped?)",
                dir.display()
            ),
            InstallError::WrongVersion { binary, expected, output } => {
                write!(f, "{} --version did not report {expected}: {output}", binary.display())
            }
        }
    }
}

impl std::error::Error for InstallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InstallError::Io { source, .. } => Some(source),
            InstallError::NpmMissing(e) => Some(e),
            _ => None,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InstallError + '_ {
    move |source| InstallError::Io { path: path.to_owned(), source }
}

/// The workspace root (the parent of this crate's folder).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_owned()
}

/// The cache folder: `$HOOKLINE_E2E_CACHE`, else `<workspace root>/.e2e-cache`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os(ENV_CACHE) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join(".e2e-cache"),
    }
}

/// Installs `version` into [`cache_dir`], or reuses a complete install.
pub fn install(version: Version) -> Result<Installed, InstallError> {
    install_into(&cache_dir(), version, &[])
}

/// Installs `version` under `cache`, running npm with `npm_env` added to its environment (tests
/// use it to point npm at an unreachable registry).
pub fn install_into(
    cache: &Path,
    version: Version,
    npm_env: &[(&str, &str)],
) -> Result<Installed, InstallError> {
    let root = cache.join("claude-code");
    fs::create_dir_all(&root).map_err(io_err(&root))?;
    let lock_path = root.join(format!("{version}.lock"));
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_err(&lock_path))?;
    // Held until the end of this function; released when `lock` is dropped.
    lock.lock().map_err(io_err(&lock_path))?;

    let dir = root.join(version.to_string());
    if let Some(installed) = complete_install(&dir, version) {
        return Ok(installed);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    }
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let manifest = dir.join("package.json");
    fs::write(&manifest, "{\"private\": true, \"description\": \"hookline e2e cache\"}\n")
        .map_err(io_err(&manifest))?;

    let started = Instant::now();
    run_npm(&dir, version, npm_env)?;
    let took = started.elapsed();

    let binary = find_binary(&dir).ok_or_else(|| InstallError::NoBinary { dir: dir.clone() })?;
    check_version(&binary, version)?;
    write_atomically(&dir.join(STAMP_FILE), format!("{PACKAGE}@{version}\n").as_bytes())?;
    eprintln!(
        "e2e: installed {PACKAGE}@{version} into {} in {:.1} s",
        dir.display(),
        took.as_secs_f64()
    );
    Ok(Installed { version, dir, binary, install_time: Some(took) })
}

fn complete_install(dir: &Path, version: Version) -> Option<Installed> {
    let stamp = fs::read_to_string(dir.join(STAMP_FILE)).ok()?;
    if stamp.trim() != format!("{PACKAGE}@{version}") {
        return None;
    }
    let binary = find_binary(dir)?;
    Some(Installed { version, dir: dir.to_owned(), binary, install_time: None })
}

fn run_npm(dir: &Path, version: Version, npm_env: &[(&str, &str)]) -> Result<(), InstallError> {
    let log_path = dir.join("npm-install.log");
    let log = File::create(&log_path).map_err(io_err(&log_path))?;
    let log_err = log.try_clone().map_err(io_err(&log_path))?;
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--no-package-lock",
            "--no-update-notifier",
            "--loglevel=warn",
            // Offline, the defaults retry for minutes before failing.
            "--fetch-retries=1",
            "--fetch-retry-mintimeout=2000",
            "--fetch-retry-maxtimeout=5000",
        ])
        .arg(format!("{PACKAGE}@{version}"))
        .current_dir(dir)
        .envs(npm_env.iter().copied())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .status()
        .map_err(InstallError::NpmMissing)?;
    if status.success() {
        return Ok(());
    }
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let offline = [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "network",
    ]
    .iter()
    .any(|marker| text.contains(marker));
    let lines: Vec<&str> = text.lines().collect();
    let log_tail = lines[lines.len().saturating_sub(15)..].join("\n");
    Err(InstallError::Npm { version, status: status.to_string(), offline, log: log_path, log_tail })
}

/// The native binary: `node_modules/.bin/claude` when it is one (the package's postinstall
/// links it), else the platform package's `claude`.
pub fn find_binary(dir: &Path) -> Option<PathBuf> {
    let modules = dir.join("node_modules");
    [
        modules.join(".bin").join("claude"),
        modules.join("@anthropic-ai").join("claude-code-linux-x64").join("claude"),
    ]
    .into_iter()
    .find(|path| is_elf(path))
}

fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut f| io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == *b"\x7fELF"
}

fn check_version(binary: &Path, expected: Version) -> Result<(), InstallError> {
    let wrong =
        |output: String| InstallError::WrongVersion { binary: binary.to_owned(), expected, output };
    let output = Command::new(binary)
        .arg("--version")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| wrong(e.to_string()))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() && text.split_whitespace().next() == Some(&expected.to_string()) {
        Ok(())
    } else {
        Err(wrong(format!("{} {text}{}", output.status, String::from_utf8_lossy(&output.stderr))))
    }
}

/// Writes a file by temp file, sync and rename, so a reader sees all of it or none.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io_err(dir))?;
    temp.write_all(bytes).map_err(io_err(temp.path()))?;
    temp.as_file().sync_all().map_err(io_err(temp.path()))?;
    temp.persist(path).map_err(|e| InstallError::Io { path: path.to_owned(), source: e.error })?;
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_are_valid_versions_and_the_second_is_older() {
        assert!(Version::lit(SECOND_VERSION) < Version::lit(PRIMARY_VERSION));
    }

    #[test]
    fn a_folder_without_the_stamp_is_not_a_complete_install() {
        let tmp = tempfile::tempdir().unwrap();
        let version = Version::lit("2.1.332");
        let bin = tmp.path().join("node_modules/@anthropic-ai/claude-code-linux-x64");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("claude"), b"\x7fELF rest").unwrap();
        assert!(complete_install(tmp.path(), version).is_none());
        fs::write(tmp.path().join(STAMP_FILE), "@anthropic-ai/claude-code@2.1.331\n").unwrap();
        assert!(complete_install(tmp.path(), version).is_none(), "stamp of another version");
        write_atomically(&tmp.path().join(STAMP_FILE), b"@anthropic-ai/claude-code@2.1.332\n")
            .unwrap();
        let installed = complete_install(tmp.path(), version).unwrap();
        assert_eq!(installed.binary, bin.join("claude"));
        assert_eq!(installed.install_time, None);
    }

    #[test]
    fn a_placeholder_bin_script_is_passed_over_for_the_native_binary() {
        let tmp = tempfile::tempdir().unwrap();
        let dot_bin = tmp.path().join("node_modules/.bin");
        fs::create_dir_all(&dot_bin).unwrap();
        fs::write(dot_bin.join("claude"), "#!/bin/sh\necho run postinstall\n").unwrap();
        assert_eq!(find_binary(tmp.path()), None);
        let native = tmp.path().join("node_modules/@anthropic-ai/claude-code-linux-x64");
        fs::create_dir_all(&native).unwrap();
        fs::write(native.join("claude"), b"\x7fELF").unwrap();
        assert_eq!(find_binary(tmp.path()), Some(native.join("claude")));
    }
}
