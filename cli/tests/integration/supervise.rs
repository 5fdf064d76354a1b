//! What a supervising person sees: `hookline notify` running commands on transitions,
//! `hookline top` driven with keys in a real tmux server, `hookline tmux` marking a real
//! server's panes; events written by the real relay binary.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const C: &str = "claude-code/2.1.332/";

/// Fires a captured Claude payload through the relay, for `session` with `tag`, from the host
/// CLI `host_pid` when given.
fn fire(dir: &Path, fixture: &str, session: &str, tag: &str, host_pid: Option<u32>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../watcher/tests/fixtures")
        .join(C)
        .join(fixture);
    let mut payload: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["session_id"] = session.into();
    let mut relay = Command::new(super::watch::relay());
    relay
        .args(["--cli", "claude"])
        .env_clear()
        .env("HOOKLINE_EVENTS_DIR", dir)
        .env("HOOKLINE_TAG", tag);
    if let Some(pid) = host_pid {
        relay.env("CLAUDE_PID", pid.to_string());
    }
    let mut child = relay.stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

/// Waits (up to 15 s) until `probe` gives something.
fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A private tmux server, killed on drop.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// A server whose first session `main` (80×24) runs `command`; panes stay when their
    /// program exits.
    fn start(dir: &Path, command: &str) -> Tmux {
        let socket = dir.join("tmux.sock");
        let tmux = Tmux { socket };
        let out = tmux
            .command()
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "main",
                "-x",
                "80",
                "-y",
                "24",
                command,
            ])
            .args([";", "set-option", "-g", "remain-on-exit", "on"])
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux: {}", String::from_utf8_lossy(&out.stderr));
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .arg("-S")
            .arg(&self.socket)
            .env("HOME", self.socket.parent().unwrap())
            .env_remove("TMUX");
        command
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[cfg_attr(not(feature = "tui"), allow(dead_code))]
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "main"])
    }

    #[cfg_attr(not(feature = "tui"), allow(dead_code))]
    /// Waits until the screen shows `text`; returns the screen.
    fn wait_screen(&self, text: &str) -> String {
        wait_for(&format!("{text:?} on screen"), || {
            let screen = self.screen();
            screen.contains(text).then_some(screen)
        })
    }

    #[cfg_attr(not(feature = "tui"), allow(dead_code))]
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

fn hookline() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hookline"))
}

/// Needs the dashboard (the default feature `tui`).
#[cfg(feature = "tui")]
#[test]
fn top_shows_who_needs_a_person_first_and_explains_the_selected_session() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    for fixture in ["SessionStart-startup.json", "UserPromptSubmit.json", "Stop.json"] {
        fire(&events, fixture, "s2", "task-2", None);
    }
    fire(&events, "SessionStart-startup.json", "s1", "task-1", None);
    let command = format!(
        "env HOME={home} XDG_CONFIG_HOME= {bin} top --events-dir {events}; echo $? > {home}/top.status",
        home = tmp.path().display(),
        bin = env!("CARGO_BIN_EXE_hookline"),
        events = events.display()
    );
    let tmux = Tmux::start(tmp.path(), &command);
    let screen = tmux.wait_screen("2 sessions, 0 need you");
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines[1].starts_with("STATE") && lines[1].contains("LAST EVENT"), "{screen}");
    // Unknown is loud, before the idle session.
    assert!(lines[2].starts_with("unknown session started"), "{screen}");
    assert!(lines[3].starts_with("idle") && lines[3].contains("task-2"), "{screen}");

    // s1 moves through its states; each event redraws at once.
    fire(&events, "UserPromptSubmit.json", "s1", "task-1", None);
    let screen = tmux.wait_screen("active");
    assert!(screen.lines().nth(2).unwrap().starts_with("idle"), "{screen}");
    fire(&events, "PreToolUse.json", "s1", "task-1", None);
    fire(&events, "PermissionRequest.json", "s1", "task-1", None);
    let screen = tmux.wait_screen("1 need you");
    let row = screen.lines().nth(2).unwrap();
    assert!(row.starts_with("waiting_on_human permission"), "{screen}");
    assert!(
        row.contains("task-1") && row.contains("claude") && row.contains("PermissionRe"),
        "{screen}"
    );
    assert_eq!(screen.lines().count(), 24, "{screen}");

    // Enter explains the selected (first) session; Escape goes back; q quits.
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_screen("explain s1");
    assert!(screen.contains("now: waiting_on_human"), "{screen}");
    for step in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest"] {
        assert!(screen.contains(step), "{step}: {screen}");
    }
    tmux.keys(&["Escape"]);
    tmux.wait_screen("enter explain");
    tmux.keys(&["q"]);
    // tmux 3.3 may mark the pane dead without ever showing its status (a zombie it did not
    // reap yet): the command writes its own exit status instead.
    let status = tmp.path().join("top.status");
    let code = wait_for("top to exit", || std::fs::read_to_string(&status).ok());
    assert_eq!(code.trim(), "0", "{}", tmux.run(&["capture-pane", "-p", "-t", "main"]));
}

