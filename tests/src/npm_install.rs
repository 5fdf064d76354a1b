//! Installs pinned versions of an agent CLI's npm package into a cache folder, one folder per
//! version: the installer of every suite ([`crate::claude_install`] adds Claude Code's two
//! pins on top).
//!
//! Layout: `<cache>/<folder>/<version>/` holds a `package.json`, `node_modules/`, the npm log
//! `npm-install.log` and, last, the stamp [`STAMP_FILE`], written atomically once npm has
//! succeeded and the program has answered `--version` with the right number. A folder without
//! the stamp is a half-finished install and is wiped and redone.
//! `<cache>/<folder>/<version>.lock` serializes installers across threads and processes.
//!
//! The cache is [`cache_dir`]: `$HOOKLINE_E2E_CACHE` when set, else
//! `<workspace root>/.e2e-cache/` (gitignored). When npm cannot reach the registry the install
//! fails with a message that says so: the suites never skip.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::process::output_within;
use crate::version::Version;

/// Overrides the cache folder.
pub const ENV_CACHE: &str = "HOOKLINE_E2E_CACHE";

/// Written last into a version's folder: its presence means the install is complete.
pub const STAMP_FILE: &str = ".hookline-install-complete";

/// How long `<bin> --version` may take (Gemini CLI 0.61 takes ~8 s on two cores).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// An npm package that provides an agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmCli {
    /// The CLI's short name: the `--cli` of its profile, and how messages name its suite.
    pub cli: &'static str,
    /// The npm package.
    pub package: &'static str,
    /// The cache subfolder of its versions.
    pub folder: &'static str,
    /// The version the suite runs by default.
    pub default_version: &'static str,
    /// The environment variable that overrides it.
    pub env_version: &'static str,
    /// The program's name in `node_modules/.bin/`.
    pub bin: &'static str,
    /// Which file is the program a user runs.
    pub program: Program,
}

/// Where an install's program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `node_modules/.bin/<bin>`, whatever it is (a Node script, a wrapper).
    Bin,
    /// A native (ELF) executable: `node_modules/.bin/<bin>` when the package's postinstall
    /// linked it there, else `<bin>` in this optional platform package under `node_modules/`.
    Native {
        /// The platform package, e.g. `@anthropic-ai/claude-code-linux-x64`.
        platform_package: &'static str,
    },
    /// A native (ELF) executable inside the package itself, at this path under
    /// `node_modules/<package>/`: a platform package installed directly, whose manifest
    /// declares no `bin` (`@factory/cli-linux-x64`'s `bin/droid`).
    InPackage {
        /// The path inside the package.
        path: &'static str,
    },
}

/// `@openai/codex`, whose wrapper runs a native binary from an optional platform package.
pub static CODEX: NpmCli = NpmCli {
    cli: "codex",
    package: "@openai/codex",
    folder: "codex",
    default_version: "0.171.0",
    env_version: "HOOKLINE_E2E_CODEX_VERSION",
    bin: "codex",
    program: Program::Bin,
};

/// `@google/gemini-cli`, a Node bundle.
pub static GEMINI: NpmCli = NpmCli {
    cli: "gemini",
    package: "@google/gemini-cli",
    folder: "gemini",
    default_version: "0.61.0",
    env_version: "HOOKLINE_E2E_GEMINI_VERSION",
    bin: "gemini",
    program: Program::Bin,
};

/// `opencode-ai`, whose `bin/opencode.exe` its postinstall links to the native (Bun-compiled)
/// binary of an optional platform package (`opencode-linux-x64`).
pub static OPENCODE: NpmCli = NpmCli {
    cli: "opencode",
    package: "opencode-ai",
    folder: "opencode",
    default_version: "1.18.33",
    env_version: "HOOKLINE_E2E_OPENCODE_VERSION",
    bin: "opencode",
    program: Program::Bin,
};

/// `@github/copilot`, whose Node loader runs a native binary from an optional platform package
/// (`@github/copilot-linux-x64`); on first run that binary unpacks its JavaScript into
/// `$COPILOT_CACHE_HOME/pkg/` (else `~/.cache/copilot/pkg/`), about 235 MB.
pub static COPILOT: NpmCli = NpmCli {
    cli: "copilot",
    package: "@github/copilot",
    folder: "copilot",
    default_version: "1.0.102",
    env_version: "HOOKLINE_E2E_COPILOT_VERSION",
    bin: "copilot",
    program: Program::Bin,
};

/// `@mariozechner/pi-coding-agent`, the Pi coding agent, a Node program (`pi`); it prints its
/// version on stderr.
pub static PI: NpmCli = NpmCli {
    cli: "pi",
    package: "@mariozechner/pi-coding-agent",
    folder: "pi",
    default_version: "0.73.1",
    env_version: "HOOKLINE_E2E_PI_VERSION",
    bin: "pi",
    program: Program::Bin,
};

