//! Factory Droid in a sandbox, offline: its airgap mode (`FACTORY_AIRGAP_ENABLED=true`, no
//! Factory login, custom models only) with one custom model served by the Chat Completions mock
//! (`customModels` of `~/.factory/settings.json`, provider `generic-chat-completion-api`);
//! hooks registered by `hookline install droid --scope user`, which must merge into the settings
//! file the test wrote and keep its keys. The folder is not pre-trusted: every TUI scenario
//! answers the trust screen, which fires nothing.
//!
//! Droid rewrites its own settings.json at start (it sorts the custom model's keys, drops
//! `model` for `sessionDefaultSettings`, records the trusted folder) and keeps the hooks; the
//! suite checks `hookline doctor droid` still finds them afterwards. It prints every hook it
//! runs in its conversation view, with the command and its exit code ([`hook_failures`]).

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::claude_style;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key for the custom model; hooks inherit nothing of it (it lives in settings).
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The custom model's name at the mock.
pub const MODEL: &str = "mock-model";
/// The model Droid is told to use: a custom one.
pub const CUSTOM_MODEL: &str = "custom:mock-model";
/// The folder-trust screen of a first start in a folder.
pub const TRUST: &str = "Trust this folder?";
/// In the footer while the TUI takes input.
pub const READY: &str = "? for help";
/// On screen while the approval dialog is open.
pub const APPROVAL_DIALOG: &str = "Command to approve";
/// On screen after an Esc ended a turn.
pub const CANCELLED: &str = "Request cancelled by user";
/// The events `hookline install droid` registers: all nine 0.225.2 knows.
pub const REGISTERED: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
];
/// The registered events whose entries carry the matcher `*` (the tool events).
pub const MATCHED: &[&str] = &["PreToolUse", "PostToolUse"];

/// `~/.factory/settings.json` of a sandbox.
pub fn settings_path(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".factory").join("settings.json")
}

/// The settings the test writes before installing: the mock as a custom model, chosen.
pub fn test_settings(base_url: &str) -> Value {
    json!({
        "customModels": [{
            "model": MODEL,
            "displayName": "Mock",
            "baseUrl": base_url,
            "apiKey": FAKE_API_KEY,
            "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096,
        }],
        "model": CUSTOM_MODEL,
    })
}

fn base_url(session: &AgentSession) -> String {
    format!("{}/v1", session.api.base_url())
}

/// Starts the mock, builds the sandbox in airgap mode and writes the settings; registers no
/// hook.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[droid {scenario}] mock: {e}"));
    let mut session = AgentSession::new(installed, scenario, api);
    session.sandbox.set_env("FACTORY_AIRGAP_ENABLED", "true");
    let path = settings_path(&session);
    let settings = test_settings(&base_url(&session));
    let write = || -> std::io::Result<()> {
        fs::create_dir_all(path.parent().expect("a folder"))?;
        let text = serde_json::to_string_pretty(&settings).expect("json");
        fs::write(&path, text + "\n")
    };
    write().unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session
}

/// `hookline install droid --scope user`, then checks that the settings keep every key the test
/// wrote and register exactly the relay for [`REGISTERED`].
pub fn install_hooks(session: &AgentSession) {
    session.install_hooks_with(&["--scope", "user"]);
    let written = test_settings(&base_url(session));
    claude_style::check_registered(session, &settings_path(session), &written, REGISTERED, MATCHED);
}

/// After Droid ran (and rewrote its settings): `hookline doctor droid` finds every hook still
/// registered and reports no problem.
pub fn check_doctor(session: &AgentSession) {
    let output = session.hookline(&["doctor", "droid"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let registered = format!("registered for {} events", REGISTERED.len());
    if !output.status.success() || !stdout.contains(&registered) {
        session.fail(&format!(
            "hookline doctor droid after Droid rewrote its settings ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

/// The hook runs Droid shows on `screen` that did not exit 0 (`└─ <command> (10s timeout) :
/// Exit code 1`).
pub fn hook_failures(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|line| line.contains("Exit code ") && !line.trim_end().ends_with("Exit code 0"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_run_that_did_not_exit_0_is_a_failure() {
        let screen = "   Hooks Stop\n    └─ /x/hookline-relay --cli droid (10s timeout) : Exit code 0\n\
                      \x20   └─ /x/hookline-relay --cli droid (10s timeout) : Exit code 10\n";
        assert_eq!(
            hook_failures(screen),
            ["    └─ /x/hookline-relay --cli droid (10s timeout) : Exit code 10"]
        );
        assert!(hook_failures("Hooks Stop\n └─ x : Exit code 0  \n").is_empty());
    }
}
