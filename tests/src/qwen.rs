//! Qwen Code in a sandbox, offline: its OpenAI auth (`security.auth.selectedType: "openai"`,
//! `OPENAI_BASE_URL` at the Chat Completions mock, a fake `OPENAI_API_KEY`), approval mode
//! `default` (0.24 otherwise starts in "Auto" mode, whose classifier the mock cannot be),
//! no update checks, usage statistics, telemetry or follow-up suggestions (each would be one
//! more request to the mock, and a suggestion is drawn in the composer); hooks registered by
//! `hookline install qwen --scope user`, which must merge into the settings file the test wrote
//! and keep its keys.
//!
//! Qwen blocks a foreground `sleep N` unless the command says why
//! ([`SLEEP_30`]); folder trust is off by default, so there is no trust screen.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::claude_style;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key, sent as `Authorization: Bearer`; hooks inherit it.
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The model the settings name.
pub const MODEL: &str = "mock-model";
/// On screen while the composer is empty and ready.
pub const READY: &str = "Type your message or @path/to/file";
/// On screen while the approval dialog is open.
pub const APPROVAL_DIALOG: &str = "Waiting for user confirmation";
/// On screen after an Esc ended a turn.
pub const CANCELLED: &str = "Request cancelled.";
/// A command that runs for 30 s: Qwen refuses a bare foreground `sleep` ("Blocked: standalone
/// sleep") unless a comment says why.
pub const SLEEP_30: &str =
    "sleep 30 # intentional-sleep: the e2e test presses Escape while it runs";
/// The events `hookline install qwen` registers for 0.24.4.
pub const REGISTERED: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "TodoCreated",
    "TodoCompleted",
];
/// The registered events whose entries carry the matcher `*` (the tool events).
pub const MATCHED: &[&str] =
    &["PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure"];

/// `~/.qwen/settings.json` of a sandbox.
pub fn settings_path(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".qwen").join("settings.json")
}

/// The settings the test writes before installing.
pub fn test_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": MODEL},
        "tools": {"approvalMode": "default"},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "ui": {"enableFollowupSuggestions": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    })
}

/// Starts the mock, builds the sandbox and writes the settings; registers no hook.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[qwen {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    session.sandbox.set_env("OPENAI_BASE_URL", base_url);
    session.sandbox.set_env("OPENAI_API_KEY", FAKE_API_KEY);
    session.sandbox.set_env("OPENAI_MODEL", MODEL);
    let path = settings_path(&session);
    let write = || -> std::io::Result<()> {
        fs::create_dir_all(path.parent().expect("a folder"))?;
        let text = serde_json::to_string_pretty(&test_settings()).expect("json");
        fs::write(&path, text + "\n")
    };
    write().unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session
}

/// `hookline install qwen --scope user`, then checks that the settings keep every key the test
/// wrote and register exactly the relay for [`REGISTERED`].
pub fn install_hooks(session: &AgentSession) {
    session.install_hooks_with(&["--scope", "user"]);
    claude_style::check_registered(
        session,
        &settings_path(session),
        &test_settings(),
        REGISTERED,
        MATCHED,
    );
}
