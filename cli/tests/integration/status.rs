//! `hookline status` and `hookline explain`: states rebuilt from history the real relay wrote,
//! shown (as JSON, and as a table on a terminal) but never authoritative.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::decide::fire_as;

const C: &str = "claude-code/2.1.332/";

/// `hookline SUBCOMMAND --events-dir DIR ARGS...`, with no user profile or policy in the way.
pub fn hookline(subcommand: &str, dir: &Path, args: &[&str]) -> Command {
    let home = dir.parent().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_hookline"));
    command
        .arg(subcommand)
        .arg("--events-dir")
        .arg(dir)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME");
    command
}

/// Session s1 (tag task-1) waiting on a permission prompt; session s2 (tag task-2) just
/// launched, so `unknown`.
fn two_sessions(dir: &Path) {
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire_as(dir, &format!("{C}{fixture}"), "s1", "task-1", &[]);
    }
    fire_as(dir, &format!("{C}SessionStart-startup.json"), "s2", "task-2", &[]);
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn row<'a>(rows: &'a [Value], session: &str) -> &'a Value {
    rows.iter().find(|r| r["session_id"] == session).unwrap_or_else(|| panic!("no {session}"))
}

/// Runs `command` with its stdout on a pseudo-terminal; returns the exit status and what it
/// printed there.
fn on_a_terminal(mut command: Command) -> (std::process::ExitStatus, String) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two new descriptors to the pointers; name, termios and winsize
    // may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    let (mut master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
    let mut child = command.stdout(Stdio::from(slave)).stderr(Stdio::piped()).spawn().unwrap();
    // The command holds the parent's copy of the terminal's far end: without dropping it,
    // reading would never see the end.
    drop(command);
    let mut bytes = Vec::new();
    let mut buf = [0; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            // Linux reports the far end's last close as EIO.
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let status = child.wait().unwrap();
    (status, String::from_utf8_lossy(&bytes).replace("\r\n", "\n"))
}

#[test]
fn status_shows_a_replayed_wait_and_a_loud_unknown_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    two_sessions(&dir);

    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Most recently active first.
    assert_eq!(rows[0]["session_id"], "s2");
    let s1 = row(rows, "s1");
    for key in ["session_id", "tag", "cli", "state", "since", "seq", "cwd", "age"] {
        assert!(s1.get(key).is_some(), "status --json lacks {key}: {s1}");
    }
    assert_eq!(s1["tag"], "task-1");
    assert_eq!(s1["cli"], "claude");
    assert_eq!(s1["state"], "waiting_on_human");
    assert_eq!(s1["detail"], "permission");
    assert_eq!(s1["seq"], 3);
    assert!(s1["since"].as_str().unwrap().ends_with('Z'), "RFC 3339, UTC: {}", s1["since"]);
    assert_eq!((&s1["authoritative"], &s1["replayed"]), (&false.into(), &true.into()));
    assert!(s1["input"].as_str().unwrap().starts_with("refused"), "{}", s1["input"]);
    assert_eq!(s1["evidence"]["native"], "PermissionRequest");
    assert_eq!(s1["unknown_for_ms"], Value::Null, "only unknown says how long it lasted");

    let s2 = row(rows, "s2");
    assert_eq!(
        (&s2["state"], &s2["tag"], &s2["seq"]),
        (&"unknown".into(), &"task-2".into(), &4.into())
    );
    assert_eq!(s2["detail"], "session started");
    let unknown_for = s2["unknown_for_ms"].as_u64().expect("unknown says how long it lasted");
    assert_eq!(unknown_for, s2["age_ms"].as_u64().unwrap());

    // Piped without --json, status prints the same JSON: the table is for terminals.
    let piped = json(&hookline("status", &dir, &[]).output().unwrap());
    assert_eq!(piped.as_array().unwrap().len(), 2);
}

