//! `hookline install`, `uninstall` and `doctor`, run as a user would, on real files.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A home, state and config dir, a PATH of fakes, and a project dir to run in.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    bin: PathBuf,
    project: PathBuf,
    relay: PathBuf,
    extra_env: Vec<(String, String)>,
}

const SILENT_RELAY: &str = "#!/bin/sh\nexit 0\n";

fn minimal_profile(name: &str, install: &str) -> String {
    format!(
        "version = 1\nname = \"{name}\"\nbinary = \"{name}\"\n\n[versions]\nmin = \"0.1.0\"\n\n[fields]\nsession-id = [\"session_id\"]\n\n[[map]]\nnative = \"Stop\"\nkind = \"stop\"\n\n{install}"
    )
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        let home = root.join("home");
        let bin = root.join("bin");
        let project = root.join("project");
        for d in [&home, &bin, &project] {
            fs::create_dir_all(d).unwrap();
        }
        // A relay in a directory whose name needs quoting.
        let relay_dir = root.join("Hook Tools/it's");
        fs::create_dir_all(&relay_dir).unwrap();
        let relay = relay_dir.join("hookline-relay");
        let world = World { _tmp: tmp, root, home, bin, project, relay, extra_env: Vec::new() };
        world.script(&world.relay, SILENT_RELAY);
        world
    }

    fn script(&self, path: &Path, body: &str) {
        fs::write(path, body).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Puts a fake CLI on PATH that prints `version_output` for `--version`.
    fn fake_cli(&self, name: &str, version_output: &str) {
        self.script(&self.bin.join(name), &format!("#!/bin/sh\necho '{version_output}'\n"));
    }

    fn overlay(&self, name: &str, text: &str) {
        let dir = self.root.join("config/hookline/profiles");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_of(Path::new(env!("CARGO_BIN_EXE_hookline")), args)
    }

    /// [`World::command`], running another copy of `hookline`.
    fn command_of(&self, hookline: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(hookline);
        cmd.args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()));
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn install(&self, cli: &str, extra: &[&str]) -> String {
        let relay = self.relay.to_str().unwrap().to_owned();
        let mut args = vec!["install", cli, "--relay", &relay];
        args.extend(extra);
        self.ok(&args)
    }

    fn doctor(&self, extra: &[&str]) -> (i32, String) {
        let relay = self.relay.to_str().unwrap().to_owned();
        let mut args = vec!["doctor", "--relay", &relay];
        args.extend(extra);
        let out = self.run(&args);
        (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
    }

    fn claude_settings(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }

    /// Writes the user's Claude settings file, its directory too.
    fn write_claude_settings(&self, text: &str) -> PathBuf {
        let path = self.claude_settings();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// The relay command as install quotes it.
    fn quoted_relay(&self) -> String {
        format!("'{}'", self.relay.display().to_string().replace('\'', r"'\''"))
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

const REALISTIC: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "WebFetch(domain:docs.rs)"
    ],
    "defaultMode": "acceptEdits"
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$(jq -r .tool_input.file_path)\"",
            "timeout": 30,
            "statusMessage": "Formatting..."
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
            "url": "http://127.0.0.1:9999/hook",
            "timeout": 2
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/agent-deck hook session-start",
            "async": true
          }
        ]
      }
    ]
  },
  "enabledPlugins": {
    "workmux-status@workmux": true
  },
  "includeCoAuthoredBy": false
}
"#;

#[test]
fn claude_install_follows_the_detected_version_and_is_idempotent() {
    let w = World::new();
    w.fake_cli("claude", "2.1.332 (Claude Code)");
    let out = w.install("claude", &[]);
    assert!(out.starts_with("Claude Code 2.1.332 (from `claude --version`): 17 events\n"), "{out}");
    assert!(out.contains("hooks.StopFailure: added\n"), "{out}");
    assert!(out.contains(&format!("wrote {}\n", w.claude_settings().display())), "{out}");
    let v = json(&w.claude_settings());
    let command = v["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
    assert_eq!(command, format!("{} --cli claude", w.quoted_relay()));
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["timeout"], 10);
    assert!(v["hooks"].get("WorktreeCreate").is_none());

    let again = w.install("claude", &[]);
    assert_eq!(again.matches(": already installed\n").count(), 17, "{again}");
    assert!(again.contains("hooks.Stop: already installed\n"));
    assert!(again.ends_with("nothing to change\n"), "{again}");

    // An older Claude: events it does not know are removed, with the reason.
    w.fake_cli("claude", "2.1.77 (Claude Code)");
    let older = w.install("claude", &[]);
    assert!(
        older.contains("hooks.StopFailure: removed (Claude Code 2.1.77 does not know it)\n"),
        "{older}"
    );
    assert!(json(&w.claude_settings())["hooks"].get("StopFailure").is_none());
}

#[test]
fn without_the_cli_on_path_the_newest_versions_events_are_registered() {
    let w = World::new();
    let out = w.install("claude", &[]);
    assert!(
        out.starts_with(
            "claude is not on PATH: registering the 17 events the newest Claude Code knows"
        ),
        "{out}"
    );
    let settings = json(&w.claude_settings());
    for event in ["PermissionDenied", "TaskCreated", "TaskCompleted", "StopFailure"] {
        assert!(settings["hooks"].get(event).is_some(), "{event}: {settings}");
    }
    assert_eq!(settings["hooks"].as_object().unwrap().len(), 17, "{settings}");
}

#[test]
fn claude_config_dir_is_honoured() {
    let mut w = World::new();
    let dir = w.root.join("alt-claude");
    w.extra_env.push(("CLAUDE_CONFIG_DIR".into(), dir.display().to_string()));
    let out = w.install("claude", &[]);
    assert!(out.contains(&format!("settings: {}/settings.json (user)", dir.display())), "{out}");
    assert!(dir.join("settings.json").exists());
    assert!(!w.claude_settings().exists());
}

#[test]
fn install_then_uninstall_gives_back_realistic_files_byte_for_byte() {
    let w = World::new();
    let files = [
        REALISTIC,
        "{\n  \"model\": \"opus\"\n}\n",
        "{\n    \"env\": {\n        \"DISABLE_TELEMETRY\": \"1\"\n    }\n}",
        "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"say done\"}]}]},\"name\":\"Ren\\u00e9e\"}\n",
    ];
    let path = w.project.join(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    for original in files {
        fs::write(&path, original).unwrap();
        let out = w.install("claude", &["--scope", "project"]);
        assert_eq!(
            out.contains("note: the file is written on one line"),
            !original.trim().contains('\n'),
            "{out}"
        );
        let installed = fs::read_to_string(&path).unwrap();
        assert_ne!(installed, original);
        let out = w.ok(&["uninstall", "claude", "--scope", "project"]);
        assert!(out.contains("hooks.Stop: removed\n"), "{out}");
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
        let bak = w.project.join(".claude/settings.json.hookline.bak");
        assert_eq!(fs::read_to_string(bak).unwrap(), installed);
    }
    let none = w.ok(&["uninstall", "claude", "--scope", "project"]);
    assert!(none.contains("no hookline hooks found\nnothing to change\n"), "{none}");
}

#[test]
fn other_tools_and_the_bmad_loop_relay_keep_every_field() {
    let w = World::new();
    let path = w.claude_settings();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, REALISTIC).unwrap();
    w.install("claude", &[]);
    let before: Value = serde_json::from_str(REALISTIC).unwrap();
    let after = json(&path);
    for event in ["PreToolUse", "Stop", "SessionStart"] {
        let old = before["hooks"][event].as_array().unwrap();
        let new = after["hooks"][event].as_array().unwrap();
        assert_eq!(new[..old.len()], old[..], "{event}");
        assert_eq!(new.len(), old.len() + 1);
    }
    for key in ["$schema", "permissions", "enabledPlugins", "includeCoAuthoredBy"] {
        assert_eq!(after[key], before[key]);
    }
    let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["$schema", "permissions", "hooks", "enabledPlugins", "includeCoAuthoredBy"]);
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let w = World::new();
    let path = w.claude_settings();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let out = w.install("claude", &["--dry-run"]);
    assert!(out.contains(&format!("--- {}\n+++ {} (hookline)\n@@ -1,3 +1,192 @@\n {{\n-  \"model\": \"opus\"\n+  \"model\": \"opus\",\n+  \"hooks\": {{\n", path.display(), path.display())), "{out}");
    assert!(out.ends_with("dry run: nothing written\n"), "{out}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\n  \"model\": \"opus\"\n}\n");
    assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    assert!(!w.root.join("state/hookline/installs.json").exists());
}

