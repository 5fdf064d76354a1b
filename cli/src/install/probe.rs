//! Running other programs briefly: finding them on `PATH`, asking a CLI for its version,
//! running a command with a deadline.

use std::ffi::OsStr;
use std::fmt;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use hookline::units::Version;

/// How long a CLI may take to print its version. Gemini CLI 0.61 loads its whole bundle and
/// relaunches itself in a second Node process first: 3.5 to 8 s on an idle two-core machine,
/// more when it is busy (the first limit, 5 s, made `install` miss the version there).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether a path is a file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable named `name` in the directories of `path_var`.
pub fn which(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// What a bounded run produced.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The exit status; `None` when the deadline passed and the process was killed.
    pub status: Option<ExitStatus>,
    /// Its standard output (what was read before the deadline).
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
}

/// Runs a command with stdin from `/dev/null`, capturing its output, killing it after
/// `timeout`.
pub fn run_bounded(mut command: Command, timeout: Duration) -> std::io::Result<Ran> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // A program that was being written a moment ago (an upgrade in progress; in tests, a script
    // whose write descriptor another thread's fork briefly inherited) fails with ETXTBSY: it
    // is worth a few short retries.
    let mut attempts = 0;
    let mut child = loop {
        match command.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 20 => {
                attempts += 1;
                thread::sleep(Duration::from_millis(10));
            }
            other => break other?,
        }
    };
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = mpsc::channel();
        if let Some(pipe) = pipe {
            thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.take(1 << 20).read_to_end(&mut buf);
                let _ = tx.send(buf);
            });
        }
        rx
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    // A grandchild may keep a pipe open: do not wait for it long.
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(Duration::from_millis(500)).unwrap_or_default()
    };
    Ok(Ran { status, stdout: collect(out), stderr: collect(err) })
}

/// Which CLI version the events were chosen for.
#[derive(Debug, Clone)]
pub enum Detected {
    /// `<binary> <args>` printed this version.
    Version {
        /// The version.
        version: Version,
        /// The command that printed it.
        command: String,
    },
    /// The binary is not on `PATH`.
    NotFound {
        /// The binary's name.
        binary: String,
    },
    /// The binary ran but no version could be read from it.
    Unreadable {
        /// The command run.
        command: String,
        /// What went wrong.
        why: String,
    },
}

impl Detected {
    /// The version, when one was found.
    pub fn version(&self) -> Option<&Version> {
        match self {
            Detected::Version { version, .. } => Some(version),
            _ => None,
        }
    }
}

impl fmt::Display for Detected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detected::Version { version, command } => write!(f, "{version} (from `{command}`)"),
            Detected::NotFound { binary } => write!(f, "{binary} is not on PATH"),
            Detected::Unreadable { command, why } => write!(f, "`{command}` {why}"),
        }
    }
}

/// Asks a CLI for its version: `<binary> <args>` when the binary is on `PATH`.
pub fn detect(binary: &str, args: &[String], path_var: Option<&OsStr>) -> Detected {
    let Some(program) = which(binary, path_var) else {
        return Detected::NotFound { binary: binary.to_owned() };
    };
    let command = std::iter::once(binary.to_owned())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new(&program);
    cmd.args(args);
    let ran = match run_bounded(cmd, VERSION_TIMEOUT) {
        Ok(ran) => ran,
        Err(e) => {
            return Detected::Unreadable { command, why: format!("could not run: {e}") };
        }
    };
    if ran.status.is_none() {
        return Detected::Unreadable {
            command,
            why: format!("did not answer within {}s", VERSION_TIMEOUT.as_secs()),
        };
    }
    // Pi prints its version on stderr.
    let found = [&ran.stdout, &ran.stderr]
        .into_iter()
        .find_map(|bytes| Version::find_in(&String::from_utf8_lossy(bytes)));
    match found {
        Some(version) => Detected::Version { version, command },
        None => Detected::Unreadable { command, why: "printed no version".into() },
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_version_is_read_from_the_cli_on_path() {
        let tmp = tempfile::tempdir().unwrap();
        script(tmp.path(), "fake", "echo '2.1.332 (Claude Code)'");
        let path = tmp.path().as_os_str();
        let found = detect("fake", &["--version".into()], Some(path));
        assert_eq!(found.version().map(ToString::to_string).as_deref(), Some("2.1.332"));
        assert_eq!(found.to_string(), "2.1.332 (from `fake --version`)");
        assert!(matches!(detect("absent", &[], Some(path)), Detected::NotFound { .. }));
        script(tmp.path(), "on-stderr", "echo 0.73.1 >&2");
        let found = detect("on-stderr", &["--version".into()], Some(path));
        assert_eq!(found.version().map(ToString::to_string).as_deref(), Some("0.73.1"));
        script(tmp.path(), "mute", "echo hello; echo oops >&2");
        assert!(matches!(detect("mute", &[], Some(path)), Detected::Unreadable { .. }));
    }

    #[test]
    fn a_hanging_program_is_killed_at_the_deadline() {
        let tmp = tempfile::tempdir().unwrap();
        let slow = script(tmp.path(), "slow", "exec sleep 30");
        let start = Instant::now();
        let ran = run_bounded(Command::new(slow), Duration::from_millis(200)).unwrap();
        assert!(ran.status.is_none());
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_file_without_execute_bits_is_not_found() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("plain"), "").unwrap();
        assert_eq!(which("plain", Some(tmp.path().as_os_str())), None);
    }
}
