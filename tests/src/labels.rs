//! How the scenarios' tables and reports write canonical events and session states.

use hookline::canonical::{Event, Kind};
use hookline::state::View;

/// A canonical event as the Claude Code scenarios' tables write it: the kind, then its main
/// fields in parentheses — `session_start(startup)`, `tool_end(Bash, ok)`,
/// `compact(pre, manual)`, `waiting_for_input(permission)`, `subagent_stop("")` (an empty text
/// field is quoted).
pub fn canonical_label(event: &Event) -> String {
    let text = |t: &Option<String>| {
        t.as_ref().map(|t| if t.is_empty() { "\"\"".into() } else { t.clone() })
    };
    let fields: Vec<String> = match &event.kind {
        Kind::SessionStart { source } => text(source).into_iter().collect(),
        Kind::SessionEnd { reason } => text(reason).into_iter().collect(),
        Kind::TurnStart | Kind::IdlePrompt | Kind::Todo => Vec::new(),
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

/// A session's state as the Claude Code scenarios' tables write it: `none` when the tracker has no
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

/// A canonical event as the Codex and Gemini scenarios' tables write it: its kind, with only
/// the detail that tells cases apart (the wait reason, the compaction phase, the notification
/// type, a failed tool end): `tool_start`, `waiting_for_input(permission)`, `tool_end(failed)`.
pub fn kind_label(event: &Event) -> String {
    let detail = match &event.kind {
        Kind::WaitingForInput { reason, .. } => Some(reason.as_str().to_owned()),
        Kind::Compact { phase, .. } => Some(phase.as_str().to_owned()),
        Kind::Notification { notification_type, .. } => notification_type.clone(),
        Kind::ToolEnd { ok: false, .. } => Some("failed".to_owned()),
        _ => None,
    };
    with_fields(event.kind.name(), &Vec::from_iter(detail))
}

/// Whether a state expectation (`idle`, or `waiting_on_human(permission)`) holds for the
/// [`state_label`] `label`: without a detail, only the state is compared. `a|b` holds when
/// either does (a CLI that fires two hooks at once, in either order).
pub fn state_matches(expected: &str, label: &str) -> bool {
    expected.split('|').any(|one| {
        if one.contains('(') { one == label } else { label.split('(').next() == Some(one) }
    })
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
        for (json, label) in [
            (r#""kind":"tool_end","tool":"Bash","ok":true"#, "tool_end"),
            (r#""kind":"tool_end","ok":false"#, "tool_end(failed)"),
            (r#""kind":"compact","phase":"post","trigger":"manual""#, "compact(post)"),
            (
                r#""kind":"waiting_for_input","reason":"permission","tool":"Bash""#,
                "waiting_for_input(permission)",
            ),
        ] {
            assert_eq!(kind_label(&event(json)), label, "{json}");
        }
    }

    #[test]
    fn a_state_without_detail_matches_any_detail() {
        assert!(state_matches("waiting_on_human", "waiting_on_human(permission)"));
        assert!(state_matches("waiting_on_human(permission)", "waiting_on_human(permission)"));
        assert!(!state_matches("waiting_on_human(other)", "waiting_on_human(permission)"));
        assert!(!state_matches("idle", "ended(other)"));
        assert!(state_matches("none", "none"));
        assert!(state_matches("idle|env_fault(other)", "env_fault(other)"));
        assert!(state_matches("idle|env_fault(other)", "idle"));
        assert!(!state_matches("idle|env_fault(other)", "env_fault(server)"));
    }
}