#[test]
fn broken_files_are_refused_untouched_with_path_position_and_fix() {
    let w = World::new();
    let path = w.claude_settings();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let cases: [(&[u8], String); 4] = [
        (
            b"{\n  \"model\": \"opus\", // best\n}\n",
            "2:20: not valid JSON: comments are not allowed".into(),
        ),
        (b"{\n  \"model\": \"opus\",\n}\n", "3:1: not valid JSON: trailing comma".into()),
        (b"{\"model\": \"\xff\"}", "1:12: not UTF-8".into()),
        (b"{\"hooks\": {\"Stop\": {}}}", "1:20: hooks.Stop is not an array".into()),
    ];
    for (bytes, message) in cases {
        fs::write(&path, bytes).unwrap();
        let relay = w.relay.to_str().unwrap().to_owned();
        let out = w.run(&["install", "claude", "--relay", &relay]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.starts_with(&format!("hookline: {}:{message}\n  fix: ", path.display())),
            "{stderr}"
        );
        assert_eq!(fs::read(&path).unwrap(), bytes);
    }
    fs::write(&path, "{}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let out = w.run(&["install", "claude", "--relay", w.relay.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("is read-only; left untouched\n  fix: make it writable"), "{stderr}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}");
}

#[test]
fn a_dangling_symlink_is_refused_and_a_dotfiles_link_is_written_through() {
    let w = World::new();
    let claude = w.home.join(".claude");
    fs::create_dir_all(&claude).unwrap();
    symlink("../dotfiles/claude/settings.json", claude.join("settings.json")).unwrap();
    let out = w.run(&["install", "claude", "--relay", w.relay.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("which does not exist; left untouched"));
    assert!(!w.home.join("dotfiles").exists());

    fs::create_dir_all(w.home.join("dotfiles/claude")).unwrap();
    fs::write(w.home.join("dotfiles/claude/settings.json"), "{}\n").unwrap();
    let out = w.install("claude", &[]);
    assert!(out.contains("(user) -> "), "{out}");
    assert!(fs::symlink_metadata(claude.join("settings.json")).unwrap().file_type().is_symlink());
    assert!(
        fs::read_to_string(w.home.join("dotfiles/claude/settings.json"))
            .unwrap()
            .contains("--cli claude")
    );
}

#[test]
fn installs_racing_in_separate_processes_leave_one_entry_per_event() {
    let w = World::new();
    let relay = w.relay.to_str().unwrap().to_owned();
    let children: Vec<_> = (0..4)
        .map(|_| {
            w.command(&["install", "claude", "--relay", &relay])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let v = json(&w.claude_settings());
    let hooks = v["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 17);
    for (event, groups) in hooks {
        assert_eq!(groups.as_array().unwrap().len(), 1, "{event}");
    }
}

#[test]
fn every_dialect_writes_its_own_file_and_shape() {
    let mut w = World::new();
    w.overlay(
        "codex",
        &minimal_profile("codex", "[install]\ndialect = \"codex\"\ntimeout-secs = 10\ndefault-scope = \"user\"\nnotes = [\"Codex skips new hooks until you trust them in /hooks.\"]\n\n[install.scopes]\nuser = \"${CODEX_HOME:-~/.codex}/hooks.json\"\nproject = \".codex/hooks.json\"\n\n[[install.events]]\nnative = \"Stop\"\n\n[[install.events]]\nnative = \"SessionStart\"\nmatcher = \"startup|resume\"\n"),
    );
    w.overlay(
        "gemini",
        &minimal_profile("gemini", "[install]\ndialect = \"gemini\"\ntimeout-secs = 10\ndefault-scope = \"user\"\n\n[install.scopes]\nuser = \"${GEMINI_CLI_HOME:-~}/.gemini/settings.json\"\n\n[[install.events]]\nnative = \"AfterAgent\"\n"),
    );
    w.overlay(
        "copilot",
        &minimal_profile("copilot", "[install]\ndialect = \"copilot\"\ntimeout-secs = 10\nevent-arg = true\ndefault-scope = \"user\"\n\n[install.scopes]\nuser = \"${COPILOT_HOME:-~/.copilot}/hooks/hookline.json\"\nproject = \".github/hooks/hookline.json\"\n\n[[install.events]]\nnative = \"agentStop\"\n"),
    );
    w.overlay(
        "cursor",
        &minimal_profile("cursor", "[install]\ndialect = \"cursor\"\ntimeout-secs = 10\ndefault-scope = \"user\"\n\n[install.scopes]\nuser = \"~/.cursor/hooks.json\"\nproject = \".cursor/hooks.json\"\n\n[[install.events]]\nnative = \"stop\"\n"),
    );
    w.extra_env.push(("CODEX_HOME".into(), w.root.join("codex-home").display().to_string()));
    w.extra_env.push(("GEMINI_CLI_HOME".into(), w.root.join("gem").display().to_string()));
    w.extra_env.push(("COPILOT_HOME".into(), w.root.join("cop").display().to_string()));
    let relay = w.quoted_relay();

    let out = w.install("codex", &[]);
    assert!(
        out.ends_with("note: Codex skips new hooks until you trust them in /hooks.\n"),
        "{out}"
    );
    let v = json(&w.root.join("codex-home/hooks.json"));
    assert_eq!(
        v["hooks"]["SessionStart"][0],
        serde_json::json!({"matcher": "startup|resume", "hooks": [{"type": "command", "command": format!("{relay} --cli codex"), "timeout": 10}]})
    );

    w.install("gemini", &[]);
    let v = json(&w.root.join("gem/.gemini/settings.json"));
    assert_eq!(
        v["hooks"]["AfterAgent"][0],
        serde_json::json!({"hooks": [{"name": "hookline", "type": "command", "command": format!("{relay} --cli gemini"), "timeout": 10000}]})
    );

    w.install("copilot", &[]);
    let file = w.root.join("cop/hooks/hookline.json");
    assert_eq!(
        json(&file),
        serde_json::json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": format!("{relay} --cli copilot --event agentStop"), "timeoutSec": 10}]}})
    );
    let out = w.ok(&["uninstall", "copilot"]);
    assert!(out.contains("(it held only hookline's hooks)"), "{out}");
    assert!(!file.exists());

    w.install("cursor", &[]);
    assert_eq!(
        json(&w.home.join(".cursor/hooks.json")),
        serde_json::json!({"version": 1, "hooks": {"stop": [{"command": format!("{relay} --cli cursor"), "timeout": 10}]}})
    );
    let (code, report) = w.doctor(&[]);
    assert!(report.contains("relay "), "{report}");
    // Codex skips hooks nobody trusted in its /hooks screen: the one problem left.
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("Codex will skip 2 of hookline's 2 hooks: not trusted (no trust record)"),
        "{report}"
    );
    assert!(report.ends_with("1 problem found\n"), "{report}");
}

#[test]
fn doctor_passes_after_install_and_names_each_problem_with_its_fix() {
    let w = World::new();
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "claude: the relay is registered in no scope\n     fix: hookline install claude\n"
        ),
        "{out}"
    );

    w.install("claude", &[]);
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("registered for 17 events"), "{out}");
    assert!(out.contains(&format!("ok relay {} runs", w.relay.display())), "{out}");

    // A newer relay elsewhere: the registered one is stale.
    let other = w.root.join("bin/hookline-relay");
    w.script(&other, SILENT_RELAY);
    let out = w.run(&["doctor", "claude", "--relay", other.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text.contains(&format!(
            "stale: 17 entries differ from what install writes now (registered: {} --cli claude)",
            w.quoted_relay()
        )),
        "{text}"
    );
    assert!(text.contains("fix: hookline install claude --scope user"), "{text}");

    // A relay that talks: the CLI would show its output.
    w.script(&w.relay, "#!/bin/sh\necho oops\n");
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 1);
    assert!(out.contains("printed \"oops\""), "{out}");
    w.script(&w.relay, SILENT_RELAY);

    // Claude rewrote its settings from a stale copy: the hooks are gone.
    fs::write(w.claude_settings(), "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 1);
    assert!(out.contains("hookline's hooks were removed by another program"), "{out}");

    // After an uninstall, no hooks is what the user asked for.
    w.install("claude", &[]);
    w.ok(&["uninstall", "claude"]);
    let (code, out) = w.doctor(&[]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn doctor_checks_the_events_dir_diagnostics_and_last_events() {
    use hookline::format::diag;
    use hookline::format::store::{EventsDir, WriteOptions};

    let w = World::new();
    w.install("claude", &[]);
    let dir = w.root.join("state/hookline/events");
    let events = EventsDir::create(&dir).unwrap();
    let now = hookline::format::clock::now_ns();
    let envelope = format!(
        "{{\"v\":1,\"seq\":1,\"ts_ns\":{},\"cli\":\"claude\",\"event\":\"Stop\",\"tag\":null,\"pid\":1,\"ppid\":1,\"host_pid\":null,\"host_session_id\":null,\"relay_version\":\"0.1.0\",\"truncated\":false,\"bytes\":2}}",
        now - 90_000_000_000
    );
    events
        .write_event(1, now, &WriteOptions::default(), |_, _| envelope.clone().into_bytes())
        .unwrap();
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("last event 1m30s ago (Stop)"), "{out}");
    assert!(out.contains("present, owned by you, not writable by others"), "{out}");

    diag::append(
        &hookline::format::location::diagnostics_path(&dir),
        &diag::Record {
            ts_ns: now,
            pid: 1,
            cli: "claude".into(),
            event: Some("Stop".into()),
            level: diag::Level::Error,
            message: "cannot write event".into(),
            events_dir: None,
        },
    );
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 1);
    assert!(out.contains("fix: chmod go-w"), "{out}");
    assert!(out.contains("(claude Stop): cannot write event"), "{out}");
    assert!(out.contains("the relay reported 1 error(s) in the last 24h"), "{out}");
}

#[test]
fn doctor_counts_only_the_relay_failures_of_its_own_events_directory_as_its_loss() {
    let mut w = World::new();
    w.install("claude", &[]);
    let run = w.root.join("run");
    fs::create_dir_all(&run).unwrap();
    // The real relay, run as a hook for an events directory that cannot be created (its
    // parent is a file): its failure goes to the user's fallback log, shared by every events
    // directory.
    let relay_for = |events_dir: &Path| {
        let mut relay = Command::new(super::watch::relay());
        relay
            .args(["--cli", "claude"])
            .env_clear()
            .env("HOOKLINE_EVENTS_DIR", events_dir)
            .env("XDG_RUNTIME_DIR", &run)
            .stdin(std::process::Stdio::piped());
        let mut child = relay.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"{\"hook_event_name\":\"Stop\"}").unwrap();
        assert!(child.wait().unwrap().success());
    };
    let blocker = w.root.join("a-file");
    fs::write(&blocker, "").unwrap();
    let other = blocker.join("events");
    relay_for(&other);
    let log = run.join("hookline/relay-failures.log");
    assert!(
        fs::read_to_string(&log).unwrap().contains("events_dir"),
        "the relay names its directory"
    );

    // Another directory's failure: mentioned as that directory's, not this one's loss.
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "-- another events directory, {}: the relay could not write",
            other.display()
        )),
        "{out}"
    );
    assert!(!out.contains("events may have been lost"), "{out}");

    // The directory doctor checks fails the same way: a problem.
    let own = w.root.join("another-file");
    fs::write(&own, "").unwrap();
    let own = own.join("events");
    relay_for(&own);
    w.extra_env.push(("HOOKLINE_EVENTS_DIR".into(), own.display().to_string()));
    let (code, out) = w.doctor(&["claude"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("!! the relay could not write its diagnostics 1 time(s) in the last 24h"),
        "{out}"
    );
    assert!(out.contains("events may have been lost"), "{out}");
    assert!(out.contains(&format!("-- another events directory, {}", other.display())), "{out}");
}

