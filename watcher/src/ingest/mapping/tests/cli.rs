//! The Codex, Gemini, Copilot and Cursor profiles against payloads: the real fixtures and run
//! logs of Codex 0.171.0 and Gemini 0.61.0, and hand-written Copilot and Cursor payloads that
//! follow their documented shapes (no real run of those two has been captured yet).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use super::*;

const CODEX: &str = "codex/0.171.0";
const GEMINI: &str = "gemini/0.61.0";

/// Codex TUI session, `codex exec` session, and the TUI's title-generation side thread.
const CODEX_TUI: &str = "01a22d09-1350-7e72-9796-4834cd74b768";
const CODEX_EXEC: &str = "01a22d09-55e5-7923-9a54-1f8cb3c72a75";
const CODEX_TITLEGEN: &str = "01a22d09-18e3-7b72-a458-b5b1d8822c24";
/// Gemini TUI session, and the two `gemini -p` sessions (text only, then with a tool).
const GEMINI_TUI: &str = "f8cec0a7-cabb-43d9-bc3d-c0d270bf45d1";
const GEMINI_P_TEXT: &str = "3b38f369-1ab5-41d9-839c-f9c991d92e57";
const GEMINI_P_TOOL: &str = "0fcd5c14-37f8-4fdd-adb1-8389964e5d16";

/// The native event name the relay records: `hook_event_name`, `hookEventName` or `type`.
fn native_of(payload: &Value) -> Option<String> {
    ["hook_event_name", "hookEventName", "type"]
        .iter()
        .find_map(|k| payload.get(*k)?.as_str().map(str::to_owned))
}

/// The shipped profiles, parsed once for the many events mapped here.
fn shipped() -> &'static Profiles {
    static PROFILES: OnceLock<Profiles> = OnceLock::new();
    PROFILES.get_or_init(|| Profiles::shipped().unwrap())
}

pub(super) fn map(cli: &str, native: Option<&str>, payload: Value) -> Event {
    map_envelope(shipped(), &envelope(cli, native, payload), source())
}

pub(super) fn map_file(cli: &str, dir: &str, file: &str) -> Event {
    let text = std::fs::read_to_string(fixtures().join(dir).join(file)).unwrap();
    let payload: Value = serde_json::from_str(&text).unwrap();
    let native = native_of(&payload);
    map(cli, native.as_deref(), payload)
}

