//! The Qwen Code and Factory Droid profiles against the real payloads and run logs of Qwen Code
//! 0.24.4 and Droid 0.225.2 (TUI, `qwen -p`, `droid exec`), and documented payloads of the
//! events no run reached.

use std::collections::BTreeSet;

use super::cli::{json_files, kinds, map, map_file, no_rule, replay, stop, text};
use super::*;

const QWEN: &str = "qwen/0.24.4";
const DROID: &str = "droid/0.225.2";

/// Qwen TUI session, `qwen -p` session, the `-p` run that captured `auth_success`, and the
/// auto-mode TUI session that captured `/quit`.
const QWEN_TUI: &str = "24e3c121-30d2-4620-a1a5-e6f99b7dab14";
const QWEN_P: &str = "3db05406-bb9d-41fd-9e6e-7f97889041d6";
const QWEN_P_AUTH: &str = "fea5a785-66c5-4b2f-b17a-0a01af51b4ac";
const QWEN_AUTOMODE: &str = "748d197a-9c42-4545-a1e5-d7b1545dac2a";
/// Droid TUI session and `droid exec` session.
const DROID_TUI: &str = "78ca5c8c-406f-4636-a81d-076d2c0672b5";
const DROID_EXEC: &str = "a9138040-0d0e-4082-8b36-d0bad738a446";

#[test]
fn every_qwen_fixture_maps_to_its_kind_and_session() {
    let shell = || text("run_shell_command");
    let unmapped = || Kind::Unknown { reason: None };
    let cases: &[(&str, Kind, &str)] = &[
        ("SessionStart-startup.json", Kind::SessionStart { source: text("startup") }, QWEN_TUI),
        ("SessionStart-startup-p.json", Kind::SessionStart { source: text("startup") }, QWEN_P),
        ("UserPromptSubmit.json", Kind::TurnStart, QWEN_TUI),
        ("UserPromptSubmit-p.json", Kind::TurnStart, QWEN_P),
        ("PermissionRequest.json", Kind::PermissionRequest { tool: shell() }, QWEN_TUI),
        (
            "Notification-permission_prompt.json",
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Permission,
                message: text("Qwen Code needs your permission to use run_shell_command"),
            },
            QWEN_TUI,
        ),
        ("PreToolUse.json", Kind::ToolStart { tool: shell() }, QWEN_TUI),
        ("PreToolUse-p.json", Kind::ToolStart { tool: shell() }, QWEN_P),
        ("PostToolUse.json", Kind::ToolEnd { tool: shell(), ok: true }, QWEN_TUI),
        ("PostToolUse-p.json", Kind::ToolEnd { tool: shell(), ok: true }, QWEN_P),
        ("PostToolUseFailure.json", Kind::ToolEnd { tool: shell(), ok: false }, QWEN_TUI),
        ("Stop.json", stop("done"), QWEN_TUI),
        ("Stop-p.json", stop("done"), QWEN_P),
        ("Notification-idle_prompt.json", Kind::IdlePrompt, QWEN_TUI),
        (
            "Notification-auth_success-p.json",
            Kind::Notification {
                notification_type: text("auth_success"),
                message: text("Successfully authenticated with openai"),
            },
            QWEN_P_AUTH,
        ),
        (
            "SessionEnd-prompt_input_exit.json",
            Kind::SessionEnd { reason: text("prompt_input_exit") },
            QWEN_AUTOMODE,
        ),
        // Never registered, deliberately unmapped: they change no state.
        ("InstructionsLoaded.json", unmapped(), QWEN_TUI),
        ("InstructionsLoaded-p.json", unmapped(), QWEN_P),
        ("MessageDisplay.json", unmapped(), QWEN_TUI),
        ("MessageDisplay-p.json", unmapped(), QWEN_P),
        ("PostToolBatch.json", unmapped(), QWEN_TUI),
        ("PostToolBatch-p.json", unmapped(), QWEN_P),
    ];
    let covered: BTreeSet<String> = cases.iter().map(|(f, ..)| (*f).to_owned()).collect();
    assert_eq!(covered, json_files(QWEN), "every Qwen fixture has a case");
    for (file, expected, session) in cases {
        let event = map_file("qwen", QWEN, file);
        match expected {
            Kind::Unknown { .. } => assert!(no_rule(&event.kind), "{file}: {:?}", event.kind),
            _ => assert_eq!(&event.kind, expected, "{file}"),
        }
        assert_eq!(event.session_id.as_deref(), Some(*session), "{file}");
        assert_eq!(event.cli, "qwen");
    }
}