#[test]
fn empty_containers_the_user_had_come_back_byte_for_byte() {
    let w = World::new();
    let path = w.project.join(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let originals = [
        "{\n  \"hooks\": {},\n  \"model\": \"opus\"\n}\n",
        "{\n  \"hooks\": {\n    \"Stop\": [],\n    \"SessionStart\": []\n  }\n}\n",
    ];
    for original in originals {
        fs::write(&path, original).unwrap();
        w.install("claude", &["--scope", "project"]);
        assert_ne!(fs::read_to_string(&path).unwrap(), original);
        let out = w.ok(&["uninstall", "claude", "--scope", "project"]);
        assert!(out.contains("hooks.Stop: removed\n"), "{out}");
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
    }
}

#[test]
fn local_scope_writes_settings_local_json_and_uninstall_removes_the_file_it_created() {
    let w = World::new();
    let local = w.project.join(".claude/settings.local.json");
    let out = w.install("claude", &["--scope", "local"]);
    assert!(out.contains(&format!("settings: {} (local)\n", local.display())), "{out}");
    assert!(json(&local)["hooks"]["Stop"][0]["hooks"][0]["command"].is_string());
    assert!(!w.project.join(".claude/settings.json").exists(), "only the local file");
    assert!(!w.claude_settings().exists());
    let out = w.ok(&["uninstall", "claude", "--scope", "local"]);
    assert!(out.contains("(it held only hookline's hooks)"), "{out}");
    assert!(!local.exists(), "install created it, uninstall takes it away");
}

#[test]
fn settings_path_is_written_and_a_file_the_user_changed_is_kept_by_uninstall() {
    let w = World::new();
    let custom = w.root.join("custom/my settings.json");
    let given = custom.to_str().unwrap();
    let out = w.install("claude", &["--settings", given]);
    assert!(out.contains(&format!("settings: {given} (custom)\n")), "{out}");
    assert!(!w.claude_settings().exists());
    let installed = fs::read_to_string(&custom).unwrap();
    // The user adds a key of their own: the file is theirs now too.
    fs::write(&custom, installed.replacen("{\n", "{\n  \"model\": \"opus\",\n", 1)).unwrap();
    let out = w.ok(&["uninstall", "claude", "--settings", given]);
    assert!(out.contains(&format!("wrote {given}")), "{out}");
    assert_eq!(fs::read_to_string(&custom).unwrap(), "{\n  \"model\": \"opus\"\n}\n");
    // A relative --settings is taken from the current directory.
    w.install("claude", &["--settings", "rel.json"]);
    assert!(w.project.join("rel.json").exists());
    w.ok(&["uninstall", "claude", "--settings", "rel.json"]);
    assert!(!w.project.join("rel.json").exists());
}

#[test]
fn doctor_reports_a_registered_relay_that_is_missing_or_not_executable() {
    let w = World::new();
    w.install("claude", &[]);
    let relay = w.relay.display().to_string();
    let (code, _) = w.doctor(&["claude"]);
    assert_eq!(code, 0);
    // Without --relay: the one beside `hookline` is the one install would register now.
    let doctor = || {
        let out = w.run(&["doctor", "claude"]);
        (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
    };
    let problem =
        format!("relay {relay} is missing or not executable\n     fix: hookline install claude");
    fs::set_permissions(&w.relay, fs::Permissions::from_mode(0o644)).unwrap();
    let (code, out) = doctor();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&problem), "{out}");
    fs::remove_file(&w.relay).unwrap();
    let (code, out) = doctor();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&problem), "{out}");
}

