//! Delivering into a real TUI with the library's `hookline::deliver`, confirmed from the
//! sandbox's events directory: the typing mechanics `hookline deliver` drives once the daemon
//! has authorized the input.

use std::path::Path;
use std::time::Duration;

use hookline::deliver::{
    Delivery, EventsConfirmations, Options, Outcome, Report, SessionRef, deliver,
};
use hookline::pane::Pane;
use hookline::profile::Profiles;

use crate::tmux::{TARGET, Tmux};

/// Types `text` into the TUI running in `tmux` as one bracketed paste and an Enter, for the
/// session tagged `tag` of the profile `cli`, and waits up to `confirm` for its `turn_start`.
pub fn deliver_text(
    tmux: &Tmux,
    events: &Path,
    cli: &str,
    tag: &str,
    text: &str,
    confirm: Duration,
) -> Result<Report, String> {
    let profiles = Profiles::shipped().map_err(|e| e.to_string())?;
    let profile = profiles.get(cli).ok_or_else(|| format!("no profile {cli}"))?;
    let socket = tmux.socket_path().ok_or("the tmux server has no socket path")?;
    let mut delivery = Delivery::new(
        Pane::on_socket(socket, TARGET),
        profile,
        SessionRef::Tag(tag.into()),
        text.into(),
    );
    delivery.options = Options { confirm_timeout: confirm, ..Options::default() };
    let mut confirmations =
        EventsConfirmations::open(events, profiles.clone()).map_err(|e| e.to_string())?;
    deliver(&delivery, &mut confirmations).map_err(|e| e.to_string())
}

/// [`deliver_text`], which must end confirmed by a `turn_start` whose prompt is `text`.
pub fn deliver_confirmed(
    tmux: &Tmux,
    events: &Path,
    cli: &str,
    tag: &str,
    text: &str,
) -> Result<Report, String> {
    let report = deliver_text(tmux, events, cli, tag, text, Duration::from_secs(20))?;
    match &report.outcome {
        Outcome::Confirmed { event } if event.prompt.as_deref() == Some(text) => Ok(report),
        _ => Err(format!("the delivery of {text:?} was not confirmed: {report:?}")),
    }
}

/// A `hookline daemon` process on an events directory, stopped (SIGTERM) on drop: the live
/// authority `hookline deliver` asks.
pub struct Daemon {
    child: std::process::Child,
    config: std::path::PathBuf,
    _owned: Option<tempfile::TempDir>,
}

impl Daemon {
    /// Starts it and waits until it answers on its socket. Its configuration directory is
    /// empty, so no user policy or profile overlay is read.
    pub fn start(events: &Path) -> Result<Daemon, String> {
        let config = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = config.path().to_owned();
        Daemon::spawn(events, &path, &[], Some(config))
    }

    /// Starts it with `config` as its `XDG_CONFIG_HOME` (its `hookline/policy.toml` and
    /// `hookline/profiles/` are read) and `env` set, outside tmux, and waits until it answers
    /// on its socket.
    pub fn start_configured(
        events: &Path,
        config: &Path,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<Daemon, String> {
        Daemon::spawn(events, config, env, None)
    }

    fn spawn(
        events: &Path,
        config: &Path,
        env: &[(&str, &std::ffi::OsStr)],
        owned: Option<tempfile::TempDir>,
    ) -> Result<Daemon, String> {
        let child = std::process::Command::new(crate::binaries::hookline())
            .args(["daemon", "--events-dir"])
            .arg(events)
            .env("XDG_CONFIG_HOME", config)
            .env_remove("TMUX")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("hookline daemon: {e}"))?;
        let daemon = Daemon { child, config: config.to_owned(), _owned: owned };
        let started = std::time::Instant::now();
        while hookline::daemon::Client::connect(events).is_err() {
            if started.elapsed() > Duration::from_secs(20) {
                return Err("hookline daemon never answered on its socket".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(daemon)
    }

    /// `hookline deliver --json` through this daemon into `tmux`'s pane for the session
    /// tagged `tag`: its exit code and its JSON answer (`Null` when it printed none).
    pub fn deliver(
        &self,
        tmux: &Tmux,
        events: &Path,
        tag: &str,
        text: &str,
        extra: &[&str],
    ) -> Result<(Option<i32>, serde_json::Value, String), String> {
        let socket = tmux.socket_path().ok_or("the tmux server has no socket path")?;
        let out = std::process::Command::new(crate::binaries::hookline())
            .args(["deliver", "--json", "--events-dir"])
            .arg(events)
            .args(["--tmux", TARGET, "--tmux-socket"])
            .arg(socket)
            .args(["--session", tag])
            .args(extra)
            .arg(text)
            .env_remove("TMUX")
            .env("XDG_CONFIG_HOME", &self.config)
            .output()
            .map_err(|e| format!("hookline deliver: {e}"))?;
        let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        Ok((out.status.code(), json, String::from_utf8_lossy(&out.stderr).into_owned()))
    }
}

impl Daemon {
    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the daemon this helper started.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `hookline deliver --wait 30s` of `text` through `daemon`, which must exit 0, confirmed by a
/// `turn_start` whose prompt is `text`: the JSON answer, or why not.
pub fn deliver_command_confirmed(
    daemon: &Daemon,
    tmux: &Tmux,
    events: &Path,
    tag: &str,
    text: &str,
) -> Result<serde_json::Value, String> {
    let (code, json, stderr) = daemon.deliver(tmux, events, tag, text, &["--wait", "30s"])?;
    let prompt = json["event"]["prompt"].as_str().unwrap_or_default();
    if code != Some(0)
        || json["confirmed"] != true
        || !hookline::deliver::prompt_matches(prompt, text)
    {
        return Err(format!(
            "hookline deliver {text:?} was not confirmed: {code:?} {json} {stderr}"
        ));
    }
    Ok(json)
}
