use serde_json::json;

use super::*;
use crate::install::command::relay_command;

const RELAY: &str = "/opt/hookline/bin/hookline-relay";

/// A user's Claude settings with hooks of three other tools (extra fields included), the
/// bmad-loop relay, and keys hookline knows nothing about.
const CLAUDE: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "env": {
    "ANTHROPIC_LOG": "debug",
    "NAME": "Ren\u00e9e"
  },
  "permissions": {
    "allow": ["Bash(git status)", "Read(~/.zshrc)"],
    "deny": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/.local/bin/guard --strict",
            "timeout": 30,
            "statusMessage": "Checking command...",
            "if": "Bash(rm *)"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.bmad-loop/bmad_loop_hook.py Stop"
          }
        ]
      },
      {
        "hooks": [
          {
            "type": "http",
            "url": "http://localhost:8080/stop",
            "headers": {"X-Token": "t"},
            "timeout": 5
          },
          {
            "type": "command",
            "command": "afplay /System/Library/Sounds/Glass.aiff",
            "async": true
          }
        ]
      }
    ],
    "Notification": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send Claude \"$(jq -r .message)\""
          }
        ]
      }
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0},
  "feedbackSurveyRate": 0.050
}
"#;

fn wanted(dialect: Dialect, cli: &str, events: &[&str], flag: bool) -> Vec<Wanted> {
    events
        .iter()
        .map(|e| Wanted {
            event: (*e).to_owned(),
            entry: dialect.entry(&relay_command(RELAY, cli, flag.then_some(*e)), 10, None),
        })
        .collect()
}

fn why(_: &str) -> String {
    "not wanted".into()
}

fn install_text(before: Option<&str>, dialect: Dialect, wanted: &[Wanted]) -> Merged {
    install(before, dialect, wanted, why, None).unwrap()
}

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn install_appends_our_group_and_keeps_every_other_byte() {
    let w = wanted(Dialect::Claude, "claude", &["PreToolUse", "Stop", "SessionStart"], false);
    let merged = install_text(Some(CLAUDE), Dialect::Claude, &w);
    let after = merged.text.unwrap();
    let lines: Vec<String> = merged.lines.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        ["hooks.PreToolUse: added", "hooks.Stop: added", "hooks.SessionStart: added"]
    );
    // Every line of the original is still there, in order; only whole lines were added.
    let mut original = CLAUDE.lines().peekable();
    for line in after.lines() {
        if original.peek() == Some(&line) {
            original.next();
        }
    }
    assert_eq!(original.next(), None, "{after}");
    let v = value(&after);
    let stop = v["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 3);
    assert_eq!(stop[2], w[1].entry);
    assert_eq!(stop[..2], value(CLAUDE)["hooks"]["Stop"].as_array().unwrap()[..]);
    assert!(after.contains(
        "    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\""
    ));
    assert!(after.contains("    ],\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/opt/hookline/bin/hookline-relay --cli claude\",\n            \"timeout\": 10\n          }\n        ]\n      }\n    ]\n  },\n  \"statusLine\""), "{after}");
}

#[test]
fn install_then_uninstall_gives_back_the_same_bytes() {
    let files = [
        CLAUDE,
        "{\n  \"model\": \"opus\"\n}\n",
        "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n    ]\n  }\n}",
        "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"x\"}]}]},\"k\":\"\\u00e9\"}",
        "{\r\n\t\"model\": \"opus\",\r\n\t\"hooks\": {}\r\n}\r\n",
        "{}",
    ];
    for dialect in
        [Dialect::Claude, Dialect::Codex, Dialect::Gemini, Dialect::Cursor, Dialect::Copilot]
    {
        let w = wanted(dialect, "x", &["Stop", "SessionStart", "Notification"], true);
        for original in files {
            let merged = install_text(Some(original), dialect, &w);
            let installed = merged.text.unwrap();
            assert_ne!(installed, original);
            let again = install_text(Some(&installed), dialect, &w);
            assert_eq!(again.text.as_deref(), Some(installed.as_str()), "{dialect:?}");
            assert!(again.lines.iter().all(|l| l.change == Change::Unchanged));
            let removed = uninstall(Some(&installed), dialect, Some(&merged.scaffolding)).unwrap();
            assert_eq!(removed.text.as_deref(), Some(original), "{dialect:?}\n{installed}");
        }
    }
}