#[test]
fn a_qwen_continuation_prompt_is_no_new_turn_and_stop_failure_is_classed() {
    let base = |native: &str, extra: Value| {
        let mut payload = json!({"session_id": "q", "hook_event_name": native, "cwd": "/w"});
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        map("qwen", Some(native), payload)
    };
    let continuation = base("UserPromptSubmit", json!({"prompt": "", "prompt_id": "q########1"}));
    assert_eq!(
        continuation.kind,
        Kind::Notification { notification_type: text("continuation"), message: None }
    );
    for (error, class) in [
        ("rate_limit", FailureKind::RateLimit),
        ("server_error", FailureKind::Server),
        ("authentication_failed", FailureKind::Auth),
        ("billing_error", FailureKind::Billing),
        ("invalid_request", FailureKind::Other),
        ("loop_detected", FailureKind::Other),
    ] {
        let event = base("StopFailure", json!({"error": error, "error_details": "400 bad"}));
        assert_eq!(event.kind, Kind::StopFailure { error: class, detail: text("400 bad") });
    }
    // The todo hooks count once the change is written, not in their validation phase.
    let todo = |phase: &str| {
        base(
            "TodoCreated",
            json!({"todo_id": "1", "todo_content": "a", "todo_status": "pending", "phase": phase}),
        )
    };
    assert_eq!(todo("postWrite").kind, Kind::Todo);
    assert!(no_rule(&todo("validation").kind));
}

#[test]
fn the_qwen_tui_run_replays_to_the_expected_sequence() {
    let events = replay("qwen", QWEN, "_raw-hooks-interactive.jsonl");
    let mut expected = vec!["unknown", "session_start"]; // InstructionsLoaded, SessionStart
    // A prompt, its dialog approved: PreToolUse only after the approval.
    expected.extend(["turn_start", "permission_request", "waiting_for_input"]);
    expected.extend(["tool_start", "tool_end", "unknown", "notification", "unknown", "stop"]);
    expected.push("idle_prompt");
    // Denied with Esc: PostToolBatch and idle_prompt, no Stop.
    expected.extend(["turn_start", "permission_request", "waiting_for_input", "unknown"]);
    expected.push("idle_prompt");
    // Approved, then Esc while it runs: PostToolUseFailure and idle_prompt, no Stop.
    expected.extend(["turn_start", "permission_request", "waiting_for_input", "tool_start"]);
    expected.extend(["tool_end", "idle_prompt"]);
    // A 500 retried in silence until Esc; then "/quit" typed after the restored prompt.
    expected.extend(["turn_start", "idle_prompt", "turn_start"]);
    assert_eq!(kinds(&events), expected);
    assert!(events.iter().all(|e| e.session_id.as_deref() == Some(QWEN_TUI)));
}

#[test]
fn the_qwen_auto_mode_run_replays_to_the_same_events_as_the_default_mode() {
    // 0.24's default approval mode without `tools.approvalMode`: the classifier is unavailable
    // against the mock, so the same dialog opens and the same events fire.
    let events = replay("qwen", QWEN, "_raw-hooks-interactive-automode.jsonl");
    let mut expected = vec!["unknown", "session_start"];
    expected.extend(["turn_start", "permission_request", "waiting_for_input"]);
    expected.extend(["tool_start", "tool_end", "unknown", "notification", "unknown", "stop"]);
    expected.push("idle_prompt");
    expected.extend(["turn_start", "permission_request", "waiting_for_input", "unknown"]);
    expected.push("idle_prompt");
    // A bare `sleep 30` is blocked before any dialog: the turn goes on to its Stop.
    expected.extend(["turn_start", "unknown", "notification", "unknown", "stop", "idle_prompt"]);
    // A 500 retried in silence; /quit: idle_prompt, then the end.
    expected.extend(["turn_start", "idle_prompt", "session_end"]);
    assert_eq!(kinds(&events), expected);
    assert!(events.iter().all(|e| e.session_id.as_deref() == Some(QWEN_AUTOMODE)));
}