#[test]
fn status_on_a_terminal_prints_a_table_with_unknown_in_capitals_and_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    two_sessions(&dir);

    let (status, text) = on_a_terminal(hookline("status", &dir, &[]));
    assert!(status.success(), "{status}: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("tag "), "{text}");
    assert!(lines[0].contains("replayed from history: never authoritative"), "{text}");
    let s1 = lines.iter().find(|l| l.starts_with("task-1 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(s1.contains(" claude "), "{s1}");
    assert!(s1.contains("waiting_on_human (permission)"), "{s1}");
    assert!(s1.ends_with("PermissionRequest → permission_request"), "{s1}");
    let at =
        lines.iter().position(|l| l.starts_with("task-2 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(lines[at].contains(" UNKNOWN "), "unknown is loud: {}", lines[at]);
    assert!(lines[at].ends_with("SessionStart → session_start"), "{}", lines[at]);
    assert_eq!(lines[at + 1].trim(), "session started", "the reason, under the row: {text}");

    let empty = tmp.path().join("none");
    std::fs::create_dir(&empty).unwrap();
    let (status, text) = on_a_terminal(hookline("status", &empty, &[]));
    assert!(status.success(), "{status}: {text}");
    assert_eq!(text.trim(), "no sessions");
}

#[test]
fn explain_shows_the_events_and_rules_behind_a_state() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    two_sessions(&dir);

    let out = hookline("explain", &dir, &["task-1"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "session s1 (cli claude, tag task-1)", "{text}");
    let steps = [
        ("UserPromptSubmit", "turn_start", "→ active", "prompt-starts-turn"),
        ("PreToolUse", "tool_start", "→ child_command", "tool-start-child-command"),
        (
            "PermissionRequest",
            "permission_request",
            "→ waiting_on_human",
            "permission-request-waits",
        ),
    ];
    for (line, (native, kind, state, rule)) in lines[1..4].iter().zip(steps) {
        for part in [native, kind, state, &format!("rule {rule} (mapped by claude.toml#")] {
            assert!(line.contains(part), "{part:?} missing from {line:?}");
        }
    }
    assert!(
        lines[4].starts_with("now: waiting_on_human for ")
            && lines[4].contains("(permission); set by PermissionRequest")
            && lines[4].ends_with("under rule permission-request-waits"),
        "{}",
        lines[4]
    );
    assert_eq!(lines[5], "input: refused: state is waiting_on_human (permission)");
    assert_eq!(lines.len(), 6, "{text}");

    let explained = json(&hookline("explain", &dir, &["s1", "--json"]).output().unwrap());
    assert_eq!(explained["state"]["state"], "waiting_on_human");
    assert_eq!(explained["state"]["replayed"], true);
    let rules: Vec<&str> = explained["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["evidence"]["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        ["prompt-starts-turn", "tool-start-child-command", "permission-request-waits"]
    );

    let out = hookline("explain", &dir, &["task-9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session with id or tag \"task-9\""));
}

/// An events directory that exists but was never written (the real one's parent, a typo)
/// would look exactly like a quiet one: the command succeeds and says so.
#[test]
fn a_directory_the_relay_never_wrote_is_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let dir = state.join("events");
    fire_as(&dir, &format!("{C}SessionStart-startup.json"), "s1", "task-1", &[]);
    // The parent of the real one, as a user might type it: said once.
    let out = hookline("status", &state, &["--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let note = format!(
        "hookline: warning: {} holds no events and no relay counter: did you mean {}?\n",
        state.display(),
        dir.display()
    );
    assert!(stderr.starts_with(&note) && stderr.matches(&note).count() == 1, "{stderr}");
    let out = hookline("decide", &state, &["task-1", "input"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).starts_with(&note), "{out:?}");
    // Another empty directory: where the relay writes instead.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = hookline("status", &elsewhere, &["--json"])
        .env_remove("HOOKLINE_EVENTS_DIR")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let relay = tmp.path().join(".local/state/hookline/events");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "hookline: warning: {} holds no events and no relay counter: is this the events \
             directory? the relay writes to {} (unless its HOOKLINE_EVENTS_DIR says otherwise)\n",
            elsewhere.display(),
            relay.display()
        )),
        "{stderr}"
    );
    // The real one, written: nothing to say.
    let out = hookline("status", &dir, &["--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("holds no events"), "{stderr}");
}

/// A subagent's events change nothing in their parent's state, but `explain` shows them.
#[test]
fn explain_shows_a_subagent_stop_as_a_step_that_changed_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for fixture in ["UserPromptSubmit.json", "SubagentStart.json", "SubagentStop.json"] {
        fire_as(&dir, &format!("{C}{fixture}"), "s1", "task-1", &[]);
    }
    let out = hookline("explain", &dir, &["task-1"]).output().unwrap();
    let text = text(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[3].contains(" SubagentStop "), "{text}");
    assert!(lines[3].contains("subagent_stop") && lines[3].contains("(no change)"), "{text}");
    assert!(lines[3].contains("rule subagent-never-changes-parent"), "{text}");
    assert!(lines[4].starts_with("now: active "), "{text}");
}

#[test]
fn status_and_explain_take_the_policys_stale_windows_as_decide_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s1", "task-1", &[]);
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let s1 = row(rows.as_array().unwrap(), "s1");
    assert_eq!((&s1["state"], &s1["stale"]), (&"active".into(), &Value::Null), "{s1}");

    let policy = tmp.path().join("policy.toml");
    std::fs::write(&policy, "[stale]\nclaude.active = \"1ms\"\n").unwrap();
    let policy = policy.to_str().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let stale_by_the_policy = |view: &Value| {
        assert_eq!(view["state"], "unknown", "{view}");
        assert_eq!(
            (view["stale"]["was"].as_str(), view["stale"]["set_by"].as_str()),
            (Some("active"), Some("stale.claude.active")),
            "{view}"
        );
        let detail = view["detail"].as_str().unwrap();
        assert!(detail.starts_with("stale: active for over 1ms (policy stale.claude.active)"));
    };
    let rows = json(&hookline("status", &dir, &["--json", "--policy", policy]).output().unwrap());
    stale_by_the_policy(row(rows.as_array().unwrap(), "s1"));
    let explained = json(
        &hookline("explain", &dir, &["task-1", "--json", "--policy", policy]).output().unwrap(),
    );
    stale_by_the_policy(&explained["state"]);
    let out = hookline("explain", &dir, &["task-1", "--policy", policy]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nnow: unknown for "), "{text}");
    assert!(text.contains("(policy stale.claude.active)"), "{text}");

    // Without --policy, the user's policy file is read, as decide reads it.
    let user = tmp.path().join(".config/hookline");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::copy(policy, user.join("policy.toml")).unwrap();
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    stale_by_the_policy(row(rows.as_array().unwrap(), "s1"));
}

/// `decide` acts on the policy: a bad one is its error (exit 2). `status`, `explain` and `top`
/// only display: they say the same error as a warning and show the states under the
/// defaults.
#[test]
fn a_bad_policy_stops_decide_and_is_a_warning_for_the_commands_that_display() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s1", "task-1", &[]);
    let policy = tmp.path().join("policy.toml");
    let cases = [
        (Some("[stale]\nclaud.active = \"1m\"\n"), "stale.claud: no profile is named claud"),
        (Some("[stale]\nactiv = \"1m\"\n"), "stale.activ: "),
        (Some("[nudge]\nmax-in-row = 2\n"), ":2:1: nudge.max-in-row: unknown key"),
        (
            Some("[classifer]\ncommand = [\"x\"]\n"),
            ":1:2: classifer: unknown key (did you mean [classifier]?)",
        ),
        (
            Some("[classifier]\ncommand = \"claude -p\"\n"),
            ":2:11: classifier.command: must be a list",
        ),
        (Some("[nudge\nmin-idle = 1\n"), ":1:7: "),
        (None, "cannot read"),
    ];
    for (text, message) in cases {
        match text {
            Some(text) => std::fs::write(&policy, text).unwrap(),
            None => std::fs::remove_file(&policy).unwrap(),
        }
        let flag = ["--policy", policy.to_str().unwrap()];
        let args = [&["s1", "nudge"][..], &flag].concat();
        let decide = hookline("decide", &dir, &args).output().unwrap();
        assert_eq!(decide.status.code(), Some(2), "{decide:?}");
        let stderr = String::from_utf8_lossy(&decide.stderr);
        assert!(stderr.contains(message), "{message:?} missing from {stderr}");
        let error = stderr.trim_end().strip_prefix("hookline: ").unwrap();
        let warning =
            format!("hookline: warning: {error}; showing states with the default policy\n");
        for args in [&["status", "--json"][..], &["explain", "task-1"], &["top"]] {
            let out = hookline(args[0], &dir, &[&args[1..], &flag].concat()).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(said.matches(&warning).count(), 1, "{args:?}: {said}");
            assert!(String::from_utf8_lossy(&out.stdout).contains("active"), "{args:?}: {out:?}");
        }
    }
}

/// The text of a command's stdout, once it succeeded.
fn text(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn a_session_is_named_by_an_unambiguous_prefix_of_its_id_or_tag_as_the_table_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let long = "75a87ff6-e914-427f-a8ca-ad0fcf16e284";
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), long, "task-1", &[]);
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "75a8ffff-0000", "task-10", &[]);
    fire_as(&dir, &format!("{C}Stop.json"), "c0ffee-1", "build-7", &[]);

    // The id as the table clips it, copied with or without its ellipsis.
    let (status, table) = on_a_terminal(hookline("status", &dir, &[]));
    assert!(status.success(), "{table}");
    let row = table.lines().find(|l| l.starts_with("task-1 ")).unwrap_or_else(|| panic!("{table}"));
    let shown = row.split_whitespace().nth(2).unwrap();
    assert_eq!(shown, "75a87ff6-e91…", "{row}");
    for query in [shown, shown.trim_end_matches('…')] {
        let out = text(&hookline("explain", &dir, &[query]).output().unwrap());
        assert_eq!(out.lines().next(), Some(&*format!("session {long} (cli claude, tag task-1)")));
        let out = hookline("decide", &dir, &[query, "crashed", "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&decision["session"], &decision["state"]), (&long.into(), &"active".into()));
    }
    // A tag's prefix, and an exact tag that is also the start of another.
    let out = text(&hookline("explain", &dir, &["build"]).output().unwrap());
    assert!(out.starts_with("session c0ffee-1 (cli claude, tag build-7)"), "{out}");
    let out = text(&hookline("explain", &dir, &["task-1"]).output().unwrap());
    assert!(out.starts_with(&format!("session {long} ")), "{out}");

    // Ambiguous: an error listing every candidate, for each command that takes a prefix.
    for (prefix, args) in [("75a8", &["explain"][..]), ("task-", &["decide", "crashed"])] {
        let mut command = hookline(args[0], &dir, &[&[prefix][..], &args[1..]].concat());
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{prefix:?} is the start of 2 sessions")), "{stderr}");
        for candidate in
            [format!("{long} (claude, tag task-1)"), "75a8ffff-0000 (claude, tag task-10)".into()]
        {
            assert!(stderr.contains(&candidate), "{candidate} missing from {stderr}");
        }
        assert!(stderr.contains("give more of the session id or tag"), "{stderr}");
    }
    // A question that leads to typing names its session exactly: a prefix names none (no
    // signal), and stderr lists the sessions it starts.
    let out = hookline("decide", &dir, &["task-", "nudge"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no session with id or tag \"task-\""), "{stderr}");
    assert!(stderr.contains("(claude, tag task-1)"), "{stderr}");
    let out = hookline("explain", &dir, &["zz"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "nothing matches: {out:?}");
}

#[test]
fn explain_keeps_its_columns_aligned_whatever_the_state_and_event_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for fixture in
        ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json", "PostToolUse.json"]
    {
        fire_as(&dir, &format!("{C}{fixture}"), "s1", "task-1", &[]);
    }
    for _ in 0..9 {
        fire_as(&dir, &format!("{C}Notification-idle_prompt.json"), "s2", "other", &[]);
    }
    fire_as(&dir, &format!("{C}Stop.json"), "s1", "task-1", &[]);
    let out = text(&hookline("explain", &dir, &["s1"]).output().unwrap());
    let steps: Vec<&str> = out.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(steps.len(), 5, "{out}");
    // Each column starts at the same character on every line: after the long
    // `→ waiting_on_human`, after a one-digit seq and a two-digit one.
    let natives = ["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"];
    let kinds = ["turn_start", "tool_start", "permission_request", "tool_end", "stop"];
    let starts: Vec<Vec<usize>> = steps
        .iter()
        .zip(natives.iter().zip(kinds))
        .map(|(line, (native, kind))| {
            let at = |word: &str| {
                let i = line.find(word).unwrap_or_else(|| panic!("{word} missing from {line}"));
                line[..i].chars().count()
            };
            vec![
                at(" seq "),
                at(&format!(" {native} ")),
                at(&format!(" {kind} ")),
                at(" → "),
                at(" epoch "),
                at(" rule "),
            ]
        })
        .collect();
    for (line, start) in steps.iter().zip(&starts) {
        assert_eq!(start, &starts[0], "columns drift at {line:?}:\n{out}");
    }
}

#[test]
fn control_characters_from_events_reach_the_terminal_escaped_and_json_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let cwd = "/home/\x1b]0;pwned\x07dev\r\nfake-row  claude  s9  /  idle";
    let session = "s\x1b[2J\u{9b}1";
    let tag = "task\x1b[31m-1";
    let spoof = [("cwd", cwd)];
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), session, tag, &spoof);
    let tool = [("cwd", cwd), ("tool_name", "Ba\x07sh\x1b[8m")];
    fire_as(&dir, &format!("{C}PreToolUse.json"), session, tag, &tool);
    fire_as(&dir, &format!("{C}SessionStart-startup.json"), "plain", "\x1b]8;;http://x\x07", &[]);

    let raw_controls = |text: &str| text.chars().filter(|c| c.is_control() && *c != '\n').count();
    let (status, table) = on_a_terminal(hookline("status", &dir, &[]));
    assert!(status.success(), "{table}");
    assert_eq!(raw_controls(&table), 0, "{table:?}");
    // A header, one row each, the unknown one's reason: no spoofed row.
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(table.contains("task\\e[31m-1"), "{table}");
    assert!(table.contains("\\e]8;;http://x\\a"), "{table}");

    let out = text(&hookline("explain", &dir, &[session]).output().unwrap());
    assert_eq!(raw_controls(&out), 0, "{out:?}");
    assert_eq!(out.lines().count(), 5, "2 steps, one line each: {out}");
    assert!(out.starts_with("session s\\e[2J\\u{9b}1 (cli claude, tag task\\e[31m-1)"), "{out}");
    assert!(out.contains("(Ba\\ash\\e[8m)"), "{out}");
    let out = hookline("decide", &dir, &[session, "nudge"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(raw_controls(&stdout), 0, "{stdout:?}");
    assert!(stdout.contains("Ba\\ash\\e[8m"), "{stdout}");

    // JSON carries the strings exactly, escaped by JSON itself.
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let row = row(rows.as_array().unwrap(), session);
    assert_eq!((row["cwd"].as_str(), row["tag"].as_str()), (Some(cwd), Some(tag)));
    let explained = json(&hookline("explain", &dir, &[session, "--json"]).output().unwrap());
    assert_eq!(explained["state"]["detail"], "Ba\x07sh\x1b[8m");
}

/// A transcript entry of session `session`: Claude's interrupt marker, written at `at_ns`.
fn interrupt_marker(session: &str, at_ns: u64) -> String {
    serde_json::json!({
        "type": "user",
        "isSidechain": false,
        "sessionId": session,
        "timestamp": hookline::units::rfc3339(at_ns),
        "message": { "role": "user", "content": [{ "type": "text", "text": "[Request interrupted by user]" }] },
    })
    .to_string()
}

#[test]
fn status_and_decide_read_the_transcript_tail_and_count_only_lines_newer_than_the_last_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let transcript = tmp.path().join("s1.jsonl");
    let now = hookline::format::clock::now_ns();
    // A marker from before the prompt: history, which changes nothing.
    std::fs::write(&transcript, format!("{}\n", interrupt_marker("s1", now - 60_000_000_000)))
        .unwrap();
    let path = transcript.to_str().unwrap();
    fire_as(
        &dir,
        &format!("{C}UserPromptSubmit.json"),
        "s1",
        "task-1",
        &[("transcript_path", path)],
    );
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let s1 = row(rows.as_array().unwrap(), "s1");
    assert_eq!(s1["state"], "active", "{s1}");
    assert_eq!(s1["transcript"]["evidence"]["interrupted"], false, "{s1}");
    // Esc: the marker comes after the prompt's event, and no hook fires.
    let late =
        format!("{}\n", interrupt_marker("s1", hookline::format::clock::now_ns() + 1_000_000));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(late.as_bytes())
        .unwrap();
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let s1 = row(rows.as_array().unwrap(), "s1");
    assert_eq!(
        (&s1["state"], &s1["detail"]),
        (&"waiting_on_human".into(), &"interrupted".into()),
        "{s1}"
    );
    assert_eq!(s1["evidence"]["kind"], "transcript", "{s1}");
    assert_eq!(s1["evidence"]["file"], path, "{s1}");
    let (status, table) = on_a_terminal(hookline("status", &dir, &[]));
    assert!(status.success());
    assert!(table.contains("waiting_on_human (interrupted)"), "{table}");
    assert!(table.contains("source: transcript (interrupted turn)"), "{table}");
    let out = Command::new(env!("CARGO_BIN_EXE_hookline"))
        .args(["decide", "--events-dir"])
        .arg(&dir)
        .args(["s1", "nudge", "--json"])
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(decision["verdict"], "withhold", "{decision}");
    assert_eq!(decision["state"], "waiting_on_human", "{decision}");
    // The next prompt's turn_start clears it.
    let next = [("transcript_path", path), ("prompt", "go on")];
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s1", "task-1", &next);
    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let s1 = row(rows.as_array().unwrap(), "s1");
    assert_eq!(s1["state"], "active", "{s1}");
}

