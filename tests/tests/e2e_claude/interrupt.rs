//! Esc with no hook to say so: the interrupt of a turn while its answer streams (the mock's
//! `SLOW:`), and the denial of a permission dialog, each followed by a next prompt; then API
//! errors (the mock's `APIERROR:`, no retries). Claude Code fires no hook for either Esc: the
//! steps assert the silence, and what Claude wrote to its transcript instead — the markers
//! hookline's transcript follower reads, as typed entries.
//!
//! What hookline's state must be after each Esc is [`expect_state_after_esc`], kept apart so
//! that the transcript follower can make it stricter.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use hookline_tests::claude_install::Installed;
use hookline_tests::labels::state_label;
use hookline_tests::session::{Action, ClaudeSession, Input, Step, native};
use hookline_tests::transcripts;
use serde_json::Value;

use crate::interactive::{READY, exit, session_started};

/// `messageIdleNotifThresholdMs`.
const IDLE_THRESHOLD: Duration = Duration::from_secs(3);
/// On screen while a permission dialog is open.
const PERMISSION_DIALOG: &str = "Do you want to proceed?";
/// How long Claude may take to write an entry to its transcript after the screen showed it.
const TRANSCRIPT_LAG: Duration = Duration::from_secs(10);
/// Claude's text for an interrupted turn, and for a denied tool call.
const INTERRUPTED: &str = "[Request interrupted by user]";
const INTERRUPTED_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// Which Esc: the two holes Claude leaves without a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Esc {
    /// Esc while the answer streams: the turn is interrupted.
    Streaming,
    /// Esc at a permission dialog: the tool call is denied, the turn interrupted.
    PermissionDialog,
}

/// What hookline's state must be once Claude wrote the interrupt marker of `esc` to its
/// `transcript`. Never idle: no explicit event said the session waits at its prompt.
///
/// The harness's own tracker folds hooks only: it holds what the last hook said (`active` for
/// the turn, `waiting_on_human(permission)` for the dialog). hookline itself reads the
/// transcript (issue #16): `hookline status` must read `waiting_on_human(interrupted)` within
/// seconds, its evidence naming the transcript; the next prompt's `turn_start` clears it
/// ([`expect_status_cleared`]).
pub fn expect_state_after_esc(session: &ClaudeSession, esc: Esc, transcript: &Path) {
    let state = state_label(session.view().as_ref());
    let what = format!("after the Esc ({esc:?}, transcript {})", transcript.display());
    if state.starts_with("idle") {
        session.fail(&format!("{what} the state is {state}: nothing said idle"));
    }
    let hooks_only = match esc {
        Esc::Streaming => "active",
        Esc::PermissionDialog => "waiting_on_human(permission)",
    };
    if state != hooks_only {
        session.fail(&format!("{what} the hooks' state is {state}, expected {hooks_only}"));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let row = status_row(session);
        let label = row_label(&row);
        if label.starts_with("idle") {
            session.fail(&format!("{what} hookline status says {label}: nothing said idle"));
        }
        if label == "waiting_on_human(interrupted)" {
            if row["evidence"]["kind"] != "transcript"
                || row["evidence"]["file"].as_str() != transcript.to_str()
            {
                session.fail(&format!("{what} the state does not name the transcript: {row}"));
            }
            return;
        }
        if Instant::now() > deadline {
            session.fail(&format!("{what} hookline status says {label} after 5 s: {row}"));
        }
        thread::sleep(Duration::from_millis(250));
    }
}

/// After the next prompt's turn ended: the interrupt no longer counts (`hookline status`
/// follows the hooks again).
pub fn expect_status_cleared(session: &ClaudeSession) {
    let row = status_row(session);
    if row_label(&row) != "idle" || row["evidence"]["kind"] == "transcript" {
        session.fail(&format!("after the next prompt hookline status says {row}; expected idle"));
    }
}

/// `hookline status --json`'s row for the session (a one-shot: it reads the transcript's
/// tail).
fn status_row(session: &ClaudeSession) -> Value {
    let mut command = session.sandbox.command(&hookline_tests::binaries::hookline());
    command.arg("status").arg("--events-dir").arg(session.events.path()).arg("--json");
    let output = hookline_tests::process::output_within(command, Duration::from_secs(20))
        .unwrap_or_else(|e| session.fail(&format!("hookline status: {e}")));
    let text = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("hookline status --json: {e}: {text}")));
    rows.into_iter()
        .find(|r| r["tag"] == session.tag.as_str())
        .unwrap_or_else(|| session.fail(&format!("hookline status shows no session: {text}")))
}

