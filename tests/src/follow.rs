//! `hookline watch` following a sandbox's events directory, as an orchestrator runs it.
//!
//! The built `hookline watch --events-dir DIR --cursor NAME --from-start` runs as a child process for the
//! whole scenario; each NDJSON line it prints is parsed back into a
//! [`hookline::canonical::Event`] (so the wire format is checked too) and handed to the test,
//! which folds it into a [`hookline::state::Tracker`].

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use hookline::canonical::Event;

/// A running `hookline watch`.
pub struct Follower {
    child: Child,
    lines: Receiver<Result<Event, String>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Follower {
    /// Starts `command` (a `hookline` with its environment and working directory set) as
    /// `hookline watch --events-dir <events_dir> --cursor <cursor>`.
    pub fn start(
        mut command: Command,
        events_dir: &Path,
        cursor: &str,
    ) -> Result<Follower, String> {
        // Every event of the scenario, including any written before the follower opened.
        command.arg("watch").arg("--events-dir").arg(events_dir).args(["--cursor", cursor]);
        command.arg("--from-start");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run hookline watch: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let parsed = match line {
                    Ok(line) => serde_json::from_str::<Event>(&line)
                        .map_err(|e| format!("hookline watch printed a line that is not a canonical event ({e}): {line}")),
                    Err(e) => Err(format!("reading hookline watch's output: {e}")),
                };
                if tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&buf[..n]);
            }
        });
        Ok(Follower { child, lines, stderr })
    }

    /// The next canonical event, waiting up to `timeout`; `Ok(None)` when none came.
    pub fn next(&mut self, timeout: Duration) -> Result<Option<Event>, String> {
        match self.lines.recv_timeout(timeout) {
            Ok(event) => event.map(Some),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(self.gone()),
        }
    }

    /// The next canonical event if one is already there.
    pub fn try_next(&mut self) -> Result<Option<Event>, String> {
        match self.lines.try_recv() {
            Ok(event) => event.map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(self.gone()),
        }
    }

    fn gone(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => "its output closed".into(),
        };
        format!("hookline watch stopped ({status})")
    }

    /// What `hookline watch` wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
