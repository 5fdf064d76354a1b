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

#[cfg(test)]
mod tests {
    use hookline::canonical::Kind;
    use hookline::profile::Profiles;
    use hookline::vocab::FailureKind;

    use super::*;
    use crate::agent_session::Fixtures;

    #[test]
    fn the_profile_parses_strictly() {
        let file = crate::npm_install::workspace_root().join("profiles/pi.toml");
        let profile = Profiles::check_file(&file).unwrap();
        assert_eq!((profile.name.as_str(), profile.binary.as_str()), ("pi", "pi"));
        assert!(profile.is_input_ready(hookline::canonical::KindName::Stop));
    }

    #[test]
    fn every_captured_payload_maps_to_the_canonical_event_the_profile_promises() {
        let profiles = crate::agent_session::profiles_for("pi").unwrap();
        let fixtures = Fixtures::of("pi", "0.73.1");
        let expected = [
            ("session_start-startup.json", "session_start"),
            ("session_start-startup-p.json", "session_start"),
            ("before_agent_start.json", "turn_start"),
            ("agent_start.json", "notification(agent_start)"),
            ("agent_start-retry.json", "turn_start"),
            ("tool_execution_start.json", "tool_start"),
            ("hookline.dialog_open-gate.json", "permission_request"),
            ("hookline.dialog_close-approved.json", "notification(dialog_closed)"),
            ("hookline.dialog_close-denied.json", "notification(dialog_closed)"),
            ("tool_execution_end.json", "tool_end"),
            ("tool_execution_end-blocked.json", "tool_end(failed)"),
            ("tool_execution_end-aborted.json", "tool_end(failed)"),
            ("agent_end-stop.json", "stop"),
            ("agent_end-stop-p.json", "stop"),
            ("agent_end-aborted.json", "waiting_for_input(interrupted)"),
            ("agent_end-error-500.json", "stop_failure"),
            ("session_shutdown-quit.json", "session_end"),
            ("session_shutdown-quit-p.json", "session_end"),
        ];
        fixtures.check_covered(expected.iter().map(|(f, _)| *f));
        for (file, label) in expected {
            let (payload, event) = fixtures.map(&profiles, file, |payload| {
                payload["hook_event_name"].as_str().unwrap().to_owned()
            });
            assert_eq!(crate::labels::kind_label(&event), label, "{file}: rule {}", event.rule);
            assert_eq!(event.session_id.as_deref(), payload["session_id"].as_str(), "{file}");
            assert!(event.session_id.is_some(), "{file}: Pi's events carry the context's id");
            assert_eq!(event.transcript_path.as_deref(), payload["session_file"].as_str());
            match &event.kind {
                Kind::ToolStart { tool }
                | Kind::ToolEnd { tool, .. }
                | Kind::PermissionRequest { tool } => {
                    assert_eq!(tool.as_deref(), Some("bash"), "{file}");
                }
                Kind::StopFailure { error, detail } => {
                    assert_eq!(*error, FailureKind::Server, "{file}: the 500 is a server error");
                    assert_eq!(detail.as_deref(), Some("500 mock 500: Internal server error"));
                }
                Kind::SessionEnd { reason } => assert_eq!(reason.as_deref(), Some("quit")),
                Kind::SessionStart { source } => assert_eq!(source.as_deref(), Some("startup")),
                _ => {}
            }
        }
    }

    #[test]
    fn a_dialog_opened_at_the_prompt_waits_and_its_close_gives_the_prompt_back() {
        // What a command's dialog sends (no tool running, Pi idle): the fixture payloads with
        // those fields changed.
        let profiles = crate::agent_session::profiles_for("pi").unwrap();
        let fixtures = Fixtures::of("pi", "0.73.1");
        let map = |file: &str, edit: &dyn Fn(&mut serde_json::Value)| {
            let text = fs::read_to_string(fixtures.dir.join(file)).unwrap();
            let mut payload: serde_json::Value = serde_json::from_str(&text).unwrap();
            edit(&mut payload);
            let name = payload["hook_event_name"].as_str().unwrap().to_owned();
            let envelope =
                hookline_relay::envelope::Envelope::built("pi", Some(name), &payload.clone());
            let source = hookline::canonical::SourceRef {
                dir: fixtures.dir.clone(),
                seq: 1,
                file: file.into(),
                legacy: false,
            };
            hookline::ingest::mapping::map_envelope(&profiles, &envelope, source)
        };
        let open = map("hookline.dialog_open-gate.json", &|p| {
            p.as_object_mut().unwrap().remove("tool");
            p["is_idle"] = true.into();
        });
        assert_eq!(crate::labels::kind_label(&open), "waiting_for_input(question)");
        let close = map("hookline.dialog_close-approved.json", &|p| p["is_idle"] = true.into());
        assert_eq!(crate::labels::kind_label(&close), "stop");
    }
}
