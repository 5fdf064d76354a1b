//! Which hook events a Claude Code version knows, and the temporary registration of the relay.
//!
//! Claude Code shows a blocking "Settings Warning" dialog, and holds back `SessionStart` until
//! it is dismissed, when a settings file registers an event name it does not know (seen on both
//! 2.1.197 and 2.1.332; the dialog lists the valid names). So only the events a version knows
//! are registered: [`EVENTS`] says since when each exists, and the suite checks the table
//! against the dialog's list for every version it runs.

use std::fs;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::version::Version;

/// One Claude Code hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvent {
    /// The event name as settings and payloads spell it.
    pub name: &'static str,
    /// Whether the event filters on a matcher (otherwise a `matcher` key is ignored, so none is
    /// written).
    pub matcher: bool,
    /// The first version that knows it; `None` for events older than every version tested.
    pub since: Option<&'static str>,
    /// Whether hookline registers it. `WorktreeCreate`/`WorktreeRemove` replace Claude's own
    /// worktree handling (any non-zero exit fails the creation), so they are never registered.
    pub register: bool,
}

const fn event(name: &'static str, matcher: bool) -> HookEvent {
    HookEvent { name, matcher, since: None, register: true }
}

const fn since(mut event: HookEvent, version: &'static str) -> HookEvent {
    event.since = Some(version);
    event
}

/// Every event known to the versions tested, in the order Claude lists them.
///
/// `since` comes from the changelog where it gives one; `PreModelSwitch`, `PostModelSwitch` and
/// `PreSkillShellCommand` are absent from the 2.1.240 documentation and present in 2.1.332, so
/// their first version is not known exactly: 2.1.241 stands for "after 2.1.240". The
/// `settings_warning` test compares this table with what the CLI itself lists.
pub const EVENTS: &[HookEvent] = &[
    event("PreToolUse", true),
    event("PostToolUse", true),
    event("PostToolUseFailure", true),
    event("PostToolBatch", false),
    event("Notification", true),
    event("UserPromptSubmit", false),
    event("UserPromptExpansion", true),
    event("SessionStart", true),
    event("SessionEnd", true),
    event("Stop", false),
    event("StopFailure", true),
    event("SubagentStart", true),
    event("SubagentStop", true),
    event("PreCompact", true),
    event("PostCompact", true),
    since(event("PreModelSwitch", true), "2.1.241"),
    since(event("PostModelSwitch", true), "2.1.241"),
    event("PermissionRequest", true),
    event("PermissionDenied", true),
    event("Setup", true),
    event("TeammateIdle", false),
    event("TaskCreated", false),
    event("TaskCompleted", false),
    event("Elicitation", true),
    event("ElicitationResult", true),
    event("ConfigChange", true),
    HookEvent { register: false, ..event("WorktreeCreate", false) },
    HookEvent { register: false, ..event("WorktreeRemove", false) },
    event("InstructionsLoaded", true),
    event("CwdChanged", false),
    event("FileChanged", true),
    since(event("DirectoryAdded", true), "2.1.219"),
    event("MessageDisplay", false),
    since(event("PreSkillShellCommand", true), "2.1.241"),
];

/// The events `version` knows, in table order.
pub fn known_events(version: Version) -> Vec<&'static HookEvent> {
    EVENTS.iter().filter(|e| e.since.is_none_or(|since| Version::lit(since) <= version)).collect()
}

/// The events hookline registers for `version`: the known ones, less the worktree events.
pub fn registered_events(version: Version) -> Vec<&'static HookEvent> {
    known_events(version).into_iter().filter(|e| e.register).collect()
}

/// The hook command for the relay: its absolute path, single-quoted for the shell.
pub fn relay_command(relay: &Path) -> String {
    let path = relay.to_str().expect("the relay path is UTF-8");
    assert!(!path.contains('\''), "the relay path {path} contains a single quote");
    format!("'{path}' --cli claude")
}

