//! Installs pinned versions of an agent CLI's npm package into a cache folder, one folder per
//! version, for the Codex and Gemini suites (and any CLI whose `node_modules/.bin/<bin>` is what
//! a user runs).
//!
//! Layout: `<cache>/<cli>/<version>/` holds a `package.json`, `node_modules/`, the npm log
//! `npm-install.log` and, last, the stamp [`STAMP_FILE`], written atomically once npm has
//! succeeded and `<bin> --version` has printed the right number. A folder without the stamp is
//! a half-finished install and is wiped and redone. `<cache>/<cli>/<version>.lock` serializes
//! installers across threads and processes.
//!
//! The cache is [`crate::claude_install::cache_dir`] (`$HOOKLINE_E2E_CACHE`, else
//! `<workspace>/.e2e-cache/`). When npm cannot reach the registry the install fails with a
//! message that says so: the suites never skip.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::claude_install::{ENV_CACHE, cache_dir};
use crate::session::output_within;
use crate::version::Version;

/// Written last into a version's folder: its presence means the install is complete.
pub const STAMP_FILE: &str = ".hookline-install-complete";

/// How long `<bin> --version` may take (Gemini CLI 0.61 takes ~8 s on two cores).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// An npm package that provides an agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmCli {
    /// The CLI's short name: the cache subfolder and the `--cli` of its profile.
    pub cli: &'static str,
    /// The npm package.
    pub package: &'static str,
    /// The version the suite runs by default.
    pub default_version: &'static str,
    /// The environment variable that overrides it.
    pub env_version: &'static str,
    /// The program in `node_modules/.bin/`.
    pub bin: &'static str,
}

/// `@openai/codex`, whose wrapper runs a native binary from an optional platform package.
pub static CODEX: NpmCli = NpmCli {
    cli: "codex",
    package: "@openai/codex",
    default_version: "0.171.0",
    env_version: "HOOKLINE_E2E_CODEX_VERSION",
    bin: "codex",
};

/// `@google/gemini-cli`, a Node bundle.
pub static GEMINI: NpmCli = NpmCli {
    cli: "gemini",
    package: "@google/gemini-cli",
    default_version: "0.61.0",
    env_version: "HOOKLINE_E2E_GEMINI_VERSION",
    bin: "gemini",
};

impl NpmCli {
    /// The version to test: [`NpmCli::env_version`] when set, else the default. Panics on an
    /// invalid override.
    pub fn version(&self) -> Version {
        match std::env::var(self.env_version) {
            Ok(text) if !text.trim().is_empty() => {
                text.parse().unwrap_or_else(|e| panic!("${}: {e}", self.env_version))
            }
            _ => Version::lit(self.default_version),
        }
    }

    /// Installs `version` into the cache, or reuses a complete install.
    pub fn install(&'static self, version: Version) -> Result<Installed, InstallError> {
        self.install_into(&cache_dir(), version, &[])
    }