#[test]
fn empty_containers_the_user_had_survive_uninstall_and_ours_do_not() {
    let original =
        "{\n  \"hooks\": {\n    \"Stop\": [],\n    \"Other\": []\n  },\n  \"x\": {}\n}\n";
    let w = wanted(Dialect::Claude, "claude", &["Stop", "SessionStart"], false);
    let merged = install_text(Some(original), Dialect::Claude, &w);
    assert_eq!(merged.scaffolding.containers, ["hooks.SessionStart"]);
    let installed = merged.text.unwrap();
    let removed = uninstall(Some(&installed), Dialect::Claude, Some(&merged.scaffolding)).unwrap();
    assert_eq!(removed.text.as_deref(), Some(original));
    // With no record of what install created, every container left empty goes.
    let unknown = uninstall(Some(&installed), Dialect::Claude, None).unwrap().text.unwrap();
    assert_eq!(value(&unknown), json!({"hooks": {"Other": []}, "x": {}}));
}

#[test]
fn a_later_install_keeps_what_the_first_one_created() {
    let w = wanted(Dialect::Claude, "claude", &["Stop", "StopFailure"], false);
    let first = install_text(Some("{\"hooks\": {\"Stop\": []}}"), Dialect::Claude, &w);
    assert_eq!(first.scaffolding.containers, ["hooks.StopFailure"]);
    let second =
        install(first.text.as_deref(), Dialect::Claude, &w[..1], why, Some(&first.scaffolding))
            .unwrap();
    let text = second.text.as_deref().unwrap();
    assert_eq!(value(text)["hooks"].as_object().unwrap().keys().collect::<Vec<_>>(), ["Stop"]);
    assert!(second.scaffolding.containers.is_empty(), "StopFailure was ours and is gone");
    let removed =
        uninstall(second.text.as_deref(), Dialect::Claude, Some(&second.scaffolding)).unwrap();
    assert_eq!(removed.text.as_deref(), Some("{\"hooks\": {\"Stop\": []}}"));
}

#[test]
fn a_file_install_created_is_removed_by_uninstall_unless_the_user_changed_it() {
    for dialect in
        [Dialect::Claude, Dialect::Codex, Dialect::Gemini, Dialect::Cursor, Dialect::Copilot]
    {
        let w = wanted(dialect, "x", &["Stop", "SessionStart"], true);
        let merged = install_text(None, dialect, &w);
        assert!(merged.scaffolding.file);
        let installed = merged.text.unwrap();
        let s = Some(&merged.scaffolding);
        assert_eq!(uninstall(Some(&installed), dialect, s).unwrap().text, None, "{dialect:?}");
        let changed = installed.replacen('{', "{\n  \"mine\": true,", 1);
        let kept = uninstall(Some(&changed), dialect, s).unwrap().text.unwrap();
        assert_eq!(value(&kept)["mine"], true, "{dialect:?}");
        // A file that existed is never removed, even left as bare as a new one.
        let existing = install_text(Some("{}\n"), dialect, &w);
        let text = existing.text.unwrap();
        let kept = uninstall(Some(&text), dialect, Some(&existing.scaffolding)).unwrap();
        assert_eq!(kept.text.as_deref(), Some("{}\n"), "{dialect:?}");
    }
}

#[test]
fn a_second_install_changes_nothing_and_says_so_per_event() {
    let w = wanted(Dialect::Claude, "claude", &["Stop", "PreToolUse"], false);
    let once = install_text(Some(CLAUDE), Dialect::Claude, &w).text.unwrap();
    let twice = install_text(Some(&once), Dialect::Claude, &w);
    assert_eq!(twice.text.unwrap(), once);
    let lines: Vec<String> = twice.lines.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["hooks.Stop: already installed", "hooks.PreToolUse: already installed"]);
}