/// The four other dialects through their shipped profiles: the path, the file's shape.
fn shipped_targets(w: &World) -> [(&'static str, PathBuf); 4] {
    [
        ("codex", w.home.join(".codex/hooks.json")),
        ("gemini", w.home.join(".gemini/settings.json")),
        ("copilot", w.home.join(".copilot/hooks/hookline.json")),
        ("cursor", w.home.join(".cursor/hooks.json")),
    ]
}

#[test]
fn broken_files_of_every_dialect_are_refused_untouched_with_their_position() {
    let w = World::new();
    let relay = w.relay.to_str().unwrap().to_owned();
    for (cli, path) in shipped_targets(&w) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = b"{\n  \"version\": 1,\n  \"hooks\": {,}\n}\n";
        fs::write(&path, bytes).unwrap();
        for op in ["install", "uninstall"] {
            let out = w.run(&[op, cli, "--relay", &relay][..if op == "install" { 4 } else { 2 }]);
            assert_eq!(out.status.code(), Some(2), "{cli} {op}");
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(
                stderr.starts_with(&format!("hookline: {}:3:13: not valid JSON", path.display())),
                "{cli} {op}: {stderr}"
            );
            assert_eq!(fs::read(&path).unwrap(), bytes, "{cli} {op}");
        }
    }
}

#[test]
fn a_symlinked_settings_file_of_every_dialect_stays_a_link_to_the_updated_target() {
    let w = World::new();
    for (cli, path) in shipped_targets(&w) {
        let target = w.root.join(format!("dotfiles/{cli}/settings.json"));
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let original = "{\n  \"mine\": true\n}\n";
        fs::write(&target, original).unwrap();
        symlink(&target, &path).unwrap();
        let out = w.install(cli, &[]);
        assert!(out.contains(&format!("{} (user) -> {}", path.display(), target.display())));
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "{cli}");
        let v = json(&target);
        assert_eq!(v["mine"], true, "{cli}");
        assert!(!v["hooks"].as_object().unwrap().is_empty(), "{cli}");
        w.ok(&["uninstall", cli]);
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "{cli}");
        assert_eq!(fs::read_to_string(&target).unwrap(), original, "{cli}");
    }
}