    /// Installs `version` under `cache`, running npm with `npm_env` added to its environment
    /// (tests use it to point npm at an unreachable registry).
    pub fn install_into(
        &'static self,
        cache: &Path,
        version: Version,
        npm_env: &[(&str, &str)],
    ) -> Result<Installed, InstallError> {
        let root = cache.join(self.cli);
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
        if let Some(installed) = self.complete_install(&dir, version) {
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
        self.run_npm(&dir, version, npm_env)?;
        let took = started.elapsed();

        let binary = self.bin_path(&dir);
        if !binary.exists() {
            return Err(InstallError::NoBinary { cli: self, dir });
        }
        self.check_version(&binary, version)?;
        write_atomically(&dir.join(STAMP_FILE), self.stamp(version).as_bytes())?;
        eprintln!(
            "e2e: installed {}@{version} into {} in {:.1} s",
            self.package,
            dir.display(),
            took.as_secs_f64()
        );
        Ok(Installed { cli: self, version, dir, binary, install_time: Some(took) })
    }

    fn stamp(&self, version: Version) -> String {
        format!("{}@{version}\n", self.package)
    }

    fn bin_path(&self, dir: &Path) -> PathBuf {
        dir.join("node_modules").join(".bin").join(self.bin)
    }

    fn complete_install(&'static self, dir: &Path, version: Version) -> Option<Installed> {
        let stamp = fs::read_to_string(dir.join(STAMP_FILE)).ok()?;
        if stamp != self.stamp(version) {
            return None;
        }
        let binary = self.bin_path(dir);
        binary.exists().then(|| Installed {
            cli: self,
            version,
            dir: dir.to_owned(),
            binary,
            install_time: None,
        })
    }

    fn run_npm(
        &'static self,
        dir: &Path,
        version: Version,
        npm_env: &[(&str, &str)],
    ) -> Result<(), InstallError> {
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
            .arg(format!("{}@{version}", self.package))
            .current_dir(dir)
            .envs(npm_env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .status()
            .map_err(|source| InstallError::NpmMissing { cli: self, source })?;
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
        Err(InstallError::Npm {
            cli: self,
            version,
            status: status.to_string(),
            offline,
            log: log_path,
            log_tail,
        })
    }

    /// Runs `<bin> --version` (with a throwaway `HOME`, so no user state is read or written)
    /// and looks for `expected` among the words it prints.
    fn check_version(&'static self, binary: &Path, expected: Version) -> Result<(), InstallError> {
        let wrong = |output: String| InstallError::WrongVersion {
            binary: binary.to_owned(),
            expected,
            output,
        };
        let home = tempfile::tempdir().map_err(|e| wrong(e.to_string()))?;
        let mut command = Command::new(binary);
        command
            .arg("--version")
            .env("HOME", home.path())
            .env("CODEX_HOME", home.path().join(".codex"))
            .env("GEMINI_CLI_HOME", home.path());
        let output = output_within(command, VERSION_TIMEOUT).map_err(wrong)?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let wanted = expected.to_string();
        if output.status.success() && text.split_whitespace().any(|word| word == wanted) {
            Ok(())
        } else {
            Err(wrong(format!(
                "{} {text}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )))
        }
    }
}

/// A complete install.
#[derive(Debug, Clone)]
pub struct Installed {
    /// Which CLI.
    pub cli: &'static NpmCli,
    /// The version installed.
    pub version: Version,
    /// Its cache folder.
    pub dir: PathBuf,
    /// `node_modules/.bin/<bin>`, what a user runs.
    pub binary: PathBuf,
    /// How long npm took, when this call installed it; `None` when the cache was reused.
    pub install_time: Option<Duration>,
}

impl Installed {
    /// `node_modules/.bin`, to put first on the CLI's `PATH` (so that `hookline install` finds
    /// the CLI and detects its version).
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("node_modules").join(".bin")
    }
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
    NpmMissing {
        /// Which CLI was being installed.
        cli: &'static NpmCli,
        /// The cause.
        source: io::Error,
    },
    /// `npm install` failed.
    Npm {
        /// Which CLI.
        cli: &'static NpmCli,
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
    /// npm succeeded but `node_modules/.bin/<bin>` is missing.
    NoBinary {
        /// Which CLI.
        cli: &'static NpmCli,
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
            InstallError::NpmMissing { cli, source } => write!(
                f,
                "cannot run npm ({source}): the {} e2e suite installs {} with npm; install \
                 Node.js and npm (tests/e2e-prereqs.sh does)",
                cli.cli, cli.package
            ),
            InstallError::Npm { cli, version, status, offline, log, log_tail } => {
                if *offline {
                    write!(
                        f,
                        "npm could not reach the registry to install {}@{version} ({status}). \
                         The {} e2e suite needs the npm registry the first time a version is \
                         installed into the cache; it does not skip. Check the network or the \
                         npm registry setting, or point {ENV_CACHE} at a cache that already \
                         holds this version.",
                        cli.package, cli.cli
                    )?;
                } else {
                    write!(f, "npm install {}@{version} failed ({status})", cli.package)?;
                }
                write!(f, "\nnpm log {}:\n{log_tail}", log.display())
            }
            InstallError::NoBinary { cli, dir } => write!(
                f,
                "npm installed {} into {} but node_modules/.bin/{} is missing",
                cli.package,
                dir.display(),
                cli.bin
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
            InstallError::Io { source, .. } | InstallError::NpmMissing { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InstallError + '_ {
    move |source| InstallError::Io { path: path.to_owned(), source }
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
    fn a_folder_is_complete_only_with_the_stamp_of_its_version_and_the_bin() {
        let tmp = tempfile::tempdir().unwrap();
        let version = Version::lit("0.171.0");
        assert!(CODEX.complete_install(tmp.path(), version).is_none());
        write_atomically(&tmp.path().join(STAMP_FILE), b"@openai/codex@0.170.0\n").unwrap();
        let bin = tmp.path().join("node_modules/.bin");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("codex"), "#!/usr/bin/env node\n").unwrap();
        assert!(CODEX.complete_install(tmp.path(), version).is_none(), "another version");
        write_atomically(&tmp.path().join(STAMP_FILE), b"@openai/codex@0.171.0\n").unwrap();
        let installed = CODEX.complete_install(tmp.path(), version).unwrap();
        assert_eq!(installed.binary, bin.join("codex"));
        assert_eq!(installed.bin_dir(), bin);
        assert_eq!(installed.install_time, None);
        assert!(GEMINI.complete_install(tmp.path(), version).is_none(), "another package");
    }

    #[test]
    fn the_pins_are_valid_versions() {
        for cli in [&CODEX, &GEMINI] {
            assert_eq!(Version::lit(cli.default_version).to_string(), cli.default_version);
        }
    }
}
