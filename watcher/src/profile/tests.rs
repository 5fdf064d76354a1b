use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_shipped_profile_parses_strictly() {
    let profiles = Profiles::shipped().unwrap();
    let claude = profiles.get("claude").unwrap();
    assert_eq!(claude.binary, "claude");
    assert!(claude.is_input_ready(KindName::Stop));
    assert!(!claude.is_input_ready(KindName::SessionStart));
    assert!(claude.install.is_some());
    let names: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "antigravity",
            "claude",
            "codex",
            "copilot",
            "cursor",
            "droid",
            "gemini",
            "grok",
            "kilo",
            "kimi",
            "legacy",
            "opencode",
            "pi",
            "qwen"
        ]
    );
}

#[test]
fn kilo_is_built_on_opencode_with_its_own_name_versions_holes_and_install() {
    let profiles = Profiles::shipped().unwrap();
    let (kilo, opencode) = (profiles.get("kilo").unwrap(), profiles.get("opencode").unwrap());
    assert_eq!((kilo.binary.as_str(), kilo.display_name.as_str()), ("kilo", "Kilo Code"));
    assert_eq!(kilo.min_version.to_string(), "7.7.0");
    assert_eq!(kilo.tested.iter().map(ToString::to_string).collect::<Vec<_>>(), ["7.7.7"]);
    assert_eq!(kilo.origins, ["embedded:opencode.toml", "embedded:kilo.toml"]);
    // The mapping is OpenCode's, as data: the same rules in the same order.
    let rules = |p: &Profile| p.rules.iter().map(|r| r.label.clone()).collect::<Vec<_>>();
    assert_eq!(rules(kilo), rules(opencode));
    assert_eq!(kilo.input_ready, opencode.input_ready);
    let holes = |p: &Profile| p.holes.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert!(holes(kilo).contains(&"escape-opens-a-reject-box".to_owned()));
    assert!(!holes(opencode).contains(&"escape-opens-a-reject-box".to_owned()));
    let hole = kilo.holes.iter().find(|h| h.id == "approved-call-no-event").unwrap();
    assert!(hole.description.contains("7.7.7"), "replaced by id: {}", hole.description);
    let install = kilo.install.as_ref().unwrap();
    assert_eq!(install.dialect, Dialect::OpencodePlugin);
    assert_eq!(
        install.scope("user"),
        Some("${XDG_CONFIG_HOME:-~/.config}/kilo/plugins/hookline.js")
    );
    assert_eq!(install.scope("project"), Some(".kilo/plugins/hookline.js"));
}

#[test]
fn a_base_must_name_a_profile_and_starts_only_a_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut profiles = Profiles::shipped().unwrap();
    let fork =
        write(tmp.path(), "fork.toml", "base = \"opencode\"\nname = \"fork\"\nbinary = \"fork\"\n");
    profiles.overlay_file(&fork).unwrap();
    let made = profiles.get("fork").unwrap();
    assert_eq!(
        (made.binary.as_str(), made.rules.len()),
        ("fork", profiles.get("opencode").unwrap().rules.len())
    );
    let missing = write(tmp.path(), "other.toml", "base = \"nothing\"\nname = \"other\"\n");
    let err = profiles.overlay_file(&missing).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("base"), "{err}");
    assert!(err.message.contains("no profile \"nothing\""), "{err}");
    let again = write(tmp.path(), "claude.toml", "base = \"opencode\"\nname = \"claude\"\n");
    let err = profiles.overlay_file(&again).unwrap_err();
    assert!(err.message.contains("has a profile already"), "{err}");
    let checked = Profiles::check_file(&fork).unwrap();
    assert_eq!(checked.name, "fork");
}

#[test]
fn no_shipped_rule_maps_to_unknown() {
    // `unknown` is what an unmapped event becomes; a rule that produced it would hide the event
    // behind a label that claims to know it.
    for profile in Profiles::shipped().unwrap().iter() {
        for rule in &profile.rules {
            assert_ne!(rule.kind, KindName::Unknown, "{}", rule.label);
        }
    }
}