#[test]
fn the_shipped_copilot_and_cursor_profiles_install_every_event_they_list() {
    let w = World::new();
    let relay = w.quoted_relay();
    let out = w.install("copilot", &[]);
    assert!(out.contains("registering the 12 events"), "{out}");
    let v = json(&w.home.join(".copilot/hooks/hookline.json"));
    assert_eq!(v["version"], 1);
    let hooks = v["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 12, "{v}");
    assert!(hooks.get("userPromptTransformed").is_none());
    assert!(hooks.get("permissionRequest").is_none());
    assert_eq!(
        hooks["preToolUse"],
        serde_json::json!([{"type": "command", "bash": format!("{relay} --cli copilot --event preToolUse"), "timeoutSec": 10}])
    );

    let out = w.install("cursor", &[]);
    assert!(out.contains("registering the 9 events"), "{out}");
    let v = json(&w.home.join(".cursor/hooks.json"));
    assert_eq!(v["version"], 1);
    let hooks = v["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 9, "{v}");
    for never in ["preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"] {
        assert!(hooks.get(never).is_none(), "{never}");
    }
    assert_eq!(
        hooks["stop"],
        serde_json::json!([{"command": format!("{relay} --cli cursor"), "timeout": 10}])
    );
    let (code, out) = w.doctor(&["copilot"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = w.doctor(&["cursor"]);
    assert_eq!(code, 0, "{out}");
}

/// Qwen Code's settings as a user has them: auth, model, approval mode, a hook of another tool.
const QWEN_SETTINGS: &str = r#"{
  "security": {
    "auth": {
      "selectedType": "openai"
    }
  },
  "model": {
    "name": "qwen3-coder-plus"
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'qwen done'",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "tools": {
    "approvalMode": "default"
  }
}
"#;

/// Factory Droid's settings as Droid itself rewrites them at start: a custom model, the
/// session defaults, a trusted folder.
const DROID_SETTINGS: &str = r#"{
  "customModels": [
    {
      "model": "mock-model",
      "id": "custom:Mock-0",
      "index": 0,
      "baseUrl": "http://127.0.0.1:8080/v1",
      "apiKey": "sk-not-a-key",
      "displayName": "Mock",
      "maxOutputTokens": 4096,
      "noImageSupport": true,
      "provider": "generic-chat-completion-api"
    }
  ],
  "sessionDefaultSettings": {
    "model": "custom:Mock-0"
  },
  "logoAnimation": "off",
  "trustedFolders": {
    "/home/dev/work/proj": {
      "trustedAt": "2026-12-01T21:30:56.736Z"
    }
  }
}
"#;

#[test]
fn qwen_and_droid_install_into_their_users_settings_keep_every_key_and_give_it_back() {
    let w = World::new();
    w.fake_cli("qwen", "0.24.4");
    w.fake_cli("droid", "0.225.2");
    let relay = w.quoted_relay();
    for (cli, path, original, first, events, kept) in [
        (
            "qwen",
            w.home.join(".qwen/settings.json"),
            QWEN_SETTINGS,
            "Qwen Code 0.24.4 (from `qwen --version`): 17 events\n",
            17,
            &["security", "model", "hooks", "tools"][..],
        ),
        (
            "droid",
            w.home.join(".factory/settings.json"),
            DROID_SETTINGS,
            "Factory Droid 0.225.2 (from `droid --version`): 9 events\n",
            9,
            &["customModels", "sessionDefaultSettings", "logoAnimation", "trustedFolders", "hooks"]
                [..],
        ),
    ] {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, original).unwrap();
        let out = w.install(cli, &["--scope", "user"]);
        assert!(out.starts_with(first), "{out}");
        assert!(out.contains(&format!("settings: {} (user)\n", path.display())), "{out}");
        let before: Value = serde_json::from_str(original).unwrap();
        let v = json(&path);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, kept, "{cli}");
        for (key, value) in before.as_object().unwrap() {
            if key != "hooks" {
                assert_eq!(v[key], *value, "{cli} {key}");
            }
        }
        let hooks = v["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), events, "{cli}: {v}");
        assert_eq!(
            hooks["PreToolUse"],
            serde_json::json!([{"matcher": "*", "hooks": [{"type": "command", "command": format!("{relay} --cli {cli}"), "timeout": 10}]}]),
            "{cli}"
        );
        assert_eq!(
            hooks["Stop"].as_array().unwrap().last().unwrap(),
            &serde_json::json!({"hooks": [{"type": "command", "command": format!("{relay} --cli {cli}"), "timeout": 10}]}),
            "{cli}"
        );
        let again = w.install(cli, &["--scope", "user"]);
        assert!(again.ends_with("nothing to change\n"), "{cli}: {again}");
        let (code, report) = w.doctor(&[cli]);
        assert_eq!(code, 0, "{report}");
        assert!(report.contains(&format!("registered for {events} events")), "{report}");
        w.ok(&["uninstall", cli, "--scope", "user"]);
        assert_eq!(fs::read_to_string(&path).unwrap(), original, "{cli}");
    }
    let qwen = &json(&w.home.join(".qwen/settings.json"))["hooks"]["Stop"];
    assert_eq!(qwen.as_array().unwrap().len(), 1, "the other tool's hook stays: {qwen}");
}

#[test]
fn qwen_home_and_factory_home_override_move_the_user_settings() {
    let mut w = World::new();
    let qwen_home = w.root.join("qwen-home");
    let factory = w.root.join("factory-home");
    w.extra_env.push(("QWEN_HOME".into(), qwen_home.display().to_string()));
    w.extra_env.push(("FACTORY_HOME_OVERRIDE".into(), factory.display().to_string()));
    w.install("qwen", &["--scope", "user"]);
    w.install("droid", &["--scope", "user"]);
    assert!(json(&qwen_home.join("settings.json"))["hooks"]["Notification"].is_array());
    assert!(json(&factory.join(".factory/settings.json"))["hooks"]["Notification"].is_array());
    assert!(!w.home.join(".qwen").exists() && !w.home.join(".factory").exists());
}

#[test]
fn qwen_and_droid_settings_that_do_not_parse_or_link_away_are_handled_like_claudes() {
    let w = World::new();
    let relay = w.relay.to_str().unwrap().to_owned();
    for (cli, path) in [
        ("qwen", w.home.join(".qwen/settings.json")),
        ("droid", w.home.join(".factory/settings.json")),
    ] {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = b"{\n  \"model\": {\"name\": \"m\"},\n  \"hooks\": {\"Stop\": [}\n}\n";
        fs::write(&path, bytes).unwrap();
        for op in ["install", "uninstall"] {
            let args = [op, cli, "--scope", "user", "--relay", &relay];
            let out = w.run(&args[..if op == "install" { 6 } else { 4 }]);
            assert_eq!(out.status.code(), Some(2), "{cli} {op}");
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(
                stderr.starts_with(&format!("hookline: {}:3:22: not valid JSON", path.display())),
                "{cli} {op}: {stderr}"
            );
            assert_eq!(fs::read(&path).unwrap(), bytes, "{cli} {op}");
        }
        // A dotfiles link: written through, still a link.
        let target = w.root.join(format!("dotfiles/{cli}.json"));
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, "{\n  \"mine\": true\n}\n").unwrap();
        fs::remove_file(&path).unwrap();
        symlink(&target, &path).unwrap();
        w.install(cli, &["--scope", "user"]);
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "{cli}");
        assert_eq!(json(&target)["mine"], true, "{cli}");
        assert!(json(&target)["hooks"]["Stop"].is_array(), "{cli}");
    }
}

#[test]
fn doctor_names_a_droid_hooks_json_that_could_take_the_place_of_settings_json() {
    let w = World::new();
    w.install("droid", &[]);
    let (code, report) = w.doctor(&["droid"]);
    assert_eq!(code, 0, "{report}");
    assert!(!report.contains("hooks.json"), "{report}");
    let hooks_json = w.home.join(".factory/hooks.json");
    fs::write(&hooks_json, "{\"hooks\": {}}\n").unwrap();
    let (code, report) = w.doctor(&["droid"]);
    assert_eq!(code, 0, "an ignored file is no problem today: {report}");
    assert!(
        report.contains(&format!(
            "{} exists: Factory documents it as Droid's hooks file",
            hooks_json.display()
        )),
        "{report}"
    );
}