#[test]
fn status_lists_sessions_only_a_transcript_reports_as_unknown_with_their_source() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire_as(&dir, &format!("{C}SessionStart-startup.json"), "s2", "task-2", &[]);
    let projects = tmp.path().join("projects/-work-proj");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("abc.jsonl");
    // An interrupt already in the file when hookline reads it: history, which says nothing.
    let old = interrupt_marker("abc", hookline::format::clock::now_ns() - 1_000_000_000);
    std::fs::write(&transcript, format!("{old}\n")).unwrap();
    let args = ["--json", "--transcripts", projects.parent().unwrap().to_str().unwrap()];
    let out = hookline("status", &dir, &[&args[..], &["--transcripts-cli", "claude"]].concat())
        .output()
        .unwrap();
    let rows = json(&out);
    let abc = row(rows.as_array().unwrap(), "abc");
    assert_eq!(abc["state"], "unknown", "{abc}");
    assert_eq!(abc["detail"], "no hook event: only the transcript is read", "{abc}");
    assert_eq!(abc["authoritative"], false, "{abc}");
    assert_eq!(abc["evidence"]["kind"], "transcript", "{abc}");
    assert_eq!(abc["transcript"]["path"], transcript.to_str().unwrap(), "{abc}");
    assert_eq!(row(rows.as_array().unwrap(), "s2")["state"], "unknown");
    // A CLI without a [transcript] table is refused, by name.
    let out = hookline("status", &dir, &[&args[..], &["--transcripts-cli", "copilot"]].concat())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[transcript]"), "{out:?}");
}

