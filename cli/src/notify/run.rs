//! Running a rule's command off the caller's thread, bounded by its timeout, and journaling
//! what became of it.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Trigger;
use super::{Facts, Firing, Rule, Run};
use hookline::format::caplog;
use hookline::state::StateKind;
use hookline::units::rfc3339;

/// Most bytes of a command's stderr kept in the journal.
pub const MAX_STDERR: usize = 2048;

/// What became of a firing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The command was launched (what [`Notifier`](super::Notifier) returns; its journal
    /// line says how it ended).
    Started,
    /// The command exited 0.
    Ran,
    /// The command exited non-zero or was killed by a signal.
    Failed,
    /// The command ran past its timeout and was killed with its process group.
    TimedOut,
    /// The command could not be started (no such program, not executable).
    CannotRun,
    /// The same rule fired for the same session and trigger within its `debounce`.
    Debounced,
    /// The transition happened longer than `late-after` ago (while no notifier ran).
    Late,
    /// `max-running` commands were already running.
    TooMany,
}

impl Outcome {
    /// Whether something went wrong that the operator should hear about.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::TimedOut | Outcome::CannotRun | Outcome::TooMany)
    }
}

/// One line of the notify journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyRecord {
    /// When it fired, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// When it fired, RFC 3339 (UTC).
    pub at: String,
    /// The rule.
    pub rule: String,
    /// The trigger.
    pub trigger: Trigger,
    /// The session's key.
    pub key: String,
    /// The session id.
    pub session: Option<String>,
    /// The tag.
    pub tag: Option<String>,
    /// The state entered.
    pub state: StateKind,
    /// Its detail.
    pub detail: Option<String>,
    /// When the state began.
    pub since_ns: u64,
    /// What became of it.
    pub outcome: Outcome,
    /// The command's exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// What it wrote on stderr (at most [`MAX_STDERR`] bytes), or why it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_ms: Option<u64>,
}

impl NotifyRecord {
    /// The line for a firing, before its command ran.
    pub fn of(firing: &Firing, now_ns: u64) -> NotifyRecord {
        NotifyRecord {
            ts_ns: now_ns,
            at: rfc3339(now_ns),
            rule: firing.rule.clone(),
            trigger: firing.facts.reason,
            key: firing.key.clone(),
            session: firing.facts.session.clone(),
            tag: firing.facts.tag.clone(),
            state: firing.facts.state,
            detail: firing.facts.detail.clone(),
            since_ns: firing.since_ns,
            outcome: firing.outcome,
            exit_code: None,
            signal: None,
            error: None,
            ran_ms: None,
        }
    }
}

/// The notify journal: one [`NotifyRecord`] per firing, size-capped like the decision
/// journal. Beside the events directory by default: `<events dir>.notify.ndjson`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyJournal {
    path: PathBuf,
    max_bytes: u64,
}

impl NotifyJournal {
    /// A journal at `path`, rotated at `max_bytes`.
    pub fn new(path: impl Into<PathBuf>, max_bytes: u64) -> NotifyJournal {
        NotifyJournal { path: path.into(), max_bytes }
    }

    /// The default journal of an events directory: `<events dir>.notify.ndjson`.
    pub fn default_path(events_dir: &Path) -> PathBuf {
        let mut name = events_dir.file_name().unwrap_or(OsStr::new("events")).to_os_string();
        name.push(".notify.ndjson");
        events_dir.with_file_name(name)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record.
    pub fn append(&self, record: &NotifyRecord) -> std::io::Result<()> {
        let line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        caplog::append_line(&self.path, &line, self.max_bytes)
    }

    /// The records of the rotated copy and the file, oldest first.
    pub fn read(&self) -> Vec<NotifyRecord> {
        caplog::read(&self.path)
    }
}

/// What the operator hears about each firing once it settled: the record, and whether the
/// journal could not be written.
#[derive(Debug, Clone)]
pub struct Report {
    /// The record.
    pub record: NotifyRecord,
    /// Why it could not be journaled, when it could not.
    pub journal_error: Option<String>,
}

type Note = Arc<dyn Fn(Report) + Send + Sync>;

/// Runs commands on threads of their own, at most `max_running` at once.
#[derive(Clone)]
pub struct Runner {
    journal: Option<NotifyJournal>,
    running: Arc<AtomicUsize>,
    max_running: usize,
    note: Note,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("journal", &self.journal)
            .field("running", &self.running.load(Ordering::Relaxed))
            .field("max_running", &self.max_running)
            .finish()
    }
}

