use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::sync::Arc;

use serde_json::Value;

use super::*;
use hookline::profile::Profiles;

const RELAY: &str = "/opt/hookline/bin/hookline-relay";

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| OsString::from(v))
}

fn claude_wanted(profiles: &Profiles) -> Vec<Wanted> {
    let cli = Installable::find(profiles, "claude").unwrap();
    let detected = Detected::NotFound { binary: "claude".into() };
    cli.wanted(RELAY, &detected)
}

fn install_claude(path: &Path, dry_run: bool) -> Result<Report, Error> {
    let profiles = Profiles::shipped().unwrap();
    let wanted = claude_wanted(&profiles);
    let why_not = |_: &str| "not wanted".to_owned();
    apply(
        path,
        Dialect::Claude,
        Operation::Install { wanted: &wanted, why_not: &why_not, scaffolding: None },
        dry_run,
    )
}

fn entries_per_event(path: &Path) -> Vec<(String, usize)> {
    let v: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    v["hooks"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(event, groups)| {
            let ours = groups
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| Dialect::Claude.classify(g) == dialect::Item::Ours)
                .count();
            (event.clone(), ours)
        })
        .collect()
}

#[test]
fn scope_templates_honour_the_config_dir_overrides() {
    let cwd = Path::new("/work/project");
    let e = env(&[("HOME", "/home/u"), ("CLAUDE_CONFIG_DIR", "/cfg/claude")]);
    let t = "${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json";
    assert_eq!(expand(t, &e, cwd).unwrap(), Path::new("/cfg/claude/settings.json"));
    let e = env(&[("HOME", "/home/u"), ("CLAUDE_CONFIG_DIR", "")]);
    assert_eq!(expand(t, &e, cwd).unwrap(), Path::new("/home/u/.claude/settings.json"));
    let t = "${GEMINI_CLI_HOME:-~}/.gemini/settings.json";
    let e = env(&[("HOME", "/home/u"), ("GEMINI_CLI_HOME", "/g")]);
    assert_eq!(expand(t, &e, cwd).unwrap(), Path::new("/g/.gemini/settings.json"));
    let e = env(&[("HOME", "/home/u")]);
    assert_eq!(expand(t, &e, cwd).unwrap(), Path::new("/home/u/.gemini/settings.json"));
    assert_eq!(
        expand(".claude/settings.json", &e, cwd).unwrap(),
        Path::new("/work/project/.claude/settings.json")
    );
    assert!(matches!(expand("~/.codex/hooks.json", &env(&[]), cwd), Err(Error::NoHome { .. })));
}

#[test]
fn the_claude_profile_gives_entries_and_reasons() {
    let profiles = Profiles::shipped().unwrap();
    let cli = Installable::find(&profiles, "claude").unwrap();
    let old: Detected = Detected::Version {
        version: "2.1.50".parse().unwrap(),
        command: "claude --version".into(),
    };
    let wanted = cli.wanted(RELAY, &old);
    assert!(wanted.iter().all(|w| w.event != "StopFailure"));
    assert_eq!(
        wanted[0].entry,
        serde_json::json!({"hooks": [{"type": "command", "command": "/opt/hookline/bin/hookline-relay --cli claude", "timeout": 10}]})
    );
    assert_eq!(cli.why_not("StopFailure", &old), "Claude Code 2.1.50 does not know it");
    assert!(cli.why_not("WorktreeCreate", &old).starts_with("never registered: "));
    // Not on PATH: the newest version's events, the task events among them.
    let none = Detected::NotFound { binary: "claude".into() };
    let events = cli.events(&none);
    assert_eq!(events.len(), 17, "{events:?}");
    assert!(events.contains(&"TaskCreated") && events.contains(&"TaskCompleted"), "{events:?}");
    assert_eq!(
        cli.version_line(&none, Purpose::Install),
        "claude is not on PATH: registering the 17 events the newest Claude Code knows (run \
         `hookline install claude` again once it is on PATH, for an older version's)"
    );
    assert!(
        cli.version_line(&none, Purpose::Check)
            .starts_with("claude is not on PATH: checking for the 17 events")
    );
    // A version that cannot be read: the conservative set.
    let mute = Detected::Unreadable { command: "claude --version".into(), why: "x".into() };
    assert_eq!(cli.events(&mute).len(), 12);
    assert_eq!(
        cli.why_not("StopFailure", &mute),
        "not known to every supported version (needs 2.1.78)"
    );
    assert!(matches!(Installable::find(&profiles, "legacy"), Err(Error::NotInstallable { .. })));
    assert!(matches!(Installable::find(&profiles, "nope"), Err(Error::UnknownCli { .. })));
}

