//! Kilo Code in a sandbox, offline: its user config (`$XDG_CONFIG_HOME/kilo/kilo.json`,
//! OpenCode's schema) makes a provider `mock` of the Chat Completions mock
//! ([`crate::mock_openai`]) and sets `bash` to ask; the model fetch, auto-update, default
//! plugins and LSP downloads are off (`KILO_*`, the names OpenCode spells `OPENCODE_*`).
//! hookline's OpenCode plugin is written into Kilo's user plugin folder, told it runs in
//! `kilo`, by `hookline install kilo --scope user`.
//!
//! At startup Kilo tries `npm install @kilocode/plugin@<version>` in its config folder in the
//! background; that version is not on the registry, Kilo logs it and goes on (plugins still
//! load, nothing is written). The plugin's exit sentinel is OpenCode's: [`SentinelGuard`] ends
//! any left when a test ends.

use std::fs;
use std::path::PathBuf;

use crate::agent_session::AgentSession;
use crate::mock_openai;
use crate::npm_install::Installed;
pub use crate::opencode::{Bash, SentinelGuard};

/// In the footer while the TUI is up (home and session screens), except while a request is
/// retried.
pub const READY: &str = "ctrl+p commands";
/// On screen while the permission dialog is open.
pub const APPROVAL_DIALOG: &str = "Permission required";
/// On screen after Escape on the dialog: Kilo's reject box.
pub const REJECT_BOX: &str = "Tell Kilo what to do differently";

/// Kilo's user config folder in a sandbox.
pub fn config_dir(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".config").join("kilo")
}

/// Starts the mock, builds the sandbox, writes the config and `git init`s the project;
/// installs no plugin.
pub fn new_session(installed: &Installed, scenario: &str, bash: Bash) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[kilo {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    for (key, value) in [
        ("KILO_DISABLE_MODELS_FETCH", "1"),
        ("KILO_DISABLE_AUTOUPDATE", "1"),
        ("KILO_DISABLE_DEFAULT_PLUGINS", "1"),
        ("KILO_DISABLE_LSP_DOWNLOAD", "1"),
    ] {
        session.sandbox.set_env(key, value);
    }
    let mut config = crate::opencode::test_config(&base_url, bash);
    if let Some(map) = config.as_object_mut() {
        map.remove("$schema");
    }
    let dir = config_dir(&session);
    let path = dir.join("kilo.json");
    fs::create_dir_all(&dir)
        .and_then(|()| fs::write(&path, format!("{config:#}\n")))
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session.git_init_project();
    session
}

/// `hookline install kilo --scope user --relay <built relay>`, as a user runs it; checks that it
/// wrote the OpenCode plugin, for the built relay and told it runs in `kilo`, into Kilo's user
/// plugin folder, and that a second run changes nothing.
pub fn install_plugin(session: &AgentSession) -> PathBuf {
    let path = config_dir(session).join("plugins").join("hookline.js");
    let stdout = crate::plugins::install_plugin(session, &path, crate::plugins::OPENCODE_SOURCE);
    if !stdout.starts_with(&format!("Kilo Code {} (from `kilo --version`)", session.version)) {
        session.fail(&format!("hookline install kilo did not detect Kilo's version:\n{stdout}"));
    }
    path
}

#[cfg(test)]
mod tests {
    use hookline::canonical::Kind;
    use hookline::vocab::FailureKind;

    use crate::agent_session::Fixtures;

    #[test]
    fn every_captured_payload_maps_to_the_canonical_event_the_profile_promises() {
        let profiles = crate::agent_session::profiles_for("kilo").unwrap();
        let fixtures = Fixtures::of("kilo", "7.7.7");
        let expected = [
            ("session.created.json", "session_start"),
            ("session.created-run.json", "session_start"),
            ("chat.message.json", "turn_start"),
            ("chat.message-run.json", "turn_start"),
            ("tool.execute.before.json", "tool_start"),
            ("tool.execute.before-run.json", "tool_start"),
            ("tool.execute.after.json", "tool_end"),
            ("tool.execute.after-run.json", "tool_end"),
            ("permission.asked.json", "permission_request"),
            ("permission.asked-run.json", "permission_request"),
            ("permission.replied.json", "notification(permission_replied)"),
            ("permission.replied-run.json", "notification(permission_replied)"),
            ("session.error.json", "notification(turn_aborted)"),
            ("session.status-retry-run.json", "stop_failure"),
            ("session.error-api-run.json", "stop_failure"),
            ("session.idle.json", "stop"),
            ("session.idle-run.json", "stop"),
            ("hookline.exit.json", "session_end"),
            ("hookline.exit-run.json", "session_end"),
        ];
        fixtures.check_covered(expected.iter().map(|(f, _)| *f));
        for (file, label) in expected {
            let (payload, event) = fixtures
                .map(&profiles, file, |payload| payload["type"].as_str().unwrap().to_owned());
            assert_eq!(crate::labels::kind_label(&event), label, "{file}: rule {}", event.rule);
            assert_eq!(event.cli, "kilo", "{file}: recorded as Kilo's, mapped by its profile");
            let session = payload["properties"]["sessionID"].as_str();
            let session = session.or(payload["input"]["sessionID"].as_str()).unwrap();
            assert_eq!(event.session_id.as_deref(), Some(session), "{file}");
            match (file, &event.kind) {
                ("session.error-api-run.json", Kind::StopFailure { error, .. }) => {
                    assert_eq!(*error, FailureKind::Server, "statusCode 500");
                }
                ("session.status-retry-run.json", Kind::StopFailure { error, detail }) => {
                    assert_eq!(*error, FailureKind::Other, "a retry says no status");
                    assert_eq!(detail.as_deref(), Some("mock 500: Internal server error"));
                }
                (_, Kind::ToolStart { tool } | Kind::ToolEnd { tool, .. }) => {
                    assert_eq!(tool.as_deref(), Some("bash"), "{file}");
                }
                _ => {}
            }
        }
    }
}