/// Raw mode turns Ctrl-C into a key: `top` takes it as quit, from the table and from the
/// explain view, and exits 0 with the terminal given back.
#[cfg(feature = "tui")]
#[test]
fn top_quits_on_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    fire(&events, "SessionStart-startup.json", "s1", "task-1", None);
    let command = format!(
        "env HOME={home} XDG_CONFIG_HOME= {bin} top --events-dir {events}; echo $? > {home}/top.status",
        home = tmp.path().display(),
        bin = env!("CARGO_BIN_EXE_hookline"),
        events = events.display()
    );
    let tmux = Tmux::start(tmp.path(), &command);
    tmux.wait_screen("1 sessions, 0 need you");
    tmux.keys(&["Enter"]);
    tmux.wait_screen("explain s1");
    tmux.keys(&["C-c"]);
    // tmux 3.3 may mark the pane dead without ever showing its status (a zombie it did not
    // reap yet): the command writes its own exit status instead.
    let status = tmp.path().join("top.status");
    let code = wait_for("top to exit", || std::fs::read_to_string(&status).ok());
    assert_eq!(code.trim(), "0", "{}", tmux.run(&["capture-pane", "-p", "-t", "main"]));
}

#[test]
fn top_prints_the_table_once_when_not_on_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    fire(&events, "SessionStart-startup.json", "s2", "task-2", None);
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s1", "task-1", None);
    }
    let out = hookline()
        .args(["top", "--events-dir"])
        .arg(&events)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("STATE"), "{text}");
    assert!(
        lines[1].starts_with("waiting_on_human permission") && lines[1].contains("task-1"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("unknown session started") && lines[2].contains("task-2"),
        "{text}"
    );
}

fn option(tmux: &Tmux, pane: &str, name: &str) -> String {
    tmux.run(&["show-options", "-p", "-q", "-v", "-t", pane, name]).trim().to_owned()
}

