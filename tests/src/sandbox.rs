//! A throwaway `HOME` and project for one run of the CLI, with its first-run state pre-written.
//!
//! Layout under one temp folder (kept when `HOOKLINE_E2E_KEEP=1`):
//!
//! | path | what |
//! |---|---|
//! | `home/` | `HOME`, with `.claude.json` (onboarding done, project trusted, API key approved, low idle threshold) and the hookline profile overlay that tells the tracker that threshold (`idle-prompt-delay`) |
//! | `project/` | the working directory; `.claude/settings.json` holds the hook registrations |
//! | `events/` | `HOOKLINE_EVENTS_DIR` (created by the relay); `events.relay.log` beside it |
//! | `tmp/` | `TMPDIR` |
//! | `launch-*.sh` | the exact command lines run, to rerun one by hand |

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;

/// A fake API key; hooks inherit the CLI's environment, so a real one must never be used.
pub const FAKE_API_KEY: &str = "sk-ant-api03-hookline-e2e-not-a-real-key-0123456789abcdefghij";

/// Set to `1` to keep sandboxes after the tests, for inspection.
pub const ENV_KEEP: &str = "HOOKLINE_E2E_KEEP";

/// One sandbox.
pub struct Sandbox {
    root: PathBuf,
    _temp: Option<tempfile::TempDir>,
    env: Vec<(String, OsString)>,
    launches: AtomicU32,
}

impl Sandbox {
    /// Creates the folders and `$HOME/.claude.json`; `api_base_url` is the mock's URL, `tag` goes
    /// to `HOOKLINE_TAG` (every envelope carries it back).
    pub fn new(api_base_url: &str, idle_threshold: Duration, tag: &str) -> Sandbox {
        let sandbox = Sandbox::create();
        sandbox.write_claude_json(idle_threshold);
        sandbox.write_claude_profile_overlay(idle_threshold);
        let env = sandbox.build_env(api_base_url, tag);
        Sandbox { env, ..sandbox }
    }

    /// A sandbox for another CLI than Claude Code: the folders and the environment every CLI
    /// gets (`HOME`, `TMPDIR`, XDG folders, `PATH`, `HOOKLINE_EVENTS_DIR`, `HOOKLINE_TAG`...),
    /// with `extra` added (replacing a variable of the same name). Nothing is written in `HOME`.
    pub fn for_cli(tag: &str, extra: Vec<(String, OsString)>) -> Sandbox {
        let sandbox = Sandbox::create();
        let mut env = sandbox.base_env(tag);
        env.retain(|(key, _)| !extra.iter().any(|(k, _)| k == key));
        env.extend(extra);
        env.sort();
        Sandbox { env, ..sandbox }
    }

    fn create() -> Sandbox {
        let temp = tempfile::Builder::new()
            .prefix("hookline-e2e-")
            .tempdir()
            .expect("a temp folder for the sandbox");
        // Claude keys its per-project state by the real path.
        let root = temp.path().canonicalize().expect("the sandbox's real path");
        let temp = if std::env::var_os(ENV_KEEP).is_some_and(|v| v == "1") {
            eprintln!("e2e: keeping sandbox {}", root.display());
            let _ = temp.keep();
            None
        } else {
            Some(temp)
        };
        for dir in ["home", "project", "tmp", "run"] {
            fs::create_dir_all(root.join(dir)).expect("sandbox folders");
        }
        Sandbox { root, _temp: temp, env: Vec::new(), launches: AtomicU32::new(0) }
    }

    /// The sandbox's root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// The project folder, the CLI's working directory.
    pub fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    /// `HOOKLINE_EVENTS_DIR`.
    pub fn events_dir(&self) -> PathBuf {
        self.root.join("events")
    }

    /// The relay's diagnostics file for [`Sandbox::events_dir`].
    pub fn relay_log(&self) -> PathBuf {
        hookline_relay::location::diagnostics_path(&self.events_dir())
    }

    /// The whole environment the CLI runs with (nothing else is inherited).
    pub fn env(&self) -> &[(String, OsString)] {
        &self.env
    }

    /// The hookline profile overlay that tells the tracker Claude's idle timer is
    /// `idle_threshold` (`idle-prompt-delay`), as a user who lowers
    /// `messageIdleNotifThresholdMs` writes one: `$XDG_CONFIG_HOME/hookline/profiles/claude.toml`.
    pub fn claude_profile_overlay(&self) -> PathBuf {
        self.home().join(".config/hookline/profiles/claude.toml")
    }

