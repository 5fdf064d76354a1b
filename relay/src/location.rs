//! Where the events directory and the relay's diagnostics file live.
//!
//! The events directory is `$HOOKLINE_EVENTS_DIR` when it is set and non-empty, else
//! `$XDG_STATE_HOME/hookline/events` (when `XDG_STATE_HOME` is an absolute path), else
//! `$HOME/.local/state/hookline/events`. A relative `HOOKLINE_EVENTS_DIR` is refused: hooks run
//! in whatever directory the CLI is in, so a relative path would scatter events over projects.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::Error;

/// Environment variable naming the events directory.
pub const ENV_EVENTS_DIR: &str = "HOOKLINE_EVENTS_DIR";
/// Environment variable that turns the relay into a no-op when set to `1`.
pub const ENV_DISABLE: &str = "HOOKLINE_DISABLE";
/// Environment variable holding the orchestrator's tag for the session.
pub const ENV_TAG: &str = "HOOKLINE_TAG";
/// Environment variable that makes the relay fsync each event file and the directory.
pub const ENV_FSYNC: &str = "HOOKLINE_FSYNC";

/// Resolves the events directory from the process environment.
pub fn events_dir() -> Result<PathBuf, Error> {
    events_dir_from(|key| std::env::var_os(key))
}

/// Resolves the events directory from the given environment lookup.
pub fn events_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, Error> {
    let non_empty = |key: &str| env(key).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty(ENV_EVENTS_DIR) {
        let dir = PathBuf::from(dir);
        if dir.is_relative() {
            return Err(Error::RelativeEventsDir { path: dir });
        }
        return Ok(dir);
    }
    state_home_from(&env).map(|state| state.join("hookline").join("events"))
}

/// The per-user state directory: `$XDG_STATE_HOME`, else `$HOME/.local/state`.
pub fn state_home_from(env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, Error> {
    if let Some(state) = env("XDG_STATE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Ok(state);
    }
    match env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(home.join(".local").join("state")),
        _ => Err(Error::NoHome),
    }
}

/// The relay's diagnostics file for an events directory: beside it, named after it
/// (`…/hookline/events` → `…/hookline/events.relay.log`), so that it can be written even when
/// the events directory itself is refused.
pub fn diagnostics_path(events_dir: &Path) -> PathBuf {
    let mut name = events_dir.file_name().unwrap_or(OsStr::new("events")).to_os_string();
    name.push(".relay.log");
    events_dir.with_file_name(name)
}

/// File name of the relay's fallback log.
pub const FALLBACK_LOG: &str = "relay-failures.log";

/// Where the relay leaves a trace when it cannot write its diagnostics file (and so, usually,
/// not its event either): `$XDG_RUNTIME_DIR/hookline/relay-failures.log` when `XDG_RUNTIME_DIR`
/// is an absolute path, else `/tmp/hookline-$UID/relay-failures.log`. Its directory is
/// owner-only (0700) and used only when it is owned by the user and not a symlink (see
/// [`diag::append_fallback`](crate::diag::append_fallback)); `hookline doctor` reads it.
pub fn fallback_log_path_from(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let dir = match env("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(runtime) => runtime.join("hookline"),
        None => PathBuf::from(format!("/tmp/hookline-{}", crate::sys::euid())),
    };
    dir.join(FALLBACK_LOG)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_explicit_dir_wins_then_xdg_then_home() {
        let all = [("HOOKLINE_EVENTS_DIR", "/x/ev"), ("XDG_STATE_HOME", "/s"), ("HOME", "/h")];
        assert_eq!(events_dir_from(env(&all)).unwrap(), PathBuf::from("/x/ev"));
        assert_eq!(events_dir_from(env(&all[1..])).unwrap(), PathBuf::from("/s/hookline/events"));
        assert_eq!(
            events_dir_from(env(&all[2..])).unwrap(),
            PathBuf::from("/h/.local/state/hookline/events")
        );
    }

    #[test]
    fn empty_and_relative_values_are_handled() {
        let empty = [("HOOKLINE_EVENTS_DIR", ""), ("XDG_STATE_HOME", "rel"), ("HOME", "/h")];
        assert_eq!(
            events_dir_from(env(&empty)).unwrap(),
            PathBuf::from("/h/.local/state/hookline/events")
        );
        let relative = [("HOOKLINE_EVENTS_DIR", "events")];
        assert!(matches!(events_dir_from(env(&relative)), Err(Error::RelativeEventsDir { .. })));
        assert!(matches!(events_dir_from(env(&[])), Err(Error::NoHome)));
    }

    #[test]
    fn the_fallback_log_is_in_the_runtime_dir_else_in_a_per_user_tmp_dir() {
        assert_eq!(
            fallback_log_path_from(env(&[("XDG_RUNTIME_DIR", "/run/user/7")])),
            PathBuf::from("/run/user/7/hookline/relay-failures.log")
        );
        let tmp = format!("/tmp/hookline-{}/relay-failures.log", crate::sys::euid());
        assert_eq!(fallback_log_path_from(env(&[("XDG_RUNTIME_DIR", "rel")])), PathBuf::from(tmp));
    }

    #[test]
    fn diagnostics_sit_beside_the_events_dir() {
        assert_eq!(
            diagnostics_path(Path::new("/s/hookline/events")),
            PathBuf::from("/s/hookline/events.relay.log")
        );
    }
}