#[test]
fn tmux_marks_the_panes_holding_sessions_and_summarizes_for_the_status_line() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let tmux = Tmux::start(tmp.path(), "sleep 600");
    tmux.run(&["split-window", "-t", "main", "sleep 600"]);
    tmux.run(&["split-window", "-t", "main", "sleep 600"]);
    let panes: Vec<(String, u32)> = tmux
        .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"])
        .lines()
        .map(|l| {
            let (id, pid) = l.split_once(' ').unwrap();
            (id.to_owned(), pid.parse().unwrap())
        })
        .collect();
    let [(p1, pid1), (p2, pid2), (p3, _)] = &panes[..] else { panic!("{panes:?}") };
    for fixture in [
        "SessionStart-startup.json",
        "UserPromptSubmit.json",
        "PreToolUse.json",
        "PermissionRequest.json",
    ] {
        fire(&events, fixture, "s1", "task-1", Some(*pid1));
    }
    for fixture in ["SessionStart-startup.json", "UserPromptSubmit.json", "Stop.json"] {
        fire(&events, fixture, "s2", "task-2", Some(*pid2));
    }
    // A stale mark on the pane without a session goes.
    tmux.run(&["set-option", "-p", "-t", p3, "@hookline_state", "idle"]);
    let marks = |args: &[&str]| {
        let mut command = hookline();
        command.arg("tmux").arg("--events-dir").arg(&events).arg("--tmux-socket").arg(&tmux.socket);
        command.args(args).env("HOME", tmp.path()).env_remove("XDG_CONFIG_HOME").env_remove("TMUX");
        command
    };
    let out = marks(&[]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1 need you\n");
    assert_eq!(option(&tmux, p1, "@hookline_state"), "waiting_on_human");
    assert_eq!(option(&tmux, p1, "@hookline_detail"), "permission");
    assert_eq!(option(&tmux, p2, "@hookline_state"), "idle");
    assert_eq!(option(&tmux, p2, "@hookline_detail"), "");
    assert_eq!(option(&tmux, p3, "@hookline_state"), "");
    assert_eq!(tmux.run(&["show-options", "-g", "-v", "@hookline_summary"]).trim(), "1 need you");

    // Following: s2 asks for permission too.
    let mut follow =
        marks(&["--follow"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "1 need you");
    fire(&events, "PreToolUse.json", "s2", "task-2", Some(*pid2));
    fire(&events, "PermissionRequest.json", "s2", "task-2", Some(*pid2));
    assert_eq!(lines.next().unwrap().unwrap(), "2 need you");
    assert_eq!(option(&tmux, p2, "@hookline_state"), "waiting_on_human");
    stop(&mut follow);
}

#[test]
fn tmux_follow_stopped_removes_its_marks_and_says_it_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let tmux = Tmux::start(tmp.path(), "sleep 600");
    let (pane, pid) = tmux
        .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"])
        .trim()
        .split_once(' ')
        .map(|(p, pid)| (p.to_owned(), pid.parse::<u32>().unwrap()))
        .unwrap();
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s1", "task-1", Some(pid));
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let mut follow = hookline()
            .args(["tmux", "--follow", "--events-dir"])
            .arg(&events)
            .arg("--tmux-socket")
            .arg(&tmux.socket)
            .env("HOME", tmp.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("TMUX")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "1 need you");
        assert_eq!(option(&tmux, &pane, "@hookline_state"), "waiting_on_human");
        // SAFETY: kill has no memory preconditions.
        unsafe {
            libc::kill(follow.id() as i32, signal);
        }
        let status = follow.wait().unwrap();
        assert!(status.success(), "{signal}: {status:?}");
        assert_eq!(lines.next().unwrap().unwrap(), "hookline tmux stopped");
        // No frozen "1 need you", no frozen pane state.
        assert_eq!(option(&tmux, &pane, "@hookline_state"), "", "{signal}");
        assert_eq!(option(&tmux, &pane, "@hookline_detail"), "", "{signal}");
        let summary = tmux.run(&["show-options", "-g", "-v", "@hookline_summary"]);
        assert_eq!(summary.trim(), "hookline tmux stopped", "{signal}");
    }
}

#[test]
fn tmux_without_a_server_says_so_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    fire(&events, "SessionStart-startup.json", "s1", "task-1", None);
    let socket = tmp.path().join("no-server.sock");
    let out = hookline()
        .args(["tmux", "--events-dir"])
        .arg(&events)
        .arg("--tmux-socket")
        .arg(&socket)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hookline: no tmux server is running (none answers on {})\n  fix: start tmux first, or \
             name the server's socket with --tmux-socket PATH (the PATH of `tmux -S PATH`)\n",
            socket.display()
        )
    );
}

/// A typo in the user's own policy.toml: `tmux` (it only displays) says so and marks all the
/// same, with the default policy.
#[test]
fn tmux_with_a_bad_default_policy_warns_and_marks_with_the_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let tmux = Tmux::start(tmp.path(), "sleep 600");
    let pid: u32 =
        tmux.run(&["display-message", "-p", "-t", "main", "#{pane_pid}"]).trim().parse().unwrap();
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s1", "task-1", Some(pid));
    }
    let config = tmp.path().join(".config/hookline");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("policy.toml"), "[nudge]\nmin-idel = \"1m\"\n").unwrap();
    let out = hookline()
        .args(["tmux", "--events-dir"])
        .arg(&events)
        .arg("--tmux-socket")
        .arg(&tmux.socket)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1 need you\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hookline: warning: policy {}:2:1: nudge.min-idel: unknown key (did you mean \
             nudge.min-idle?); showing states with the default policy\n",
            config.join("policy.toml").display()
        )
    );
}

