//! `hookline demo --live`: a playground of the live half, with no agent CLI and no account. A
//! temporary directory holds the events directory, its `hookline daemon`, a private tmux server
//! (its own socket) whose two windows each run a scripted agent TUI ([`super::agent`]) firing
//! captured Claude Code payloads through the real relay, and a `notify.toml` whose rule writes
//! into that server's status line. It prints the commands to try, each aimed at these, and
//! waits; q, Ctrl-C or SIGTERM stops the tmux server (the agents end with it), then the
//! daemon, and removes the directory.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::install::find_relay;
use crate::install::probe::which;
use hookline::daemon::Client;
use hookline::state::{StateKind, View};

use super::ignore_sigpipe;
use crate::cmd::{Outcome, catch_signals, stopped_code, stopping};

/// The tmux session holding the agents' windows.
const SESSION: &str = "demo";

/// The agents: tmux window, tag, the prompt each submits once started, and the state it is
/// expected to settle in.
const AGENTS: [(&str, &str, &str, StateKind); 2] = [
    ("agent-1", "demo-1", "look around the repository", StateKind::Idle),
    ("agent-2", "demo-2", "clean the build directory", StateKind::WaitingOnHuman),
];

/// How long the agents get to reach their first states.
const SETTLE: Duration = Duration::from_secs(20);

pub fn run() -> Outcome {
    let path = std::env::var_os("PATH");
    let relay = find_relay(path.as_deref())
        .map_err(|e| format!("{e}; build both binaries with `cargo build --release`"))?;
    if which("tmux", path.as_deref()).is_none() {
        return Err("demo --live runs its agents in tmux, which is not on PATH: install tmux \
                    (e.g. apt install tmux, brew install tmux) and run it again"
            .into());
    }
    let hookline = std::env::current_exe()?;
    ignore_sigpipe();
    catch_signals();
    let dir = tempfile::Builder::new().prefix("hookline-demo-live-").tempdir()?;
    let mut playground = Playground::new(dir);
    let result = playground.start(&hookline, &relay).and_then(|()| {
        let me = shown_name(&hookline, path.as_deref());
        let settled = playground.settle();
        say(&playground.banner(&me, &settled));
        playground.wait()
    });
    let ended = playground.stop();
    say(&ended);
    match result {
        Ok(Stopped::Quit) => Ok(ExitCode::SUCCESS),
        Ok(Stopped::Signal) => Ok(stopped_code()),
        Ok(Stopped::Broke(why)) => Err(why.into()),
        Err(e) => Err(e),
    }
}

/// Prints to stdout, ignoring a reader that went away: the playground must still be removed.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// How the wait ended.
enum Stopped {
    /// q.
    Quit,
    /// SIGINT or SIGTERM.
    Signal,
    /// The daemon or the tmux server went away on its own.
    Broke(String),
}

/// What `demo --live` started, and removes.
struct Playground {
    /// `None` once removed.
    dir: Option<tempfile::TempDir>,
    root: PathBuf,
    daemon: Option<Child>,
    tmux_started: bool,
    terminal: Option<KeysTerminal>,
}

impl Playground {
    fn new(dir: tempfile::TempDir) -> Playground {
        let root = dir.path().to_owned();
        Playground { dir: Some(dir), root, daemon: None, tmux_started: false, terminal: None }
    }

    fn events(&self) -> PathBuf {
        self.root.join("events")
    }

    fn socket(&self) -> PathBuf {
        self.root.join("tmux.sock")
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(self.socket()).env_remove("TMUX");
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        command
    }