#[test]
fn every_registered_native_event_has_a_mapping_rule() {
    for profile in Profiles::shipped().unwrap().iter() {
        let Some(install) = &profile.install else {
            continue;
        };
        for event in &install.events {
            assert!(
                profile.rules.iter().any(|r| r.native == event.native),
                "{}: {} is registered but no rule maps it",
                profile.name,
                event.native
            );
        }
    }
}

#[test]
fn every_input_ready_kind_is_produced_by_some_rule() {
    for profile in Profiles::shipped().unwrap().iter() {
        for kind in &profile.input_ready {
            assert!(
                profile.rules.iter().any(|r| r.kind == *kind),
                "{}: {kind} is input-ready but no rule produces it",
                profile.name
            );
        }
    }
}

#[test]
fn only_turn_ends_are_input_ready() {
    // Interrupts, aborts, API failures and dialogs wait for a human; only a finished turn (or
    // Claude's idle notification) means the CLI is at its prompt.
    for profile in Profiles::shipped().unwrap().iter() {
        for kind in &profile.input_ready {
            assert!(["stop", "idle_prompt"].contains(&kind.as_str()), "{}: {kind}", profile.name);
        }
    }
}

#[test]
fn install_specs_name_their_settings_files() {
    let profiles = Profiles::shipped().unwrap();
    let spec = |name: &str| profiles.get(name).unwrap().install.clone().unwrap();
    let codex = spec("codex");
    assert_eq!(codex.scope("user"), Some("${CODEX_HOME:-~/.codex}/hooks.json"));
    assert!(codex.notes.iter().any(|n| n.contains("/hooks")));
    assert_eq!(spec("gemini").scope("user"), Some("${GEMINI_CLI_HOME:-~}/.gemini/settings.json"));
    let copilot = spec("copilot");
    assert!(copilot.event_arg, "camelCase payloads carry no event name");
    assert_eq!(copilot.scope("user"), Some("${COPILOT_HOME:-~/.copilot}/hooks/hookline.json"));
    assert_eq!(copilot.scope("project"), Some(".github/hooks/hookline.json"));
    let cursor = spec("cursor");
    assert_eq!(cursor.scope("user"), Some("~/.cursor/hooks.json"));
    assert_eq!(cursor.scope("project"), Some(".cursor/hooks.json"));
    assert!(cursor.never.iter().any(|(n, _)| n == "preToolUse"));
    for name in ["codex", "gemini", "copilot", "cursor"] {
        assert_eq!(spec(name).dialect.as_str(), name);
        assert!(!spec(name).event_arg || name == "copilot", "{name}");
    }
    // Codex's newest events are only registered from the version seen firing them.
    let codex_min = &profiles.get("codex").unwrap().min_version;
    let conservative: Vec<_> =
        codex.events_for(None, codex_min).iter().map(|e| e.native.clone()).collect();
    assert!(!conservative.contains(&"Interrupt".to_owned()));
    let v: Version = "0.171.0".parse().unwrap();
    assert!(codex.events_for(Some(&v), codex_min).iter().any(|e| e.native == "Interrupt"));
}

#[test]
fn cursor_and_vscode_payloads_are_recognised_whatever_cli_was_named() {
    let profiles = Profiles::shipped().unwrap();
    let whole = Seen::Whole { left_out: &[] };
    let resolve = |cli: &str, payload: &Value| profiles.resolve(cli, payload, whole);
    let cursor = serde_json::json!({"hook_event_name": "stop", "cursor_version": "2.5.0"});
    assert_eq!(resolve("claude", &cursor).unwrap().name, "cursor");
    assert_eq!(resolve("cursor", &cursor).unwrap().name, "cursor");
    let vscode = serde_json::json!({"hookEventName": "Stop", "sessionId": "s"});
    assert_eq!(resolve("claude", &vscode).unwrap().name, "copilot");
    let grok =
        serde_json::json!({"hookEventName": "stop", "sessionId": "s", "workspaceRoot": "/w"});
    assert_eq!(resolve("claude", &grok).unwrap().name, "grok");
    assert_eq!(resolve("cursor", &grok).unwrap().name, "grok");
    // Payloads without those keys stay with the CLI they were sent for.
    let gemini = serde_json::json!({"hook_event_name": "AfterAgent", "session_id": "s",
                                    "timestamp": "2026-01-01T00:00:00Z"});
    assert_eq!(resolve("gemini", &gemini).unwrap().name, "gemini");
    let claude = serde_json::json!({"hook_event_name": "Stop", "session_id": "s"});
    assert_eq!(resolve("claude", &claude).unwrap().name, "claude");
}