/// Mistakes in a notifications file are named with their line, column and key, and a file
/// that would never run anything is warned about.
#[test]
fn notify_check_names_line_column_and_key_and_warns_on_a_file_that_does_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("notify.toml");
    let check = |text: &str| {
        std::fs::write(&config, text).unwrap();
        hookline().args(["notify", "--check", "--config"]).arg(&config).output().unwrap()
    };
    let file = config.display().to_string();
    let cases = [
        (
            "version = 1\n[[notify]]\non = \"idle\"\nrun = [\"true\"]\n",
            format!("{file}:3:6: notify[0].on: must be a list, not a string: on = [\"idle\"]"),
        ),
        (
            "version = 1\n[notify]\non = [\"idle\"]\nrun = [\"true\"]\n",
            format!(
                "{file}:2:1: notify: is one table where a list of tables is expected: write \
                 [[notify]] (two brackets) for each"
            ),
        ),
        ("version = 1\n[[notify]\n", format!("{file}:2:10: unclosed array table, expected `]`")),
        (
            "version = 1\n[[notfy]]\non = [\"idle\"]\n",
            format!("{file}:2:3: notfy: unknown key (did you mean [[notify]]?)"),
        ),
    ];
    for (text, want) in cases {
        let out = check(text);
        assert_eq!(out.status.code(), Some(2), "{text}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(&format!("hookline: notifications {want}")), "{text}: {stderr}");
    }
    // Usable, but it does nothing, and it has no version.
    let out = check("debounce = \"1s\"\n");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hookline: warning: notifications {file}: no [[notify]] rules: nothing will ever run \
             (each rule is a [[notify]] table, see docs/notify.md)\n\
             hookline: warning: notifications {file}: no version key: add `version = 1` at the top\n"
        )
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{file}: 0 rules\n"));
    let out = check("version = 1\n[[notify]]\non = [\"idle\"]\nrun = [\"true\"]\n");
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

fn stop(child: &mut Child) {
    // SAFETY: kill has no memory preconditions.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// `hookline notify` with stderr read line by line; returns once it follows.
fn notify(
    config: &Path,
    events: &Path,
    home: &Path,
) -> (Child, std::io::Lines<BufReader<ChildStderr>>) {
    let mut child = hookline()
        .args(["notify", "--config"])
        .arg(config)
        .arg("--events-dir")
        .arg(events)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut first = lines.next().unwrap().unwrap();
    // Warnings about the file (these have no `version`), then, when the events directory is
    // not there yet, said once: then it follows.
    while first.starts_with("hookline: warning: notifications ")
        || first.starts_with("hookline: waiting for ")
    {
        first = lines.next().unwrap().unwrap();
    }
    assert!(first.starts_with("hookline: notify: 1 rules, following "), "{first}");
    (child, lines)
}

/// A temporary folder with the events directory's path, the file a rule's command appends to
/// and the notification config, written.
struct NotifySetup {
    tmp: tempfile::TempDir,
    events: PathBuf,
    out: PathBuf,
    config: PathBuf,
}

/// A [`NotifySetup`] whose `notify.toml` is `rule` of the path its command appends to.
fn notify_setup(rule: impl FnOnce(&Path) -> String) -> NotifySetup {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let out = tmp.path().join("fired");
    let config = tmp.path().join("notify.toml");
    std::fs::write(&config, rule(&out)).unwrap();
    NotifySetup { tmp, events, out, config }
}

fn fired(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out).unwrap_or_default().lines().map(str::to_owned).collect()
}