fn row_label(row: &Value) -> String {
    match row["detail"].as_str() {
        Some(detail) => format!("{}({detail})", row["state"].as_str().unwrap_or("?")),
        None => row["state"].as_str().unwrap_or("?").to_owned(),
    }
}

fn idle_prompt_step(name: &'static str, input: Input) -> Step {
    Step::new(name, Action::Wait)
        .expect([native("Notification").q("idle_prompt").canonical("idle_prompt").state("idle")])
        .within(IDLE_THRESHOLD + Duration::from_secs(5))
        .state("idle")
        .input(input)
}

/// A prompt that ends its turn with text: turn_start, then Stop (idle, one slot), then the idle
/// timer.
fn plain_turn(name: &'static str, prompt: &str) -> [Step; 2] {
    [
        Step::new(name, Action::Type(prompt.into()))
            .when_shown(READY)
            .expect([
                native("UserPromptSubmit").canonical("turn_start").state("active"),
                native("Stop").canonical("stop").state("idle"),
            ])
            .state("idle")
            .input(Input::Once),
        idle_prompt_step("idle threshold passes", Input::Refused("already taken")),
    ]
}

/// A session in tmux, launched, at its first prompt; returns it with its transcript's path.
fn launched(installed: &Installed, scenario: &str) -> (ClaudeSession, PathBuf) {
    let mut session = ClaudeSession::new(installed, scenario, IDLE_THRESHOLD);
    // An API error ends the turn at once instead of after ten retries with backoff.
    session.sandbox.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    session.launch_tui(&["--permission-mode", "default"]);
    session.run(&[Step::new("launch", Action::Wait)
        .expect([session_started()])
        .within(Duration::from_secs(30))
        .then_shown(READY)
        .state("unknown(session started)")]);
    let transcript = transcript_path(&session);
    (session, transcript)
}

/// Esc while the answer streams (about 20 s of it; no hook fires while it does), then a next
/// prompt.
pub fn while_streaming(installed: &Installed) {
    let (mut session, transcript) = launched(installed, "esc-while-streaming");
    session.run(&[
        Step::new("prompt with a slow answer", Action::Type("stream SLOW: please".into()))
            .when_shown(READY)
            .expect([native("UserPromptSubmit").canonical("turn_start").state("active")])
            .then_quiet_for(Duration::from_secs(3))
            .state("active"),
        // Nothing follows, not even idle_prompt: the wait covers its threshold.
        Step::new("interrupt the stream with Escape", Action::Press("Escape"))
            .then_quiet_for(IDLE_THRESHOLD + Duration::from_secs(3))
            .then_shown("Interrupted"),
    ]);
    let marker = wait_for_entry(&session, &transcript, "the interrupt marker", |e| {
        is_user_text(e, INTERRUPTED)
    });
    if marker["interruptedMessageId"].as_str().is_none_or(str::is_empty) {
        session.fail(&format!("the interrupt marker has no interruptedMessageId: {marker}"));
    }
    expect_state_after_esc(&session, Esc::Streaming, &transcript);
    session.run(&plain_turn("next prompt after the interrupt", "after the interrupt, hello"));
    expect_status_cleared(&session);
    expect_marker_repeated_in_request_blob(&session, &transcript, INTERRUPTED);
    session.run(&[exit()]);
    session.finish();
}

