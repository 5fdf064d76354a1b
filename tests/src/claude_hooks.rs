//! Which hook events a Claude Code version knows, and what `hookline install` registers.
//!
//! Claude Code shows a blocking "Settings Warning" dialog, and holds back `SessionStart` until
//! it is dismissed, when a settings file registers an event name it does not know (seen on both
//! 2.1.197 and 2.1.332; the dialog lists the valid names). [`EVENTS`] says since when each
//! event exists; the `settings_warning` scenario checks it against the dialog's list for every
//! version it runs, and checks that everything `hookline install` registers is in that list.

use std::fs;
use std::path::Path;

use hookline::profile::Profiles;
use hookline_cli::install::{Detected, Installable};
use serde_json::Value;

use crate::version::Version;

/// One Claude Code hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvent {
    /// The event name as settings and payloads spell it.
    pub name: &'static str,
    /// The first version that knows it; `None` for events older than every version tested.
    pub since: Option<&'static str>,
}

const fn event(name: &'static str) -> HookEvent {
    HookEvent { name, since: None }
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
    event("PreToolUse"),
    event("PostToolUse"),
    event("PostToolUseFailure"),
    event("PostToolBatch"),
    event("Notification"),
    event("UserPromptSubmit"),
    event("UserPromptExpansion"),
    event("SessionStart"),
    event("SessionEnd"),
    event("Stop"),
    event("StopFailure"),
    event("SubagentStart"),
    event("SubagentStop"),
    event("PreCompact"),
    event("PostCompact"),
    since(event("PreModelSwitch"), "2.1.241"),
    since(event("PostModelSwitch"), "2.1.241"),
    event("PermissionRequest"),
    event("PermissionDenied"),
    event("Setup"),
    event("TeammateIdle"),
    event("TaskCreated"),
    event("TaskCompleted"),
    event("Elicitation"),
    event("ElicitationResult"),
    event("ConfigChange"),
    event("WorktreeCreate"),
    event("WorktreeRemove"),
    event("InstructionsLoaded"),
    event("CwdChanged"),
    event("FileChanged"),
    since(event("DirectoryAdded"), "2.1.219"),
    event("MessageDisplay"),
    since(event("PreSkillShellCommand"), "2.1.241"),
];

/// The events `version` knows, in table order.
pub fn known_events(version: Version) -> Vec<&'static HookEvent> {
    EVENTS.iter().filter(|e| e.since.is_none_or(|since| Version::lit(since) <= version)).collect()
}

/// The events `hookline install claude` registers for `version`, as the shipped profile says
/// (`[[install.events]]` with their version gates), in the profile's order.
pub fn hookline_registers(version: Version) -> Vec<String> {
    let profiles = Profiles::shipped().expect("the shipped profiles load");
    let claude = Installable::find(&profiles, "claude").expect("claude is installable");
    let detected = Detected::Version {
        version: version.to_string().parse().expect("a version hookline parses"),
        command: "claude --version".into(),
    };
    claude.events(&detected).into_iter().map(str::to_owned).collect()
}

/// The event names a settings document registers hooks for.
pub fn registered_in(settings: &Value) -> Vec<String> {
    settings["hooks"].as_object().map(|hooks| hooks.keys().cloned().collect()).unwrap_or_default()
}

/// Registers the same handlers as `like` for the event `name` too (an event name the CLI may
/// not know), in `<project>/.claude/settings.json`.
pub fn register_also(project: &Path, like: &str, name: &str) {
    let path = project.join(".claude").join("settings.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut settings: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let groups = settings["hooks"][like].clone();
    assert!(groups.is_array(), "{} registers nothing for {like}", path.display());
    settings["hooks"][name] = groups;
    let text = serde_json::to_string_pretty(&settings).expect("settings serialize");
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
    fn the_older_version_lacks_the_newer_events() {
        let old: Vec<&str> = known_events(Version::lit("2.1.197")).iter().map(|e| e.name).collect();
        let new: Vec<&str> = known_events(Version::lit("2.1.332")).iter().map(|e| e.name).collect();
        for name in ["PreModelSwitch", "PostModelSwitch", "DirectoryAdded", "PreSkillShellCommand"]
        {
            assert!(!old.contains(&name) && new.contains(&name), "{name}");
        }
        assert_eq!(old.len(), 30);
        assert_eq!(new.len(), 34);
    }

    #[test]
    fn hookline_registers_only_events_both_versions_know_and_never_worktrees() {
        for version in ["2.1.197", "2.1.332"] {
            let version = Version::lit(version);
            let known: Vec<&str> = known_events(version).iter().map(|e| e.name).collect();
            let registered = hookline_registers(version);
            assert!(registered.iter().any(|e| e == "SessionStart"), "{registered:?}");
            for name in &registered {
                assert!(known.contains(&name.as_str()), "{version} does not know {name}");
            }
            assert!(!registered.iter().any(|n| n.starts_with("Worktree")), "{registered:?}");
        }
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