#[test]
fn notify_fires_once_per_transition_across_restarts_and_reports_its_latency() {
    let NotifySetup { tmp, events, out, config } = notify_setup(|out| {
        format!(
            "[[notify]]\nname = \"ask\"\non = [\"waiting_on_human.permission\"]\nrun = [\"sh\", \"-c\", \"echo \\\"$HOOKLINE_SESSION $HOOKLINE_DETAIL $(date +%s%N)\\\" >> {}\"]\n",
            out.display()
        )
    });
    // History before the first run is taken as it is: nothing fires for s0.
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s0", "task-0", None);
    }
    let (mut child, mut stderr) = notify(&config, &events, tmp.path());
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s1", "task-1", None);
    }
    let line = wait_for("the command to run", || fired(&out).first().cloned());
    let settled = stderr.next().unwrap().unwrap();
    assert_eq!(settled, "hookline: notify ask: claude:s1 waiting_on_human (permission): ran");
    let (who, ran_ns) = line.rsplit_once(' ').unwrap();
    assert_eq!(who, "s1 permission");
    let status = hookline()
        .args(["status", "--json", "--events-dir"])
        .arg(&events)
        .env("HOME", tmp.path())
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&status.stdout).unwrap();
    let s1 = rows.as_array().unwrap().iter().find(|r| r["session_id"] == "s1").unwrap();
    let written_ns = s1["since_ns"].as_u64().unwrap();
    let latency = ran_ns.parse::<u64>().unwrap().saturating_sub(written_ns);
    eprintln!(
        "notify latency: {:.1} ms from the relay writing the event to the command's `date` (including sh and date start-up)",
        latency as f64 / 1e6
    );
    // The same state again is no transition.
    fire(&events, "Notification-permission_prompt.json", "s1", "task-1", None);
    std::thread::sleep(Duration::from_millis(500));
    stop(&mut child);
    assert_eq!(fired(&out).len(), 1, "{:?}", fired(&out));

    // Restarted: nothing already notified fires again; a new transition does.
    let (mut child, mut stderr) = notify(&config, &events, tmp.path());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(fired(&out).len(), 1, "{:?}", fired(&out));
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire(&events, fixture, "s2", "task-2", None);
    }
    wait_for("the second command", || (fired(&out).len() == 2).then_some(()));
    assert!(fired(&out)[1].starts_with("s2 permission "), "{:?}", fired(&out));
    assert!(
        stderr.next().unwrap().unwrap().contains("claude:s2 waiting_on_human (permission): ran")
    );
    stop(&mut child);
    let journal = std::fs::read_to_string(tmp.path().join("events.notify.ndjson")).unwrap();
    let outcomes: Vec<Value> = journal.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(outcomes.len(), 2, "{journal}");
    assert!(outcomes.iter().all(|r| r["outcome"] == "ran" && r["rule"] == "ask"), "{journal}");
}

#[test]
fn notify_refuses_a_config_with_an_unknown_key_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("notify.toml");
    std::fs::write(&config, "[[notify]]\non = [\"idle\"]\nrun = [\"true\"]\nshel = true\n")
        .unwrap();
    let out = hookline().args(["notify", "--check", "--config"]).arg(&config).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "hookline: notifications {}:4:1: notify[0].shel: unknown key (did you mean notify[0].shell?)\n",
            config.display()
        )
    );
}

#[test]
fn notify_announces_a_session_unknown_for_too_long_once_without_an_event() {
    let NotifySetup { tmp, events, out, config } = notify_setup(|out| {
        format!(
            "[[notify]]\nname = \"lost\"\non = [\"unknown\"]\nunknown-after = \"1s\"\nrun = [\"sh\", \"-c\", \"echo \\\"$HOOKLINE_REASON $HOOKLINE_DETAIL $HOOKLINE_AGE_MS\\\" >> {}\"]\n",
            out.display()
        )
    });
    let check = hookline().args(["notify", "--check", "--config"]).arg(&config).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        format!(
            "lost: on unknown run [\"sh\", \"-c\", \"echo \\\"$HOOKLINE_REASON $HOOKLINE_DETAIL $HOOKLINE_AGE_MS\\\" >> {}\"]\n{}: 1 rules\n",
            out.display(),
            config.display()
        )
    );
    let (mut child, mut stderr) = notify(&config, &events, tmp.path());
    fire(&events, "SessionStart-startup.json", "s1", "task-1", None);
    let line = wait_for("the unknown spell to be announced", || fired(&out).first().cloned());
    let (what, age) = line.rsplit_once(' ').unwrap();
    assert_eq!(what, "unknown session started");
    assert!(age.parse::<u64>().unwrap() >= 1000, "{line}");
    assert!(stderr.next().unwrap().unwrap().ends_with("claude:s1 unknown (session started): ran"));
    // Still unknown a while later: the same spell is not announced again.
    std::thread::sleep(Duration::from_millis(600));
    stop(&mut child);
    assert_eq!(fired(&out).len(), 1, "{:?}", fired(&out));
}

