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

/// `demo --live`, started as a user would (stdin a pipe here, not a terminal), read up to the
/// end of its banner.
struct Live {
    child: std::process::Child,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    /// The playground's directory, as the banner names it.
    root: std::path::PathBuf,
    banner: String,
    /// `TMPDIR` and `HOME` of the demo: nothing of it may be left here.
    home: tempfile::TempDir,
}

impl Live {
    fn start() -> Live {
        use std::io::BufRead;
        super::watch::relay();
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookline"))
            .args(["demo", "--live"])
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("TMPDIR", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("HOOKLINE_EVENTS_DIR")
            .env_remove("TMUX")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut banner = String::new();
        for line in stdout.by_ref() {
            let line = line.unwrap();
            banner.push_str(&line);
            banner.push('\n');
            if line.starts_with("q (or Ctrl-C") {
                break;
            }
        }
        let root = banner
            .split("Everything is under ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no directory in the banner:\n{banner}"))
            .into();
        Live { child, stdout, root, banner, home }
    }

    fn hookline(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_hookline"))
            .args(args)
            .env("HOME", self.home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("TMUX")
            .output()
            .unwrap()
    }

    fn events(&self) -> String {
        self.root.join("events").display().to_string()
    }

    fn socket(&self) -> String {
        self.root.join("tmux.sock").display().to_string()
    }

    /// Every process the playground runs: the daemon (its log names it) and the agents (the
    /// panes' programs).
    fn processes(&self) -> Vec<i32> {
        let log = std::fs::read_to_string(self.root.join("daemon.log")).unwrap();
        let daemon: i32 = log
            .split("daemon (pid ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("no daemon pid in its log: {log}"));
        let panes = Command::new("tmux")
            .args(["-S", &self.socket(), "list-panes", "-a", "-F", "#{pane_pid}"])
            .output()
            .unwrap();
        let mut pids: Vec<i32> = String::from_utf8_lossy(&panes.stdout)
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2, "two agents");
        pids.push(daemon);
        pids
    }

    /// Waits for the demo to end; asserts that it left no process, no tmux server and no file.
    fn ended(mut self, processes: &[i32]) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        let rest: Vec<String> = self.stdout.by_ref().map(Result::unwrap).collect();
        let last = rest.last().cloned().unwrap_or_default();
        for &pid in processes {
            assert!(!running(pid), "process {pid} is still running");
        }
        assert!(!self.root.exists(), "{} is still there", self.root.display());
        let left: Vec<_> = std::fs::read_dir(self.home.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        (status, last)
    }
}

/// Whether a process is there and not a zombie.
fn running(pid: i32) -> bool {
    // SAFETY: signal 0 checks existence only.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')').is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        })
}

#[test]
fn demo_live_takes_a_delivery_into_its_agent_and_leaves_nothing_after_q() {
    use std::io::Write;
    let live = Live::start();
    assert!(live.banner.contains("  demo-1  in window demo:agent-1  idle\n"), "{}", live.banner);
    assert!(
        live.banner.contains("  demo-2  in window demo:agent-2  waiting_on_human (permission)\n"),
        "{}",
        live.banner
    );
    // The banner's own deliver command, aimed at this playground.
    let line = live.banner.lines().find(|l| l.contains(" deliver ")).unwrap();
    assert!(line.contains(&format!("--events-dir {}", live.events())), "{line}");
    assert!(line.contains(&format!("--tmux-socket {}", live.socket())), "{line}");
    let (events, socket) = (live.events(), live.socket());
    let out = live.hookline(&[
        "deliver",
        "--events-dir",
        &events,
        "--tmux-socket",
        &socket,
        "--tmux",
        "demo:agent-1",
        "--session",
        "demo-1",
        "run the tests",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("delivered to demo-1 (pane %"), "{said}");
    assert!(said.contains(") and confirmed by UserPromptSubmit"), "{said}");
    // The agent took it as a prompt: it works on it (a long tool), as the daemon sees.
    let status = live.hookline(&["status", "--json", "--events-dir", &events]);
    let rows: Value = serde_json::from_slice(&status.stdout).unwrap();
    let demo1 = rows.as_array().unwrap().iter().find(|r| r["tag"] == "demo-1").unwrap();
    assert!(demo1["state"] == "active" || demo1["state"] == "child_command", "{demo1}");
    assert_eq!(demo1["authoritative"], true, "live from the daemon: {demo1}");

    let processes = live.processes();
    let mut live = live;
    live.child.stdin.take().unwrap().write_all(b"q").unwrap();
    let root = live.root.clone();
    let (status, last) = live.ended(&processes);
    assert!(status.success(), "{status:?}");
    assert!(last.ends_with(&format!("removed {}", root.display())), "{last}");
}

#[test]
fn demo_live_stopped_by_a_signal_leaves_nothing() {
    let live = Live::start();
    let processes = live.processes();
    // SAFETY: kill has no memory preconditions.
    unsafe {
        libc::kill(live.child.id() as i32, libc::SIGINT);
    }
    let (status, last) = live.ended(&processes);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(last.contains("agents, tmux server and daemon stopped"), "{last}");
}

/// `hookline demo` with its own `TMPDIR` (and `HOME`), stdout a pipe; returns the child and
/// that directory, which must be empty once the demo is gone.
fn demo_into_a_pipe() -> (std::process::Child, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_hookline"))
        .args(["demo", "--pace", "300"])
        .env("HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("HOOKLINE_EVENTS_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, tmp)
}

fn nothing_left(tmp: &tempfile::TempDir) {
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn demo_into_a_reader_that_goes_away_exits_cleanly_and_removes_its_directory() {
    use std::io::BufRead;
    let (mut child, tmp) = demo_into_a_pipe();
    // `hookline demo | head -1`.
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("hookline demo: "), "{first}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "no death by SIGPIPE: {out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    nothing_left(&tmp);
}

#[test]
fn demo_interrupted_removes_its_directory() {
    use std::io::BufRead;
    let (mut child, tmp) = demo_into_a_pipe();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The first event is on screen: the relays are writing.
    lines.by_ref().map(Result::unwrap).find(|l| l.trim_start().starts_with("1 ")).unwrap();
    // SAFETY: kill has no memory preconditions.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    nothing_left(&tmp);
}
