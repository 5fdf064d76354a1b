//! `hookline demo`, the README's first command: the real relay writes a scripted Claude Code
//! session and the demo shows each canonical event with the state beside it.

use std::process::{Command, Output};

use serde_json::Value;

fn demo(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hookline"))
        .arg("demo")
        .args(["--pace", "0"])
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("HOOKLINE_EVENTS_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    out
}

/// Native event, canonical event, and the state it leads to, step by step.
const STORY: &[(&str, &str, &str)] = &[
    ("SessionStart", "session_start source=startup", "unknown"),
    ("UserPromptSubmit", "turn_start", "active"),
    ("PreToolUse", "tool_start tool=Bash", "child_command (Bash)"),
    ("PermissionRequest", "permission_request tool=Bash", "waiting_on_human (permission)"),
    ("Notification", "waiting_for_input reason=permission", "waiting_on_human (permission)"),
    ("PostToolUse", "tool_end tool=Bash ok=true", "active"),
    ("Stop", "stop pending_tasks=0 scheduled_wakes=0", "idle, input slot available"),
    ("Notification", "idle_prompt", "idle, input slot available"),
    ("PreCompact", "compact phase=pre trigger=manual", "idle, input slot available"),
    ("SubagentStop", "subagent_stop agent_type=\"\" (subagent)", "idle, input slot available"),
    ("SessionStart", "session_start source=compact", "idle, input slot available"),
    ("PostCompact", "compact phase=post trigger=manual", "idle, input slot available"),
    ("SessionEnd", "session_end reason=prompt_input_exit", "ended (prompt_input_exit)"),
];

#[test]
fn demo_shows_each_canonical_event_with_the_state_beside_it() {
    let out = demo(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.trim_start().starts_with("seq")).unwrap();
    assert!(lines[header].ends_with("state"), "{}", lines[header]);
    for (seq, (line, (native, canonical, state))) in
        lines[header + 1..].iter().zip(STORY).enumerate()
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[0], (seq + 1).to_string(), "{line}");
        assert!(line.contains(&format!(" {native} ")), "{native} missing from {line:?}");
        assert!(line.contains(&format!(" {canonical} ")), "{canonical} missing from {line:?}");
        assert!(line.ends_with(&format!(" {state}")), "{state} missing from {line:?}");
    }
    assert!(text.contains(&format!("The relay wrote {} files", STORY.len())), "{text}");
    assert!(text.contains("\"relay_version\""), "the first event file is shown: {text}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn demo_json_pairs_each_event_with_its_state() {
    let out = demo(&["--json"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let states: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["event"]["native"].as_str().unwrap(), l["state"]["state"].as_str().unwrap()))
        .collect();
    let want: Vec<(&str, &str)> = STORY
        .iter()
        .map(|(native, _, state)| (*native, state.split([' ', ',']).next().unwrap()))
        .collect();
    assert_eq!(states, want);
    assert!(
        lines.iter().all(|l| l["event"]["cli"] == "claude" && l["state"]["tag"] == "demo-task-1")
    );
    // A live generation: the idle it shows could be handed out, once.
    let idle = lines.iter().find(|l| l["state"]["state"] == "idle").unwrap();
    assert_eq!(
        (&idle["state"]["authoritative"], &idle["state"]["input"]),
        (&true.into(), &"available".into())
    );
}