/// Runs `cmd` and gives up (killing it) after `limit`: a command that blocks fails the test
/// instead of hanging it.
fn run_bounded(mut cmd: Command, limit: std::time::Duration) -> Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("{cmd:?} blocked for {limit:?}: {}", String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

/// A character device to point a settings link at: one made in `dir` when we may (root:
/// then nothing of the machine's is at stake), else the machine's null device.
fn char_device(dir: &Path) -> PathBuf {
    let own = dir.join("null-device");
    let c = std::ffi::CString::new(own.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if made == 0 { own } else { PathBuf::from("/dev/null") }
}

#[test]
fn a_device_or_a_fifo_at_the_settings_path_is_refused_without_blocking_or_writing() {
    use std::os::unix::fs::FileTypeExt;
    let w = World::new();
    let claude = w.home.join(".claude");
    fs::create_dir_all(&claude).unwrap();
    let settings = w.claude_settings();
    let device = char_device(&w.root);
    let fifo = w.root.join("pipe");
    mkfifo(&fifo);
    let relay = w.relay.to_str().unwrap().to_owned();
    let limit = std::time::Duration::from_secs(20);
    // A link to a device, a link to a FIFO, a FIFO itself.
    let cases: [(&str, &dyn Fn()); 3] = [
        ("a character device", &|| symlink(&device, &settings).unwrap()),
        ("a named pipe (FIFO)", &|| symlink(&fifo, &settings).unwrap()),
        ("a named pipe (FIFO)", &|| mkfifo(&settings)),
    ];
    for (kind, make) in cases {
        let _ = fs::remove_file(&settings);
        make();
        for args in [
            vec!["install", "claude", "--relay", &relay],
            vec!["install", "claude", "--relay", &relay, "--dry-run"],
            vec!["uninstall", "claude"],
        ] {
            let out = run_bounded(w.command(&args), limit);
            assert_eq!(out.status.code(), Some(2), "{kind} {args:?}");
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(
                stderr.contains(&format!(
                    "is {kind}, not a regular file; left untouched\n  fix: move "
                )),
                "{kind} {args:?}: {stderr}"
            );
        }
        let out = run_bounded(w.command(&["doctor", "claude", "--relay", &relay]), limit);
        let report = String::from_utf8(out.stdout).unwrap();
        assert!(report.contains(&format!("is {kind}, not a regular file")), "{report}");
        assert!(fs::metadata(&device).unwrap().file_type().is_char_device());
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        // Nothing was created beside the device or the link: no temp, no backup.
        let names = |d: &Path| fs::read_dir(d).unwrap().count();
        assert_eq!(names(&claude), 1, "{kind}");
    }
    assert!(!w.root.join("state/hookline/installs.json").exists());
}

#[test]
fn a_hardlinked_settings_file_is_refused_and_every_name_keeps_its_content() {
    let w = World::new();
    let original = "{\n  \"model\": \"opus\"\n}\n";
    let settings = w.write_claude_settings(original);
    let other = w.root.join("dotfiles-settings.json");
    fs::hard_link(&settings, &other).unwrap();
    let relay = w.relay.to_str().unwrap().to_owned();
    for args in [
        vec!["install", "claude", "--relay", &relay],
        vec!["install", "claude", "--relay", &relay, "--dry-run"],
    ] {
        let out = w.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("{} has 2 hard links; left untouched", settings.display())),
            "{stderr}"
        );
        assert!(
            stderr.contains("fix: keep one copy and make the other names symlinks to it"),
            "{stderr}"
        );
    }
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fs::metadata(&settings).unwrap().nlink(), 2);
    assert_eq!(fs::read_to_string(&settings).unwrap(), original);
    assert_eq!(fs::read_to_string(&other).unwrap(), original);
    assert!(!file_exists(&w.home.join(".claude/settings.json.hookline.bak")));
    // Made a symlink, as the fix says: installed through it.
    fs::remove_file(&settings).unwrap();
    symlink(&other, &settings).unwrap();
    w.install("claude", &[]);
    assert!(fs::read_to_string(&other).unwrap().contains("--cli claude"));
}

fn file_exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

#[test]
fn an_empty_settings_file_comes_back_empty_after_install_and_uninstall() {
    let w = World::new();
    let path = w.project.join(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    for original in ["", "\n", "  \n\n"] {
        fs::write(&path, original).unwrap();
        w.install("claude", &["--scope", "project"]);
        assert!(json(&path)["hooks"]["Stop"].is_array());
        let out = w.ok(&["uninstall", "claude", "--scope", "project"]);
        assert!(out.contains("hooks.Stop: removed\n"), "{out}");
        assert_eq!(fs::read_to_string(&path).unwrap(), original, "{original:?}");
    }
}

#[test]
fn uninstall_removes_the_file_install_created_and_the_backup_of_ours_but_not_one_of_yours() {
    let w = World::new();
    let settings = w.claude_settings();
    let backup = w.home.join(".claude/settings.json.hookline.bak");
    // Created by install, rewritten by a second install (its backup holds only our hooks).
    w.install("claude", &[]);
    let other = w.root.join("bin/hookline-relay");
    w.script(&other, SILENT_RELAY);
    w.ok(&["install", "claude", "--relay", other.to_str().unwrap()]);
    assert!(backup.exists());
    let out = w.ok(&["uninstall", "claude"]);
    assert!(out.contains("(it held only hookline's hooks)"), "{out}");
    assert!(!out.contains("previous content"), "{out}");
    assert!(!settings.exists());
    assert!(!backup.exists(), "our own backup goes with the file");

    // A backup holding the user's content stays, even when install created the file again.
    fs::write(&settings, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    w.install("claude", &[]);
    assert_eq!(fs::read_to_string(&backup).unwrap(), "{\n  \"model\": \"opus\"\n}\n");
    fs::remove_file(&settings).unwrap();
    w.install("claude", &[]);
    w.ok(&["uninstall", "claude"]);
    assert!(!settings.exists());
    assert_eq!(fs::read_to_string(&backup).unwrap(), "{\n  \"model\": \"opus\"\n}\n");
}

/// A program that rewrites a JSON file atomically every millisecond with its own key (a
/// counter), and counts the times it finds its last value gone: a change of its lost.
const REWRITER: &str = r#"
import json, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
last, lost, n = None, 0, 0
while not os.path.exists(stop):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = {}
    if last is not None and doc.get("writer") != last:
        lost += 1
    n += 1
    doc["writer"] = n
    tmp = os.path.join(os.path.dirname(path), ".writer-tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
    os.rename(tmp, path)
    last = n
    time.sleep(0.001)
print(lost, n)
"#;

#[test]
fn a_program_rewriting_the_file_every_millisecond_loses_nothing_to_20_installs() {
    let w = World::new();
    let settings = w.write_claude_settings("{\n  \"writer\": 0\n}\n");
    let stop = w.root.join("stop");
    let writer = Command::new("python3")
        .args(["-c", REWRITER])
        .arg(&settings)
        .arg(&stop)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the concurrent writer");
    // Two relays, alternately: every install changes every entry.
    let other = w.root.join("bin/hookline-relay");
    w.script(&other, SILENT_RELAY);
    let relays = [w.relay.to_str().unwrap().to_owned(), other.to_str().unwrap().to_owned()];
    let (mut written, mut refused) = (0, 0);
    for i in 0..20 {
        let out = w.run(&["install", "claude", "--relay", &relays[i % 2]]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) if stdout.contains("wrote ") => written += 1,
            Some(0) => {}
            // Refusing is allowed; overwriting is not.
            Some(2) if stderr.contains("changed under us") => refused += 1,
            code => panic!("install {i}: {code:?}\n{stdout}\n{stderr}"),
        }
    }
    fs::write(&stop, "").unwrap();
    let out = writer.wait_with_output().unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    let (lost, writes) = report.trim().split_once(' ').unwrap();
    let writes: u64 = writes.parse().unwrap();
    assert!(writes >= 20, "the writer ran along: {report}");
    assert_eq!(lost, "0", "installs written {written}, refused {refused}, writer: {report}");
    assert!(written > 0, "refused {refused} of 20");
}

#[test]
fn install_warns_about_a_relay_in_a_cargo_build_dir_and_doctor_says_how_to_keep_it() {
    let w = World::new();
    let release = w.root.join("clone/target/release");
    fs::create_dir_all(&release).unwrap();
    let relay = release.join("hookline-relay");
    w.script(&relay, SILENT_RELAY);
    let out = w.run(&["install", "claude", "--relay", relay.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "hookline: warning: registering {}, inside the cargo build directory {}: `cargo clean` or moving the clone will break every hook\n  to avoid it: in your hookline clone: cargo install --locked --path relay && cargo install --locked --path cli",
            relay.display(),
            release.display()
        )),
        "{stderr}"
    );
    assert!(json(&w.claude_settings())["hooks"]["Stop"].is_array());
    let out = w.run(&["doctor", "claude", "--relay", relay.to_str().unwrap()]);
    let report = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report
            .contains(&format!("-- relay {} is inside the cargo build directory", relay.display())),
        "{report}"
    );
    // A relay elsewhere: no warning.
    let out = w.run(&["install", "claude", "--relay", w.relay.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
}

#[test]
fn doctor_without_a_relay_to_register_puts_one_on_path_first() {
    let w = World::new();
    w.install("claude", &[]);
    fs::remove_file(&w.relay).unwrap();
    // A hookline with no relay beside it and none on PATH.
    let lonely = w.root.join("lonely");
    fs::create_dir_all(&lonely).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_hookline"), lonely.join("hookline")).unwrap();
    // Another test's child may still hold the copy open between its fork and its exec.
    let out = (0..100)
        .find_map(|_| {
            match w.command_of(&lonely.join("hookline"), &["doctor", "claude"]).output() {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    None
                }
                other => Some(other.unwrap()),
            }
        })
        .expect("the copy of hookline could be run");
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8(out.stdout).unwrap();
    let not_found = report.find("!! hookline-relay not found").expect(&report);
    let missing =
        report.find(&format!("!! relay {} is missing", w.relay.display())).expect(&report);
    assert!(not_found < missing, "the relay first: {report}");
    assert!(
        report.contains("     fix: in your hookline clone: cargo install --locked --path relay && cargo install --locked --path cli (both go to ~/.cargo/bin); then hookline install claude --scope user\n"),
        "{report}"
    );
    assert!(report.contains("checking for the 17 events"), "{report}");
    assert!(!report.contains("registering"), "doctor only checks: {report}");
}

#[test]
fn doctor_finds_an_events_dir_the_relay_cannot_write_in() {
    let w = World::new();
    w.install("claude", &[]);
    // On the build's disk, not a tmpfs /tmp: `chattr` needs a filesystem that has the flag.
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = disk.path().join("events");
    hookline::format::store::EventsDir::create(&dir).unwrap();
    let events_dir = dir.to_str().unwrap().to_owned();
    let (code, out) = w.doctor(&["claude", "--events-dir", &events_dir]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("  ok writable\n"), "{out}");
    // Root writes through permission bits: make the directory immutable instead.
    let root = unsafe { libc::geteuid() } == 0;
    let lock = |on: bool| {
        if root {
            let flag = if on { "+i" } else { "-i" };
            let done = Command::new("chattr").arg(flag).arg(&dir).status();
            assert!(done.is_ok_and(|s| s.success()), "chattr {flag} {}", dir.display());
        } else {
            let mode = if on { 0o500 } else { 0o700 };
            fs::set_permissions(&dir, fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    let entries = fs::read_dir(&dir).unwrap().count();
    lock(true);
    let wrote = tempfile::tempfile_in(&dir).is_ok();
    let (code, out) = w.doctor(&["claude", "--events-dir", &events_dir]);
    lock(false);
    assert!(!wrote, "the directory could still be written in");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("!! not writable ("), "{out}");
    assert!(out.contains("the relay loses every event it is given\n     fix: "), "{out}");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), entries, "no probe left behind");
}

#[test]
fn doctor_does_not_block_on_a_fifo_among_the_events_or_as_codex_trust_records() {
    let w = World::new();
    w.install("claude", &[]);
    let dir = w.root.join("state/hookline/events");
    hookline::format::store::EventsDir::create(&dir).unwrap();
    mkfifo(&dir.join(hookline::format::filename::EventFileName::ordered(1, 1).to_string()));
    let codex = w.home.join(".codex");
    fs::create_dir_all(&codex).unwrap();
    mkfifo(&codex.join("config.toml"));
    w.install("codex", &[]);
    let relay = w.relay.to_str().unwrap().to_owned();
    let out =
        run_bounded(w.command(&["doctor", "--relay", &relay]), std::time::Duration::from_secs(20));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("-- no event received yet"), "{report}");
    assert!(
        report.contains("cannot read Codex's hook trust records: ")
            && report.contains("is a named pipe (FIFO), not a regular file"),
        "{report}"
    );
}

