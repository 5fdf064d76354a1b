//! Gemini CLI in a sandbox: `GEMINI_CLI_HOME` in the sandbox, the Gemini API mock as
//! `GOOGLE_GEMINI_BASE_URL` with API-key auth pinned in settings (without it the CLI derives the
//! "gateway" auth type and exits 41, "Invalid auth method selected."), the workspace trusted for
//! the run (hooks load only in a trusted folder), telemetry and update checks off; hooks
//! registered by `hookline install gemini`, which must merge into the settings file the test
//! wrote and keep its keys.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::mock_gemini;
use crate::npm_install::Installed;

/// A fake API key, sent as `x-goog-api-key`; hooks inherit it.
pub const FAKE_API_KEY: &str = "hookline-e2e-not-a-real-key";
/// On screen while the TUI's prompt is empty and ready.
pub const READY: &str = "Type your message";
/// On screen while the approval dialog is open.
pub const APPROVAL_DIALOG: &str = "Allow execution of";
/// The events `hookline install gemini` registers for 0.61.
pub const REGISTERED: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "PreCompress",
];

/// `$GEMINI_CLI_HOME/.gemini/settings.json` of a sandbox.
pub fn settings_path(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".gemini").join("settings.json")
}

/// The settings the test writes before installing: auth, telemetry and updates (with the key
/// names 0.61 uses: it rewrites deprecated ones, e.g. `disableAutoUpdate`, on every start).
pub fn test_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        // One attempt per request: an API error (the mock's `APIERROR:`) ends the turn at once
        // instead of after ten attempts with backoff.
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
                    "maxAttempts": 1},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    })
}

/// Starts the mock, builds the sandbox and writes the settings; registers no hook.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_gemini::start().unwrap_or_else(|e| panic!("[gemini {scenario}] mock: {e}"));
    let base_url = api.base_url();
    let mut session = AgentSession::new(installed, scenario, api);
    let home = session.sandbox.home();
    session.sandbox.set_env("GEMINI_CLI_HOME", &home);
    session.sandbox.set_env("GOOGLE_GEMINI_BASE_URL", base_url);
    session.sandbox.set_env("GEMINI_API_KEY", FAKE_API_KEY);
    session.sandbox.set_env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let path = settings_path(&session);
    let write = || -> std::io::Result<()> {
        fs::create_dir_all(path.parent().expect("a folder"))?;
        let text = serde_json::to_string_pretty(&test_settings()).expect("json");
        fs::write(&path, text + "\n")
    };
    write().unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session
}

/// `hookline install gemini`, then checks that the settings keep every key the test wrote and
/// register exactly the relay, named `hookline`, for the events hookline wants.
pub fn install_hooks(session: &AgentSession) {
    session.install_hooks();
    let path = settings_path(session);
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let settings: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    for (key, value) in test_settings().as_object().expect("an object") {
        if settings[key] != *value {
            session.fail(&format!(
                "hookline install gemini changed {key}: {} instead of {value}",
                settings[key]
            ));
        }
    }
    let hooks = settings["hooks"].as_object();
    let events: Vec<&str> =
        hooks.map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    if events != REGISTERED {
        session.fail(&format!("settings.json registers {events:?}, expected {REGISTERED:?}"));
    }
    let named = hooks.into_iter().flat_map(|o| o.values()).all(|groups| {
        groups[0]["hooks"][0]["name"] == "hookline" && groups[0]["hooks"][0]["timeout"] == 10000
    });
    if !named {
        session.fail(&format!("the entries are not named hookline with 10 s timeouts: {text}"));
    }
}
