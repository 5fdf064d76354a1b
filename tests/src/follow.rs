//! `hookline watch` following a sandbox's events directory, as an orchestrator runs it, and
//! the labels the suite writes canonical events and session states with.
//!
//! The built `hookline watch --events-dir DIR --cursor NAME` runs as a child process for the
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

use hookline::canonical::{Event, Kind};
use hookline::state::View;

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
        command.arg("watch").arg("--events-dir").arg(events_dir).args(["--cursor", cursor]);
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

/// A canonical event as the scenarios' tables write it: the kind, then its main fields in
/// parentheses — `session_start(startup)`, `tool_end(Bash, ok)`, `compact(pre, manual)`,
/// `waiting_for_input(permission)`, `subagent_stop("")` (an empty text field is quoted).
pub fn canonical_label(event: &Event) -> String {
    let text = |t: &Option<String>| {
        t.as_ref().map(|t| if t.is_empty() { "\"\"".into() } else { t.clone() })
    };
    let fields: Vec<String> = match &event.kind {
        Kind::SessionStart { source } => text(source).into_iter().collect(),
        Kind::SessionEnd { reason } => text(reason).into_iter().collect(),
        Kind::TurnStart | Kind::IdlePrompt => Vec::new(),
        Kind::ToolStart { tool } | Kind::PermissionRequest { tool } => {
            text(tool).into_iter().collect()
        }
        Kind::ToolEnd { tool, ok } => {
            text(tool).into_iter().chain([if *ok { "ok" } else { "failed" }.into()]).collect()
        }
        Kind::WaitingForInput { reason, tool, .. } => {
            std::iter::once(reason.as_str().to_owned()).chain(text(tool)).collect()
        }
        Kind::Stop { pending_tasks, scheduled_wakes, .. } => {
            if *pending_tasks == 0 && *scheduled_wakes == 0 {
                Vec::new()
            } else {
                vec![format!("tasks={pending_tasks}"), format!("wakes={scheduled_wakes}")]
            }
        }
        Kind::StopFailure { error, .. } => vec![error.as_str().to_owned()],
        Kind::Compact { phase, trigger } => {
            std::iter::once(phase.as_str().to_owned()).chain(text(trigger)).collect()
        }
        Kind::SubagentStart { agent_type } | Kind::SubagentStop { agent_type } => {
            text(agent_type).into_iter().collect()
        }
        Kind::Notification { notification_type, .. } => {
            text(notification_type).into_iter().collect()
        }
        Kind::Unknown { reason } => text(reason).into_iter().collect(),
    };
    with_fields(event.kind.name(), &fields)
}

/// A session's state as the scenarios' tables write it: `none` when the tracker has no
/// session for it, else the state with its detail in parentheses —
/// `waiting_on_human(permission)`, `unknown(session started)`, `ended(prompt_input_exit)`,
/// `idle`.
pub fn state_label(view: Option<&View>) -> String {
    match view {
        None => "none".into(),
        Some(view) => {
            let fields: Vec<String> = view.detail.iter().cloned().collect();
            with_fields(view.state.as_str(), &fields)
        }
    }
}

fn with_fields(name: &str, fields: &[String]) -> String {
    if fields.is_empty() { name.to_owned() } else { format!("{name}({})", fields.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Event {
        let text = format!(
            r#"{{"v":1,{json},"cli":"claude","session_id":"s","tag":null,"agent_id":null,
            "turn_id":null,"cwd":null,"transcript_path":null,"native":"X","rule":"r","ts_ns":1,
            "host_pid":null,"origin":{{"dir":"/d","seq":1,"file":"f"}}}}"#
        );
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn labels_name_the_kind_and_its_main_fields() {
        for (json, label) in [
            (r#""kind":"session_start","source":"compact""#, "session_start(compact)"),
            (r#""kind":"turn_start""#, "turn_start"),
            (r#""kind":"tool_end","tool":"Bash","ok":true"#, "tool_end(Bash, ok)"),
            (r#""kind":"tool_end","ok":false"#, "tool_end(failed)"),
            (
                r#""kind":"waiting_for_input","reason":"permission""#,
                "waiting_for_input(permission)",
            ),
            (r#""kind":"compact","phase":"post","trigger":"manual""#, "compact(post, manual)"),
            (r#""kind":"subagent_stop","agent_type":"""#, r#"subagent_stop("")"#),
            (r#""kind":"stop","pending_tasks":0"#, "stop"),
            (r#""kind":"stop","pending_tasks":2"#, "stop(tasks=2, wakes=0)"),
        ] {
            assert_eq!(canonical_label(&event(json)), label, "{json}");
        }
        assert_eq!(state_label(None), "none");
    }
}