/// `@kilocode/cli`, Kilo Code (an OpenCode fork), whose shim runs the Bun-compiled binary of an
/// optional platform package (`@kilocode/cli-linux-x64`). 7.8.1, the newest when pinned, cannot
/// be installed: its platform packages are not on the registry.
pub static KILO: NpmCli = NpmCli {
    cli: "kilo",
    package: "@kilocode/cli",
    folder: "kilo",
    default_version: "7.7.7",
    env_version: "HOOKLINE_E2E_KILO_VERSION",
    bin: "kilo",
    program: Program::Bin,
};

/// `@qwen-code/qwen-code`, a Node bundle (its `engines` asks for Node 22; 0.24.4 runs on 20).
pub static QWEN: NpmCli = NpmCli {
    cli: "qwen",
    package: "@qwen-code/qwen-code",
    folder: "qwen",
    default_version: "0.24.4",
    env_version: "HOOKLINE_E2E_QWEN_VERSION",
    bin: "qwen",
    program: Program::Bin,
};

/// Factory Droid's native (Bun-compiled) binary, from its Linux platform package installed
/// directly: the `@factory/cli` shim's only release, 0.225.1, depends on a platform package
/// that was never published and then downloads the binary from outside npm.
pub static DROID: NpmCli = NpmCli {
    cli: "droid",
    package: "@factory/cli-linux-x64",
    folder: "droid",
    default_version: "0.225.2",
    env_version: "HOOKLINE_E2E_DROID_VERSION",
    bin: "droid",
    program: Program::InPackage { path: "bin/droid" },
};

