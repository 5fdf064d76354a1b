use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::canonical::{
    BackgroundTask, CompactPhase, Cron, FailureKind, TodoChange, TodoEntry, WaitReason,
};

mod cli;
mod producers;
mod qwen_droid;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn envelope(cli: &str, event: Option<&str>, payload: Value) -> RawEnvelope {
    RawEnvelope {
        seq: 1,
        ts_ns: 5,
        tag: Some("task-7".into()),
        pid: 1,
        ppid: 1,
        host_pid: Some(42),
        relay_version: "0.1.0".into(),
        ..RawEnvelope::built(cli, event.map(str::to_owned), &payload)
    }
}

fn source() -> SourceRef {
    SourceRef { dir: "/e".into(), seq: 1, file: "f.json".into(), legacy: false }
}

fn map_fixture(cli: &str, dir: &str, file: &str) -> Event {
    let text = std::fs::read_to_string(fixtures().join(dir).join(file)).unwrap();
    let payload: Value = serde_json::from_str(&text).unwrap();
    let native = payload["hook_event_name"].as_str().map(str::to_owned);
    map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope(cli, native.as_deref(), payload),
        source(),
    )
}

#[test]
fn every_claude_fixture_maps_to_its_canonical_kind() {
    let cases: &[(&str, Kind)] = &[
        ("SessionStart-startup.json", Kind::SessionStart { source: Some("startup".into()) }),
        ("SessionStart-compact.json", Kind::SessionStart { source: Some("compact".into()) }),
        (
            "SessionStart-startup-headless.json",
            Kind::SessionStart { source: Some("startup".into()) },
        ),
        ("UserPromptSubmit.json", Kind::TurnStart),
        ("PreToolUse.json", Kind::ToolStart { tool: Some("Bash".into()) }),
        ("PermissionRequest.json", Kind::PermissionRequest { tool: Some("Bash".into()) }),
        ("PermissionRequest-headless.json", Kind::PermissionRequest { tool: Some("Bash".into()) }),
        ("PostToolUse.json", Kind::ToolEnd { tool: Some("Bash".into()), ok: true }),
        ("PostToolUseFailure.json", Kind::ToolEnd { tool: Some("Bash".into()), ok: false }),
        (
            "Notification-permission_prompt.json",
            Kind::WaitingForInput {
                reason: WaitReason::Permission,
                tool: None,
                message: Some("Claude needs your permission".into()),
            },
        ),
        ("Notification-idle_prompt.json", Kind::IdlePrompt),
        (
            "Stop.json",
            Kind::Stop {
                last_message: Some("done".into()),
                pending_tasks: 0,
                scheduled_wakes: 0,
                tasks: Vec::new(),
                crons: Vec::new(),
            },
        ),
        (
            "PreCompact.json",
            Kind::Compact { phase: CompactPhase::Pre, trigger: Some("manual".into()) },
        ),
        (
            "PostCompact.json",
            Kind::Compact { phase: CompactPhase::Post, trigger: Some("manual".into()) },
        ),
        (
            "SessionEnd-prompt_input_exit.json",
            Kind::SessionEnd { reason: Some("prompt_input_exit".into()) },
        ),
        ("SessionEnd-other.json", Kind::SessionEnd { reason: Some("other".into()) }),
    ];
    for (file, expected) in cases {
        let event = map_fixture("claude", "claude-code/2.1.332", file);
        assert_eq!(&event.kind, expected, "{file}");
        assert!(event.session_id.is_some(), "{file}");
        assert_eq!(event.cli, "claude");
        assert!(event.rule.starts_with("claude.toml#map["), "{file}: {}", event.rule);
        assert_eq!(event.agent_id, None, "{file}");
    }
}

#[test]
fn subagent_events_carry_their_agent_id() {
    for file in ["SubagentStart.json", "SubagentStop.json", "SubagentStop-compact.json"] {
        let event = map_fixture("claude", "claude-code/2.1.332", file);
        assert!(event.agent_id.is_some(), "{file}");
        assert!(
            matches!(event.kind, Kind::SubagentStart { .. } | Kind::SubagentStop { .. }),
            "{file}"
        );
    }
}

#[test]
fn events_no_rule_maps_are_surfaced_as_unknown() {
    for file in ["MessageDisplay.json", "PostToolBatch.json"] {
        let event = map_fixture("claude", "claude-code/2.1.332", file);
        let Kind::Unknown { reason } = &event.kind else { panic!("{file}: {:?}", event.kind) };
        assert!(reason.as_deref().unwrap().contains("no rule"), "{reason:?}");
        assert_eq!(event.native.as_deref(), Some(file.trim_end_matches(".json")));
    }
}

#[test]
fn identity_comes_from_the_payload_and_the_envelope() {
    let event = map_fixture("claude", "claude-code/2.1.332", "PreToolUse.json");
    assert_eq!(event.session_id.as_deref(), Some("75a87ff6-e914-427f-a8ca-ad0fcf16e284"));
    assert_eq!(event.turn_id.as_deref(), Some("df67ceba-fc35-45ae-863b-d805d5650daa"));
    assert_eq!(event.cwd.as_deref(), Some("/home/dev/work/proj"));
    assert!(event.transcript_path.unwrap().ends_with(".jsonl"));
    assert_eq!(event.tag.as_deref(), Some("task-7"));
    assert_eq!(event.host_pid, Some(42));
    assert_eq!(event.ts_ns, 5);
}