/// [`fire`], with fields of the payload set to other values.
fn fire_with(
    dir: &Path,
    fixture: &str,
    session: &str,
    tag: &str,
    host_pid: Option<u32>,
    extra: &[(&str, &str)],
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../watcher/tests/fixtures")
        .join(C)
        .join(fixture);
    let mut payload: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["session_id"] = session.into();
    for (key, value) in extra {
        payload[*key] = (*value).into();
    }
    let mut relay = Command::new(super::watch::relay());
    relay
        .args(["--cli", "claude"])
        .env_clear()
        .env("HOOKLINE_EVENTS_DIR", dir)
        .env("HOOKLINE_TAG", tag);
    if let Some(pid) = host_pid {
        relay.env("CLAUDE_PID", pid.to_string());
    }
    let mut child = relay.stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn no_tool_name_can_fail_or_reorder_the_batch_that_marks_the_panes() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let tmux = Tmux::start(tmp.path(), "sleep 600");
    // Tool names tmux could read as command separators, quotes, formats, a line break; the
    // last pane's session needs its person, and its mark must be there whatever came first.
    let tools =
        [";", "x;", "\\;", "a;b", "say \"hi\" 'there'", "#{pane_id} #(id)", "one\ntwo", "-u"];
    for _ in 0..tools.len() {
        tmux.run(&["split-window", "-t", "main", "sleep 600"]);
        tmux.run(&["select-layout", "-t", "main", "tiled"]);
    }
    let panes: Vec<(String, u32)> = tmux
        .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"])
        .lines()
        .map(|l| {
            let (id, pid) = l.split_once(' ').unwrap();
            (id.to_owned(), pid.parse().unwrap())
        })
        .collect();
    assert_eq!(panes.len(), tools.len() + 1, "{panes:?}");
    for (i, (tool, (_, pid))) in tools.iter().zip(&panes).enumerate() {
        let (session, tag) = (format!("s{i}"), format!("task-{i}"));
        for fixture in ["SessionStart-startup.json", "UserPromptSubmit.json"] {
            fire(&events, fixture, &session, &tag, Some(*pid));
        }
        fire_with(&events, "PreToolUse.json", &session, &tag, Some(*pid), &[("tool_name", tool)]);
    }
    let (last, last_pid) = panes.last().unwrap();
    for fixture in [
        "SessionStart-startup.json",
        "UserPromptSubmit.json",
        "PreToolUse.json",
        "PermissionRequest.json",
    ] {
        fire(&events, fixture, "needs-you", "task-n", Some(*last_pid));
    }
    let out = hookline()
        .arg("tmux")
        .arg("--events-dir")
        .arg(&events)
        .arg("--tmux-socket")
        .arg(&tmux.socket)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1 need you\n");
    for (tool, (pane, _)) in tools.iter().zip(&panes) {
        assert_eq!(option(&tmux, pane, "@hookline_state"), "child_command", "{tool:?}");
        // Shown as it is: escaped for tmux, never stripped.
        let shown = tmux.run(&["show-options", "-p", "-q", "-v", "-t", pane, "@hookline_detail"]);
        assert_eq!(shown.strip_suffix('\n').unwrap_or(&shown), *tool, "{pane}");
    }
    assert_eq!(option(&tmux, last, "@hookline_state"), "waiting_on_human");
    assert_eq!(option(&tmux, last, "@hookline_detail"), "permission");
    assert_eq!(tmux.run(&["show-options", "-g", "-v", "@hookline_summary"]).trim(), "1 need you");
}
