//! Producer, not registration: an event is mapped by the CLI that produced it. The three
//! profiles written from documentation (Grok Build, Kimi Code, Antigravity CLI) against
//! payloads built from that documentation, and the documented payloads of Grok Build, Cursor
//! and Claude Code through each other's registrations (`watcher/tests/fixtures/*/docs-*/`,
//! whose READMEs say what each was built from; Claude's are real captures).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use super::*;
use crate::canonical::{BackgroundTask, Cron};
use crate::profile::{Seen, Unresolved};

const GROK: &str = "grok/docs-1.0.6";
const KIMI: &str = "kimi/docs-0.38.0";
const AGY: &str = "antigravity/docs-1.1";
const CURSOR: &str = "cursor/docs-2.5";
const CLAUDE: &str = "claude-code/2.1.332";

/// The Grok session of the fixtures, and the session of the subagent it starts.
const GROK_SESSION: &str = "0199c3a2-7d4e-7b21-9c55-2f1e8a6b4d10";
const GROK_CHILD: &str = "0199c3a2-90aa-7c01-8f3e-1d2c3b4a5e60";

fn shipped() -> &'static Profiles {
    static PROFILES: OnceLock<Profiles> = OnceLock::new();
    PROFILES.get_or_init(|| Profiles::shipped().unwrap())
}