/// The `.json` fixtures of a directory, so a fixture added later cannot go untested.
pub(super) fn json_files(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(fixtures().join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

pub(super) fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

pub(super) fn stop(last: &str) -> Kind {
    Kind::Stop {
        last_message: text(last),
        pending_tasks: 0,
        scheduled_wakes: 0,
        tasks: Vec::new(),
        crons: Vec::new(),
    }
}

pub(super) fn no_rule(kind: &Kind) -> bool {
    matches!(kind, Kind::Unknown { reason: Some(r) } if r.contains("no rule"))
}

/// Replays a `_raw-hooks-*.jsonl` run log: one line per hook call, in order, with the payload
/// (or, for Codex's `notify`, the JSON the CLI put last on the command line). Lines whose
/// `argv_event` ends in `-decider` come from the harness's second hook on the same event (the
/// one that answered dialogs); hookline is registered once, so they are skipped, as are the
/// harness's own markers (`#launch`, `#prompt deny`: what it did next).
pub(super) fn replay(cli: &str, dir: &str, log: &str) -> Vec<Event> {
    let text = std::fs::read_to_string(fixtures().join(dir).join(log)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|line| {
            let event = line["argv_event"].as_str().unwrap();
            !event.ends_with("-decider") && !event.starts_with('#')
        })
        .map(|line| {
            let payload = match &line["payload"] {
                Value::Null => {
                    let arg = line["argv"].as_array().unwrap().last().unwrap();
                    serde_json::from_str(arg.as_str().unwrap()).unwrap()
                }
                payload => payload.clone(),
            };
            let native = native_of(&payload);
            map(cli, native.as_deref(), payload)
        })
        .collect()
}

pub(super) fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

#[test]
fn every_codex_fixture_maps_to_its_kind_and_session() {
    let bash = || text("Bash");
    let cases: &[(&str, Kind, &str)] = &[
        ("SessionStart-startup.json", Kind::SessionStart { source: text("startup") }, CODEX_TUI),
        (
            "SessionStart-startup-exec.json",
            Kind::SessionStart { source: text("startup") },
            CODEX_EXEC,
        ),
        ("UserPromptSubmit.json", Kind::TurnStart, CODEX_TUI),
        ("UserPromptSubmit-exec.json", Kind::TurnStart, CODEX_EXEC),
        ("PreToolUse.json", Kind::ToolStart { tool: bash() }, CODEX_TUI),
        ("PreToolUse-exec.json", Kind::ToolStart { tool: bash() }, CODEX_EXEC),
        ("PermissionRequest.json", Kind::PermissionRequest { tool: bash() }, CODEX_TUI),
        ("PostToolUse.json", Kind::ToolEnd { tool: bash(), ok: true }, CODEX_TUI),
        ("PostToolUse-exec.json", Kind::ToolEnd { tool: bash(), ok: true }, CODEX_EXEC),
        (
            "Interrupt.json",
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Other,
                message: text("turn interrupted"),
            },
            CODEX_TUI,
        ),
        ("Stop.json", stop("done"), CODEX_TUI),
        ("Stop-exec.json", stop("done"), CODEX_EXEC),
        ("notify-agent-turn-complete.json", stop("done"), CODEX_TUI),
        ("notify-agent-turn-complete-exec.json", stop("done"), CODEX_EXEC),
        (
            "notify-agent-turn-complete-titlegen.json",
            Kind::Notification {
                notification_type: text("thread_title"),
                message: text("{\"title\": \"mock\"}"),
            },
            CODEX_TITLEGEN,
        ),
        (
            "PreCompact-manual.json",
            Kind::Compact { phase: CompactPhase::Pre, trigger: text("manual") },
            CODEX_TUI,
        ),
        (
            "PostCompact-manual.json",
            Kind::Compact { phase: CompactPhase::Post, trigger: text("manual") },
            CODEX_TUI,
        ),
        ("SessionEnd-other.json", Kind::SessionEnd { reason: text("other") }, CODEX_TUI),
        ("SessionEnd-other-exec.json", Kind::SessionEnd { reason: text("other") }, CODEX_EXEC),
    ];
    let covered: BTreeSet<String> = cases.iter().map(|(f, ..)| (*f).to_owned()).collect();
    assert_eq!(covered, json_files(CODEX), "every Codex fixture has a case");
    for (file, expected, session) in cases {
        let event = map_file("codex", CODEX, file);
        assert_eq!(&event.kind, expected, "{file}");
        assert_eq!(event.session_id.as_deref(), Some(*session), "{file}");
        assert_eq!(event.cli, "codex");
        assert!(event.rule.starts_with("codex.toml#map["), "{}", event.rule);
    }
}

#[test]
fn codex_turn_ids_come_from_hooks_and_from_the_legacy_notify() {
    let hook = map_file("codex", CODEX, "Stop.json");
    let notify = map_file("codex", CODEX, "notify-agent-turn-complete.json");
    assert_eq!(hook.turn_id.as_deref(), Some("01a22d09-17c6-71f1-8f84-07e1261dbd6e"));
    assert_eq!(notify.turn_id, hook.turn_id);
    assert_eq!(notify.native.as_deref(), Some("agent-turn-complete"));
    assert!(notify.transcript_path.is_none() && hook.transcript_path.is_some());
}

#[test]
fn a_codex_interrupt_waits_for_the_human_and_is_never_input_ready() {
    let codex = shipped().get("codex").unwrap();
    let event = map_file("codex", CODEX, "Interrupt.json");
    assert!(!codex.is_input_ready(event.kind.kind_name()));
    assert_eq!(event.kind.name(), "waiting_for_input");
}

#[test]
fn the_codex_tui_run_replays_to_the_expected_sequence() {
    let events = replay("codex", CODEX, "_raw-hooks-interactive.jsonl");
    // Approve a dialog; let a PermissionRequest hook allow one; Esc on a third; /compact; /exit.
    let expected = [
        "session_start",      // SessionStart: only now, with the first prompt
        "turn_start",         // UserPromptSubmit
        "tool_start",         // PreToolUse
        "notification",       // notify from the title-generation side thread
        "permission_request", // PermissionRequest: the dialog
        "tool_end",           // PostToolUse after Enter
        "stop",               // Stop
        "stop",               // notify agent-turn-complete
        "turn_start",
        "tool_start",
        "permission_request", // answered by the harness's hook: no dialog
        "tool_end",
        "stop",
        "stop",
        "turn_start",
        "tool_start",
        "permission_request",
        "waiting_for_input", // Interrupt: Esc on the dialog; nothing else follows
        "compact",           // PreCompact
        "compact",           // PostCompact
        "session_end",       // SessionEnd on /exit
    ];
    assert_eq!(kinds(&events), expected);
    for (i, event) in events.iter().enumerate() {
        let session = if i == 3 { CODEX_TITLEGEN } else { CODEX_TUI };
        assert_eq!(event.session_id.as_deref(), Some(session), "event {i}");
    }
}

#[test]
fn the_codex_exec_runs_replay_to_the_expected_sequences() {
    let events = replay("codex", CODEX, "_raw-hooks-headless.jsonl");
    let expected = [
        // A command that runs.
        "session_start",
        "turn_start",
        "tool_start",
        "tool_end",
        "stop",
        "stop", // notify
        "session_end",
        // An escalated command: exec's approval policy is never, so it is rejected at once
        // with no PermissionRequest and no PostToolUse.
        "session_start",
        "turn_start",
        "tool_start",
        "stop",
        "stop", // notify
        "session_end",
    ];
    assert_eq!(kinds(&events), expected);
    assert_eq!(events[0].session_id.as_deref(), Some(CODEX_EXEC));
    assert!(events[7..].iter().all(|e| e.session_id != events[0].session_id));

    // Untrusted hooks never run; only the legacy notify does.
    let events = replay("codex", CODEX, "_raw-hooks-notrust.jsonl");
    assert_eq!(kinds(&events), ["stop"]);
}

#[test]
fn every_gemini_fixture_maps_to_its_kind_and_session() {
    let shell = || text("run_shell_command");
    let telemetry = || Kind::Unknown { reason: None };
    let cases: &[(&str, Kind, &str)] = &[
        ("SessionStart-startup.json", Kind::SessionStart { source: text("startup") }, GEMINI_TUI),
        (
            "SessionStart-startup-p.json",
            Kind::SessionStart { source: text("startup") },
            GEMINI_P_TEXT,
        ),
        ("BeforeAgent.json", Kind::TurnStart, GEMINI_TUI),
        ("BeforeAgent-p.json", Kind::TurnStart, GEMINI_P_TEXT),
        ("BeforeTool.json", Kind::ToolStart { tool: shell() }, GEMINI_TUI),
        ("BeforeTool-p.json", Kind::ToolStart { tool: shell() }, GEMINI_P_TOOL),
        (
            "Notification-ToolPermission.json",
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Permission,
                message: text("Tool Confirm Shell Command requires execution"),
            },
            GEMINI_TUI,
        ),
        ("AfterTool.json", Kind::ToolEnd { tool: shell(), ok: true }, GEMINI_TUI),
        ("AfterTool-p.json", Kind::ToolEnd { tool: shell(), ok: true }, GEMINI_P_TOOL),
        ("AfterAgent.json", stop("done"), GEMINI_TUI),
        ("AfterAgent-p.json", stop("done"), GEMINI_P_TEXT),
        (
            "PreCompress-auto.json",
            Kind::Notification { notification_type: text("pre_compress"), message: text("auto") },
            GEMINI_TUI,
        ),
        (
            "PreCompress-auto-p.json",
            Kind::Notification { notification_type: text("pre_compress"), message: text("auto") },
            GEMINI_P_TEXT,
        ),
        (
            "PreCompress-manual.json",
            Kind::Compact { phase: CompactPhase::Pre, trigger: text("manual") },
            GEMINI_TUI,
        ),
        ("SessionEnd-exit.json", Kind::SessionEnd { reason: text("exit") }, GEMINI_TUI),
        ("SessionEnd-exit-p.json", Kind::SessionEnd { reason: text("exit") }, GEMINI_P_TEXT),
        // Model-call telemetry: deliberately unmapped, surfaced as unknown.
        ("BeforeModel.json", telemetry(), GEMINI_TUI),
        ("BeforeModel-p.json", telemetry(), GEMINI_P_TEXT),
        ("BeforeToolSelection.json", telemetry(), GEMINI_TUI),
        ("BeforeToolSelection-p.json", telemetry(), GEMINI_P_TEXT),
        ("AfterModel.json", telemetry(), GEMINI_TUI),
        ("AfterModel-p.json", telemetry(), GEMINI_P_TEXT),
    ];
    let covered: BTreeSet<String> = cases.iter().map(|(f, ..)| (*f).to_owned()).collect();
    assert_eq!(covered, json_files(GEMINI), "every Gemini fixture has a case");
    for (file, expected, session) in cases {
        let event = map_file("gemini", GEMINI, file);
        match expected {
            Kind::Unknown { .. } => assert!(no_rule(&event.kind), "{file}: {:?}", event.kind),
            _ => assert_eq!(&event.kind, expected, "{file}"),
        }
        assert_eq!(event.session_id.as_deref(), Some(*session), "{file}");
        assert_eq!(event.cli, "gemini");
    }
}