#[test]
fn codex_interrupt_and_session_end_get_the_3_s_codex_clamps_them_to() {
    let profiles = Profiles::shipped().unwrap();
    let cli = Installable::find(&profiles, "codex").unwrap();
    let detected = Detected::Version {
        version: "0.171.0".parse().unwrap(),
        command: "codex --version".into(),
    };
    let timeouts: Vec<(String, Value)> = cli
        .wanted(RELAY, &detected)
        .into_iter()
        .map(|w| (w.event, w.entry["hooks"][0]["timeout"].clone()))
        .collect();
    assert_eq!(timeouts.len(), 12);
    for (event, timeout) in timeouts {
        let expected = if event == "Interrupt" || event == "SessionEnd" { 3 } else { 10 };
        assert_eq!(timeout, expected, "{event}");
    }
}

#[test]
fn two_installs_racing_leave_exactly_one_entry_per_event() {
    let tmp = tempfile::tempdir().unwrap();
    let path = Arc::new(tmp.path().join("settings.json"));
    fs::write(&*path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = Arc::clone(&path);
            std::thread::spawn(move || {
                for _ in 0..5 {
                    install_claude(&path, false).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let counts = entries_per_event(&path);
    assert_eq!(counts.len(), 17);
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
}

#[test]
fn a_cli_rewriting_its_settings_meanwhile_keeps_its_change() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let profiles = Profiles::shipped().unwrap();
    let wanted = claude_wanted(&profiles);
    let why_not = |_: &str| String::new();
    let mut first = true;
    let report = apply_hooked(
        &path,
        Dialect::Claude,
        Operation::Install { wanted: &wanted, why_not: &why_not, scaffolding: None },
        false,
        |target| {
            if std::mem::take(&mut first) {
                fs::write(target, "{\n  \"model\": \"sonnet\",\n  \"permissions\": {}\n}\n")
                    .unwrap();
            }
        },
    )
    .unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"model\": \"sonnet\",\n  \"permissions\": {},\n  \"hooks\": {"),
        "{text}"
    );
    assert!(report.changed());
}

#[test]
fn unparseable_files_are_refused_untouched_with_their_position() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    let cases: [(&[u8], &str); 4] = [
        (b"{\n  // mine\n  \"a\": 1\n}\n", ":2:3: not valid JSON: comments are not allowed"),
        (b"{\n  \"a\": [1,],\n}\n", ":2:11: not valid JSON: trailing comma"),
        (b"{\n  \"a\": \"caf\xe9\"\n}\n", ":2:12: not UTF-8"),
        (b"{\"a\": 1} {}", ":1:10: not valid JSON: trailing characters"),
    ];
    for (bytes, message) in cases {
        fs::write(&path, bytes).unwrap();
        let err = install_claude(&path, false).unwrap_err();
        assert_eq!(err.to_string(), format!("{}{message}", path.display()));
        assert!(err.fix().is_some());
        assert_eq!(fs::read(&path).unwrap(), bytes);
        assert!(!file::backup_path(&path).exists());
    }
}

#[test]
fn a_read_only_file_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    fs::write(&path, "{}\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let err = install_claude(&path, false).unwrap_err();
    assert!(matches!(err, Error::ReadOnly { .. }), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
}

#[test]
fn a_dry_run_reports_a_diff_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let report = install_claude(&path, true).unwrap();
    let diff = report.diff();
    assert!(
        diff.contains("-  \"model\": \"opus\"\n+  \"model\": \"opus\",\n+  \"hooks\": {\n"),
        "{diff}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\n  \"model\": \"opus\"\n}\n");
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn a_symlink_into_a_dotfiles_dir_stays_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dotfiles = tmp.path().join("dotfiles/claude");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::write(dotfiles.join("settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    fs::set_permissions(dotfiles.join("settings.json"), fs::Permissions::from_mode(0o640)).unwrap();
    let claude = tmp.path().join("home/.claude");
    fs::create_dir_all(&claude).unwrap();
    symlink("../../dotfiles/claude/settings.json", claude.join("settings.json")).unwrap();
    let link = claude.join("settings.json");
    let report = install_claude(&link, false).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(report.target, claude.join("../../dotfiles/claude/settings.json"));
    let target = dotfiles.join("settings.json");
    assert!(fs::read_to_string(&target).unwrap().contains("hookline-relay"));
    assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(
        fs::read_to_string(dotfiles.join("settings.json.hookline.bak")).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    // Nothing was left beside the link.
    assert_eq!(fs::read_dir(&claude).unwrap().count(), 1);
}

#[test]
fn install_then_uninstall_on_disk_restores_the_file_and_keeps_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    let original = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"say done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    fs::write(&path, original).unwrap();
    install_claude(&path, false).unwrap();
    let installed = fs::read_to_string(&path).unwrap();
    let report =
        apply(&path, Dialect::Claude, Operation::Uninstall { scaffolding: None }, false).unwrap();
    assert_eq!(report.lines.len(), 17);
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
    assert_eq!(fs::read_to_string(file::backup_path(&path)).unwrap(), installed);
    let again =
        apply(&path, Dialect::Claude, Operation::Uninstall { scaffolding: None }, false).unwrap();
    assert!(!again.changed());
}
