//! The harness every test goes through: a sandbox directory, the relay spawned as a CLI would
//! spawn it (cleared environment, piped stdout and stderr), and the checks that must hold on
//! every run: exit code 0, nothing on stdout, nothing on stderr.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use hookline_relay::diag;
use hookline_relay::envelope::Envelope;
use hookline_relay::filename::{
    COUNTER_WITNESS_PREFIX, EventFileName, FileKind, bucket_of, classify,
};

/// The relay binary under test: the build of this package, with the test's profile.
///
/// Cargo says where it is in `CARGO_BIN_EXE_hookline-relay`, at compile time; but it reaches
/// rustc through `.cargo/static-relay.sh`, and a POSIX shell drops every environment variable
/// whose name is not an identifier (the `-`). So the binary is found where cargo puts it:
/// beside the `deps/` directory holding this test executable (built before the tests run).
pub fn relay() -> PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_hookline-relay") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable's directory");
    let relay = deps.parent().unwrap_or(deps).join("hookline-relay");
    assert!(relay.is_file(), "the relay is not at {}", relay.display());
    relay
}

/// The uid a foreign-owned or dropped-privilege test uses ("nobody").
pub const NOBODY: u32 = 65534;

/// A test fixture's bytes, from `relay/tests/fixtures`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON text of a fixture as it must appear, verbatim, in the envelope's `payload`.
pub fn payload_text(fixture: &[u8]) -> &str {
    std::str::from_utf8(fixture).unwrap().trim()
}

/// Whether this process runs as root (where permission bits do not stop writes).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A private directory for one test: `home/` exists, the events directory
/// `state/hookline/events` does not (the relay creates it), and the relay's working directory
/// is the sandbox root, so a stray relative write would show up in [`Sandbox::all_paths`].
pub struct Sandbox {
    tmp: tempfile::TempDir,
    /// `$XDG_RUNTIME_DIR` given to the relay, where its fallback log goes: apart from the
    /// sandbox root, so that a fallback write is not a stray path.
    runtime: tempfile::TempDir,
    /// `$HOME` given to the relay.
    pub home: PathBuf,
    /// `$HOOKLINE_EVENTS_DIR` given to the relay.
    pub events: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let tmp = tempfile::Builder::new().prefix("hookline-relay-it-").tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let events = tmp.path().join("state/hookline/events");
        let runtime = tempfile::Builder::new().prefix("hookline-relay-run-").tempdir().unwrap();
        Sandbox { tmp, runtime, home, events }
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    /// The relay with the minimal environment a CLI gives a hook: `PATH`, `HOME`, and
    /// `HOOKLINE_EVENTS_DIR` pointing into the sandbox.
    pub fn relay(&self) -> Relay {
        Relay {
            program: relay(),
            args: Vec::new(),
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("HOME".into(), self.home.clone().into()),
                ("HOOKLINE_EVENTS_DIR".into(), self.events.clone().into()),
                ("XDG_RUNTIME_DIR".into(), self.runtime.path().into()),
            ],
            cwd: self.root().to_owned(),
            stdin: Stdin::Bytes(Vec::new()),
            run_as: None,
            file_size_limit: None,
            close_output: false,
        }
    }

    /// The relay's `$XDG_RUNTIME_DIR`.
    pub fn runtime(&self) -> &Path {
        self.runtime.path()
    }

    /// The records of the relay's fallback log (under `$XDG_RUNTIME_DIR`).
    pub fn fallback_records(&self) -> Vec<diag::Record> {
        let path = hookline_relay::location::fallback_log_path_from(|key| {
            (key == "XDG_RUNTIME_DIR").then(|| self.runtime().into())
        });
        diag::read(&path)
    }

    /// The diagnostics file of the sandbox's events directory.
    pub fn diagnostics_path(&self) -> PathBuf {
        hookline_relay::location::diagnostics_path(&self.events)
    }

    /// The diagnostics records written so far (current file and rotated copy).
    pub fn diagnostics(&self) -> Vec<diag::Record> {
        diag::read(&self.diagnostics_path())
    }

    /// The diagnostics messages, for `contains` checks.
    pub fn diagnostic_messages(&self) -> Vec<String> {
        self.diagnostics().into_iter().map(|r| r.message).collect()
    }

    /// The event files in the events directory, sorted by name. Fails the test on anything
    /// that is neither an event, a temp file nor the counter, and on an event file whose name
    /// is not of the safe shape or whose content does not parse.
    pub fn events(&self) -> Vec<Event> {
        events_in(&self.events)
    }

    /// The single event file written.
    pub fn only_event(&self) -> Event {
        let mut events = self.events();
        assert_eq!(events.len(), 1, "exactly one event file: {:?}", names(&events));
        events.pop().unwrap()
    }

    /// Temp files left in the events directory.
    pub fn temp_files(&self) -> Vec<String> {
        entries(&self.events).into_iter().filter(|name| classify(name) == FileKind::Temp).collect()
    }

    /// Every path under the sandbox, relative to it, sorted.
    pub fn all_paths(&self) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            for entry in entries {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
                if path.symlink_metadata().unwrap().is_dir() {
                    walk(root, &path, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.root(), self.root(), &mut out);
        out.sort();
        out
    }

    /// Asserts that the relay left no trace at all in the sandbox: no events directory, no
    /// diagnostics file, nothing beside `home/`.
    pub fn assert_untouched(&self) {
        assert_eq!(self.all_paths(), ["home"], "the relay wrote nothing");
    }
}