#[test]
fn a_gemini_tool_that_returned_an_error_ends_not_ok() {
    let payload = json!({
        "session_id": "g", "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
        "tool_response": {"llmContent": "", "returnDisplay": "", "error": "exit code 2"}
    });
    let event = map("gemini", Some("AfterTool"), payload);
    assert_eq!(event.kind, Kind::ToolEnd { tool: text("run_shell_command"), ok: false });
}

#[test]
fn the_gemini_tui_run_replays_to_the_expected_sequence() {
    let events = replay("gemini", GEMINI, "_raw-hooks-interactive.jsonl");
    // One prompt approved at the dialog, one denied with Esc, /compress, /quit.
    let model_call = ["notification", "unknown", "unknown", "unknown"]; // PreCompress(auto), BeforeModel, BeforeToolSelection, AfterModel
    let mut expected = vec!["session_start", "turn_start"]; // at launch; BeforeAgent
    expected.extend(model_call);
    expected.extend(["tool_start", "waiting_for_input", "tool_end"]); // BeforeTool, Notification(ToolPermission), AfterTool
    expected.extend(model_call);
    expected.extend(["stop", "turn_start"]); // AfterAgent; the second prompt
    expected.extend(model_call);
    // The dialog is denied: nothing follows it. Then /compress, and /quit's three SessionEnds.
    expected.extend(["tool_start", "waiting_for_input"]);
    expected.extend(["compact", "session_end", "session_end", "session_end"]);
    assert_eq!(kinds(&events), expected);
    assert!(events.iter().all(|e| e.session_id.as_deref() == Some(GEMINI_TUI)));
}

