//! GitHub Copilot CLI in a sandbox, offline: its BYOK mode (`COPILOT_OFFLINE=true`, a custom
//! provider at `COPILOT_PROVIDER_BASE_URL`) talks to the Chat Completions mock
//! ([`crate::mock_openai`]) with no GitHub sign-in, no telemetry and no update check; the
//! project is pre-trusted in `$COPILOT_HOME/config.json` (else the TUI opens on "Confirm folder
//! trust"); the JavaScript the binary unpacks on first run goes to one cache folder beside the
//! install (`COPILOT_CACHE_HOME`) instead of every sandbox's `HOME`; hooks registered by
//! `hookline install copilot` only.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key, sent as `Authorization: Bearer`.
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The model the provider is asked for.
pub const MODEL: &str = "mock-model";
/// In the TUI's footer while it takes input.
pub const READY: &str = "/ commands";
/// On screen while the approval dialog is open.
pub const APPROVAL_DIALOG: &str = "Do you want to run this command?";
/// The events `hookline install copilot` registers.
pub const REGISTERED: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "notification",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "errorOccurred",
];

/// `$COPILOT_HOME` of a sandbox.
pub fn copilot_home(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".copilot")
}

/// Starts the mock, builds the sandbox, trusts the project and `git init`s it; registers no
/// hook.
pub fn new_session(installed: &Installed, scenario: &str) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[copilot {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    let home = copilot_home(&session);
    session.sandbox.set_env("COPILOT_HOME", &home);
    session.sandbox.set_env("COPILOT_CACHE_HOME", installed.dir.join("copilot-cache"));
    for (key, value) in [
        ("COPILOT_OFFLINE", "true"),
        ("COPILOT_PROVIDER_BASE_URL", base_url.as_str()),
        ("COPILOT_PROVIDER_API_KEY", FAKE_API_KEY),
        ("COPILOT_MODEL", MODEL),
        // The mock model is not in the catalog: without limits the TUI warns at launch.
        ("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "100000"),
        ("COPILOT_PROVIDER_MAX_OUTPUT_TOKENS", "4096"),
        ("COPILOT_AUTO_UPDATE", "false"),
    ] {
        session.sandbox.set_env(key, value);
    }
    let project = session.sandbox.project();
    let config = json!({"trustedFolders": [project.to_str().expect("UTF-8 project path")]});
    let path = home.join("config.json");
    fs::create_dir_all(&home)
        .and_then(|()| fs::write(&path, config.to_string()))
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session.git_init_project();
    session
}

/// `hookline install copilot --relay <built relay>`, then checks that
/// `$COPILOT_HOME/hooks/hookline.json` registers exactly the relay, told each event's name, for
/// [`REGISTERED`].
///
/// `hookline install` cannot read 1.0.102's version yet (`copilot --version` prints
/// `GitHub Copilot CLI 1.0.102.`, and the trailing period defeats its parser), so it falls back
/// to the events every version since 1.0.0 knows: the same twelve. Either first line passes.
pub fn install_hooks(session: &AgentSession) {
    let relay = crate::binaries::relay();
    let relay = relay.to_str().expect("UTF-8 relay path");
    let output = session.hookline(&["install", "copilot", "--relay", relay]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        session.fail(&format!(
            "hookline install copilot failed ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let first = stdout.lines().next().unwrap_or("");
    let detected = format!("{} (from `copilot --version`)", session.version);
    if !first.contains(&detected) && !first.contains("`copilot --version` printed no version") {
        session.fail(&format!("hookline install copilot said:\n{stdout}"));
    }
    let path = copilot_home(session).join("hooks").join("hookline.json");
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let file: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let hooks = file["hooks"].as_object();
    let events: Vec<&str> =
        hooks.map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    if events != REGISTERED {
        session.fail(&format!("hookline.json registers {events:?}, expected {REGISTERED:?}"));
    }
    for (event, entries) in hooks.into_iter().flatten() {
        let command = format!("{relay} --cli copilot --event {event}");
        if entries[0]["bash"] != command.as_str() || entries[0]["timeoutSec"] != 10 {
            session.fail(&format!("hooks.{event} is not the relay with a 10 s timeout: {text}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use hookline::canonical::{Kind, WaitReason};
    use hookline::profile::Profiles;

    use super::*;
    use crate::agent_session::Fixtures;

    /// Each captured payload, named `<native event>[-<qualifier>][-p].json` (the relay was told
    /// the event with `--event`: camelCase payloads do not carry it), maps to the canonical
    /// event the suite saw hookline make of it.
    #[test]
    fn every_captured_payload_maps_to_the_canonical_event_the_suite_saw() {
        let profiles = Profiles::shipped().unwrap();
        let fixtures = Fixtures::of("copilot", "1.0.102");
        let mut checked = 0;
        for entry in fs::read_dir(&fixtures.dir).unwrap() {
            let file = entry.unwrap().file_name().into_string().unwrap();
            let Some(stem) = file.strip_suffix(".json") else { continue };
            let native = stem.split('-').next().unwrap();
            let (payload, event) = fixtures.map(&profiles, &file, |_| native.to_owned());
            let expected = match native {
                "sessionStart" => "session_start",
                "userPromptSubmitted" => "turn_start",
                "preToolUse" => "tool_start",
                "postToolUse" => "tool_end",
                "notification" => "waiting_for_input",
                "agentStop" => "stop",
                "sessionEnd" => "session_end",
                other => panic!("{file}: no expectation for {other}"),
            };
            assert_eq!(event.kind.name(), expected, "{file}: rule {}", event.rule);
            assert_eq!(event.session_id.as_deref(), payload["sessionId"].as_str(), "{file}");
            match &event.kind {
                Kind::SessionStart { source } => assert_eq!(source.as_deref(), Some("new")),
                Kind::ToolStart { tool } | Kind::ToolEnd { tool, ok: true } => {
                    assert_eq!(tool.as_deref(), Some("bash"), "{file}")
                }
                Kind::WaitingForInput { reason, .. } => {
                    assert_eq!(*reason, WaitReason::Permission, "{file}")
                }
                Kind::SessionEnd { reason } => {
                    assert_eq!(reason.as_deref(), payload["reason"].as_str(), "{file}")
                }
                Kind::TurnStart | Kind::Stop { .. } => {}
                other => panic!("{file}: {other:?}"),
            }
            checked += 1;
        }
        assert_eq!(checked, 12);
    }
}
