//! Where hookline's own configuration lives. (The events directory is the format's business:
//! [`crate::format::location`].)

use std::path::PathBuf;

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
pub fn user_profiles() -> Option<PathBuf> {
    config_dir().map(|c| c.join("profiles"))
}

/// The user's notifications file: `notify.toml` in [`config_dir`] (whether or not it exists).
pub fn user_notify() -> Option<PathBuf> {
    config_dir().map(|c| c.join(crate::notify::FILE_NAME))
}