#[test]
fn the_gemini_headless_runs_replay_to_the_expected_sequences() {
    let events = replay("gemini", GEMINI, "_raw-hooks-headless.jsonl");
    let model_call = ["notification", "unknown", "unknown", "unknown"];
    let mut expected = Vec::new();
    // A text-only answer: AfterAgent fires (gemini-cli#18514 does not reproduce on 0.61).
    expected.extend(["session_start", "turn_start"]);
    expected.extend(model_call);
    expected.extend(["stop", "session_end"]);
    // Then two runs with a shell command under --approval-mode yolo: no dialog, no Notification.
    // In the third the harness's own BeforeTool hook denied the call: no AfterTool follows.
    for after_tool in [true, false] {
        expected.extend(["session_start", "turn_start"]);
        expected.extend(model_call);
        expected.push("tool_start");
        if after_tool {
            expected.push("tool_end");
        }
        expected.extend(model_call);
        expected.extend(["stop", "session_end"]);
    }
    assert_eq!(kinds(&events), expected);
    let sessions: BTreeSet<_> = events.iter().map(|e| e.session_id.clone()).collect();
    assert_eq!(sessions.len(), 3);
}

/// Copilot CLI's camelCase dialect: what `install` registers. The payloads carry no event name
/// (except `notification`); the relay is given `--event`.
#[test]
fn copilot_camel_case_payloads_map_by_their_documented_shapes() {
    let base = |extra: Value| {
        let mut p = json!({"sessionId": "cp-1", "timestamp": 1_704_614_400_000_u64, "cwd": "/w"});
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        p
    };
    let cases: Vec<(&str, Value, Kind)> = vec![
        (
            "sessionStart",
            base(json!({"source": "new", "initialPrompt": "fix it"})),
            Kind::SessionStart { source: text("new") },
        ),
        ("userPromptSubmitted", base(json!({"prompt": "fix it"})), Kind::TurnStart),
        (
            "preToolUse",
            base(json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"})),
            Kind::ToolStart { tool: text("bash") },
        ),
        (
            "permissionRequest",
            base(json!({"toolName": "bash", "toolArgs": {}})),
            Kind::Notification { notification_type: text("permission_request"), message: None },
        ),
        (
            "notification",
            base(
                json!({"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Permission needed"}),
            ),
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Permission,
                message: text("Permission needed"),
            },
        ),
        (
            "postToolUse",
            base(
                json!({"toolName": "bash", "toolArgs": {}, "toolResult": {"resultType": "success", "textResultForLlm": "ok"}}),
            ),
            Kind::ToolEnd { tool: text("bash"), ok: true },
        ),
        (
            "preToolUse",
            base(json!({"toolName": "ask_user", "toolArgs": {}})),
            Kind::WaitingForInput {
                tool: text("ask_user"),
                reason: WaitReason::Question,
                message: None,
            },
        ),
        (
            "postToolUseFailure",
            base(json!({"toolName": "bash", "toolArgs": {}, "error": "exit 1"})),
            Kind::ToolEnd { tool: text("bash"), ok: false },
        ),
        (
            "notification",
            base(
                json!({"hook_event_name": "Notification", "notification_type": "elicitation_dialog", "message": "Need a value"}),
            ),
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Elicitation,
                message: text("Need a value"),
            },
        ),
        (
            "notification",
            base(
                json!({"hook_event_name": "Notification", "notification_type": "agent_idle", "message": "Agent idle"}),
            ),
            Kind::Notification {
                notification_type: text("agent_idle"),
                message: text("Agent idle"),
            },
        ),
        (
            "subagentStart",
            base(json!({"transcriptPath": "/t", "agentName": "explore"})),
            Kind::SubagentStart { agent_type: text("explore") },
        ),
        (
            "subagentStop",
            base(
                json!({"transcriptPath": "/t", "agentId": "a-1", "agentType": "custom", "agentName": "explore", "response": "done", "stopReason": "end_turn"}),
            ),
            Kind::SubagentStop { agent_type: text("explore") },
        ),
        (
            "preCompact",
            base(json!({"transcriptPath": "/t", "trigger": "auto", "customInstructions": ""})),
            Kind::Compact { phase: CompactPhase::Pre, trigger: text("auto") },
        ),
        (
            "errorOccurred",
            base(
                json!({"error": {"message": "retrying", "name": "Error"}, "errorContext": "model_call", "recoverable": true}),
            ),
            Kind::Notification { notification_type: text("error"), message: text("retrying") },
        ),
        (
            "errorOccurred",
            base(
                json!({"error": {"message": "quota exceeded", "name": "Error"}, "errorContext": "model_call", "recoverable": false}),
            ),
            Kind::StopFailure { error: FailureKind::Other, detail: text("quota exceeded") },
        ),
        (
            "agentStop",
            base(
                json!({"transcriptPath": "/t", "stopReason": "end_turn", "stop_hook_active": false}),
            ),
            stop_without_message(),
        ),
        (
            "sessionEnd",
            base(json!({"reason": "user_exit"})),
            Kind::SessionEnd { reason: text("user_exit") },
        ),
    ];
    for (native, payload, expected) in cases {
        let event = map("copilot", Some(native), payload);
        assert_eq!(event.kind, expected, "{native}");
        assert_eq!(event.session_id.as_deref(), Some("cp-1"), "{native}");
        assert_eq!(event.cli, "copilot");
    }
    let event = map(
        "copilot",
        Some("subagentStop"),
        json!({"sessionId": "cp-1", "agentId": "a-1", "agentName": "explore"}),
    );
    assert_eq!(event.agent_id.as_deref(), Some("a-1"));
}