#[test]
fn an_unknown_key_in_a_complete_profile_is_an_error_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = include_str!("../../../profiles/claude.toml").to_owned();
    text = text.replace("binary = \"claude\"", "binary = \"claude\"\nbinray = \"typo\"");
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("binray"));
    assert_eq!(err.line, Some(8), "{err}");
    assert!(err.to_string().contains("claude.toml:8:1: binray: unknown key"), "{err}");
}

#[test]
fn an_unknown_key_in_an_array_of_tables_is_named_as_written_with_its_line() {
    // `holes` is optional: serde_ignored's path had a `?` segment, so the key read
    // `holes.?.0.stale-afte` and no line was found.
    let tmp = tempfile::tempdir().unwrap();
    let text = include_str!("../../../profiles/claude.toml").replacen(
        "stale-after = \"15m\"",
        "stale-afte = \"15m\"",
        1,
    );
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    let line = text.lines().position(|l| l.starts_with("stale-afte ")).unwrap() + 1;
    assert_eq!(err.key.as_deref(), Some("holes[0].stale-afte"), "{err}");
    assert_eq!(err.line, Some(line), "{err}");
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = include_str!("../../../profiles/claude.toml").replacen(
        "stale-after = \"15m\"",
        "stale-after = 15",
        1,
    );
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    let line = text.lines().position(|l| l == "stale-after = 15").unwrap() + 1;
    assert_eq!(
        (err.key.as_deref(), err.line, err.column),
        (Some("holes[0].stale-after"), Some(line), Some(15)),
        "{err}"
    );
    assert_eq!(err.message, "must be a string, not integer `15`", "{err}");
}

#[test]
fn semantic_errors_name_the_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = include_str!("../../../profiles/claude.toml").replacen(
        "kind = \"turn_start\"",
        "kind = \"turn_begin\"",
        1,
    );
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("map[2].kind"));
    let line = text.lines().position(|l| l.contains("turn_begin")).unwrap() + 1;
    assert_eq!(err.line, Some(line), "{err}");

    let text = include_str!("../../../profiles/claude.toml").replacen(
        "set = { reason = \"question\" }",
        "set = { reason = \"bored\" }",
        1,
    );
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("map[3].set.reason"), "{err}");

    let text = include_str!("../../../profiles/claude.toml").replacen(
        "stale-after = \"15m\"",
        "stale-after = \"15\"",
        1,
    );
    let path = write(tmp.path(), "claude.toml", &text);
    assert!(Profiles::check_file(&path).unwrap_err().to_string().contains("units"));

    let text = include_str!("../../../profiles/claude.toml").replace(
        "[[install.never]]\nnative = \"WorktreeCreate\"",
        "[[install.events]]\nnative = \"WorktreeCreate\"\n\n[[install.never]]\nnative = \"WorktreeCreate\"",
    );
    let path = write(tmp.path(), "claude.toml", &text);
    let err = Profiles::check_file(&path).unwrap_err();
    assert!(err.message.contains("must never be registered"), "{err}");
}