    /// The daemon first (so the agents' events are live ones), then the tmux server with one
    /// agent per window.
    fn start(&mut self, hookline: &Path, relay: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let project = self.root.join("project");
        std::fs::create_dir(&project)?;
        std::fs::write(
            project.join("README.md"),
            "A directory for the scripted agents of `hookline demo --live`.\n",
        )?;
        // The daemon's own policy (the defaults), so that the user's policy.toml (a classifier
        // that would be asked about these sessions, a typo) has no say in the playground.
        std::fs::write(self.root.join("policy.toml"), "version = 1\n")?;
        std::fs::write(self.root.join("notify.toml"), notify_toml(&self.socket()))?;

        let log = File::create(self.root.join("daemon.log"))?;
        let daemon = Command::new(hookline)
            .arg("daemon")
            .arg("--events-dir")
            .arg(self.events())
            .arg("--policy")
            .arg(self.root.join("policy.toml"))
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // Its own process group: a Ctrl-C on the terminal is ours to handle, in order.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {} daemon: {e}", hookline.display()))?;
        self.daemon = Some(daemon);
        self.wait_for_daemon()?;

        for (i, (window, tag, opening, _)) in AGENTS.iter().enumerate() {
            let mut tmux = self.tmux();
            if i == 0 {
                tmux.args(["-f", "/dev/null", "new-session", "-d", "-s", SESSION, "-x", "110"]);
                tmux.args(["-y", "32"]);
            } else {
                tmux.args(["new-window", "-d", "-t", SESSION]);
            }
            tmux.args(["-n", window, "-c"]).arg(&project);
            tmux.arg(hookline).args(["demo-agent", "--relay"]).arg(relay);
            tmux.arg("--events-dir").arg(self.events()).args(["--tag", tag, "--opening", opening]);
            if i == 0 {
                // A pane whose agent stopped stays, showing why; the status line shows what
                // `hookline tmux` marks.
                tmux.args([";", "set-option", "-g", "remain-on-exit", "on"]);
                tmux.args([";", "set-option", "-g", "status-right", "#{@hookline_summary} "]);
                tmux.args([";", "set-option", "-g", "status-right-length", "60"]);
                tmux.args([
                    ";",
                    "set-option",
                    "-g",
                    "window-status-format",
                    "#I:#W #{@hookline_state}",
                ]);
                tmux.args([
                    ";",
                    "set-option",
                    "-g",
                    "window-status-current-format",
                    "#I:#W* #{@hookline_state}",
                ]);
            }
            let out = tmux.output().map_err(|e| format!("cannot run tmux: {e}"))?;
            self.tmux_started = true;
            if !out.status.success() {
                let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                return Err(format!("tmux could not start the agent {tag}: {why}").into());
            }
        }
        Ok(())
    }