/// A documented payload (`watcher/tests/fixtures/<path>`) with its session id at `key`, run
/// through the real relay registered as `args`, with `CLAUDE_PID` in its environment as a
/// process started from a Claude session inherits it.
fn fire_documented(dir: &Path, path: &str, key: &str, session: &str, args: &[&str]) {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../watcher/tests/fixtures").join(path);
    let mut payload: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    payload[key] = session.into();
    super::watch::run_relay_with(
        dir,
        args,
        &[("CLAUDE_PID", "4242")],
        payload.to_string().as_bytes(),
    );
}

#[test]
fn status_reads_each_event_as_its_producers_whichever_registration_ran_the_relay() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let claude = ["--cli", "claude"];
    // Grok Build runs the hooks of Claude's settings with its own payloads: a turn, a tool
    // and the permission prompt it waits on, all through Claude's registration.
    for file in
        ["user_prompt_submit.json", "pre_tool_use.json", "notification-permission_prompt.json"]
    {
        fire_documented(&dir, &format!("grok/docs-1.0.6/{file}"), "sessionId", "g1", &claude);
    }
    // Cursor's, through Claude's registration too: a turn that completed.
    for file in ["beforeSubmitPrompt.json", "stop.json"] {
        fire_documented(&dir, &format!("cursor/docs-2.5/{file}"), "conversation_id", "c1", &claude);
    }
    // Claude's own.
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s1", "task-1", &[]);
    // A CLI no profile knows, running Claude's hooks: its Stop is not Claude's Stop.
    let foreign = r#"{"hook_event_name":"Stop","sessionId":"x1","stop_hook_active":false}"#;
    super::watch::run_relay(&dir, &claude, foreign.as_bytes());

    let rows = json(&hookline("status", &dir, &["--json"]).output().unwrap());
    let rows = rows.as_array().unwrap();
    let grok = row(rows, "g1");
    assert_eq!(
        (&grok["cli"], &grok["state"], &grok["detail"]),
        (&"grok".into(), &"waiting_on_human".into(), &"permission".into()),
        "{grok}"
    );
    assert_eq!(grok["evidence"]["native"], "notification");
    let cursor = row(rows, "c1");
    assert_eq!((&cursor["cli"], &cursor["state"]), (&"cursor".into(), &"idle".into()), "{cursor}");
    assert_eq!(row(rows, "s1")["cli"], "claude");
    let foreign = row(rows, "x1");
    assert_eq!(
        (&foreign["cli"], &foreign["state"]),
        (&"claude".into(), &"unknown".into()),
        "{foreign}"
    );
    assert_eq!(
        (&foreign["last_event"]["kind"], &foreign["last_event"]["mapped_by"]),
        (&"unknown".into(), &"none".into()),
        "mapped by no rule, Claude's Stop included: {foreign}"
    );
    // The canonical events say who produced each, and why the last one is no one's.
    let out = hookline("watch", &dir, &["--from-start", "--no-follow"]).output().unwrap();
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let clis: Vec<&str> = events.iter().map(|e| e["cli"].as_str().unwrap()).collect();
    assert_eq!(clis, ["grok", "grok", "grok", "cursor", "cursor", "claude", "claude"]);
    // CLAUDE_PID in the relay's environment is Claude's, not Grok's or Cursor's.
    for event in &events[..5] {
        assert_eq!(event["host_pid"], Value::Null, "{event}");
    }
    let why = events[6]["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("\"session_id\"") && why.contains("another CLI produced it"),
        "{}",
        events[6]
    );
}