#[test]
fn stop_counts_running_background_tasks_and_scheduled_wakes() {
    let payload = json!({
        "session_id": "s", "hook_event_name": "Stop", "last_assistant_message": "waiting on build",
        "background_tasks": [{"id": "1", "status": "running"}, {"id": "2", "status": "completed"}, {"id": "3"}],
        "session_crons": [{"id": "c", "schedule": "*/5 * * * *"}]
    });
    let event = map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope("claude", Some("Stop"), payload),
        source(),
    );
    assert_eq!(
        event.kind,
        Kind::Stop {
            last_message: Some("waiting on build".into()),
            pending_tasks: 2,
            scheduled_wakes: 1,
            tasks: vec![
                BackgroundTask {
                    id: Some("1".into()),
                    status: Some("running".into()),
                    ..Default::default()
                },
                BackgroundTask {
                    id: Some("2".into()),
                    status: Some("completed".into()),
                    ..Default::default()
                },
                BackgroundTask { id: Some("3".into()), ..Default::default() },
            ],
            crons: vec![Cron {
                id: Some("c".into()),
                schedule: Some("*/5 * * * *".into()),
                ..Default::default()
            }],
        }
    );
}

#[test]
fn stop_failure_classes_errors_and_keeps_unknown_ones_as_other() {
    let profiles = Profiles::shipped().unwrap();
    for (error, class) in [
        ("rate_limit", FailureKind::RateLimit),
        ("billing_error", FailureKind::Billing),
        ("authentication_failed", FailureKind::Auth),
        ("overloaded", FailureKind::Overloaded),
        ("server_error", FailureKind::Server),
        ("max_output_tokens", FailureKind::Other),
    ] {
        let payload =
            json!({"session_id": "s", "error": error, "last_assistant_message": "API Error"});
        let event =
            map_envelope(&profiles, &envelope("claude", Some("StopFailure"), payload), source());
        assert_eq!(
            event.kind,
            Kind::StopFailure { error: class, detail: Some("API Error".into()) },
            "{error}"
        );
    }
}

#[test]
fn a_question_tool_means_waiting_for_a_human() {
    let payload = json!({"session_id": "s", "tool_name": "AskUserQuestion"});
    let event = map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope("claude", Some("PreToolUse"), payload),
        source(),
    );
    assert_eq!(
        event.kind,
        Kind::WaitingForInput {
            reason: WaitReason::Question,
            tool: Some("AskUserQuestion".into()),
            message: None
        }
    );
}

#[test]
fn an_unreadable_payload_is_mapped_by_its_event_name_alone() {
    let mut env = envelope("claude", Some("PostToolUse"), json!(null));
    env.payload = None;
    env.truncated = true;
    env.error = Some("input is longer than the cap".into());
    env.raw =
        Some(r#"{"session_id":"abc-1","hook_event_name":"PostToolUse","tool_response":"xx"#.into());
    let event = map_envelope(&Profiles::shipped().unwrap(), &env, source());
    assert_eq!(event.kind, Kind::ToolEnd { tool: None, ok: true });
    assert_eq!(event.session_id.as_deref(), Some("abc-1"), "salvaged from the raw text");
}

#[test]
fn missing_profile_or_event_name_give_unknown_with_the_reason() {
    let profiles = Profiles::shipped().unwrap();
    let event = map_envelope(&profiles, &envelope("aider", Some("Stop"), json!({})), source());
    assert_eq!(event.kind, Kind::Unknown { reason: Some("no profile named \"aider\"".into()) });
    let mut env = envelope("claude", None, json!(null));
    env.payload = None;
    env.error = Some("empty input".into());
    let event = map_envelope(&profiles, &env, source());
    assert_eq!(event.kind, Kind::Unknown { reason: Some("no event name: empty input".into()) });
}

#[test]
fn long_texts_keep_their_head_and_their_tail() {
    let payload = json!({"session_id": "s", "last_assistant_message": "é".repeat(5000)});
    let event = map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope("claude", Some("Stop"), payload),
        source(),
    );
    let Kind::Stop { last_message: Some(text), .. } = event.kind else { panic!() };
    assert!(text.len() <= MAX_TEXT, "{}", text.len());
    let (head, tail) = text.split_once(CUT).unwrap();
    assert!(head.chars().all(|c| c == 'é') && tail.chars().all(|c| c == 'é'));
    assert!(tail.len() > 3 * head.len(), "the tail is most of it: {} {}", head.len(), tail.len());

    // A summary longer than the cap: its end is kept, so what a decision reads of it is there.
    let summary = format!(
        "File number one was changed. {} All done: the parser is fixed and the tests pass.",
        "Then more work happened. ".repeat(200)
    );
    let payload = json!({"session_id": "s", "last_assistant_message": summary});
    let event = map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope("claude", Some("Stop"), payload),
        source(),
    );
    let Kind::Stop { last_message: Some(text), .. } = event.kind else { panic!() };
    assert!(text.len() <= MAX_TEXT);
    assert!(text.starts_with("File number one was changed."), "{text}");
    assert!(text.ends_with("All done: the parser is fixed and the tests pass."), "{text}");
    assert!(after_cut(&text).ends_with("the tests pass.") && !after_cut(&text).contains(CUT));
    // A short text is kept whole.
    assert_eq!(cap_text("short", MAX_TEXT), None);
    assert_eq!(after_cut("short"), "short");
}