#[test]
fn words_a_profile_names_are_read_into_their_vocabularies_and_errors_list_them() {
    let tmp = tempfile::tempdir().unwrap();
    let shipped = include_str!("../../../profiles/claude.toml");
    let claude = Profiles::shipped().unwrap().get("claude").unwrap().clone();
    assert_eq!(claude.install.as_ref().unwrap().dialect, Dialect::Claude);
    assert!(claude.holes_in(StateKind::WaitingOnHuman).next().is_some());
    let states = format!("{:?}", StateKind::WORDS);
    let dialects = format!("{:?}", Dialect::WORDS);
    let formats = format!("{:?}", TranscriptFormat::WORDS);
    let cases = [
        ("format = \"claude-jsonl\"", "format = \"jsonl\"", "transcript.format", formats.as_str()),
        ("state = \"active\"", "state = \"busy\"", "holes[0].state", states.as_str()),
        ("dialect = \"claude\"", "dialect = \"vim\"", "install.dialect", dialects.as_str()),
        ("as = \"count-active\"", "as = \"tally\"", "", "text, bool, count, count-active, word"),
        ("input-ready = [\"stop\"", "input-ready = [\"halt\"", "input-ready", "canonical kind"),
    ];
    for (from, to, key, listed) in cases {
        let text = shipped.replacen(from, to, 1);
        assert_ne!(text, shipped, "{from}");
        let path = write(tmp.path(), "claude.toml", &text);
        let err = Profiles::check_file(&path).unwrap_err();
        assert!(err.key.as_deref().unwrap_or_default().ends_with(key), "{to}: {err}");
        assert!(err.message.contains(listed), "{to}: {err}");
    }
}

#[test]
fn the_transcript_table_names_a_format_per_cli_that_writes_one() {
    let profiles = Profiles::shipped().unwrap();
    let format = |cli: &str| profiles.get(cli).unwrap().transcript.as_ref().map(|t| t.format);
    assert_eq!(format("claude"), Some(TranscriptFormat::ClaudeJsonl));
    assert_eq!(format("codex"), Some(TranscriptFormat::CodexRollout));
    assert_eq!(format("gemini"), Some(TranscriptFormat::GeminiChats));
    for profile in profiles.iter().filter(|p| p.transcript.is_some()) {
        assert!(!profile.fields.transcript_path.is_empty(), "{}", profile.name);
        let key = profile.fields.transcript_path[0].top_key();
        assert!(profiles.wants_key(key), "{}: {key} must be decoded", profile.name);
    }
    let tmp = tempfile::tempdir().unwrap();
    let overlay = write(tmp.path(), "claude.toml", "[transcript]\ndir = \"/elsewhere\"\n");
    let mut set = Profiles::shipped().unwrap();
    set.overlay_file(&overlay).unwrap();
    let spec = set.get("claude").unwrap().transcript.clone().unwrap();
    assert_eq!(
        (spec.format, spec.dir.as_deref()),
        (TranscriptFormat::ClaudeJsonl, Some("/elsewhere"))
    );
    let bad = write(tmp.path(), "claude.toml", "[transcript]\nfile-suffix = \"a/b\"\n");
    let err = set.overlay_file(&bad).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("transcript.file-suffix"), "{err}");
}

#[test]
fn toml_syntax_errors_carry_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(tmp.path(), "x.toml", "version = 1\nname = \"x\"\nbroken = [\n");
    let err = Profiles::check_file(&path).unwrap_err();
    assert!(err.line.is_some(), "{err}");
}

#[test]
fn an_overlay_warns_on_unknown_keys_and_its_rules_win() {
    let tmp = tempfile::tempdir().unwrap();
    let user = tmp.path().join("user");
    std::fs::create_dir(&user).unwrap();
    write(
        &user,
        "claude.toml",
        "colour = \"blue\"\ninput-ready = [\"stop\"]\n\n[[map]]\nnative = \"Notification\"\nwhen = { notification_type = \"idle_prompt\" }\nkind = \"notification\"\n",
    );
    let dirs = OverlayDirs { user: Some(user), project: None };
    let profiles = Profiles::load(&dirs).unwrap();
    assert_eq!(profiles.warnings.len(), 1);
    assert!(
        profiles.warnings[0].contains("colour: unknown key ignored"),
        "{:?}",
        profiles.warnings
    );
    let claude = profiles.get("claude").unwrap();
    assert!(!claude.is_input_ready(KindName::IdlePrompt));
    let payload = serde_json::json!({"notification_type": "idle_prompt"});
    let rule = claude.rule_for("Notification", &payload).unwrap();
    assert_eq!(rule.kind, KindName::Notification);
    assert!(rule.label.ends_with("claude.toml#map[0]"), "{}", rule.label);
    assert_eq!(claude.origins.len(), 2);
    // The project overlay comes after the user one and wins over it.
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    write(&project, "claude.toml", "input-ready = [\"idle_prompt\"]\n");
    let dirs = OverlayDirs { user: dirs.user, project: Some(project) };
    let profiles = Profiles::load(&dirs).unwrap();
    assert!(profiles.get("claude").unwrap().is_input_ready(KindName::IdlePrompt));
}