fn stop_without_message() -> Kind {
    Kind::Stop {
        last_message: None,
        pending_tasks: 0,
        scheduled_wakes: 0,
        tasks: Vec::new(),
        crons: Vec::new(),
    }
}

/// Copilot CLI's PascalCase ("VS Code compatible") dialect, and VS Code's own payloads.
#[test]
fn copilot_pascal_case_and_vscode_payloads_map_too() {
    let cli = |native: &str, extra: Value| {
        let mut p = json!({"hook_event_name": native, "session_id": "cp-2", "timestamp": "2026-01-07T10:00:00.000Z", "cwd": "/w"});
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        map("copilot", Some(native), p)
    };
    assert_eq!(
        cli("PreToolUse", json!({"tool_name": "Bash", "tool_input": {}})).kind,
        Kind::ToolStart { tool: text("Bash") }
    );
    assert_eq!(
        cli("PreToolUse", json!({"tool_name": "AskUserQuestion", "tool_input": {}})).kind,
        Kind::WaitingForInput {
            tool: text("AskUserQuestion"),
            reason: WaitReason::Question,
            message: None
        }
    );
    assert_eq!(
        cli(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_result": {"result_type": "denied", "text_result_for_llm": ""}})
        )
        .kind,
        Kind::ToolEnd {
            tool: text("Bash"),
            ok: false
        }
    );
    let end = cli(
        "Stop",
        json!({"transcript_path": "/t", "stop_reason": "end_turn", "last_assistant_message": "done"}),
    );
    assert_eq!(end.kind, stop("done"));
    assert_eq!(end.session_id.as_deref(), Some("cp-2"));
    assert_eq!(end.transcript_path.as_deref(), Some("/t"));

    // VS Code: `hookEventName` and `sessionId`, snake_case tool fields.
    let vscode = json!({"hookEventName": "PreToolUse", "sessionId": "vs-1", "timestamp": "2026-02-09T10:30:00.000Z",
                        "cwd": "/w", "transcript_path": "/t", "tool_name": "editFiles", "tool_input": {}, "tool_use_id": "t-1"});
    let event = map("copilot", native_of(&vscode).as_deref(), vscode);
    assert_eq!(event.kind, Kind::ToolStart { tool: text("editFiles") });
    assert_eq!(event.session_id.as_deref(), Some("vs-1"));
}