/// An event file read back.
#[derive(Debug)]
pub struct Event {
    /// The file name.
    pub file: String,
    /// The name, parsed.
    pub name: EventFileName,
    /// The file's bytes.
    pub text: String,
    /// The file, parsed.
    pub envelope: Envelope,
    /// The file's permission bits.
    pub mode: u32,
    /// The directory it is in (the events directory or one of its buckets).
    pub dir: PathBuf,
}

/// The event files of a directory (see [`Sandbox::events`]): at its top and in its buckets.
pub fn events_in(dir: &Path) -> Vec<Event> {
    let mut events = Vec::new();
    for file in entries(dir) {
        match classify(&file) {
            FileKind::Temp => continue,
            FileKind::Hidden => {
                assert!(
                    file == ".seq" || file.starts_with(COUNTER_WITNESS_PREFIX),
                    "the only dot files the relay writes are the counter and its witness: {file}"
                );
                continue;
            }
            FileKind::Foreign => panic!("unexpected file {file:?} in {}", dir.display()),
            FileKind::Bucket(first) => {
                let bucket = dir.join(&file);
                let meta = std::fs::symlink_metadata(&bucket).unwrap();
                if !meta.is_dir() || meta.mode() & 0o7777 != 0o700 {
                    // Not the relay's: a test put it there, and the relay never writes into it.
                    continue;
                }
                for file in entries(&bucket) {
                    let name = EventFileName::parse(&file).unwrap_or_else(|| {
                        panic!("unexpected file {file:?} in {}", bucket.display())
                    });
                    assert!(
                        is_safe_ordered_name(&file) && bucket_of(name.seq) == first,
                        "{file:?} does not belong in {}",
                        bucket.display()
                    );
                    events.push(read_event(&bucket, file, name));
                }
            }
            FileKind::Event(name) => {
                assert!(
                    is_safe_ordered_name(&file) || is_safe_unordered_name(&file),
                    "{file:?} is not a safe event name"
                );
                events.push(read_event(dir, file, name));
            }
        }
    }
    events.sort_by(|a, b| a.file.cmp(&b.file));
    events
}

