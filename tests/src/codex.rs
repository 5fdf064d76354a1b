//! Codex CLI in a sandbox: `$CODEX_HOME/config.toml` pointing at the Responses API mock, the
//! project trusted, first-run screens pre-answered; hooks registered by `hookline install codex`
//! only; and the background app-server daemon that 0.171 starts by default, stopped and reaped.
//!
//! The daemon (feature `daemon_auto_start`, on by default in 0.171) changes what an orchestrator
//! sees: a TUI started without `--dangerously-bypass-hook-trust` runs its session in a daemon
//! shared by every TUI of the same `CODEX_HOME`, the hooks run in the daemon's environment (the
//! `HOOKLINE_TAG` and `HOOKLINE_EVENTS_DIR` of the TUI that started it), and `/exit` only
//! detaches: `SessionEnd` fires when the daemon stops. With the flag (and in `codex exec`) the
//! session runs in the CLI's own process. Each sandbox has its own `CODEX_HOME`, hence its own
//! daemon, ended by [`DaemonGuard`] whatever happens.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agent_session::AgentSession;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key, sent as `Authorization: Bearer`; hooks inherit it.
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The flag that makes the TUI and `codex exec` run hooks nobody trusted in `/hooks`.
pub const BYPASS_TRUST: &str = "--dangerously-bypass-hook-trust";
/// On screen while the TUI's prompt is empty and ready.
pub const READY: &str = "Ask Codex";
/// The dialog a TUI started without the bypass flag shows when hooks await review.
pub const HOOKS_NEED_REVIEW: &str = "Hooks need review";
/// On screen while the approval dialog is open.
pub const APPROVAL_DIALOG: &str = "Would you like to run the following command?";
/// The events `hookline install codex` registers for 0.171.
pub const REGISTERED: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "Interrupt",
    "SessionEnd",
];

/// `$CODEX_HOME` of a sandbox.
pub fn codex_home(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".codex")
}

/// Starts the mock, builds the sandbox and writes `config.toml`; registers no hook.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[codex {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    let home = codex_home(&session);
    session.sandbox.set_env("CODEX_HOME", &home);
    session.sandbox.set_env("MOCK_OPENAI_API_KEY", FAKE_API_KEY);
    fs::create_dir_all(&home).unwrap_or_else(|e| session.fail(&format!("{}: {e}", home.display())));
    let project = session.sandbox.project();
    write_config(&home, &base_url, &project);
    git_init(&session, &project);
    session
}

fn write_config(home: &Path, base_url: &str, project: &Path) {
    let project = project.to_str().expect("UTF-8 project path");
    let config = format!(
        r#"# Written by hookline-tests: the mock provider and first-run answers; no hooks.
model = "gpt-5.5"
model_provider = "mock"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{base_url}"
wire_api = "responses"
env_key = "MOCK_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."{project}"]
trust_level = "trusted"

[analytics]
enabled = false

[feedback]
enabled = false

# What the TUI writes after "Use existing model" on its model-migration screen.
[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"

[tui.model_availability_nux]
"gpt-6.1-sol" = 1
"#
    );
    let path = home.join("config.toml");
    fs::write(&path, config).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn git_init(session: &AgentSession, project: &Path) {
    let output =
        Command::new("git").args(["init", "-q"]).arg(project).output().unwrap_or_else(|e| {
            session.fail(&format!("cannot run git ({e}): codex exec needs a repo"))
        });
    if !output.status.success() {
        session.fail(&format!("git init failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
}

/// `hookline install codex`, then checks that `hooks.json` registers exactly the relay for the
/// events 0.171 knows.
pub fn install_hooks(session: &AgentSession) {
    session.install_hooks();
    let path = codex_home(session).join("hooks.json");
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let hooks: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let events: Vec<&str> = hooks["hooks"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if events != REGISTERED {
        session.fail(&format!("hooks.json registers {events:?}, expected {REGISTERED:?}"));
    }
}

/// Wires the relay as Codex's legacy `notify` program, by hand, as hookline's install notes
/// say a user may (`hookline install` never sets it: there is one per config). `notify` is a
/// top-level key, so it goes first in `config.toml`.
pub fn wire_notify(session: &AgentSession) {
    let path = codex_home(session).join("config.toml");
    let relay = crate::binaries::relay();
    let line = format!(
        "notify = [{}, \"--cli\", \"codex\"]\n",
        Value::from(relay.to_str().expect("UTF-8 relay path"))
    );
    let config = fs::read_to_string(&path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    fs::write(&path, line + &config)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
}

/// `codex app-server daemon stop`: ends the sessions the daemon holds (their `SessionEnd`
/// fires), then ends what the daemon left running under this `CODEX_HOME`.
pub fn stop_daemon(session: &AgentSession) {
    let mut command = session.command(&session.binary);
    command.args(["app-server", "daemon", "stop"]);
    let output = crate::process::output_within(command, Duration::from_secs(30))
        .unwrap_or_else(|e| session.fail(&format!("codex app-server daemon stop: {e}")));
    if !output.status.success() {
        session.fail(&format!(
            "codex app-server daemon stop failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

/// Ends every process whose program lives under `codex_home` (the daemon and its helper loop,
/// installed there by Codex), by pid; waits up to 5 s for them to go. Returns what it ended.
pub fn end_processes_under(codex_home: &Path) -> Vec<(u32, String)> {
    let found = processes_under(codex_home);
    for (pid, _) in &found {
        let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_under(codex_home).is_empty() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    for (pid, _) in processes_under(codex_home) {
        let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
    }
    found
}

/// The processes whose program (first word of the command line) is under `dir`.
fn processes_under(dir: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        if words.first().is_some_and(|program| Path::new(program).starts_with(dir)) {
            found.push((pid, words.join(" ")));
        }
    }
    found
}

/// Ends the daemon of a sandbox when dropped, whatever happened: a failed test must not leave
/// Codex processes behind.
pub struct DaemonGuard {
    codex_home: PathBuf,
}

impl DaemonGuard {
    /// Guards the daemon of `session`'s `CODEX_HOME`.
    pub fn new(session: &AgentSession) -> DaemonGuard {
        DaemonGuard { codex_home: codex_home(session) }
    }
}

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        end_processes_under(&self.codex_home);
    }
}
