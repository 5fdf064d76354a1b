//! What the CLIs that take Claude Code's hook format in a settings file of their own (Qwen Code,
//! Factory Droid) share: the check that `hookline install` merged its hooks into the file the
//! test wrote, keeping every key of it, registering exactly the relay for the events it wants,
//! and `hookline status` read back against the tracker.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agent_session::{AgentSession, Step};
use crate::binaries;
use crate::dialog::{self, Exit, Outcome};
use crate::process::output_within;

/// Checks the settings file at `path` after `hookline install`: every key of `written` (what
/// the test wrote before) is still there, unchanged, with `hooks` added after them; `hooks`
/// registers exactly `registered`, in that order, each with one group holding one handler
/// running the built relay for `session.cli` with a 10 s timeout; the tool events (`matched`)
/// carry the matcher `*`.
pub fn check_registered(
    session: &AgentSession,
    path: &Path,
    written: &Value,
    registered: &[&str],
    matched: &[&str],
) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let settings: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let written = written.as_object().expect("an object");
    let keys: Vec<&String> = settings.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    let mut expected_keys: Vec<&String> = written.keys().collect();
    let hooks_key = String::from("hooks");
    expected_keys.push(&hooks_key);
    if keys != expected_keys {
        session
            .fail(&format!("{} has the keys {keys:?}, expected {expected_keys:?}", path.display()));
    }
    for (key, value) in written {
        if settings[key] != *value {
            session.fail(&format!(
                "hookline install changed {key}: {} instead of {value}",
                settings[key]
            ));
        }
    }
    let hooks = settings["hooks"].as_object();
    let events: Vec<&str> =
        hooks.map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    if events != registered {
        session.fail(&format!("{} registers {events:?}, expected {registered:?}", path.display()));
    }
    let relay = binaries::relay();
    let command = format!("{} --cli {}", relay.display(), session.cli);
    for (event, groups) in hooks.into_iter().flatten() {
        let matcher = matched.contains(&event.as_str()).then_some("*");
        let group = &groups[0];
        let handler = &group["hooks"][0];
        if groups.as_array().map(Vec::len) != Some(1)
            || group["matcher"].as_str() != matcher
            || handler["type"] != "command"
            || handler["command"] != command.as_str()
            || handler["timeout"] != 10
        {
            session.fail(&format!("hooks.{event} is not the relay with a 10 s timeout: {text}"));
        }
    }
}

/// Runs the steps in order, and after each checks that `hookline status` says what the
/// tracker says ([`check_status`]).
pub fn run_checked(session: &mut AgentSession, steps: &[Step]) {
    for step in steps {
        session.run_step(step);
        check_status(session);
    }
}

/// [`crate::dialog::run`], checking `hookline status` after every step ([`run_checked`]):
/// launches the TUI with `args`, runs `up_to_the_dialog` for the project's `file`, then `then`,
/// checks the exit and `outcome` on the file, and saves the report.
pub fn run_dialog(
    session: &mut AgentSession,
    args: &[&str],
    file: &str,
    up_to_the_dialog: impl Fn(&Path) -> Vec<Step>,
    then: &[Step],
    exit: Exit,
    outcome: Outcome,
) {
    let out = session.sandbox.project().join(file);
    session.launch_tui(args);
    run_checked(session, &up_to_the_dialog(&out));
    run_checked(session, then);
    dialog::finish(session, exit);
    dialog::check_outcome(session, &out, outcome);
    session.save_report();
}

/// `hookline status --json`'s row for the session's tag (a one-shot reader: it rebuilds the
/// state from the events directory, reading each transcript's tail once).
pub fn status_row(session: &AgentSession) -> Value {
    let rows = status_rows(session);
    let found = rows.iter().find(|r| is_ours(session, r)).cloned();
    found.unwrap_or_else(|| {
        session.fail(&format!("hookline status shows no session tagged {}: {rows:?}", session.tag))
    })
}

/// Every row of `hookline status --json`.
fn status_rows(session: &AgentSession) -> Vec<Value> {
    let mut command = session.command(&binaries::hookline());
    command.arg("status").arg("--events-dir").arg(session.events.path()).arg("--json");
    let output = output_within(command, Duration::from_secs(20))
        .unwrap_or_else(|e| session.fail(&format!("hookline status: {e}")));
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        session.fail(&format!("hookline status --json ({}): {e}: {text}", output.status))
    })
}

fn is_ours(session: &AgentSession, row: &Value) -> bool {
    row["tag"] == session.tag.as_str()
}

/// A status row's state as the tables write it: `waiting_on_human(permission)`, `idle`.
pub fn row_label(row: &Value) -> String {
    match row["detail"].as_str() {
        Some(detail) => format!("{}({detail})", row["state"].as_str().unwrap_or("?")),
        None => row["state"].as_str().unwrap_or("?").to_owned(),
    }
}

/// `hookline status` says what the tracker says: the same state and detail for the same
/// session, replayed and never authoritative (a one-shot reader).
pub fn check_status(session: &AgentSession) {
    if session.view().is_none() {
        // No event yet: no events directory, or no session under the tag in it.
        if session.events.path().exists()
            && status_rows(session).iter().any(|r| is_ours(session, r))
        {
            session.fail("hookline status shows a session the tracker does not have");
        }
        return;
    }
    let row = status_row(session);
    let live = session.state();
    let session_id = session.view().and_then(|v| v.session_id);
    if row_label(&row) != live
        || row["replayed"] != true
        || row["authoritative"] != false
        || row["session_id"].as_str() != session_id.as_deref()
    {
        session.fail(&format!("hookline status says {row}; the tracker says {live}"));
    }
}

/// Waits (up to `within`) for `hookline status` to show `wanted` with the session's transcript
/// as its evidence: a state no hook reported; fails if it ever shows `idle` meanwhile.
pub fn expect_status_from_transcript(session: &AgentSession, wanted: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let row = status_row(session);
        let label = row_label(&row);
        if label.starts_with("idle") {
            session
                .fail(&format!("hookline status says {label} before any event said idle: {row}"));
        }
        if label == wanted {
            let transcript = row["transcript"]["path"].as_str();
            if row["evidence"]["kind"] != "transcript"
                || transcript.is_none()
                || row["evidence"]["file"].as_str() != transcript
            {
                session
                    .fail(&format!("{wanted} does not name the transcript as its evidence: {row}"));
            }
            return;
        }
        if Instant::now() > deadline {
            session.fail(&format!(
                "hookline status says {label} after {within:?}, expected {wanted}: {row}"
            ));
        }
        thread::sleep(Duration::from_millis(500));
    }
}