#[test]
fn a_stale_entry_is_replaced_in_place_and_duplicates_collapse() {
    let before = r#"{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "say a"}]},
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/Cellar/hookline/0.0.9/bin/hookline-relay claude Stop",
            "timeout": 30
          }
        ]
      },
      {"hooks": [{"type": "command", "command": "say b"}]},
      {"hooks": [{"type": "command", "command": "/old/hookline-relay --cli claude"}]},
      {"hooks": [{"type": "command", "command": "say c"}, {"type": "command", "command": "/x/hookline-relay"}]}
    ]
  }
}
"#;
    let w = wanted(Dialect::Claude, "claude", &["Stop"], false);
    let merged = install_text(Some(before), Dialect::Claude, &w);
    assert_eq!(
        merged.lines[0].to_string(),
        "hooks.Stop: updated in place (was: /usr/local/Cellar/hookline/0.0.9/bin/hookline-relay claude Stop), 2 duplicates removed"
    );
    let after = merged.text.unwrap();
    assert_eq!(
        after,
        r#"{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "say a"}]},
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/hookline/bin/hookline-relay --cli claude",
            "timeout": 10
          }
        ]
      },
      {"hooks": [{"type": "command", "command": "say b"}]},
      {"hooks": [{"type": "command", "command": "say c"}]}
    ]
  }
}
"#
    );
}

#[test]
fn the_bmad_loop_relay_and_other_tools_are_left_alone_by_uninstall() {
    let w = wanted(Dialect::Claude, "claude", &["Stop", "Notification"], false);
    let installed = install_text(Some(CLAUDE), Dialect::Claude, &w).text.unwrap();
    let removed = uninstall(Some(&installed), Dialect::Claude, None).unwrap();
    assert!(removed.text.unwrap().contains("bmad_loop_hook.py Stop"));
    let lines: Vec<String> = removed.lines.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["hooks.Stop: removed", "hooks.Notification: removed"]);
    assert!(uninstall(Some(CLAUDE), Dialect::Claude, None).unwrap().lines.is_empty());
}

#[test]
fn events_no_longer_wanted_lose_our_entries_and_empty_containers() {
    let w = wanted(Dialect::Claude, "claude", &["Stop", "StopFailure"], false);
    let installed = install_text(Some("{\"a\": 1}"), Dialect::Claude, &w).text.unwrap();
    let fewer =
        install(Some(&installed), Dialect::Claude, &w[..1], |e| format!("{e} is unknown"), None)
            .unwrap();
    assert_eq!(fewer.lines[1].to_string(), "hooks.StopFailure: removed (StopFailure is unknown)");
    let none = install_text(fewer.text.as_deref(), Dialect::Claude, &[]);
    assert_eq!(none.text.unwrap(), "{\"a\": 1}");
}

#[test]
fn missing_empty_and_bare_files_get_a_fresh_document() {
    let w = wanted(Dialect::Claude, "claude", &["Stop"], false);
    let expected = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/opt/hookline/bin/hookline-relay --cli claude\",\n            \"timeout\": 10\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    for before in [None, Some(""), Some("  \n"), Some("{}\n")] {
        let merged = install_text(before, Dialect::Claude, &w);
        assert_eq!(merged.text.as_deref(), Some(expected), "{before:?}");
        assert_eq!(merged.created, before != Some("{}\n"));
    }
    assert_eq!(
        uninstall(Some(expected), Dialect::Claude, None).unwrap().text.as_deref(),
        Some("{}\n")
    );
    assert_eq!(uninstall(None, Dialect::Claude, None).unwrap().text, None);
}