/// Reads back one event file, checking it is complete.
fn read_event(dir: &Path, file: String, name: EventFileName) -> Event {
    let path = dir.join(&file);
    let bytes = std::fs::read(&path).unwrap();
    let envelope = Envelope::from_slice(&bytes).unwrap_or_else(|e| {
        panic!("{file}: {e}: {:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)]))
    });
    assert!(bytes.ends_with(b"}\n"), "{file} is complete, newline-terminated");
    let mode = std::fs::symlink_metadata(&path).unwrap().mode() & 0o7777;
    let text = String::from_utf8(bytes).expect("an event file is UTF-8");
    Event { file, name, text, envelope, mode, dir: dir.to_owned() }
}

/// The names in a directory, unsorted; empty when it does not exist.
pub fn entries(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().file_name().into_string().unwrap()).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

pub fn names(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.file.as_str()).collect()
}

/// `SSSSSSSSSSSSSSSSSSSS-PPPPPPPPPP.json`, checked by hand rather than by the parser under test.
pub fn is_safe_ordered_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 36
        && b[..20].iter().all(u8::is_ascii_digit)
        && b[20] == b'-'
        && b[21..31].iter().all(u8::is_ascii_digit)
        && &b[31..] == b".json"
}

/// `SSSSSSSSSSSSSSSSSSSS-uTTTTTTTTTTTTTTTTTTTT-PPPPPPPPPP.json`.
pub fn is_safe_unordered_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 58
        && b[..20].iter().all(u8::is_ascii_digit)
        && &b[20..22] == b"-u"
        && b[22..42].iter().all(u8::is_ascii_digit)
        && b[42] == b'-'
        && b[43..53].iter().all(u8::is_ascii_digit)
        && &b[53..] == b".json"
}

/// What the relay reads on stdin.
pub enum Stdin {
    /// These bytes, then EOF.
    Bytes(Vec<u8>),
    /// These bytes written in pieces, with a pause before each piece after the first, then EOF.
    Pieces(Vec<Vec<u8>>, Duration),
    /// `/dev/null`.
    Null,
    /// No file descriptor 0 at all.
    Closed,
    /// These bytes, then nothing: the pipe stays open until the relay has exited.
    HeldOpen(Vec<u8>),
}

/// One relay invocation, built up like a [`Command`].
pub struct Relay {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    stdin: Stdin,
    run_as: Option<u32>,
    file_size_limit: Option<u64>,
    close_output: bool,
}