    /// Waits until the daemon answers on its socket.
    fn wait_for_daemon(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if Client::connect(&self.events()).is_ok() {
                return Ok(());
            }
            if let Some(daemon) = &mut self.daemon
                && let Some(status) = daemon.try_wait()?
            {
                return Err(format!("the daemon stopped ({status}): {}", self.daemon_log()).into());
            }
            if Instant::now() > deadline || stopping() {
                return Err(format!("the daemon did not answer: {}", self.daemon_log()).into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn daemon_log(&self) -> String {
        let log = std::fs::read_to_string(self.root.join("daemon.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    }

    /// Waits (up to [`SETTLE`]) for each agent's first state as the daemon sees it; returns
    /// the sessions it knows.
    fn settle(&self) -> Vec<View> {
        let deadline = Instant::now() + SETTLE;
        let mut views = Vec::new();
        while Instant::now() < deadline && !stopping() {
            if let Ok(found) = Client::connect(&self.events()).and_then(|mut c| c.sessions()) {
                views = found;
            }
            let settled = AGENTS.iter().all(|(_, tag, _, state)| {
                views.iter().any(|v| v.tag.as_deref() == Some(*tag) && v.state == *state)
            });
            if settled {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        views
    }

    /// What is running, and the commands to try on it.
    fn banner(&self, me: &str, views: &[View]) -> String {
        let events = shell_word(&self.events().display().to_string());
        let socket = shell_word(&self.socket().display().to_string());
        let notify = shell_word(&self.root.join("notify.toml").display().to_string());
        let dir = format!("--events-dir {events}");
        let mut out = format!(
            "hookline demo --live: two scripted agents drawn like Claude Code, in tmux windows, their\n\
             hooks (payloads captured from Claude Code 2.1.332) through the real relay into a temporary\n\
             events directory, watched by its daemon. Everything is under {}\n\
             and goes when this stops.\n\n",
            self.root.display()
        );
        for (window, tag, _, _) in AGENTS {
            let state = views.iter().find(|v| v.tag.as_deref() == Some(tag)).map_or(
                "no event yet".to_owned(),
                |v| match &v.detail {
                    Some(detail) => format!("{} ({detail})", v.state),
                    None => v.state.to_string(),
                },
            );
            out.push_str(&format!("  {tag}  in window {SESSION}:{window}  {state}\n"));
        }
        // From inside tmux, tmux refuses to attach to another server unless told to nest.
        let nested = if std::env::var_os("TMUX").is_some() { "TMUX= " } else { "" };
        let attach = format!("{nested}tmux -S {socket} attach -t {SESSION}");
        let lines = [
            ("Watch them", None),
            (attach.as_str(), Some("the agents (Ctrl-b n: next window, Ctrl-b d: detach)")),
            (&format!("{me} status {dir}"), Some("each session's state, live from the daemon")),
            (&format!("{me} top {dir}"), Some("the dashboard: those that need you first")),
            (
                &format!("{me} tmux {dir} --tmux-socket {socket} --follow"),
                Some("marks the windows; the summary in tmux's status line"),
            ),
            (
                &format!("{me} notify {dir} --config {notify}"),
                Some("runs a rule when a session needs you (a message in tmux)"),
            ),
            ("Act on them", None),
            (
                &format!(
                    "{me} deliver {dir} --tmux-socket {socket} --tmux {SESSION}:agent-1 --session demo-1 \"run the tests\""
                ),
                Some("types a prompt once the daemon allows it, confirmed by its UserPromptSubmit"),
            ),
            (
                &format!("{me} decide {dir} demo-2 input"),
                Some(
                    "withheld: demo-2 waits on a permission dialog (press 1 in agent-2 to approve)",
                ),
            ),
            (
                &format!("{me} decide {dir} demo-1 stall"),
                Some("at a turn's end: is a nudge wanted?"),
            ),
            (&format!("{me} explain {dir} demo-1"), Some("the events and rules behind a state")),
        ];
        for (line, what) in lines {
            match what {
                None => out.push_str(&format!("\n{line}:\n")),
                Some(what) => out.push_str(&format!("  {line}\n      # {what}\n")),
            }
        }
        out.push_str(
            "\n`decide demo-1 input` takes demo-1's one input slot: a `deliver` after it is refused\n\
             until demo-1's next turn ends. Prompts with \"test\" run a long tool, with \"clean\" ask for\n\
             permission, anything else reads a file.\n\n\
             q (or Ctrl-C, or SIGTERM) stops the agents, the tmux server and the daemon, and removes\n\
             the directory.",
        );
        out
    }

    /// Waits for q, a signal, or the daemon or tmux server going away.
    fn wait(&mut self) -> Result<Stopped, Box<dyn std::error::Error>> {
        let (tx, keys) = mpsc::channel();
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            self.terminal = KeysTerminal::cbreak();
        }
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            let mut stdin = stdin.lock();
            while let Ok(1) = stdin.read(&mut byte) {
                if tx.send(byte[0]).is_err() {
                    return;
                }
            }
        });
        let mut checked = Instant::now();
        loop {
            if stopping() {
                return Ok(Stopped::Signal);
            }
            match keys.recv_timeout(Duration::from_millis(100)) {
                Ok(b'q' | b'Q') => return Ok(Stopped::Quit),
                Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
            if checked.elapsed() < Duration::from_secs(1) {
                continue;
            }
            checked = Instant::now();
            if let Some(daemon) = &mut self.daemon
                && let Some(status) = daemon.try_wait()?
            {
                let why = format!("the daemon stopped ({status}): {}", self.daemon_log());
                return Ok(Stopped::Broke(why));
            }
            let alive = self.tmux().args(["has-session", "-t", SESSION]).output();
            if !alive.is_ok_and(|o| o.status.success()) {
                return Ok(Stopped::Broke("the demo's tmux server went away".into()));
            }
        }
    }

    /// Stops everything it started and removes the directory; says what it did.
    fn stop(&mut self) -> String {
        self.terminal = None;
        let mut notes = Vec::new();
        if self.tmux_started {
            self.tmux_started = false;
            // The agents are the panes' programs: they end with the server (a hangup), each
            // after the hook it may be running, so that no relay writes into a removed
            // directory; one that lingers is killed.
            let panes = self.tmux().args(["list-panes", "-a", "-F", "#{pane_pid}"]).output();
            let pids: Vec<i32> = panes
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .filter_map(|l| l.trim().parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            let _ = self.tmux().arg("kill-server").output();
            let deadline = Instant::now() + Duration::from_secs(3);
            while pids.iter().any(|&pid| running(pid)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            for &pid in pids.iter().filter(|&&pid| running(pid)) {
                // SAFETY: kill has no memory preconditions; the pid is an agent we started.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                notes.push(format!("agent {pid} killed"));
            }
        }
        if let Some(mut daemon) = self.daemon.take() {
            let pid = daemon.id() as i32;
            // SAFETY: as above; the daemon is our child, not yet waited for.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while daemon.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if daemon.try_wait().ok().flatten().is_none() {
                let _ = daemon.kill();
                notes.push("daemon killed".into());
            }
            let _ = daemon.wait();
        }
        let removed = match self.dir.take().map(tempfile::TempDir::close) {
            Some(Ok(())) => format!("removed {}", self.root.display()),
            Some(Err(e)) => format!("could not remove {}: {e}", self.root.display()),
            None => String::new(),
        };
        notes.insert(0, "agents, tmux server and daemon stopped".into());
        notes.push(removed);
        format!("hookline demo --live: {}", notes.join("; "))
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        if self.dir.is_some() {
            let _ = self.stop();
        }
    }
}

/// Whether a process is still there (a zombie is not).
fn running(pid: i32) -> bool {
    // SAFETY: signal 0 checks existence only.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            // The state follows the command name, which is in parentheses.
            stat.rsplit_once(')').is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
}

/// The terminal with line buffering and echo off (signals kept), so that q is read at once;
/// restored on drop.
struct KeysTerminal {
    saved: libc::termios,
}

impl KeysTerminal {
    fn cbreak() -> Option<KeysTerminal> {
        // SAFETY: tcgetattr/tcsetattr on stdin with a zeroed, then filled, termios.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return None;
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            Some(KeysTerminal { saved })
        }
    }
}

impl Drop for KeysTerminal {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `cbreak`.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.saved);
        }
    }
}

/// How the printed commands name hookline: `hookline` when that is this binary, else its path.
fn shown_name(exe: &Path, path: Option<&std::ffi::OsStr>) -> String {
    let same = which("hookline", path)
        .and_then(|found| found.canonicalize().ok())
        .is_some_and(|found| exe.canonicalize().is_ok_and(|exe| exe == found));
    if same { "hookline".into() } else { shell_word(&exe.display().to_string()) }
}

/// A word a shell reads back as `text`.
fn shell_word(text: &str) -> String {
    let plain = text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain && !text.is_empty() {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The playground's notifications: a message in the demo's tmux server whenever a session
/// needs a person or goes idle.
fn notify_toml(socket: &Path) -> String {
    let socket = toml::Value::String(socket.display().to_string());
    format!(
        "# hookline demo --live: each rule shows a message in the demo's tmux server.\n\
         version = 1\n\n\
         [[notify]]\n\
         name = \"needs-you\"\n\
         on = [\"waiting_on_human\", \"env_fault\"]\n\
         run = [\"sh\", \"-c\", \"tmux -S \\\"$0\\\" display-message -d 5000 \\\"hookline: $HOOKLINE_TAG needs you ($HOOKLINE_DETAIL)\\\"\", {socket}]\n\n\
         [[notify]]\n\
         name = \"idle\"\n\
         on = [\"idle\"]\n\
         run = [\"sh\", \"-c\", \"tmux -S \\\"$0\\\" display-message -d 3000 \\\"hookline: $HOOKLINE_TAG is idle\\\"\", {socket}]\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_playgrounds_notifications_parse() {
        let text = notify_toml(Path::new("/tmp/hookline-demo-live-x/tmux.sock"));
        let config = crate::notify::NotifyConfig::parse(&text, "notify.toml").unwrap();
        assert_eq!(config.rules.len(), 2);
    }

    #[test]
    fn shell_words_read_back() {
        assert_eq!(shell_word("/tmp/a-b/c.sock"), "/tmp/a-b/c.sock");
        assert_eq!(shell_word("/tmp/it's here"), r"'/tmp/it'\''s here'");
    }
}