#[test]
fn wrong_shapes_are_refused_naming_the_json_path() {
    let w = wanted(Dialect::Claude, "claude", &["Stop"], false);
    let cases = [
        ("{\"hooks\": []}", "1:11: hooks is not an object"),
        ("{\"hooks\": {\"Stop\": {\"hooks\": []}}}", "1:20: hooks.Stop is not an array"),
        ("[]", "1:1: the top level is not an object"),
        ("{\"hooks\": {\"Stop\": []}, \"hooks\": {}}", "1:25: duplicate key hooks"),
    ];
    for (text, message) in cases {
        let err = install(Some(text), Dialect::Claude, &w, why, None).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    let err = uninstall(Some("{\"hooks\": 3}"), Dialect::Claude, None).unwrap_err();
    assert_eq!(err.to_string(), "1:11: hooks is not an object");
    // An event we do not write into may be anything: it is not ours.
    let odd = "{\"hooks\": {\"Other\": 5}}";
    assert!(install(Some(odd), Dialect::Claude, &w, why, None).is_ok());
    assert_eq!(uninstall(Some(odd), Dialect::Claude, None).unwrap().text.unwrap(), odd);
}

#[test]
fn gemini_names_its_handler_and_counts_milliseconds() {
    let before = "{\n  \"general\": {\"vimMode\": true},\n  \"hooksConfig\": {\"enabled\": true},\n  \"hooks\": {\n    \"AfterAgent\": [\n      {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"python3 /p/.bmad-loop/bmad_loop_hook.py Stop\", \"timeout\": 5000}]}\n    ]\n  }\n}\n";
    let w = wanted(Dialect::Gemini, "gemini", &["AfterAgent", "SessionStart"], false);
    let after = install_text(Some(before), Dialect::Gemini, &w).text.unwrap();
    let v = value(&after);
    assert_eq!(
        v["hooks"]["AfterAgent"][1],
        json!({"hooks": [{"name": "hookline", "type": "command", "command": "/opt/hookline/bin/hookline-relay --cli gemini", "timeout": 10000}]})
    );
    assert_eq!(v["hooks"]["AfterAgent"][0], value(before)["hooks"]["AfterAgent"][0]);
    assert_eq!(uninstall(Some(&after), Dialect::Gemini, None).unwrap().text.unwrap(), before);
}

#[test]
fn copilot_owns_its_file_and_uninstall_removes_it() {
    let w = wanted(Dialect::Copilot, "copilot", &["sessionStart", "agentStop"], true);
    let created = install_text(None, Dialect::Copilot, &w);
    let text = created.text.unwrap();
    assert_eq!(
        text,
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"sessionStart\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"/opt/hookline/bin/hookline-relay --cli copilot --event sessionStart\",\n        \"timeoutSec\": 10\n      }\n    ],\n    \"agentStop\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"/opt/hookline/bin/hookline-relay --cli copilot --event agentStop\",\n        \"timeoutSec\": 10\n      }\n    ]\n  }\n}\n"
    );
    assert_eq!(uninstall(Some(&text), Dialect::Copilot, None).unwrap().text, None);
    // A file holding something else is kept.
    let shared = text.replace("\"version\": 1,", "\"version\": 1,\n  \"x\": 2,");
    assert!(uninstall(Some(&shared), Dialect::Copilot, None).unwrap().text.is_some());
}

#[test]
fn cursor_writes_flat_handlers_beside_other_tools() {
    let before = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"stop\": [\n      { \"command\": \"./hooks/audit.sh\", \"loop_limit\": 3, \"failClosed\": false }\n    ]\n  }\n}\n";
    let w = wanted(Dialect::Cursor, "cursor", &["stop", "sessionStart"], false);
    let after = install_text(Some(before), Dialect::Cursor, &w).text.unwrap();
    assert!(after.contains(
        "      { \"command\": \"./hooks/audit.sh\", \"loop_limit\": 3, \"failClosed\": false },\n      {\n        \"command\": \"/opt/hookline/bin/hookline-relay --cli cursor\",\n        \"timeout\": 10\n      }\n"
    ), "{after}");
    assert_eq!(uninstall(Some(&after), Dialect::Cursor, None).unwrap().text.unwrap(), before);
    let fresh = install_text(Some(""), Dialect::Cursor, &w).text.unwrap();
    assert!(fresh.starts_with("{\n  \"version\": 1,\n  \"hooks\": {"), "{fresh}");
}

#[test]
fn codex_uses_claudes_shape_and_appends_after_existing_groups() {
    let before = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\"type\": \"command\", \"command\": \"codex-notify\", \"timeout\": 5}\n        ]\n      }\n    ]\n  }\n}\n";
    let w = wanted(Dialect::Codex, "codex", &["Stop"], false);
    let after = install_text(Some(before), Dialect::Codex, &w).text.unwrap();
    let v = value(&after);
    // Appended, never inserted before: Codex's trust keys embed the group index.
    assert_eq!(v["hooks"]["Stop"][0], value(before)["hooks"]["Stop"][0]);
    assert_eq!(v["hooks"]["Stop"][1], w[0].entry);
}

#[test]
fn registered_lists_our_commands_per_event() {
    let w = wanted(Dialect::Claude, "claude", &["Stop", "SessionStart"], false);
    let installed = install_text(Some(CLAUDE), Dialect::Claude, &w).text.unwrap();
    let found = registered(&installed, Dialect::Claude).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].0, "Stop");
    assert_eq!(found[0].1, ["/opt/hookline/bin/hookline-relay --cli claude"]);
    assert!(registered(CLAUDE, Dialect::Claude).unwrap().is_empty());
}
