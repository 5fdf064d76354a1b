//! Where hookline's own configuration lives, and which events directory a command reads. (The
//! relay's own choice of events directory is the format's business:
//! [`crate::format::location`].)

use std::ffi::OsString;

use std::path::{Path, PathBuf};

use crate::Error;
use crate::errors::{EventsDirFrom, EventsDirProblem};
use crate::format::location::ENV_EVENTS_DIR;

/// hookline's configuration directory: `$XDG_CONFIG_HOME/hookline` when that is absolute, else
/// `$HOME/.config/hookline`; `None` with neither.
pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("hookline"))
}

/// The user's decision policy, `policy.toml` in [`config_dir`], when that file exists.
pub fn user_policy() -> Option<PathBuf> {
    config_dir().map(|c| c.join("policy.toml")).filter(|p| p.is_file())
}

/// The user's profile overlays: `profiles/` in [`config_dir`].
pub(crate) fn user_profiles() -> Option<PathBuf> {
    config_dir().map(|c| c.join("profiles"))
}

/// Sub-directory of an events directory holding the cursors.
pub const CURSORS_DIR: &str = ".cursors";

/// The events directory a command reads: `flag` (`--events-dir`), else `$HOOKLINE_EVENTS_DIR`,
/// else the relay's default, and who chose it. A relative path named by the flag or the
/// variable is an error, as the relay refuses one.
pub fn events_dir(flag: Option<&Path>) -> Result<(PathBuf, EventsDirFrom), Error> {
    events_dir_from(flag, |key| std::env::var_os(key))
}

/// [`events_dir`] with the environment given.
pub fn events_dir_from(
    flag: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<(PathBuf, EventsDirFrom), Error> {
    let (dir, from) = match (flag, env(ENV_EVENTS_DIR).filter(|v| !v.is_empty())) {
        (Some(dir), _) => (dir.to_owned(), EventsDirFrom::Flag),
        (None, Some(dir)) => (PathBuf::from(dir), EventsDirFrom::Env),
        (None, None) => {
            let dir = crate::format::location::events_dir_from(env)?;
            return Ok((dir, EventsDirFrom::Default));
        }
    };
    if dir.is_relative() {
        return Err(Error::EventsDir { path: dir, from, problem: EventsDirProblem::Relative });
    }
    Ok((dir, from))
}

/// Checks that an events directory someone named is there: a directory named by the flag or
/// the variable must exist, since a wrong one would look exactly like one with no events. The
/// default may be missing (no hook has run yet): it reads as empty.
pub fn check_events_dir(dir: &Path, from: EventsDirFrom) -> Result<(), Error> {
    let problem = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => EventsDirProblem::NotADirectory,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => EventsDirProblem::Missing,
        Err(e) => return Err(Error::io("read", dir, e)),
    };
    if from == EventsDirFrom::Default && problem == EventsDirProblem::Missing {
        return Ok(());
    }
    Err(Error::EventsDir { path: dir.to_owned(), from, problem })
}

/// What an existing events directory holding no event and no relay counter (`.seq`) says to a
/// reader: nothing was ever written there, so it may be the wrong directory (its parent, a
/// typo) rather than a quiet one. `None` when the directory holds either, or is not there.
/// A command reading it still succeeds: an empty events directory is a valid one.
pub fn unwritten_note(dir: &Path) -> Option<String> {
    let written = |dir: &Path| {
        dir.join(crate::format::filename::COUNTER_FILE).exists()
            || crate::format::layout::list(dir, 0).is_ok_and(|l| !l.events.is_empty())
    };
    if !dir.is_dir() || written(dir) {
        return None;
    }
    let mut note = format!("{} holds no events and no relay counter", dir.display());
    let relay = crate::format::location::events_dir_from(|key| std::env::var_os(key)).ok();
    let inside = ["events", "hookline/events"].map(|sub| dir.join(sub));
    if let Some(inner) = inside.iter().find(|inner| inner.is_dir() && written(inner)) {
        note.push_str(&format!(": did you mean {}?", inner.display()));
    } else if let Some(relay) = relay.filter(|relay| relay != dir) {
        note.push_str(&format!(
            ": is this the events directory? the relay writes to {} (unless its \
             HOOKLINE_EVENTS_DIR says otherwise)",
            relay.display()
        ));
    } else {
        note.push_str(": no hook has written here yet (`hookline doctor` checks the hooks)");
    }
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_variable_and_neither_may_be_relative() {
        let env =
            |value: &'static str| move |key: &str| (key == ENV_EVENTS_DIR).then(|| value.into());
        let (dir, from) = events_dir_from(Some(Path::new("/a")), env("/b")).unwrap();
        assert_eq!((dir.as_path(), from), (Path::new("/a"), EventsDirFrom::Flag));
        let (dir, from) = events_dir_from(None, env("/b")).unwrap();
        assert_eq!((dir.as_path(), from), (Path::new("/b"), EventsDirFrom::Env));
        for (flag, value, named) in
            [(Some("rel"), "/b", "--events-dir"), (None, "rel", "HOOKLINE_EVENTS_DIR")]
        {
            let err = events_dir_from(flag.map(Path::new), env(value)).unwrap_err();
            assert_eq!(err.to_string(), format!("{named} rel: not an absolute path"));
        }
    }

    #[test]
    fn only_a_default_directory_may_be_missing() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("none");
        assert!(check_events_dir(&missing, EventsDirFrom::Default).is_ok());
        assert!(check_events_dir(tmp.path(), EventsDirFrom::Flag).is_ok());
        let err = check_events_dir(&missing, EventsDirFrom::Env).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("HOOKLINE_EVENTS_DIR {}: no such directory", missing.display())
        );
        let file = tmp.path().join("file");
        std::fs::write(&file, "").unwrap();
        let err = check_events_dir(&file, EventsDirFrom::Default).unwrap_err();
        assert!(err.to_string().ends_with("not a directory"), "{err}");
    }
}
