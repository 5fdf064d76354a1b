//! The Pi coding agent in a sandbox, offline: `~/.pi/agent/models.json` makes a custom provider
//! `mock` of the Chat Completions mock ([`crate::mock_openai`]), `settings.json` selects it and
//! lets Pi retry a failed request once after 0.5 s; `PI_OFFLINE=1` stops its version check and
//! tool downloads. hookline's extension (`profiles/pi-extension.ts`) is written into Pi's user
//! extension folder by `hookline install pi --scope user`.
//!
//! Pi has no approval dialog of its own: the TUI scenarios load the permission gate shipped in
//! Pi's own package (`examples/extensions/permission-gate.ts`, with `-e`), which asks through
//! Pi's shared `ctx.ui` before a dangerous command (`chmod 777`, `rm -rf`, `sudo`) runs.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::agent_session::AgentSession;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key, sent as `Authorization: Bearer` (models.json names the variable).
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The variable models.json reads the key from.
pub const KEY_VARIABLE: &str = "HOOKLINE_MOCK_API_KEY";
/// In the footer while the TUI is up: the model's name.
pub const READY: &str = "mock-model";
/// On screen while the permission gate's dialog is open.
pub const APPROVAL_DIALOG: &str = "Dangerous command:";
/// On screen while a turn runs.
pub const BUSY: &str = "Working...";

/// Pi's agent folder in a sandbox (`~/.pi/agent`).
pub fn agent_dir(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".pi").join("agent")
}

/// The permission gate Pi ships as an example extension.
pub fn permission_gate(installed: &Installed) -> PathBuf {
    installed
        .dir
        .join("node_modules/@mariozechner/pi-coding-agent/examples/extensions/permission-gate.ts")
}

/// Starts the mock, builds the sandbox and writes Pi's provider and settings; installs no
/// extension.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[pi {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    for (key, value) in [("PI_OFFLINE", "1"), ("PI_TELEMETRY", "0"), (KEY_VARIABLE, FAKE_API_KEY)] {
        session.sandbox.set_env(key, value);
    }
    let models = json!({"providers": {"mock": {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": KEY_VARIABLE,
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{
            "id": "mock-model", "reasoning": false, "input": ["text"],
            "contextWindow": 128000, "maxTokens": 4096,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        }],
    }}});
    let settings = json!({
        "defaultProvider": "mock",
        "defaultModel": "mock-model",
        "quietStartup": true,
        "retry": {"enabled": true, "maxRetries": 1, "baseDelayMs": 500},
    });
    let dir = agent_dir(&session);
    for (file, value) in [("models.json", models), ("settings.json", settings)] {
        let path = dir.join(file);
        fs::create_dir_all(&dir)
            .and_then(|()| fs::write(&path, format!("{value:#}\n")))
            .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    }
    session.git_init_project();
    session
}

/// `hookline install pi --scope user --relay <built relay>`, as a user runs it; checks that it
/// wrote the extension, for the built relay and told it runs in `pi`, into Pi's user extension
/// folder, and that a second run changes nothing.
pub fn install_extension(session: &AgentSession) -> PathBuf {
    let path = agent_dir(session).join("extensions").join("hookline.ts");
    let stdout = crate::plugins::install_plugin(session, &path, crate::plugins::PI_SOURCE);
    if !stdout.starts_with(&format!("Pi {} (from `pi --version`)", session.version)) {
        session.fail(&format!("hookline install pi did not detect Pi's version:\n{stdout}"));
    }
    path
}

/// How long a TUI step may take on two busy cores.
pub const STEP: Duration = Duration::from_secs(30);