#[test]
fn an_overlay_for_a_new_cli_must_be_complete() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "aider.toml", "version = 1\nname = \"aider\"\n");
    let dirs = OverlayDirs { user: Some(tmp.path().to_owned()), project: None };
    let err = Profiles::load(&dirs).unwrap_err();
    assert!(err.message.contains("missing"), "{err}");
}

#[test]
fn install_events_depend_on_the_cli_version() {
    let profiles = Profiles::shipped().unwrap();
    let claude = profiles.get("claude").unwrap();
    let spec = claude.install.as_ref().unwrap();
    let names = |v: Option<&str>| -> Vec<String> {
        let v = v.map(|v| v.parse::<Version>().unwrap());
        spec.events_for(v.as_ref(), &claude.min_version).iter().map(|e| e.native.clone()).collect()
    };
    let conservative = names(None);
    assert!(conservative.contains(&"PermissionRequest".to_owned()));
    assert!(!conservative.contains(&"StopFailure".to_owned()));
    assert!(names(Some("2.1.332")).contains(&"StopFailure".to_owned()));
    assert!(!names(Some("2.1.77")).contains(&"StopFailure".to_owned()));
    // First npm releases whose compiled hook-event list holds the name.
    assert!(names(Some("2.1.88")).contains(&"PermissionDenied".to_owned()));
    assert!(!names(Some("2.1.87")).contains(&"PermissionDenied".to_owned()));
    assert!(names(Some("2.1.76")).contains(&"PostCompact".to_owned()));
    assert!(!names(Some("2.1.75")).contains(&"PostCompact".to_owned()));
    for (native, _) in &spec.never {
        assert!(!names(Some("99.0.0")).contains(native));
    }
}

#[test]
fn conditions_test_presence_and_values() {
    let c = Condition { path: FieldPath::parse("a.b").unwrap(), test: Test::Present(true) };
    assert!(c.holds(&serde_json::json!({"a": {"b": 1}})));
    assert!(!c.holds(&serde_json::json!({"a": {"b": null}})));
    let c = Condition {
        path: FieldPath::parse("n").unwrap(),
        test: Test::AnyOf(vec![1.into(), "x".into()]),
    };
    assert!(c.holds(&serde_json::json!({"n": 1})));
    assert!(!c.holds(&serde_json::json!({"n": 2})));
    let c = Condition {
        path: FieldPath::parse("messages.1").unwrap(),
        test: Test::Prefix("Generate".into()),
    };
    assert!(c.holds(&serde_json::json!({"messages": ["x", "Generate a title"]})));
    assert!(!c.holds(&serde_json::json!({"messages": ["Generate a title"]})));
    assert!(!c.holds(&serde_json::json!({"messages": ["x", 3]})));
    assert!(c.holds(&serde_json::json!({"messages": {"1": "Generate"}})), "an object's key");
}

/// The profiles shown in the canonical table, in column order.
const TABLE_CLIS: &[&str] =
    &["claude", "codex", "gemini", "copilot", "cursor", "grok", "kimi", "antigravity"];

const TABLE_HEADER: &str = "<!-- Generated from profiles/*.toml by the test \
the_canonical_table_in_docs_matches_the_profiles (watcher/src/profile/tests.rs). \
Do not edit: run `HOOKLINE_BLESS=1 cargo test -p hookline canonical_table` and commit. -->

# Canonical events and the native events that produce them

Each cell lists the CLI's native events mapped to that kind, with the payload conditions a
rule needs (`if ...`) and the fields it sets to constants (`(...)`); the first matching rule
wins. `—`: the CLI never produces that kind. The last row says which kinds mean the CLI is at
its input prompt.

";