#[test]
fn a_vscode_payload_arriving_with_cli_claude_resolves_to_the_copilot_profile() {
    // VS Code runs the hooks of ~/.claude/settings.json with its own payloads.
    let payload = json!({"hookEventName": "Stop", "sessionId": "vs-2", "timestamp": "2026-02-09T10:30:00.000Z",
                         "cwd": "/w", "transcript_path": "/t", "stop_hook_active": false});
    let event = map("claude", native_of(&payload).as_deref(), payload);
    assert_eq!(event.cli, "copilot");
    assert_eq!(event.kind, stop_without_message());
    assert_eq!(event.session_id.as_deref(), Some("vs-2"));
}

/// Cursor's common fields, as documented and as captured by other projects (2.5.0-pre).
fn cursor(native: &str, extra: Value) -> Value {
    let mut p = json!({
        "conversation_id": "cu-1", "generation_id": "gen-3", "model": "default",
        "hook_event_name": native, "cursor_version": "2.5.0", "workspace_roots": ["/w"],
        "user_email": null, "transcript_path": null
    });
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    p
}

#[test]
fn cursor_payloads_map_by_their_documented_shapes() {
    let cases: Vec<(&str, Value, Kind)> = vec![
        (
            "sessionStart",
            json!({"session_id": "cu-1", "is_background_agent": false, "composer_mode": "agent"}),
            Kind::SessionStart { source: None },
        ),
        ("beforeSubmitPrompt", json!({"prompt": "fix it", "attachments": []}), Kind::TurnStart),
        (
            "preToolUse",
            json!({"tool_name": "Shell", "tool_input": {"command": "ls"}, "tool_use_id": "t", "cwd": "/w"}),
            Kind::ToolStart { tool: text("Shell") },
        ),
        (
            "postToolUse",
            json!({"tool_name": "Shell", "tool_output": "{\"exitCode\":0}", "tool_use_id": "t", "cwd": "/w", "duration": 5}),
            Kind::ToolEnd { tool: text("Shell"), ok: true },
        ),
        (
            "postToolUseFailure",
            json!({"tool_name": "Shell", "tool_use_id": "t", "cwd": "/w", "error_message": "timed out", "failure_type": "timeout", "is_interrupt": false}),
            Kind::ToolEnd { tool: text("Shell"), ok: false },
        ),
        (
            "beforeShellExecution",
            json!({"command": "ls", "cwd": "/w", "sandbox": false}),
            Kind::ToolStart { tool: text("Shell") },
        ),
        (
            "afterShellExecution",
            json!({"command": "ls", "output": "a", "duration": 3, "sandbox": false}),
            Kind::ToolEnd { tool: text("Shell"), ok: true },
        ),
        (
            "subagentStart",
            json!({"subagent_id": "sa-1", "subagent_type": "explore", "task": "look", "parent_conversation_id": "cu-1"}),
            Kind::SubagentStart { agent_type: text("explore") },
        ),
        (
            "subagentStop",
            json!({"subagent_type": "explore", "status": "completed", "task": "look", "loop_count": 0}),
            Kind::SubagentStop { agent_type: text("explore") },
        ),
        (
            "preCompact",
            json!({"trigger": "auto"}),
            Kind::Compact { phase: CompactPhase::Pre, trigger: text("auto") },
        ),
        ("stop", json!({"status": "completed", "loop_count": 0}), stop_without_message()),
        (
            "stop",
            json!({"status": "aborted", "loop_count": 0}),
            Kind::WaitingForInput {
                tool: None,
                reason: WaitReason::Other,
                message: text("turn aborted"),
            },
        ),
        (
            "stop",
            json!({"status": "error", "loop_count": 0}),
            Kind::StopFailure { error: FailureKind::Other, detail: None },
        ),
        (
            "sessionEnd",
            json!({"session_id": "cu-1", "reason": "window_close", "duration_ms": 9, "final_status": "completed"}),
            Kind::SessionEnd { reason: text("window_close") },
        ),
    ];
    for (native, extra, expected) in cases {
        let event = map("cursor", Some(native), cursor(native, extra));
        assert_eq!(event.kind, expected, "{native}");
        assert_eq!(event.session_id.as_deref(), Some("cu-1"), "{native}");
        assert_eq!(event.turn_id.as_deref(), Some("gen-3"), "{native}");
    }
    let profile = shipped().get("cursor").unwrap();
    assert!(!profile.is_input_ready(KindName::WaitingForInput));
    assert!(!profile.is_input_ready(KindName::StopFailure));
}

#[test]
fn a_cursor_stop_with_an_unknown_status_is_never_guessed_idle() {
    let event = map("cursor", Some("stop"), cursor("stop", json!({"status": "paused"})));
    assert!(no_rule(&event.kind), "{:?}", event.kind);
}

#[test]
fn a_cursor_payload_arriving_with_cli_claude_resolves_to_the_cursor_profile() {
    // cursor-agent running a SessionStart hook registered for Claude (herdr#2832): camelCase
    // event name, Cursor's fields, `cursor_version`.
    let payload = cursor(
        "sessionStart",
        json!({"session_id": "cu-1", "is_background_agent": false, "cwd": ""}),
    );
    let event = map("claude", native_of(&payload).as_deref(), payload);
    assert_eq!(event.cli, "cursor");
    assert_eq!(event.kind, Kind::SessionStart { source: None });
    assert_eq!(event.session_id.as_deref(), Some("cu-1"));
    assert!(event.rule.starts_with("cursor.toml#map["), "{}", event.rule);

    let payload = cursor("stop", json!({"status": "completed", "loop_count": 0}));
    let event = map("claude", Some("stop"), payload);
    assert_eq!((event.cli.as_str(), event.kind.name()), ("cursor", "stop"));
}