    fn write_claude_profile_overlay(&self, idle_threshold: Duration) {
        let path = self.claude_profile_overlay();
        let text = format!("idle-prompt-delay = \"{}ms\"\n", idle_threshold.as_millis());
        fs::create_dir_all(path.parent().expect("a parent"))
            .and_then(|()| fs::write(&path, text))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    fn write_claude_json(&self, idle_threshold: Duration) {
        let project = self.project();
        let key_suffix = &FAKE_API_KEY[FAKE_API_KEY.len() - 20..];
        let state = json!({
            "hasCompletedOnboarding": true,
            "messageIdleNotifThresholdMs": idle_threshold.as_millis() as u64,
            "customApiKeyResponses": {"approved": [key_suffix], "rejected": []},
            "projects": {
                project.to_str().expect("UTF-8 sandbox path"): {
                    "hasTrustDialogAccepted": true,
                    "hasCompletedProjectOnboarding": true,
                },
            },
        });
        let path = self.home().join(".claude.json");
        fs::write(&path, serde_json::to_string_pretty(&state).expect("json"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    fn build_env(&self, api_base_url: &str, tag: &str) -> Vec<(String, OsString)> {
        let mut env = self.base_env(tag);
        env.extend([
            ("ANTHROPIC_BASE_URL".into(), api_base_url.into()),
            ("ANTHROPIC_API_KEY".into(), FAKE_API_KEY.into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
            ("DISABLE_TELEMETRY".into(), "1".into()),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL".into(), "1".into()),
        ]);
        env.sort();
        env
    }

    /// The variables every CLI gets.
    fn base_env(&self, tag: &str) -> Vec<(String, OsString)> {
        let home = self.home();
        vec![
            ("HOME".into(), home.clone().into()),
            ("TMPDIR".into(), self.root.join("tmp").into()),
            // The relay's fallback trace goes here, not into the machine's shared
            // /tmp/hookline-$UID, which doctor would then read in every sandbox.
            ("XDG_RUNTIME_DIR".into(), self.root.join("run").into()),
            ("XDG_CONFIG_HOME".into(), home.join(".config").into()),
            ("XDG_CACHE_HOME".into(), home.join(".cache").into()),
            ("XDG_DATA_HOME".into(), home.join(".local/share").into()),
            ("XDG_STATE_HOME".into(), home.join(".local/state").into()),
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into())),
            ("SHELL".into(), "/bin/bash".into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("HOOKLINE_EVENTS_DIR".into(), self.events_dir().into()),
            ("HOOKLINE_TAG".into(), tag.into()),
        ]
    }

    /// Sets one variable of the environment, replacing its value if it is set.
    pub fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        let value = value.into();
        match self.env.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => {
                self.env.push((key.to_owned(), value));
                self.env.sort();
            }
        }
    }

    /// A command for `program` with exactly the sandbox's environment, in the project.
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command.env_clear().envs(self.env.iter().map(|(k, v)| (k, v))).current_dir(self.project());
        command
    }

    /// Writes `launch-N.sh`, which runs `program args` in the project with exactly the
    /// sandbox's environment plus the terminal's `TERM`, and returns its path.
    pub fn launch_script(&self, program: &Path, args: &[&str]) -> PathBuf {
        let n = self.launches.fetch_add(1, Ordering::SeqCst);
        let mut script = String::from(
            "#!/bin/sh\n# Written by hookline-tests: reruns one CLI launch by hand.\n",
        );
        script.push_str(&format!("cd {} || exit 1\n", shell_quote(&self.project())));
        script.push_str("exec env -i TERM=\"${TERM:-xterm-256color}\" \\\n");
        for (key, value) in &self.env {
            script.push_str(&format!("  {key}={} \\\n", shell_quote(Path::new(value))));
        }
        script.push_str(&format!("  {}", shell_quote(program)));
        for arg in args {
            script.push(' ');
            script.push_str(&shell_quote(Path::new(arg)));
        }
        script.push('\n');
        let path = self.root.join(format!("launch-{n}.sh"));
        fs::write(&path, script).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod launch script");
        path
    }
}

/// Single-quotes a value for `sh`.
pub fn shell_quote(value: &Path) -> String {
    let text = value.to_string_lossy();
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_script_runs_with_only_the_sandbox_environment() {
        let sandbox = Sandbox::new("http://127.0.0.1:9", Duration::from_secs(3), "t'ag");
        let script = sandbox.launch_script(Path::new("/usr/bin/env"), &[]);
        let output = Command::new(&script).env("LEAK", "x").output().unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(text.contains("HOOKLINE_TAG=t'ag\n"), "{text}");
        assert!(text.contains(&format!("HOME={}\n", sandbox.home().display())), "{text}");
        assert!(!text.contains("LEAK"), "{text}");
        let state: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(sandbox.home().join(".claude.json")).unwrap())
                .unwrap();
        let project = sandbox.project();
        assert_eq!(state["projects"][project.to_str().unwrap()]["hasTrustDialogAccepted"], true);
        assert_eq!(state["messageIdleNotifThresholdMs"], 3000);
    }
}
