//! OpenCode in a sandbox: its user config (`$XDG_CONFIG_HOME/opencode/opencode.json`) makes a
//! provider `mock` of the Chat Completions mock ([`crate::mock_openai`]) through the bundled
//! `@ai-sdk/openai-compatible`, with the model fetch, auto-update and default (npm) plugins
//! off; hookline's plugin
//! (`profiles/opencode-plugin.js`) is written into the user plugin folder with the built relay's
//! path by `hookline install opencode`.
//!
//! At startup OpenCode installs `@opencode-ai/plugin` into every config folder it reads (an
//! `npm install` there, about 8 s, before it loads plugins). The suite does that once per
//! version into the cache ([`config_seed`]) and copies the result into each sandbox, which
//! OpenCode then finds up to date.
//!
//! The plugin starts one small `sh` per OpenCode process, which outlives it by a moment to
//! send `hookline.exit`; [`SentinelGuard`] ends any left when a test ends.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::mock_openai;
use crate::npm_install::Installed;

/// A fake API key, sent as `Authorization: Bearer`.
pub const FAKE_API_KEY: &str = "sk-hookline-e2e-not-a-real-key";
/// The `provider/model` the config selects.
pub const MODEL: &str = "mock/mock-model";
/// On screen, in the footer, while the TUI is up (home and session screens).
pub const READY: &str = "ctrl+p commands";
/// On screen while the permission dialog is open.
pub const APPROVAL_DIALOG: &str = "Permission required";
/// The plugin's source; [`RELAY_PLACEHOLDER`] stands for the relay's path.
pub const PLUGIN_SOURCE: &str = include_str!("../../profiles/opencode-plugin.js");
/// What the plugin source says where the relay's path (a JSON string) goes.
pub const RELAY_PLACEHOLDER: &str = "\"@HOOKLINE_RELAY@\"";
/// `argv[0]` of the plugin's exit sentinel (`sh -c … hookline-opencode-exit <relay>`).
pub const SENTINEL_NAME: &str = "hookline-opencode-exit";

/// What OpenCode asks before running a shell command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bash {
    /// Its default: runs without asking.
    Allowed,
    /// `"permission": {"bash": "ask"}`: the TUI shows a dialog, `opencode run` rejects it.
    Ask,
}

/// The plugin as installed for OpenCode: [`PLUGIN_SOURCE`] with the relay's path and the CLI's
/// name.
pub fn plugin_for(relay: &Path) -> String {
    crate::plugins::rendered(PLUGIN_SOURCE, relay, "opencode")
}

/// OpenCode's user config folder in a sandbox.
pub fn config_dir(session: &AgentSession) -> PathBuf {
    session.sandbox.home().join(".config").join("opencode")
}

/// The config the test writes: the mock provider, its model for both the session and titles,
/// no sharing or auto-update, and what `bash` asks.
pub fn test_config(base_url: &str, bash: Bash) -> Value {
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": MODEL,
        "small_model": MODEL,
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": base_url, "apiKey": FAKE_API_KEY},
                "models": {"mock-model": {"name": "Mock Model", "tool_call": true}},
            },
        },
    });
    if bash == Bash::Ask {
        config["permission"] = json!({"bash": "ask"});
    }
    config
}

/// Starts the mock, builds the sandbox, writes the config and `git init`s the project;
/// installs no plugin.
pub fn new_session(installed: &Installed, scenario: &str, bash: Bash) -> AgentSession {
    let api = mock_openai::start().unwrap_or_else(|e| panic!("[opencode {scenario}] mock: {e}"));
    let base_url = format!("{}/v1", api.base_url());
    let mut session = AgentSession::new(installed, scenario, api);
    for (key, value) in [
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
    ] {
        session.sandbox.set_env(key, value);
    }
    let dir = config_dir(&session);
    let seed = config_seed(installed).unwrap_or_else(|e| session.fail(&e));
    fs::create_dir_all(&dir).unwrap_or_else(|e| session.fail(&format!("{}: {e}", dir.display())));
    let copied = Command::new("cp")
        .arg("-a")
        .args(SEED_FILES.iter().map(|f| seed.join(f)))
        .arg(&dir)
        .status();
    if !copied.is_ok_and(|s| s.success()) {
        session.fail(&format!("cannot copy {} into {}", seed.display(), dir.display()));
    }
    let path = dir.join("opencode.json");
    let text = serde_json::to_string_pretty(&test_config(&base_url, bash)).expect("json");
    fs::create_dir_all(&dir)
        .and_then(|()| fs::write(&path, text + "\n"))
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    session.git_init_project();
    session
}

/// What [`config_seed`] holds and each sandbox's config folder gets a copy of.
const SEED_FILES: [&str; 3] = ["package.json", "package-lock.json", "node_modules"];