#[test]
fn opencode_gets_the_plugin_file_with_the_relay_and_uninstall_takes_it_away() {
    let w = World::new();
    w.fake_cli("opencode", "1.18.33");
    let plugin = w.root.join("config/opencode/plugins/hookline.js");
    let out = w.install("opencode", &[]);
    assert!(out.starts_with("OpenCode 1.18.33 (from `opencode --version`): hookline's plugin\n"));
    assert!(out.contains("plugin: added\n"), "{out}");
    let text = fs::read_to_string(&plugin).unwrap();
    let shipped = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/opencode-plugin.js"),
    )
    .unwrap();
    let relay = Value::from(w.relay.to_str().unwrap()).to_string();
    let rendered = shipped
        .replace("\"@HOOKLINE_RELAY@\"", &relay)
        .replace("\"@HOOKLINE_CLI@\"", "\"opencode\"");
    assert_eq!(text, rendered);
    assert!(w.install("opencode", &[]).contains("plugin: already installed\nnothing to change\n"));
    let (code, report) = w.doctor(&["opencode"]);
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("hookline's plugin is installed"), "{report}");

    // Another relay: doctor says stale, install updates it in place.
    let moved = w.root.join("bin/hookline-relay");
    w.script(&moved, SILENT_RELAY);
    let moved = moved.to_str().unwrap();
    let out = w.run(&["doctor", "opencode", "--relay", moved]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("stale: it runs"), "{report}");
    let out = w.ok(&["install", "opencode", "--relay", moved]);
    assert!(out.contains(&format!("plugin: updated (was: relay {})", w.relay.display())), "{out}");

    let out = w.ok(&["uninstall", "opencode"]);
    assert!(out.contains("plugin: removed\n"), "{out}");
    assert!(!plugin.exists());
    assert_eq!(fs::read_dir(plugin.parent().unwrap()).unwrap().count(), 0, "nothing left beside");

    // Someone else's file at that path is never replaced nor removed.
    let theirs = "export const Theirs = async () => ({});\n";
    fs::write(&plugin, theirs).unwrap();
    for args in [&["install", "opencode"][..], &["uninstall", "opencode"]] {
        let out = w.run(&[args, &["--relay", w.relay.to_str().unwrap()][..]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("is not hookline's plugin"), "{stderr}");
        assert_eq!(fs::read_to_string(&plugin).unwrap(), theirs);
    }
}