impl Runner {
    /// A runner journaling to `journal`, telling `note` about each firing once it settled.
    pub fn new(
        journal: Option<NotifyJournal>,
        max_running: usize,
        note: impl Fn(Report) + Send + Sync + 'static,
    ) -> Runner {
        Runner { journal, running: Arc::default(), max_running, note: Arc::new(note) }
    }

    /// How many commands are running.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Journals a firing that runs nothing (debounced, late).
    pub(super) fn settled(&self, record: NotifyRecord) {
        settle(self.journal.as_ref(), &self.note, record);
    }

    /// Starts the rule's command on a thread of its own; returns at once.
    pub(super) fn launch(
        &self,
        rule: Arc<Rule>,
        facts: &Facts,
        mut record: NotifyRecord,
    ) -> Outcome {
        if self.running.fetch_add(1, Ordering::SeqCst) >= self.max_running {
            self.running.fetch_sub(1, Ordering::SeqCst);
            record.outcome = Outcome::TooMany;
            record.error = Some(format!("{} commands already running", self.max_running));
            self.settled(record);
            return Outcome::TooMany;
        }
        let env = facts.env();
        let (journal, note, running) =
            (self.journal.clone(), Arc::clone(&self.note), Arc::clone(&self.running));
        let spawned = thread::Builder::new().name("hookline-notify".into()).spawn(move || {
            execute(&rule, &env, &mut record);
            running.fetch_sub(1, Ordering::SeqCst);
            settle(journal.as_ref(), &note, record);
        });
        match spawned {
            Ok(_) => Outcome::Started,
            Err(_) => {
                self.running.fetch_sub(1, Ordering::SeqCst);
                Outcome::CannotRun
            }
        }
    }
}

fn settle(journal: Option<&NotifyJournal>, note: &Note, record: NotifyRecord) {
    let journal_error =
        journal.and_then(|j| j.append(&record).err()).map(|e| format!("{}: {e}", j_path(journal)));
    note(Report { record, journal_error });
}

fn j_path(journal: Option<&NotifyJournal>) -> String {
    journal.map(|j| j.path().display().to_string()).unwrap_or_default()
}

/// Runs the command to its end or its timeout, writing the outcome into `record`.
fn execute(rule: &Rule, env: &[(&'static str, String)], record: &mut NotifyRecord) {
    let mut command = match &rule.run {
        Run::Argv(argv) => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
        Run::Shell(line) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(line);
            c
        }
    };
    command
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own process group, so that a timeout kills what it started too.
        .process_group(0);
    let started = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            record.outcome = Outcome::CannotRun;
            record.error = Some(format!("cannot run {}: {e}", program(&rule.run)));
            return;
        }
    };
    let pid = child.id();
    let (err_tx, err_rx) = mpsc::channel();
    if let Some(mut stderr) = child.stderr.take() {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(MAX_STDERR as u64).read_to_end(&mut buf);
            let _ = err_tx.send(buf);
        });
    }
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(rule.timeout) {
        Ok(status) => status,
        Err(_) => {
            // The child is not reaped until `wait` returns, so its pid (its group's id) cannot
            // have been reused.
            // SAFETY: kill has no memory preconditions.
            unsafe {
                libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
            }
            record.outcome = Outcome::TimedOut;
            let _ = rx.recv();
            record.ran_ms = Some(started.elapsed().as_millis() as u64);
            record.error = Some(format!("killed after {:?}", rule.timeout));
            return;
        }
    };
    record.ran_ms = Some(started.elapsed().as_millis() as u64);
    let stderr = err_rx.recv_timeout(Duration::from_millis(100)).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
    match status {
        Ok(status) if status.success() => record.outcome = Outcome::Ran,
        Ok(status) => {
            record.outcome = Outcome::Failed;
            record.exit_code = status.code();
            record.signal = status.signal();
            record.error = (!stderr.is_empty()).then_some(stderr);
        }
        Err(e) => {
            record.outcome = Outcome::Failed;
            record.error = Some(format!("cannot wait for {}: {e}", program(&rule.run)));
        }
    }
}

fn program(run: &Run) -> &str {
    match run {
        Run::Argv(argv) => &argv[0],
        Run::Shell(_) => "/bin/sh",
    }
}