#[test]
fn task_hooks_and_task_tool_calls_carry_their_change_of_the_task_list() {
    let at = |file: &str| map_fixture("claude", "claude-code/2.1.332", file);
    let item = |id: &str, subject: Option<&str>, status: &str| TodoChange::Item {
        id: id.into(),
        subject: subject.map(Into::into),
        status: Some(status.into()),
    };
    let created = at("TaskCreated.json");
    assert_eq!(created.kind, Kind::Todo);
    assert_eq!(created.todo, Some(item("1", Some("First task"), "pending")));
    assert_eq!(at("TaskCompleted.json").todo, Some(item("1", Some("First task"), "completed")));
    let create = at("PostToolUse-TaskCreate.json");
    assert_eq!(create.kind, Kind::ToolEnd { tool: Some("TaskCreate".into()), ok: true });
    assert_eq!(create.todo, Some(item("1", Some("First task"), "pending")));
    let update = at("PostToolUse-TaskUpdate-in_progress.json");
    assert_eq!(update.kind, Kind::ToolEnd { tool: Some("TaskUpdate".into()), ok: true });
    assert_eq!(update.todo, Some(item("1", None, "in_progress")));
    // Before the tool ran nothing changes; other tools change nothing.
    assert_eq!(at("PreToolUse-TaskUpdate-completed.json").todo, None);
    assert_eq!(at("PostToolUse.json").todo, None);
    assert_eq!(at("Stop.json").todo, None);
}

#[test]
fn a_todowrite_call_carries_the_whole_list() {
    let payload = json!({
        "session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
        "tool_input": {"todos": [
            {"content": "Write the parser", "status": "completed", "activeForm": "Writing"},
            {"content": "Test it", "status": "in_progress", "activeForm": "Testing"},
            "not an item"
        ]}
    });
    let event = map_envelope(
        &Profiles::shipped().unwrap(),
        &envelope("claude", Some("PostToolUse"), payload),
        source(),
    );
    let entry = |subject: Option<&str>, status: Option<&str>| TodoEntry {
        id: None,
        subject: subject.map(Into::into),
        status: status.map(Into::into),
    };
    assert_eq!(
        event.todo,
        Some(TodoChange::List {
            items: vec![
                entry(Some("Write the parser"), Some("completed")),
                entry(Some("Test it"), Some("in_progress")),
                entry(None, None),
            ]
        })
    );
}

#[test]
fn a_tool_start_carries_a_digest_of_its_input_equal_for_identical_calls() {
    let first = map_fixture("claude", "claude-code/2.1.332", "PreToolUse.json");
    let again = map_fixture("claude", "claude-code/2.1.332", "PreToolUse.json");
    let other =
        map_fixture("claude", "claude-code/2.1.332", "PreToolUse-Bash-run_in_background.json");
    let digest = first.input_digest.clone().expect("a digest");
    assert_eq!(digest.len(), 16);
    assert_eq!(again.input_digest.as_deref(), Some(digest.as_str()));
    assert_ne!(other.input_digest.as_deref(), Some(digest.as_str()));
    // Only tool starts carry one.
    let end = map_fixture("claude", "claude-code/2.1.332", "PostToolUse.json");
    assert_eq!(end.input_digest, None);
}

#[test]
fn a_stop_lists_its_background_tasks_and_crons_item_by_item() {
    let event = map_fixture(
        "claude",
        "claude-code/2.1.332",
        "Stop-background_tasks-shell-and-monitor.json",
    );
    let Kind::Stop { pending_tasks, tasks, .. } = &event.kind else { panic!("{:?}", event.kind) };
    assert_eq!(*pending_tasks, 2);
    let kinds: Vec<(&str, &str)> =
        tasks.iter().map(|t| (t.id.as_deref().unwrap(), t.task_type.as_deref().unwrap())).collect();
    assert_eq!(kinds, [("br3mcsrxi", "shell"), ("b0q01kove", "monitor")]);
    assert_eq!(tasks[0].command.as_deref(), Some("python3 -m http.server 8765"));
    let event = map_fixture("claude", "claude-code/2.1.332", "Stop-session_crons.json");
    let Kind::Stop { scheduled_wakes, crons, .. } = &event.kind else { panic!() };
    assert_eq!(*scheduled_wakes, 2);
    let recurring: Vec<Option<bool>> = crons.iter().map(|c| c.recurring).collect();
    assert_eq!(recurring, [Some(true), Some(false)]);
}