/// Kilo Code (OpenCode's plugin, told it runs in Kilo) and Pi (hookline's extension): each
/// plugin CLI with its version output, its user-scope file and the shipped source.
fn plugin_clis(w: &World) -> [(&'static str, &'static str, PathBuf, &'static str); 2] {
    // Pi prints its version on stderr.
    w.script(&w.bin.join("pi"), "#!/bin/sh\necho 0.73.1 >&2\n");
    w.fake_cli("kilo", "7.7.7");
    [
        (
            "kilo",
            "Kilo Code 7.7.7 (from `kilo --version`): hookline's plugin\n",
            w.root.join("config/kilo/plugins/hookline.js"),
            include_str!("../../../profiles/opencode-plugin.js"),
        ),
        (
            "pi",
            "Pi 0.73.1 (from `pi --version`): hookline's plugin\n",
            w.home.join(".pi/agent/extensions/hookline.ts"),
            include_str!("../../../profiles/pi-extension.ts"),
        ),
    ]
}

#[test]
fn kilo_and_pi_get_their_plugin_naming_their_cli_idempotently_and_uninstall_takes_it_away() {
    let w = World::new();
    for (cli, first_line, path, source) in plugin_clis(&w) {
        let out = w.install(cli, &["--scope", "user"]);
        assert!(out.starts_with(first_line), "{cli}: {out}");
        assert!(out.contains("plugin: added\n"), "{cli}: {out}");
        let relay = Value::from(w.relay.to_str().unwrap()).to_string();
        let rendered = source
            .replace("\"@HOOKLINE_RELAY@\"", &relay)
            .replace("\"@HOOKLINE_CLI@\"", &format!("\"{cli}\""));
        assert_eq!(fs::read_to_string(&path).unwrap(), rendered, "{cli}");
        assert!(
            rendered.contains(&format!("const CLI = \"{cli}\";")),
            "{cli}: its events are its own"
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{cli}");
        let again = w.install(cli, &["--scope", "user"]);
        assert!(again.contains("plugin: already installed\nnothing to change\n"), "{cli}: {again}");
        let (code, report) = w.doctor(&[cli]);
        assert_eq!(code, 0, "{cli}: {report}");
        assert!(report.contains("hookline's plugin is installed"), "{cli}: {report}");

        let out = w.ok(&["uninstall", cli, "--scope", "user"]);
        assert!(out.contains("plugin: removed\n"), "{cli}: {out}");
        assert!(!path.exists(), "{cli}");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 0, "{cli}: nothing left");
        let (code, report) = w.doctor(&[cli]);
        assert_eq!(code, 1, "{cli}: installed once, now gone: {report}");
    }
}

#[test]
fn a_kilo_plugin_copied_from_opencode_is_rewritten_to_say_kilo() {
    // What a user who copied hookline's OpenCode plugin into Kilo's folder has: it would
    // record Kilo's events as OpenCode's.
    let w = World::new();
    w.fake_cli("kilo", "7.7.7");
    w.install("opencode", &[]);
    let opencode = fs::read_to_string(w.root.join("config/opencode/plugins/hookline.js")).unwrap();
    let kilo = w.root.join("config/kilo/plugins/hookline.js");
    fs::create_dir_all(kilo.parent().unwrap()).unwrap();
    fs::write(&kilo, &opencode).unwrap();
    let relay = w.relay.to_str().unwrap().to_owned();
    let out = w.run(&["doctor", "kilo", "--relay", &relay]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("stale: it differs from the plugin this hookline ships"), "{report}");
    let out = w.install("kilo", &[]);
    assert!(out.contains("plugin: updated (the shipped plugin changed)"), "{out}");
    let text = fs::read_to_string(&kilo).unwrap();
    assert!(text.contains("const CLI = \"kilo\";") && !text.contains("const CLI = \"opencode\";"));
}

#[test]
fn kilo_and_pi_plugins_refuse_a_foreign_file_and_write_a_linked_one_at_its_target() {
    let w = World::new();
    let relay = w.relay.to_str().unwrap().to_owned();
    for (cli, _, path, source) in plugin_clis(&w) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let theirs = "export default function (pi) {}\n";
        fs::write(&path, theirs).unwrap();
        for args in [vec!["install", cli, "--relay", &relay], vec!["uninstall", cli]] {
            let out = w.run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && stderr.contains("is not hookline's plugin"),
                "{stderr}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), theirs, "{cli} {args:?}");
        }
        fs::remove_file(&path).unwrap();
        // A dotfiles link: the target is written, atomically, and the link stays a link.
        let target = w.root.join(format!("dotfiles/{cli}-hookline"));
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, source.replace("\"@HOOKLINE_RELAY@\"", "\"/old/hookline-relay\""))
            .unwrap();
        symlink(&target, &path).unwrap();
        let out = w.install(cli, &[]);
        assert!(out.contains(&format!("-> {}", target.display())), "{cli}: {out}");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "{cli}");
        assert!(fs::read_to_string(&target).unwrap().contains(&format!("const CLI = \"{cli}\";")));
        // A link to a link to nowhere is refused.
        fs::remove_file(&path).unwrap();
        symlink(w.root.join("nowhere/at/all"), &path).unwrap();
        let out = w.run(&["install", cli, "--relay", &relay]);
        assert!(!out.status.success(), "{cli}: a dangling link is refused");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "{cli}");
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn kilo_and_pi_project_scopes_write_the_projects_plugin_folders() {
    let w = World::new();
    for (cli, file) in [("kilo", ".kilo/plugins/hookline.js"), ("pi", ".pi/extensions/hookline.ts")]
    {
        let out = w.install(cli, &["--scope", "project"]);
        assert!(out.contains("plugin: added"), "{cli}: {out}");
        assert!(w.project.join(file).is_file(), "{cli}");
    }
}

#[test]
fn opencode_project_scope_writes_the_projects_plugin_folder() {
    let w = World::new();
    let out = w.install("opencode", &["--scope", "project"]);
    assert!(out.contains("plugin: added"), "{out}");
    assert!(w.project.join(".opencode/plugins/hookline.js").is_file());
}

#[test]
fn the_shipped_grok_profile_writes_the_documented_keys_into_a_file_of_its_own() {
    let w = World::new();
    let relay = w.quoted_relay();
    let file = w.home.join(".grok/hooks/hookline.json");
    // Without `grok` on PATH: every event the newest Grok Build knows, StopCancelled (1.0.4)
    // included.
    let out = w.install("grok", &[]);
    assert!(out.contains("registering the 15 events the newest Grok Build knows"), "{out}");
    assert!(out.contains("hooks.SessionStart: added"), "{out}");
    let v = json(&file);
    let hooks = v["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 15, "{v}");
    assert!(hooks.get("StopCancelled").is_some());
    // Keys as the documentation spells them, Claude's shape, and no --event: the relay takes
    // the payload's own name (`stop`), which the rules match.
    assert_eq!(
        hooks["Stop"],
        serde_json::json!([{"hooks": [{"type": "command", "command": format!("{relay} --cli grok"), "timeout": 10}]}])
    );
    assert!(hooks.keys().all(|k| k.chars().next().unwrap().is_ascii_uppercase()), "{v}");
    let (code, out) = w.doctor(&["grok"]);
    assert_eq!(code, 0, "{out}");

    // A Grok that knows StopCancelled keeps it, in the same file.
    w.fake_cli("grok", "grok 1.0.6");
    let out = w.install("grok", &[]);
    assert!(out.contains("hooks.StopCancelled: already installed"), "{out}");
    assert!(out.contains("hooks.Stop: already installed"), "{out}");
    assert_eq!(json(&file)["hooks"].as_object().unwrap().len(), 15);
    let (code, out) = w.doctor(&["grok"]);
    assert_eq!(code, 0, "{out}");

    // The file is install's: uninstall takes it away.
    w.ok(&["uninstall", "grok"]);
    assert!(!file.exists());
}

#[test]
fn profiles_install_cannot_write_say_so_with_where_to_look() {
    let w = World::new();
    for cli in ["kimi", "antigravity"] {
        let out = w.run(&["install", cli, "--relay", w.relay.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cli}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(&format!("the {cli} profile has no [install] table")), "{err}");
        assert!(err.contains("docs/install.md"), "{err}");
    }
}