/// Esc at a permission dialog: the tool call is denied, then a next prompt.
pub fn at_permission_dialog(installed: &Installed) {
    let (mut session, transcript) = launched(installed, "esc-at-permission-dialog");
    let denied = session.sandbox.project().join("denied.txt");
    session.run(&[
        Step::new(
            "prompt asking for a Bash command",
            Action::Type(format!("now RUNBASH: echo denied > {}", denied.display())),
        )
        .when_shown(READY)
        .expect([
            native("UserPromptSubmit").canonical("turn_start").state("active"),
            native("PreToolUse").canonical("tool_start(Bash)").state("child_command(Bash)"),
            native("PermissionRequest")
                .canonical("permission_request(Bash)")
                .state("waiting_on_human(permission)"),
        ])
        .then_shown(PERMISSION_DIALOG)
        .state("waiting_on_human(permission)"),
        // Neither the permission notification (6 s) nor idle_prompt follows the denial.
        Step::new("deny with Escape", Action::Press("Escape"))
            .then_quiet_for(Duration::from_secs(7))
            .then_shown("Interrupted"),
    ]);
    let rejected = wait_for_entry(&session, &transcript, "the rejected tool result", |e| {
        e["type"] == "user" && e["toolDenialKind"] == "user-rejected"
    });
    let blocks = rejected["message"]["content"].as_array().cloned().unwrap_or_default();
    if !blocks.iter().any(|b| b["type"] == "tool_result" && b["is_error"] == true) {
        session.fail(&format!("the rejected entry holds no tool_result with is_error: {rejected}"));
    }
    wait_for_entry(&session, &transcript, "the tool-use interrupt marker", |e| {
        is_user_text(e, INTERRUPTED_TOOL_USE)
    });
    expect_state_after_esc(&session, Esc::PermissionDialog, &transcript);
    session.run(&plain_turn("next prompt after the denial", "after the denial, hello"));
    expect_status_cleared(&session);
    expect_marker_repeated_in_request_blob(&session, &transcript, INTERRUPTED_TOOL_USE);
    session.run(&[exit()]);
    if denied.exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    session.finish();
}

/// API errors answered by the mock (no retries): each turn ends with `StopFailure`, and Claude
/// writes a synthetic assistant entry flagged `isApiErrorMessage`.
pub fn api_errors(installed: &Installed) {
    let (mut session, transcript) = launched(installed, "api-errors");
    for (name, prompt, error) in [
        ("prompt answered 529 overloaded", "APIERROR: overloaded", "stop_failure(server)"),
        ("prompt answered 429 rate limited", "APIERROR: rate_limit", "stop_failure(rate_limit)"),
    ] {
        session.run(&[Step::new(name, Action::Type(prompt.into()))
            .when_shown(READY)
            .expect([
                native("UserPromptSubmit").canonical("turn_start").state("active"),
                native("StopFailure").canonical(error),
            ])
            .then_quiet_for(Duration::from_secs(1))]);
    }
    let errors: Vec<Value> = transcripts::read_entries(&transcript)
        .unwrap_or_else(|e| session.fail(&e))
        .into_iter()
        .filter(|e| e["type"] == "assistant" && e["isApiErrorMessage"] == true)
        .collect();
    let kinds: Vec<&str> = errors.iter().filter_map(|e| e["error"].as_str()).collect();
    if kinds != ["server_error", "rate_limit"] {
        session.fail(&format!("the transcript's API error entries say {kinds:?}: {errors:?}"));
    }
    session.run(&[exit()]);
    session.finish();
}

/// At the prompt after an interrupt Claude logs the request it sent (`api-request-blob`), which
/// repeats the marker's text: a reader must match the marker's entry type and role, never the
/// text anywhere in a line.
fn expect_marker_repeated_in_request_blob(session: &ClaudeSession, path: &Path, marker: &str) {
    let entries = transcripts::read_entries(path).unwrap_or_else(|e| session.fail(&e));
    let blob =
        entries.iter().any(|e| e["type"] == "api-request-blob" && e.to_string().contains(marker));
    if !blob {
        session.fail(&format!("no api-request-blob entry repeats {marker:?}"));
    }
}

/// The transcript the hooks name (`transcript_path` of the first event).
fn transcript_path(session: &ClaudeSession) -> PathBuf {
    let events = session.all_events();
    let path = events.iter().find_map(|e| e.field("transcript_path").map(PathBuf::from));
    path.unwrap_or_else(|| session.fail("no event names a transcript_path"))
}

/// A `user` entry whose message text is exactly `text`.
fn is_user_text(entry: &Value, text: &str) -> bool {
    entry["type"] == "user" && transcripts::texts(entry).contains(&text)
}

/// Waits for Claude to write an entry matching `matches` to the transcript; returns it.
fn wait_for_entry(
    session: &ClaudeSession,
    path: &Path,
    what: &str,
    matches: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + TRANSCRIPT_LAG;
    loop {
        let entries = transcripts::read_entries(path).unwrap_or_default();
        if let Some(entry) = entries.into_iter().find(|e| matches(e)) {
            return entry;
        }
        if Instant::now() >= deadline {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| e.to_string());
            session.fail(&format!(
                "the transcript {} has no {what} after {TRANSCRIPT_LAG:?}:\n{text}",
                path.display()
            ));
        }
        thread::sleep(Duration::from_millis(200));
    }
}