/// The version `env_var` names when it is set, else `default`. Panics on an invalid override.
pub fn pinned(env_var: &str, default: &str) -> Version {
    match std::env::var(env_var) {
        Ok(text) if !text.trim().is_empty() => {
            text.parse().unwrap_or_else(|e| panic!("${env_var}: {e}"))
        }
        _ => Version::lit(default),
    }
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

impl NpmCli {
    /// The version to test: [`NpmCli::env_version`] when set, else the default. Panics on an
    /// invalid override.
    pub fn version(&self) -> Version {
        pinned(self.env_version, self.default_version)
    }

    /// Installs `version` into the cache, or reuses a complete install.
    pub fn install(&'static self, version: Version) -> Result<Installed, InstallError> {
        self.install_into(&cache_dir(), version, &[])
    }

    /// [`NpmCli::install`] for a suite: panics with `[<cli> <version>] cannot install the CLI:
    /// <why>` when it fails (the suites never skip).
    pub fn installed(&'static self, version: Version) -> Installed {
        self.install(version)
            .unwrap_or_else(|e| panic!("[{} {version}] cannot install the CLI: {e}", self.cli))
    }

    /// Installs `version` under `cache`, running npm with `npm_env` added to its environment
    /// (tests use it to point npm at an unreachable registry).
    pub fn install_into(
        &'static self,
        cache: &Path,
        version: Version,
        npm_env: &[(&str, &str)],
    ) -> Result<Installed, InstallError> {
        let root = cache.join(self.folder);
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

        let Some(binary) = self.program_in(&dir) else {
            return Err(InstallError::NoBinary { cli: self, dir });
        };
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

    /// The program in the version folder `dir` ([`NpmCli::program`]), when it is there.
    pub fn program_in(&self, dir: &Path) -> Option<PathBuf> {
        let modules = dir.join("node_modules");
        let bin = modules.join(".bin").join(self.bin);
        match self.program {
            Program::Bin => bin.exists().then_some(bin),
            Program::Native { platform_package } => {
                [bin, modules.join(platform_package).join(self.bin)].into_iter().find(|p| is_elf(p))
            }
            Program::InPackage { path } => {
                Some(modules.join(self.package).join(path)).filter(|p| is_elf(p))
            }
        }
    }

    fn complete_install(&'static self, dir: &Path, version: Version) -> Option<Installed> {
        let stamp = fs::read_to_string(dir.join(STAMP_FILE)).ok()?;
        if stamp != self.stamp(version) {
            return None;
        }
        let binary = self.program_in(dir)?;
        Some(Installed { cli: self, version, dir: dir.to_owned(), binary, install_time: None })
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

    /// Runs `<program> --version` (with a throwaway `HOME`, each CLI's own home in it and
    /// auto-update off, so no user state is read or written) and requires the first word it
    /// prints that is a version number (`2.1.332 (Claude Code)`, `codex-cli 0.171.0`,
    /// `0.61.0`, `GitHub Copilot CLI 1.0.102.`) to be `expected`.
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
            .env("GEMINI_CLI_HOME", home.path())
            .env("COPILOT_HOME", home.path().join(".copilot"))
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("PI_OFFLINE", "1")
            .env("KILO_DISABLE_AUTOUPDATE", "1")
            .env("DISABLE_AUTOUPDATER", "1");
        let output = output_within(command, VERSION_TIMEOUT).map_err(wrong)?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        // Copilot ends its sentence: `GitHub Copilot CLI 1.0.102.`; Pi prints on stderr.
        let first_version = |text: &str| {
            text.split_whitespace()
                .find_map(|word| word.trim_end_matches('.').parse::<Version>().ok())
        };
        let reported = first_version(&text)
            .or_else(|| first_version(&String::from_utf8_lossy(&output.stderr)));
        if output.status.success() && reported == Some(expected) {
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
    /// The program a user runs ([`NpmCli::program`]).
    pub binary: PathBuf,
    /// How long npm took, when this call installed it; `None` when the cache was reused.
    pub install_time: Option<Duration>,
}

impl Installed {
    /// The folder to put first on the CLI's `PATH` (so that `hookline install` finds the CLI
    /// and detects its version): `node_modules/.bin`, or the program's own folder when the
    /// package links no `bin` ([`Program::InPackage`]).
    pub fn bin_dir(&self) -> PathBuf {
        match self.cli.program {
            Program::InPackage { .. } => {
                self.binary.parent().map(Path::to_owned).unwrap_or_else(|| self.dir.clone())
            }
            _ => self.dir.join("node_modules").join(".bin"),
        }
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
    /// npm succeeded but the program is not where [`NpmCli::program`] says.
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
            InstallError::NoBinary { cli, dir } => {
                write!(f, "npm installed {} into {} but ", cli.package, dir.display())?;
                match cli.program {
                    Program::Bin => write!(f, "node_modules/.bin/{} is missing", cli.bin),
                    Program::Native { platform_package } => write!(
                        f,
                        "neither node_modules/.bin/{0} nor node_modules/{platform_package}/{0} \
                         is a native binary (was the optional platform package skipped?)",
                        cli.bin
                    ),
                    Program::InPackage { path } => {
                        write!(f, "node_modules/{}/{path} is not a native binary", cli.package)
                    }
                }
            }
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

/// What every suite checks of the installer, where npm cannot reach the registry: installing
/// `version` of `cli` into an empty cache, with npm pointed at a closed port on loopback, must
/// fail as an unreachable registry ([`InstallError::Npm`] with `offline`), with a message that
/// says so, says the suite does not skip and names the package; and must leave no stamp.
/// Panics otherwise.
pub fn check_unreachable_registry_fails_loudly(cli: &'static NpmCli, version: Version) {
    let cache = tempfile::tempdir().expect("a temp folder for the cache");
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let error = cli
        .install_into(cache.path(), version, &[("npm_config_registry", "http://127.0.0.1:9/")])
        .expect_err("an install from an unreachable registry must fail");
    let message = error.to_string();
    assert!(
        matches!(error, InstallError::Npm { offline: true, .. }),
        "not reported as unreachable: {message}"
    );
    assert!(message.contains("could not reach the registry"), "{message}");
    assert!(message.contains("does not skip"), "{message}");
    assert!(message.contains(cli.package), "{message}");
    let dir = cache.path().join(cli.folder).join(version.to_string());
    assert!(!dir.join(STAMP_FILE).exists(), "a failed install must not be stamped complete");
}

fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut f| io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == *b"\x7fELF"
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InstallError + '_ {
    move |source| InstallError::Io { path: path.to_owned(), source }
}

/// Writes a file by temp file, sync and rename, so a reader sees all of it or none.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
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
    fn a_native_program_needs_the_stamp_of_its_version_and_an_elf_binary() {
        let claude = &crate::claude_install::CLAUDE;
        let tmp = tempfile::tempdir().unwrap();
        let version = Version::lit("2.1.332");
        let bin = tmp.path().join("node_modules/@anthropic-ai/claude-code-linux-x64");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("claude"), b"\x7fELF rest").unwrap();
        assert!(claude.complete_install(tmp.path(), version).is_none());
        fs::write(tmp.path().join(STAMP_FILE), "@anthropic-ai/claude-code@2.1.331\n").unwrap();
        assert!(claude.complete_install(tmp.path(), version).is_none(), "stamp of another version");
        write_atomically(&tmp.path().join(STAMP_FILE), b"@anthropic-ai/claude-code@2.1.332\n")
            .unwrap();
        let installed = claude.complete_install(tmp.path(), version).unwrap();
        assert_eq!(installed.binary, bin.join("claude"));
        assert_eq!(installed.install_time, None);
    }

    #[test]
    fn a_program_in_its_package_is_found_there_and_its_folder_goes_on_path() {
        let tmp = tempfile::tempdir().unwrap();
        let version = Version::lit("0.225.2");
        let dir = tmp.path().join("node_modules/@factory/cli-linux-x64/bin");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("droid"), "#!/bin/sh\n").unwrap();
        write_atomically(&tmp.path().join(STAMP_FILE), b"@factory/cli-linux-x64@0.225.2\n")
            .unwrap();
        assert!(DROID.complete_install(tmp.path(), version).is_none(), "not a native binary");
        fs::write(dir.join("droid"), b"\x7fELF rest").unwrap();
        let installed = DROID.complete_install(tmp.path(), version).unwrap();
        assert_eq!(installed.binary, dir.join("droid"));
        assert_eq!(installed.bin_dir(), dir);
    }

    #[test]
    fn the_pins_are_valid_versions() {
        for cli in [
            &CODEX,
            &GEMINI,
            &OPENCODE,
            &COPILOT,
            &PI,
            &KILO,
            &QWEN,
            &DROID,
            &crate::claude_install::CLAUDE,
        ] {
            assert_eq!(Version::lit(cli.default_version).to_string(), cli.default_version);
        }
    }
}
