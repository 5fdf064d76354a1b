//! What the suites of the CLIs hookline reaches through a plugin (Kilo Code through the OpenCode
//! plugin, Pi through its extension) share: the install as a user runs it, and `hookline
//! status`, asked for the session's state as an orchestrator asks.

use std::path::Path;

use serde_json::Value;

use crate::agent_session::AgentSession;
use crate::binaries;
use crate::labels::state_matches;

/// The OpenCode plugin's source, which Kilo Code loads too.
pub const OPENCODE_SOURCE: &str = include_str!("../../profiles/opencode-plugin.js");
/// Pi's extension's source.
pub const PI_SOURCE: &str = include_str!("../../profiles/pi-extension.ts");

/// `source` as installed for `cli`: the relay's path and the CLI's name as JSON strings.
pub fn rendered(source: &str, relay: &Path, cli: &str) -> String {
    let relay = Value::from(relay.to_str().expect("UTF-8 relay path")).to_string();
    assert!(source.contains("\"@HOOKLINE_RELAY@\""), "the plugin lost its relay placeholder");
    assert!(source.contains("\"@HOOKLINE_CLI@\""), "the plugin lost its CLI placeholder");
    source
        .replace("\"@HOOKLINE_RELAY@\"", &relay)
        .replace("\"@HOOKLINE_CLI@\"", &Value::from(cli).to_string())
}

/// Runs `hookline install <cli> --scope user --relay <built relay>`, checks that it wrote
/// `source` for the built relay and this CLI at `path` (and nothing else changes on a second
/// run); returns what the first run printed.
pub fn install_plugin(session: &AgentSession, path: &Path, source: &str) -> String {
    let relay = binaries::relay();
    let relay_arg = relay.to_str().expect("UTF-8 relay path");
    let run = || {
        let output =
            session.hookline(&["install", session.cli, "--scope", "user", "--relay", relay_arg]);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            session.fail(&format!(
                "hookline install {} --scope user failed ({}):\n{stdout}{}",
                session.cli,
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        stdout
    };
    let stdout = run();
    let written = std::fs::read_to_string(path).unwrap_or_else(|e| {
        session.fail(&format!("hookline install wrote no {}: {e}\n{stdout}", path.display()))
    });
    if written != rendered(source, &relay, session.cli) {
        session.fail(&format!(
            "{} is not the plugin for the built relay and {}:\n{stdout}",
            path.display(),
            session.cli
        ));
    }
    let again = run();
    if !again.contains("plugin: already installed\nnothing to change\n") {
        session.fail(&format!("a second hookline install changed something:\n{again}"));
    }
    stdout
}

/// What `hookline status --json` says of the session tagged as `session`'s: its `state`, with
/// the detail in parentheses (`waiting_on_human(permission)`), as [`state_matches`] reads it;
/// `none` when no row has the tag.
pub fn status_state(session: &AgentSession) -> String {
    let output = session.hookline(&["status", "--json"]);
    if !output.status.success() {
        session.fail(&format!(
            "hookline status --json failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let rows: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        session.fail(&format!("hookline status --json printed no JSON array: {e}"))
    });
    let row =
        rows.as_array().and_then(|rows| rows.iter().find(|r| r["tag"] == session.tag.as_str()));
    match row {
        None => "none".into(),
        Some(row) => {
            let state = row["state"].as_str().unwrap_or("?");
            match row["detail"].as_str() {
                Some(detail) => format!("{state}({detail})"),
                None => state.to_owned(),
            }
        }
    }
}

/// Fails unless `hookline status` reads the session as `expected` ([`state_matches`]), and as
/// the live tracker does.
pub fn check_status(session: &AgentSession, expected: &str) {
    let status = status_state(session);
    if !state_matches(expected, &status) {
        session.fail(&format!("hookline status reads the session {status}, expected {expected}"));
    }
    let live = session.state();
    if !state_matches(&live, &status) && !state_matches(&status, &live) {
        session.fail(&format!("hookline status reads {status}, the live tracker {live}"));
    }
}