/// The dependencies OpenCode installs into a config folder, installed once into
/// `<install>/config-seed/` with npm (`{"dependencies": {"@opencode-ai/plugin": "<version>"}}`,
/// the `package.json` OpenCode writes), and stamped complete like the CLI's own install.
pub fn config_seed(installed: &Installed) -> Result<PathBuf, String> {
    let dir = installed.dir.join("config-seed");
    let stamp = dir.join(crate::npm_install::STAMP_FILE);
    let expected = format!("@opencode-ai/plugin@{}\n", installed.version);
    let lock_path = installed.dir.join("config-seed.lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("{}: {e}", lock_path.display()))?;
    if fs::read_to_string(&stamp).is_ok_and(|s| s == expected) {
        return Ok(dir);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = json!({"dependencies": {"@opencode-ai/plugin": installed.version.to_string()}});
    let path = dir.join("package.json");
    fs::write(&path, format!("{manifest:#}\n")).map_err(|e| format!("{}: {e}", path.display()))?;
    let log_path = dir.join("npm-install.log");
    let log = fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| format!("{}: {e}", log_path.display()))?;
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=warn"])
        .args([
            "--fetch-retries=1",
            "--fetch-retry-mintimeout=2000",
            "--fetch-retry-maxtimeout=5000",
        ])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .status()
        .map_err(|e| format!("cannot run npm ({e}) to install OpenCode's config dependencies"))?;
    if !status.success() {
        let text = fs::read_to_string(&log_path).unwrap_or_default();
        return Err(format!(
            "npm install @opencode-ai/plugin@{} failed ({status}); the OpenCode suite needs the \
             npm registry the first time a version is installed into the cache, it does not \
             skip. npm log {}:\n{text}",
            installed.version,
            log_path.display()
        ));
    }
    crate::npm_install::write_atomically(&stamp, expected.as_bytes()).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// Registers hookline's plugin with `hookline install opencode --relay <built relay>`, as the
/// other suites register their hooks, and checks that it wrote the plugin, with the built
/// relay's path, into OpenCode's user plugin folder.
pub fn install_plugin(session: &AgentSession) -> PathBuf {
    let stdout = session.install_hooks();
    let path = config_dir(session).join("plugins").join("hookline.js");
    let written = fs::read_to_string(&path).unwrap_or_else(|e| {
        session.fail(&format!("hookline install wrote no {}: {e}\n{stdout}", path.display()))
    });
    if written != plugin_for(&crate::binaries::relay()) {
        session
            .fail(&format!("{} is not the plugin for the built relay:\n{stdout}", path.display()));
    }
    path
}

/// The plugin's exit sentinels that run with `HOOKLINE_TAG=<tag>`, by pid.
pub fn sentinels(tag: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let wanted = format!("HOOKLINE_TAG={tag}");
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = fs::read(entry.path().join("cmdline")).ok()?;
            let is_sentinel = cmdline.split(|b| *b == 0).any(|w| w == SENTINEL_NAME.as_bytes());
            let environ = fs::read(entry.path().join("environ")).ok()?;
            let ours = environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes());
            (is_sentinel && ours).then_some(pid)
        })
        .collect()
}

/// Ends the plugin's exit sentinels of a session when dropped: after a passing test they are
/// gone already (each ends once OpenCode has), after a failing one OpenCode may still be up.
pub struct SentinelGuard {
    tag: String,
}

impl SentinelGuard {
    /// Guards the sentinels of `session`'s tag.
    pub fn new(session: &AgentSession) -> SentinelGuard {
        SentinelGuard { tag: session.tag.clone() }
    }
}

impl Drop for SentinelGuard {
    fn drop(&mut self) {
        for pid in sentinels(&self.tag) {
            let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !sentinels(&self.tag).is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use hookline::canonical::Kind;
    use hookline::profile::Profiles;

    use super::*;
    use crate::agent_session::Fixtures;

    #[test]
    fn the_profile_parses_strictly() {
        let file = crate::npm_install::workspace_root().join("profiles/opencode.toml");
        let profile = Profiles::check_file(&file).unwrap();
        assert_eq!(profile.name, "opencode");
        assert!(profile.is_input_ready(hookline::canonical::KindName::Stop));
    }

    #[test]
    fn the_plugin_is_written_with_the_relay_path_as_a_json_string() {
        let plugin = plugin_for(Path::new("/opt/hook \"line\"/hookline-relay"));
        assert!(plugin.contains(r#"const RELAY = "/opt/hook \"line\"/hookline-relay";"#));
        assert!(!plugin.contains(RELAY_PLACEHOLDER));
    }

    #[test]
    fn every_captured_payload_maps_to_the_canonical_event_the_profile_promises() {
        let profiles = crate::agent_session::profiles_for("opencode").unwrap();
        let fixtures = Fixtures::of("opencode", "1.18.33");
        let expected = [
            ("session.created.json", "session_start"),
            ("chat.message.json", "turn_start"),
            ("tool.execute.before.json", "tool_start"),
            ("tool.execute.after.json", "tool_end"),
            ("permission.asked.json", "permission_request"),
            ("permission.replied-once.json", "notification"),
            ("permission.replied-reject.json", "notification"),
            ("session.idle.json", "stop"),
            ("hookline.exit.json", "session_end"),
        ];
        fixtures.check_covered(expected.iter().map(|(f, _)| *f));
        for (file, kind) in expected {
            let (payload, event) = fixtures
                .map(&profiles, file, |payload| payload["type"].as_str().unwrap().to_owned());
            assert_eq!(event.kind.name(), kind, "{file}: rule {}", event.rule);
            let session = payload["properties"]["sessionID"].as_str();
            let session = session.or(payload["input"]["sessionID"].as_str()).unwrap();
            assert_eq!(event.session_id.as_deref(), Some(session), "{file}");
            if let Kind::Notification { message, .. } = &event.kind {
                assert_eq!(message.as_deref(), payload["properties"]["reply"].as_str(), "{file}");
            }
            if let Kind::ToolStart { tool } | Kind::ToolEnd { tool, .. } = &event.kind {
                assert_eq!(tool.as_deref(), Some("bash"), "{file}");
            }
        }
    }
}