fn read(dir: &str, file: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join(dir).join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The event name the relay records for a payload: its `hook_event_name` or `hookEventName`;
/// Antigravity's carry none, and the relay is told it: the file name's first word.
fn native_of(file: &str, payload: &Value) -> String {
    ["hook_event_name", "hookEventName"]
        .iter()
        .find_map(|k| payload.get(*k)?.as_str())
        .unwrap_or_else(|| file.trim_end_matches(".json").split('-').next().unwrap())
        .to_owned()
}

/// A fixture as the relay registered for `cli` records it.
fn map_as(cli: &str, dir: &str, file: &str) -> Event {
    let payload = read(dir, file);
    let native = native_of(file, &payload);
    map_envelope(shipped(), &envelope(cli, Some(&native), payload), source())
}

/// The `.json` files of a fixture directory, so that none added later goes untested.
fn json_files(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(fixtures().join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

/// Checks each `(file, kind)` of a directory mapped under each registration in `clis`, and
/// that the table covers every fixture of it.
fn check_dir(dir: &str, profile: &str, clis: &[&str], cases: &[(&str, Kind)]) {
    let covered: BTreeSet<String> = cases.iter().map(|(f, _)| (*f).to_owned()).collect();
    assert_eq!(covered, json_files(dir), "{dir}: every fixture has an expected kind");
    for cli in clis {
        for (file, kind) in cases {
            let event = map_as(cli, dir, file);
            assert_eq!(event.cli, profile, "{dir}/{file} recorded for {cli}");
            assert_eq!(&event.kind, kind, "{dir}/{file} recorded for {cli} ({})", event.rule);
            assert!(event.rule.starts_with(&format!("{profile}.toml#map[")), "{}", event.rule);
        }
    }
}

fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

fn waiting(reason: WaitReason, message: Option<&str>) -> Kind {
    Kind::WaitingForInput { reason, tool: None, message: message.map(str::to_owned) }
}

fn note(kind: &str, message: Option<&str>) -> Kind {
    Kind::Notification { notification_type: text(kind), message: message.map(str::to_owned) }
}

fn bare_stop() -> Kind {
    Kind::Stop {
        last_message: None,
        pending_tasks: 0,
        scheduled_wakes: 0,
        tasks: Vec::new(),
        crons: Vec::new(),
    }
}

#[test]
fn grok_payloads_map_by_their_documented_shapes_through_every_registration_grok_runs() {
    let tool = |name: &str, ok: bool| Kind::ToolEnd { tool: text(name), ok };
    let cases = [
        ("session_start.json", Kind::SessionStart { source: text("startup") }),
        ("user_prompt_submit.json", Kind::TurnStart),
        ("pre_tool_use.json", Kind::ToolStart { tool: text("run_terminal_command") }),
        ("pre_tool_use-subagent.json", Kind::ToolStart { tool: text("grep") }),
        ("post_tool_use.json", tool("run_terminal_command", true)),
        ("post_tool_use_failure.json", tool("read_file", false)),
        ("permission_denied.json", tool("run_terminal_command", false)),
        (
            "notification-permission_prompt.json",
            waiting(WaitReason::Permission, Some("Run command: rm -rf build")),
        ),
        ("notification-idle_prompt.json", Kind::IdlePrompt),
        (
            "notification-task_complete.json",
            note("task_complete", Some("Background task finished")),
        ),
        (
            "stop.json",
            Kind::Stop {
                last_message: text("All 12 tests pass."),
                pending_tasks: 1,
                scheduled_wakes: 1,
                tasks: vec![BackgroundTask {
                    id: text("bg-1"),
                    task_type: text("shell"),
                    status: text("running"),
                    command: text("npm run watch"),
                    ..BackgroundTask::default()
                }],
                crons: vec![Cron {
                    id: text("cron-1"),
                    schedule: text("every 5 minutes"),
                    recurring: Some(true),
                    prompt: text("check the build"),
                }],
            },
        ),
        ("stop-shutdown.json", Kind::SessionEnd { reason: text("shutdown") }),
        (
            "stop_failure.json",
            Kind::StopFailure {
                error: FailureKind::RateLimit,
                detail: text("429 Too Many Requests"),
            },
        ),
        (
            "stop_failure-max_output_tokens.json",
            Kind::StopFailure {
                error: FailureKind::Other,
                detail: text("the response hit the output token limit"),
            },
        ),
        (
            "stop_cancelled-user_interrupt.json",
            waiting(WaitReason::Interrupted, Some("user_interrupt")),
        ),
        (
            "stop_cancelled-permission_rejected.json",
            waiting(WaitReason::Interrupted, Some("permission_rejected")),
        ),
        ("stop_cancelled-max_turns.json", waiting(WaitReason::Other, Some("max_turns"))),
        ("subagent_start.json", Kind::SubagentStart { agent_type: text("explore") }),
        ("subagent_stop.json", Kind::SubagentStop { agent_type: text("explore") }),
        ("pre_compact.json", Kind::Compact { phase: CompactPhase::Pre, trigger: text("auto") }),
        ("post_compact.json", Kind::Compact { phase: CompactPhase::Post, trigger: text("auto") }),
        ("session_end.json", Kind::SessionEnd { reason: text("exit") }),
    ];
    // Grok runs its own hooks and, with its own payloads, those of Claude's and Cursor's
    // settings files.
    check_dir(GROK, "grok", &["grok", "claude", "cursor"], &cases);
}

#[test]
fn grok_identity_comes_from_its_camel_case_fields() {
    let event = map_as("claude", GROK, "pre_tool_use.json");
    assert_eq!(event.session_id.as_deref(), Some(GROK_SESSION));
    assert_eq!(event.turn_id.as_deref(), Some("prm-2"));
    assert_eq!(event.cwd.as_deref(), Some("/home/dev/proj"));
    assert!(event.input_digest.is_some(), "toolInput is digested");
    assert!(!event.is_subagent());
    // A subagent's events come in its own session and never change a state.
    let child = map_as("claude", GROK, "pre_tool_use-subagent.json");
    assert_eq!(child.session_id.as_deref(), Some(GROK_CHILD));
    assert!(child.is_subagent());
    // The observe-only Stop at session end is no turn end: never input-ready.
    let profile = shipped().get("grok").unwrap();
    assert!(!profile.is_input_ready(map_as("grok", GROK, "stop-shutdown.json").kind.kind_name()));
}

#[test]
fn a_grok_stop_or_cancel_of_a_reason_it_may_add_later_is_never_guessed() {
    let mut payload = read(GROK, "stop.json");
    payload["reason"] = json!("paused");
    let event = map_envelope(shipped(), &envelope("claude", Some("stop"), payload), source());
    assert!(matches!(event.kind, Kind::Unknown { .. }), "{:?}", event.kind);
    let mut payload = read(GROK, "stop_cancelled-max_turns.json");
    payload["reason"] = json!("unknown");
    let event =
        map_envelope(shipped(), &envelope("grok", Some("stop_cancelled"), payload), source());
    assert!(matches!(event.kind, Kind::Unknown { .. }), "{:?}", event.kind);
}

#[test]
fn kimi_payloads_map_by_their_documented_shapes() {
    let cases = [
        ("SessionStart.json", Kind::SessionStart { source: text("startup") }),
        ("UserPromptSubmit.json", Kind::TurnStart),
        ("TurnStarted-user.json", note("turn_started", None)),
        ("TurnStarted-task.json", Kind::TurnStart),
        ("UserPromptQueued.json", note("prompt_queued", Some("also check the signup page"))),
        ("PreToolUse.json", Kind::ToolStart { tool: text("Bash") }),
        (
            "PreToolUse-AskUserQuestion.json",
            Kind::WaitingForInput {
                reason: WaitReason::Question,
                tool: text("AskUserQuestion"),
                message: None,
            },
        ),
        (
            "PreToolUse-AskUserQuestion-background.json",
            Kind::ToolStart { tool: text("AskUserQuestion") },
        ),
        ("PermissionRequest.json", Kind::PermissionRequest { tool: text("Bash") }),
        ("PermissionResult-approved.json", note("permission_replied", Some("approved"))),
        ("PermissionResult-rejected.json", Kind::ToolEnd { tool: text("Bash"), ok: false }),
        (
            "PermissionResult-cancelled.json",
            Kind::WaitingForInput {
                reason: WaitReason::Interrupted,
                tool: text("Bash"),
                message: None,
            },
        ),
        ("PostToolUse.json", Kind::ToolEnd { tool: text("Bash"), ok: true }),
        ("PostToolUseFailure.json", Kind::ToolEnd { tool: text("Bash"), ok: false }),
        ("Stop.json", bare_stop()),
        (
            "StopFailure.json",
            Kind::StopFailure {
                error: FailureKind::Other,
                detail: text("429 rate limit exceeded"),
            },
        ),
        ("Interrupt.json", waiting(WaitReason::Interrupted, None)),
        ("SessionHeartbeat.json", note("heartbeat", None)),
        ("SessionEnd.json", Kind::SessionEnd { reason: text("exit") }),
        ("SubagentStart.json", Kind::SubagentStart { agent_type: text("explore") }),
        ("SubagentStop.json", Kind::SubagentStop { agent_type: text("explore") }),
        ("PreCompact.json", Kind::Compact { phase: CompactPhase::Pre, trigger: text("auto") }),
        ("PostCompact.json", Kind::Compact { phase: CompactPhase::Post, trigger: text("auto") }),
        ("Notification.json", note("task.completed", None)),
        ("TaskStarted.json", note("task_started", Some("npm run build"))),
    ];
    check_dir(KIMI, "kimi", &["kimi"], &cases);
    let event = map_as("kimi", KIMI, "PreToolUse.json");
    assert_eq!(event.session_id.as_deref(), Some("session_abc"));
    assert_eq!(event.cwd.as_deref(), Some("/path/to/project"));
    // Its payloads are Claude-shaped (snake_case, `session_id`): `client_type` tells them.
    assert_eq!(map_as("claude", KIMI, "Stop.json").cli, "kimi");
}

#[test]
fn antigravity_payloads_map_by_their_documented_shapes() {
    let cases = [
        ("PreInvocation.json", Kind::TurnStart),
        ("PreInvocation-later.json", Kind::TurnStart),
        ("PostInvocation.json", note("invocation_done", None)),
        ("PreToolUse.json", Kind::ToolStart { tool: text("run_command") }),
        ("PostToolUse.json", Kind::ToolEnd { tool: None, ok: true }),
        ("PostToolUse-error.json", Kind::ToolEnd { tool: None, ok: false }),
        ("Stop.json", bare_stop()),
        ("Stop-model_stop.json", bare_stop()),
        (
            "Stop-background.json",
            Kind::Stop {
                last_message: None,
                pending_tasks: 1,
                scheduled_wakes: 0,
                tasks: Vec::new(),
                crons: Vec::new(),
            },
        ),
        (
            "Stop-error.json",
            Kind::StopFailure {
                error: FailureKind::Other,
                detail: text("RESOURCE_EXHAUSTED: quota exceeded"),
            },
        ),
        ("Stop-cancelled.json", waiting(WaitReason::Other, Some("CANCELLED"))),
    ];
    // agy shares ~/.gemini with Gemini CLI: its payloads are told apart from Gemini's too.
    check_dir(AGY, "antigravity", &["antigravity", "gemini"], &cases);
    let event = map_as("antigravity", AGY, "PreToolUse.json");
    assert_eq!(event.session_id.as_deref(), Some("ec33ebf9-0cba-4100-8142-c61503f6c587"));
    assert_eq!(event.cwd.as_deref(), Some("/home/dev/proj"));
    assert!(event.transcript_path.as_deref().is_some_and(|p| p.ends_with("transcript_full.jsonl")));
}

#[test]
fn cursor_payloads_reach_cursors_profile_through_claudes_registration() {
    for cli in ["cursor", "claude"] {
        for file in json_files(CURSOR) {
            let event = map_as(cli, CURSOR, &file);
            assert_eq!(event.cli, "cursor", "{file} recorded for {cli}");
            assert!(event.rule.starts_with("cursor.toml#map["), "{file}: {}", event.rule);
        }
        let stop = map_as(cli, CURSOR, "stop.json");
        assert_eq!(stop.kind, bare_stop());
        assert_eq!(stop.session_id.as_deref(), Some("668320d2-2fd8-4888-b33c-2a466fec86e7"));
        let tool = map_as(cli, CURSOR, "preToolUse.json");
        assert_eq!(tool.kind, Kind::ToolStart { tool: text("Shell") });
    }
}

#[test]
fn claude_payloads_stay_claudes() {
    let mut seen = 0;
    for file in json_files(CLAUDE) {
        let payload = read(CLAUDE, &file);
        if payload.get("hook_event_name").is_none() {
            continue; // a hook's answer or a headless stream line, not a hook payload
        }
        let event = map_as("claude", CLAUDE, &file);
        assert_eq!(event.cli, "claude", "{file}");
        // Mapped by one of Claude's rules, or by none of them (an event it has no rule for).
        let claudes = event.rule.starts_with("claude.toml#map[") || event.rule == "claude:none";
        assert!(claudes, "{file}: {}", event.rule);
        seen += 1;
    }
    assert!(seen > 40, "{seen} Claude payloads");
}

/// Every documented payload of every producer, under the registration of every profile:
/// it is its producer's, or the registration's (a CLI whose payloads carry no marks, seen
/// through a registration it never runs), or `unknown` — never a third CLI's; and under its
/// own registration, always its own.
#[test]
fn no_payload_is_ever_read_as_a_third_clis() {
    let producers = [
        (GROK, "grok"),
        (KIMI, "kimi"),
        (AGY, "antigravity"),
        (CURSOR, "cursor"),
        (CLAUDE, "claude"),
        ("codex/0.171.0", "codex"),
        ("gemini/0.61.0", "gemini"),
    ];
    let profiles: Vec<&str> = shipped().iter().map(|p| p.name.as_str()).collect();
    for (dir, producer) in producers {
        for file in json_files(dir) {
            let payload = read(dir, &file);
            if !payload.is_object() || payload.get("hookSpecificOutput").is_some() {
                continue; // a hook's answer, not a payload
            }
            let whole = Seen::Whole { left_out: &[] };
            let own = shipped().resolve(producer, &payload, whole);
            assert_eq!(own.map(|p| p.name.as_str()), Ok(producer), "{dir}/{file}");
            for cli in &profiles {
                match shipped().resolve(cli, &payload, whole) {
                    Ok(p) => assert!(
                        p.name == producer || p.name == *cli,
                        "{dir}/{file} recorded for {cli} is read as {}'s",
                        p.name
                    ),
                    Err(Unresolved::Ambiguous { claimants, .. }) => {
                        panic!("{dir}/{file} recorded for {cli} is claimed by {claimants:?}")
                    }
                    Err(_) => {}
                }
            }
        }
    }
}

#[test]
fn a_payload_no_profile_recognises_is_unknown_with_the_reason_never_claudes() {
    // A CLI hookline does not know, running Claude's hooks with a payload of its own: the
    // event name is one Claude's rules map, but the payload is not Claude's.
    let payload = json!({"hook_event_name": "Stop", "sessionId": "x-1", "stop_hook_active": false});
    let event = map_envelope(shipped(), &envelope("claude", Some("Stop"), payload), source());
    let Kind::Unknown { reason: Some(reason) } = &event.kind else { panic!("{:?}", event.kind) };
    assert!(reason.contains("\"session_id\"") && reason.contains("Claude Code"), "{reason}");
    assert_eq!(event.rule, "none");
    assert_eq!(event.cli, "claude", "recorded for the registration it came through");
    assert_eq!(event.session_id.as_deref(), Some("x-1"), "its session is still found");
    // Through Gemini's registration (Antigravity shares ~/.gemini), likewise.
    let payload = json!({"hook_event_name": "AfterAgent", "conversation": "c"});
    let event = map_envelope(shipped(), &envelope("gemini", Some("AfterAgent"), payload), source());
    assert!(
        matches!(&event.kind, Kind::Unknown { reason: Some(r) } if r.contains("Gemini CLI")),
        "{:?}",
        event.kind
    );
}

#[test]
fn a_payload_with_the_marks_of_two_clis_is_unknown_and_names_them() {
    let payload = json!({"hookEventName": "stop", "sessionId": "s", "workspaceRoot": "/w",
                         "cursor_version": "2.5.0", "reason": "end_turn"});
    let event = map_envelope(shipped(), &envelope("claude", Some("stop"), payload), source());
    let Kind::Unknown { reason: Some(reason) } = &event.kind else { panic!("{:?}", event.kind) };
    assert!(reason.contains("cursor and grok"), "{reason}");
    // Under one of the two registrations, the payload is that CLI's.
    let payload = json!({"hook_event_name": "stop", "status": "completed", "conversation_id": "c",
                         "cursor_version": "2.5.0", "workspaceRoot": "/w", "hookEventName": "stop"});
    assert_eq!(
        map_envelope(shipped(), &envelope("cursor", Some("stop"), payload), source()).cli,
        "cursor"
    );
}

#[test]
fn a_member_the_relay_left_out_does_not_make_a_payload_foreign() {
    let mut env = envelope("claude", Some("PostToolUse"), json!({"tool_name": "Bash"}));
    env.dropped = vec!["session_id".into()];
    let event = map_envelope(shipped(), &env, source());
    assert_eq!(event.kind, Kind::ToolEnd { tool: text("Bash"), ok: true });
}

#[test]
fn an_unreadable_payload_is_told_by_the_marks_salvaged_from_its_bytes() {
    let cut = |cli: &str, event: &str, raw: &str| {
        let mut env = envelope(cli, Some(event), json!(null));
        env.payload = None;
        env.truncated = true;
        env.error = Some("input is longer than the cap".into());
        env.raw = Some(raw.into());
        map_envelope(shipped(), &env, source())
    };
    // A huge Grok PostToolUse through Claude's registration still ends its tool, by Grok's
    // rules: `workspaceRoot` comes before the bulk.
    let raw = format!(
        r#"{{"hookEventName":"post_tool_use","sessionId":"{GROK_SESSION}","cwd":"/w","workspaceRoot":"/w","toolResult":"{}"#,
        "x".repeat(64)
    );
    let event = cut("claude", "post_tool_use", &raw);
    assert_eq!(event.cli, "grok");
    assert_eq!(event.kind, Kind::ToolEnd { tool: None, ok: true });
    assert_eq!(event.session_id.as_deref(), Some(GROK_SESSION));
    // Claude's own stays Claude's: a missing key proves nothing in a cut payload.
    let event = cut("claude", "PostToolUse", r#"{"hook_event_name":"PostToolUse","tool_resp"#);
    assert_eq!(event.cli, "claude");
    assert_eq!(event.kind, Kind::ToolEnd { tool: None, ok: true });
    // A mark only mentioned inside a string is no key.
    let raw = r#"{"session_id":"s","hookEventName":"x","x":"\"workspaceRoot\": \"/w\", and"#;
    let event = cut("claude", "PostToolUse", raw);
    assert_eq!(event.cli, "claude");
}

#[test]
fn the_host_fields_the_registration_read_are_not_another_producers() {
    let mut env = envelope("claude", Some("stop"), read(GROK, "stop.json"));
    env.host_session_id = Some("claude-parent".into());
    let event = map_envelope(shipped(), &env, source());
    assert_eq!(event.cli, "grok");
    assert_eq!(event.host_pid, None, "CLAUDE_PID, inherited from an ancestor Claude");
    assert_eq!(event.session_id.as_deref(), Some(GROK_SESSION));
    let env = envelope("claude", Some("Stop"), read(CLAUDE, "Stop.json"));
    assert_eq!(map_envelope(shipped(), &env, source()).host_pid, Some(42));
}

#[test]
fn a_codex_permission_request_reads_as_waiting_the_payload_cannot_tell_an_auto_review() {
    // Codex's current PermissionRequest input (codex-rs/hooks permission_request.rs): nothing
    // in it says whether the approval goes to the human or to the automatic reviewer.
    let payload = json!({
        "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/w",
        "hook_event_name": "PermissionRequest", "model": "gpt-5.5", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": "echo hi > /tmp/x", "description": "d"},
        "permission_suggestions": [{"type": "addRules", "rules": [{"type": "prefixRule",
            "command": ["echo"]}], "behavior": "allow", "destination": "session"}]
    });
    let event =
        map_envelope(shipped(), &envelope("codex", Some("PermissionRequest"), payload), source());
    assert_eq!(event.kind, Kind::PermissionRequest { tool: text("Bash") });
    let codex = shipped().get("codex").unwrap();
    let hole = codex.holes.iter().find(|h| h.id == "auto-review").expect("the hole is named");
    assert_eq!(hole.state, Some(crate::vocab::StateKind::WaitingOnHuman));
}