/// The `hooks` object registering `command` for `events`, in the shape
/// `hookline install claude` will write.
pub fn hooks_value<'a>(events: impl IntoIterator<Item = &'a HookEvent>, command: &str) -> Value {
    let mut hooks = Map::new();
    for event in events {
        let handler = json!({"type": "command", "command": command, "timeout": 10});
        let group = if event.matcher {
            json!({"matcher": "", "hooks": [handler]})
        } else {
            json!({"hooks": [handler]})
        };
        hooks.insert(event.name.to_string(), json!([group]));
    }
    Value::Object(hooks)
}

/// TEMPORARY: writes `<project>/.claude/settings.json` registering the relay for every event
/// `version` knows, because `hookline install claude --scope project` does not exist yet.
///
/// Phase 2 replaces every call with running the built `hookline install claude --scope
/// project` in the project and then asserting that the file it wrote is equivalent to
/// [`hooks_value`] for [`registered_events`].
pub fn register_hooks_temporarily(project: &Path, relay: &Path, version: Version) {
    let settings = json!({"hooks": hooks_value(registered_events(version), &relay_command(relay))});
    write_project_settings(project, &settings);
}

/// Writes `<project>/.claude/settings.json`.
pub fn write_project_settings(project: &Path, settings: &Value) {
    let dir = project.join(".claude");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let path = dir.join("settings.json");
    let text = serde_json::to_string_pretty(settings).expect("settings serialize");
    fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The event names listed after "Valid events:" in the first entry of Claude's settings
/// warning dialog, as captured from the screen (the list wraps over several lines).
pub fn valid_events_from_warning(screen: &str) -> Option<Vec<String>> {
    let start = screen.find("Valid events:")? + "Valid events:".len();
    let mut list = String::new();
    for (i, line) in screen[start..].lines().enumerate() {
        let line = line.trim();
        // The list ends at a blank line or at the next entry of the dialog's tree.
        if i > 0 && (line.is_empty() || line.starts_with('└') || line.starts_with('├')) {
            break;
        }
        list.push_str(line);
        list.push(' ');
    }
    let names: Vec<String> =
        list.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
    (!names.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_version_lacks_the_newer_events_and_none_registers_worktrees() {
        let old: Vec<&str> =
            registered_events(Version::lit("2.1.197")).iter().map(|e| e.name).collect();
        let new: Vec<&str> =
            registered_events(Version::lit("2.1.332")).iter().map(|e| e.name).collect();
        for name in ["PreModelSwitch", "PostModelSwitch", "DirectoryAdded", "PreSkillShellCommand"]
        {
            assert!(!old.contains(&name) && new.contains(&name), "{name}");
        }
        assert!(!new.iter().any(|n| n.starts_with("Worktree")));
        assert_eq!(known_events(Version::lit("2.1.197")).len(), 30);
        assert_eq!(known_events(Version::lit("2.1.332")).len(), 34);
    }

    #[test]
    fn matchers_are_written_only_where_claude_filters_on_them() {
        let hooks = hooks_value(EVENTS.iter(), "'/x/hookline-relay' --cli claude");
        assert_eq!(hooks["PreToolUse"][0]["matcher"], "");
        assert!(hooks["Stop"][0].get("matcher").is_none());
        assert!(hooks["UserPromptSubmit"][0].get("matcher").is_none());
        let handler = &hooks["Stop"][0]["hooks"][0];
        assert_eq!(handler["command"], "'/x/hookline-relay' --cli claude");
        assert_eq!(handler["timeout"], 10);
    }

    #[test]
    fn the_warning_list_is_read_across_wrapped_lines_up_to_the_next_entry() {
        let screen = "  Settings Warning\n\
            \n  ├ hooks.X: Unknown hook event \"X\" was ignored. Valid events: PreToolUse, Stop,\n\
            \x20   SessionStart,\n\
            \x20   MessageDisplay\n\
            \x20 └ hooks.Y: Unknown hook event \"Y\" was ignored. Valid events: A, B\n";
        assert_eq!(
            valid_events_from_warning(screen).unwrap(),
            ["PreToolUse", "Stop", "SessionStart", "MessageDisplay"]
        );
        assert_eq!(valid_events_from_warning("no dialog"), None);
    }
}