#[test]
fn the_canonical_table_in_docs_matches_the_profiles() {
    let doc = format!("{TABLE_HEADER}{}", Profiles::shipped().unwrap().canonical_table(TABLE_CLIS));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/canonical-table.md");
    if std::env::var_os("HOOKLINE_BLESS").is_some() {
        std::fs::write(&path, &doc).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == doc,
        "docs/canonical-table.md is out of date with the profiles: run \
         `HOOKLINE_BLESS=1 cargo test -p hookline canonical_table` and commit the result"
    );
}

#[test]
fn the_canonical_table_has_a_row_per_kind_and_a_column_per_cli() {
    let table = Profiles::shipped().unwrap().canonical_table(TABLE_CLIS);
    let lines: Vec<&str> = table.lines().collect();
    // Header, separator, one row per kind, input-ready.
    assert_eq!(lines.len(), 2 + KindName::COUNT + 1);
    for line in lines.iter().filter(|l| !l.starts_with("|---")) {
        assert_eq!(line.matches(" |").count(), 2 + TABLE_CLIS.len(), "{line}");
    }
    let row = |kind: &str| *lines.iter().find(|l| l.starts_with(&format!("| `{kind}` "))).unwrap();
    assert!(
        row("waiting_for_input")
            .contains("`Interrupt` (message = turn interrupted, reason = other)")
    );
    assert!(row("notification").contains("`PreCompress` if trigger = auto"));
    assert!(row("tool_end").contains("`AfterTool` if tool_response.error present (ok = false)"));
}

#[test]
fn an_overlay_replaces_pane_and_deliver_keys_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let user = tmp.path().join("user");
    std::fs::create_dir(&user).unwrap();
    let text = "[pane]\nbusy = [\"Working hard\"]\n\n[deliver]\nenter-delay = \"1s\"\n";
    write(&user, "claude.toml", text);
    let shipped = Profiles::shipped().unwrap();
    let before = shipped.get("claude").unwrap();
    let profiles =
        Profiles::load(&OverlayDirs { user: Some(user.clone()), project: None }).unwrap();
    let claude = profiles.get("claude").unwrap();
    assert_eq!(claude.pane.busy, ["Working hard"]);
    assert_eq!(claude.pane.prompt, before.pane.prompt, "keys not given stay");
    assert!(!claude.pane.dialog.is_empty());
    assert_eq!(claude.deliver.enter_delay, Duration::from_secs(1));
    assert_eq!(claude.deliver.prompt_field, before.deliver.prompt_field);
    write(&user, "claude.toml", "[deliver]\nenter-delay = \"soon\"\n");
    let e = Profiles::load(&OverlayDirs { user: Some(user), project: None }).unwrap_err();
    assert!(e.to_string().contains(":2:1: deliver.enter-delay: \"soon\" is not a duration"), "{e}");
}

#[test]
fn a_plugin_dialect_takes_no_events_and_a_hooks_dialect_needs_some() {
    let profile = |install: &str| {
        format!(
            "version = 1\nname = \"agent\"\nbinary = \"agent\"\n\n[versions]\nmin = \"0.1.0\"\n\n\
             [fields]\nsession-id = [\"session_id\"]\n\n[[map]]\nnative = \"Stop\"\nkind = \"stop\"\n\n\
             [install]\n{install}\n[install.scopes]\nuser = \"~/.agent/hookline.js\"\n"
        )
    };
    let load = |text: String| {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "agent.toml", &text);
        Profiles::load(&OverlayDirs { user: Some(tmp.path().to_owned()), project: None })
    };
    let plugin = load(profile("dialect = \"opencode_plugin\"\n")).unwrap();
    assert!(plugin.get("agent").unwrap().install.as_ref().unwrap().events.is_empty());
    let events = "[[install.events]]\nnative = \"Stop\"\n";
    let err = load(profile(&format!("dialect = \"opencode_plugin\"\n{events}"))).unwrap_err();
    assert!(err.message.contains("registers no events"), "{err}");
    let err = load(profile("dialect = \"cursor\"\n")).unwrap_err();
    assert!(err.message.contains("at least one event"), "{err}");
}