impl Relay {
    /// Runs the relay with file descriptors 1 and 2 closed (nothing can be printed then, and
    /// nothing is checked on them).
    pub fn close_output(mut self) -> Relay {
        self.close_output = true;
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Relay {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: Into<OsString>>(mut self, args: impl IntoIterator<Item = I>) -> Relay {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets (or replaces) an environment variable.
    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Relay {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn env_remove(mut self, key: &str) -> Relay {
        self.env.retain(|(k, _)| k != key);
        self
    }

    /// No environment at all, not even `PATH`.
    pub fn env_clear_all(mut self) -> Relay {
        self.env.clear();
        self
    }

    pub fn stdin(mut self, stdin: Stdin) -> Relay {
        self.stdin = stdin;
        self
    }

    /// Stdin is these bytes, then EOF.
    pub fn input(self, bytes: impl Into<Vec<u8>>) -> Relay {
        self.stdin(Stdin::Bytes(bytes.into()))
    }

    /// Runs the relay as another user (via `setpriv`, which execs it: the pid is the relay's).
    /// The binary is copied into `dir` first, so that the other user can reach it.
    pub fn run_as(mut self, uid: u32, dir: &Path) -> Relay {
        let copy = dir.join("hookline-relay");
        std::fs::copy(relay(), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.program = copy;
        self.run_as = Some(uid);
        self
    }

    /// Runs the relay under `RLIMIT_FSIZE` = `bytes`, as a host with a file-size limit would.
    pub fn file_size_limit(mut self, bytes: u64) -> Relay {
        self.file_size_limit = Some(bytes);
        self
    }

    /// Starts the relay.
    pub fn spawn(self) -> Running {
        let mut cmd = match self.run_as {
            None => Command::new(&self.program),
            Some(uid) => {
                let mut cmd = Command::new("/usr/bin/setpriv");
                cmd.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={uid}"))
                    .arg("--clear-groups")
                    .arg(&self.program);
                cmd
            }
        };
        cmd.args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match self.stdin {
            Stdin::Null => {
                cmd.stdin(Stdio::null());
            }
            Stdin::Closed => {
                cmd.stdin(Stdio::null());
                // SAFETY: close is async-signal-safe; fd 0 is the child's own copy.
                unsafe {
                    std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                        libc::close(0);
                        Ok(())
                    });
                }
            }
            _ => {
                cmd.stdin(Stdio::piped());
            }
        }
        if self.close_output {
            // SAFETY: close is async-signal-safe; fds 1 and 2 are the child's own copies.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::close(1);
                    libc::close(2);
                    Ok(())
                });
            }
        }
        if let Some(bytes) = self.file_size_limit {
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            // SAFETY: setrlimit is async-signal-safe and only touches the child.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {:?}: {e}", self.program));
        let pipe = child.stdin.take();
        let (writer, held) = match (self.stdin, pipe) {
            (Stdin::Bytes(bytes), Some(pipe)) => {
                (Some(write_in_thread(pipe, vec![bytes], None)), None)
            }
            (Stdin::Pieces(pieces, pause), Some(pipe)) => {
                (Some(write_in_thread(pipe, pieces, Some(pause))), None)
            }
            (Stdin::HeldOpen(bytes), Some(pipe)) => {
                // Written from a thread through a second descriptor of the pipe (a large input
                // does not fit in it); this one is held, so the relay never sees EOF.
                let mut copy = std::fs::File::from(pipe.as_fd().try_clone_to_owned().unwrap());
                let writer = thread::spawn(move || {
                    let _ = copy.write_all(&bytes);
                });
                (Some(writer), Some(pipe))
            }
            _ => (None, None),
        };
        Running { child, writer, held, started }
    }

    /// Runs the relay to completion, checking that it exited 0 and printed nothing.
    pub fn run(self) -> Run {
        self.spawn().wait()
    }
}

/// Writes stdin from a thread (a large input does not fit in the pipe), ignoring a relay that
/// stops reading early.
fn write_in_thread(
    mut pipe: ChildStdin,
    pieces: Vec<Vec<u8>>,
    pause: Option<Duration>,
) -> JoinHandle<()> {
    thread::spawn(move || {
        for (i, piece) in pieces.iter().enumerate() {
            if let (Some(pause), true) = (pause, i > 0) {
                thread::sleep(pause);
            }
            if pipe.write_all(piece).is_err() {
                return;
            }
        }
    })
}

/// A relay that was started.
pub struct Running {
    child: Child,
    writer: Option<JoinHandle<()>>,
    held: Option<ChildStdin>,
    started: Instant,
}

/// A relay that finished.
#[derive(Debug)]
pub struct Run {
    /// The relay's pid.
    pub pid: u32,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the relay and checks the invariants of every run: exit code 0, empty stdout,
    /// empty stderr.
    pub fn wait(self) -> Run {
        let pid = self.child.id();
        let (output, elapsed) = self.finish();
        assert_silent(&output);
        Run { pid, elapsed }
    }

    /// Kills the relay with SIGKILL (it may have finished already) and reaps it. Its stdout and
    /// stderr must still be empty.
    pub fn kill(mut self) -> ExitStatus {
        let _ = self.child.kill();
        let (output, _) = self.finish();
        assert!(output.stdout.is_empty() && output.stderr.is_empty(), "{output:?}");
        output.status
    }

    fn finish(self) -> (Output, Duration) {
        let output = self.child.wait_with_output().unwrap();
        let elapsed = self.started.elapsed();
        drop(self.held);
        if let Some(writer) = self.writer {
            writer.join().unwrap();
        }
        (output, elapsed)
    }
}

/// The invariant of every relay run: exit 0, nothing on stdout or stderr.
pub fn assert_silent(output: &Output) {
    assert!(
        output.stdout.is_empty(),
        "stdout must be empty, got {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(
        output.stderr.is_empty(),
        "stderr must be empty, got {:?}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0), "exit status: {:?}", output.status);
}