#[test]
fn the_qwen_headless_runs_replay_to_the_expected_sequences_without_an_end() {
    let events = replay("qwen", QWEN, "_raw-hooks-p.jsonl");
    // Each run: InstructionsLoaded, SessionStart, Notification(auth_success), the prompt.
    let start = ["unknown", "session_start", "notification", "turn_start"];
    let mut expected = Vec::from(start);
    // With --approval-mode yolo: the tool, PostToolBatch, the continuation (an empty prompt),
    // MessageDisplay, Stop; and no SessionEnd.
    expected.extend(["tool_start", "tool_end", "unknown", "notification", "unknown", "stop"]);
    // Without it `-p` offers no shell tool: a text answer.
    expected.extend(start);
    expected.extend(["unknown", "unknown", "stop"]);
    // A 429 retried, then given up: nothing fires at all (no StopFailure in -p).
    expected.extend(start);
    assert_eq!(kinds(&events), expected);
    let sessions: BTreeSet<_> = events.iter().map(|e| e.session_id.clone()).collect();
    assert_eq!(sessions.len(), 3);
}

#[test]
fn every_droid_fixture_maps_to_its_kind_and_session() {
    let execute = || text("Execute");
    let bare_stop = Kind::Stop {
        last_message: None,
        pending_tasks: 0,
        scheduled_wakes: 0,
        tasks: Vec::new(),
        crons: Vec::new(),
    };
    let cases: &[(&str, Kind, &str)] = &[
        ("SessionStart-startup.json", Kind::SessionStart { source: text("startup") }, DROID_TUI),
        (
            "SessionStart-startup-exec.json",
            Kind::SessionStart { source: text("startup") },
            DROID_EXEC,
        ),
        ("UserPromptSubmit.json", Kind::TurnStart, DROID_TUI),
        ("PreToolUse.json", Kind::ToolStart { tool: execute() }, DROID_TUI),
        ("PreToolUse-exec.json", Kind::ToolStart { tool: execute() }, DROID_EXEC),
        (
            "Notification-permission_prompt.json",
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Permission,
                message: text("Factory CLI needs permission to execute 1 tool(s)"),
            },
            DROID_TUI,
        ),
        ("PostToolUse.json", Kind::ToolEnd { tool: execute(), ok: true }, DROID_TUI),
        ("PostToolUse-exec.json", Kind::ToolEnd { tool: execute(), ok: true }, DROID_EXEC),
        ("Stop.json", bare_stop.clone(), DROID_TUI),
        ("Stop-exec.json", bare_stop, DROID_EXEC),
        ("Notification-idle_prompt.json", Kind::IdlePrompt, DROID_TUI),
        ("SessionEnd-other.json", Kind::SessionEnd { reason: text("other") }, DROID_TUI),
        ("SessionEnd-other-exec.json", Kind::SessionEnd { reason: text("other") }, DROID_EXEC),
    ];
    let covered: BTreeSet<String> = cases.iter().map(|(f, ..)| (*f).to_owned()).collect();
    assert_eq!(covered, json_files(DROID), "every Droid fixture has a case");
    for (file, expected, session) in cases {
        let event = map_file("droid", DROID, file);
        assert_eq!(&event.kind, expected, "{file}");
        assert_eq!(event.session_id.as_deref(), Some(*session), "{file}");
        assert_eq!(event.cli, "droid");
    }
}

#[test]
fn the_droid_runs_replay_to_the_expected_sequences() {
    let events = replay("droid", DROID, "_raw-hooks-interactive.jsonl");
    let mut expected = vec!["session_start"];
    // Approved: PreToolUse before the dialog, nothing at the approval, then the tool's end.
    expected.extend(["turn_start", "tool_start", "waiting_for_input", "tool_end", "stop"]);
    // Denied with Esc, and Esc while the approved sleep runs: Stop both times.
    expected.extend(["turn_start", "tool_start", "waiting_for_input", "stop"]);
    expected.extend(["turn_start", "tool_start", "waiting_for_input", "stop"]);
    // A 500 retried in silence, then Esc: idle_prompt and no Stop; /quit ends it twice.
    expected.extend(["turn_start", "idle_prompt", "session_end", "session_end"]);
    assert_eq!(kinds(&events), expected);
    assert!(events.iter().all(|e| e.session_id.as_deref() == Some(DROID_TUI)));

    let exec = replay("droid", DROID, "_raw-hooks-exec.jsonl");
    let sessions: BTreeSet<_> = exec.iter().map(|e| e.session_id.clone()).collect();
    assert!(!kinds(&exec).contains(&"turn_start"), "droid exec fires no UserPromptSubmit");
    assert!(sessions.len() >= 2, "{sessions:?}");
}
