//! Plugin dialects: a CLI with no command hooks (OpenCode and its fork Kilo Code, Pi) loads
//! hookline's plugin (Pi: extension), one file in its plugin folder, which runs the relay
//! itself.
//!
//! The file is hookline's entirely: install writes the plugin with the relay's path in place
//! of [`RELAY_PLACEHOLDER`] and the profile's name in place of [`CLI_PLACEHOLDER`] (one plugin
//! serves OpenCode and Kilo Code, and must say which of them runs it), and rewrites it when the
//! relay or the plugin changed; uninstall
//! removes it. A file at that path that is not hookline's plugin (its first line differs) is
//! refused untouched, both ways. Writes go through [`file::update`]: a
//! symlink is followed and stays a link, only a regular file is written, atomically. No backup
//! is kept: the only content ever replaced is hookline's own plugin.

use std::fmt;
use std::path::Path;

use crate::errors::Error;
use crate::install::merge::{Change, Scaffolding};
use crate::install::{NEW_FILE_MODE, Report, file};

/// hookline's OpenCode plugin, as shipped (`profiles/opencode-plugin.js`); Kilo Code loads
/// it too.
pub const OPENCODE_PLUGIN: &str = include_str!("../../../profiles/opencode-plugin.js");

/// hookline's Pi extension, as shipped (`profiles/pi-extension.ts`).
pub const PI_EXTENSION: &str = include_str!("../../../profiles/pi-extension.ts");

/// What a plugin says where the relay's path goes, as a JSON string (quotes included).
pub const RELAY_PLACEHOLDER: &str = "\"@HOOKLINE_RELAY@\"";

/// What a plugin says where the profile's name (the relay's `--cli`) goes, as a JSON string.
pub const CLI_PLACEHOLDER: &str = "\"@HOOKLINE_CLI@\"";

/// What to do with the plugin file.
#[derive(Debug, Clone, Copy)]
pub enum PluginOp<'a> {
    /// Write the plugin running this relay.
    Install {
        /// The relay's absolute path.
        relay: &'a str,
        /// The profile's name, which the plugin passes to the relay as `--cli`.
        cli: &'a str,
    },
    /// Remove the plugin.
    Uninstall,
}

/// What an install or uninstall did to a plugin file.
#[derive(Debug, Clone)]
pub struct PluginReport {
    /// The file, as for a settings file.
    pub report: Report,
    /// What happened to the plugin (`None`: there was none to remove).
    pub change: Option<Change>,
}

impl fmt::Display for PluginReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.change {
            None => write!(f, "plugin: none found"),
            Some(Change::Added) => write!(f, "plugin: added"),
            Some(Change::Unchanged) => write!(f, "plugin: already installed"),
            Some(Change::Updated { was: Some(was), .. }) => {
                write!(f, "plugin: updated (was: relay {was})")
            }
            Some(Change::Updated { was: None, .. }) => {
                write!(f, "plugin: updated (the shipped plugin changed)")
            }
            Some(Change::Removed { .. }) => write!(f, "plugin: removed"),
        }
    }
}

/// The plugin as installed: `source` with the relay's path and the profile's name written as
/// JSON strings.
pub fn render(source: &str, relay: &str, cli: &str) -> String {
    source
        .replace(RELAY_PLACEHOLDER, &serde_json::Value::from(relay).to_string())
        .replace(CLI_PLACEHOLDER, &serde_json::Value::from(cli).to_string())
}

/// Whether `text` is hookline's plugin (any version of it): its first line is the shipped
/// plugin's.
pub fn is_ours(source: &str, text: &[u8]) -> bool {
    let first = |bytes: &[u8]| bytes.split(|b| *b == b'\n').next().map(<[u8]>::to_vec);
    first(source.as_bytes()) == first(text)
}

/// The relay an installed plugin runs: read from the line that holds the placeholder in
/// `source`.
pub fn relay_of(source: &str, text: &str) -> Option<String> {
    let line = source.lines().find(|l| l.contains(RELAY_PLACEHOLDER))?;
    let (before, after) = line.split_once(RELAY_PLACEHOLDER)?;
    let value = text.lines().find_map(|l| l.strip_prefix(before)?.strip_suffix(after))?;
    serde_json::from_str(value).ok()
}

/// Installs or uninstalls the plugin `source` at `path`.
pub fn apply(
    path: &Path,
    source: &str,
    op: PluginOp<'_>,
    dry_run: bool,
) -> Result<PluginReport, Error> {
    let target = file::resolve(path)?.target;
    let options = file::UpdateOptions { dry_run, backup: false, new_mode: NEW_FILE_MODE };
    let (outcome, change) = file::update(
        path,
        options,
        |before| {
            if let Some(bytes) = before
                && !is_ours(source, bytes)
            {
                return Err(Error::NotOurPlugin { path: target.clone() });
            }
            Ok(match (op, before) {
                (PluginOp::Install { relay, cli }, None) => {
                    (Some(render(source, relay, cli).into_bytes()), Some(Change::Added))
                }
                (PluginOp::Install { relay, cli }, Some(bytes)) => {
                    let wanted = render(source, relay, cli).into_bytes();
                    let change = if wanted == bytes {
                        Change::Unchanged
                    } else {
                        let was = relay_of(source, &String::from_utf8_lossy(bytes))
                            .filter(|was| was != relay);
                        Change::Updated { was, duplicates: 0 }
                    };
                    (Some(wanted), Some(change))
                }
                (PluginOp::Uninstall, None) => (None, None),
                (PluginOp::Uninstall, Some(_)) => (None, Some(Change::Removed { why: None })),
            })
        },
        |_| {},
    )?;
    let created = matches!(change, Some(Change::Added));
    let report = Report {
        path: path.to_owned(),
        target,
        lines: Vec::new(),
        outcome,
        created,
        one_line: false,
        scaffolding: Scaffolding { file: created, ..Scaffolding::default() },
    };
    Ok(PluginReport { report, change })
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use super::*;

    const RELAY: &str = "/opt/hook \"line\"/hookline-relay";

    fn install<'a>(relay: &'a str) -> PluginOp<'a> {
        PluginOp::Install { relay, cli: "opencode" }
    }

    #[test]
    fn each_shipped_plugin_has_one_relay_and_one_cli_placeholder_and_reads_its_relay_back() {
        for source in [OPENCODE_PLUGIN, PI_EXTENSION] {
            assert_eq!(source.matches(RELAY_PLACEHOLDER).count(), 1);
            assert_eq!(source.matches(CLI_PLACEHOLDER).count(), 1);
            let installed = render(source, RELAY, "kilo");
            assert!(!installed.contains(RELAY_PLACEHOLDER));
            assert!(!installed.contains(CLI_PLACEHOLDER));
            assert!(installed.contains("\"kilo\""));
            assert!(is_ours(source, installed.as_bytes()));
            assert_eq!(relay_of(source, &installed).as_deref(), Some(RELAY));
            assert!(!is_ours(source, b"export const Mine = async () => ({});\n"));
        }
        assert!(!is_ours(OPENCODE_PLUGIN, PI_EXTENSION.as_bytes()), "two plugins, told apart");
    }

    #[test]
    fn the_opencode_plugin_names_no_cli_of_its_own() {
        // Kilo Code loads the same file: a hard-coded `--cli opencode` would record its events
        // as OpenCode's.
        assert!(!OPENCODE_PLUGIN.contains("\"opencode\""), "a hard-coded CLI name");
        assert!(!OPENCODE_PLUGIN.contains("--cli opencode"), "a hard-coded CLI name");
        let kilo = render(OPENCODE_PLUGIN, RELAY, "kilo");
        assert!(kilo.contains(r#"const CLI = "kilo";"#), "{kilo}");
    }

    #[test]
    fn install_is_idempotent_updates_a_stale_relay_and_uninstall_removes_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("plugins/hookline.js");
        let run = |relay| apply(&path, OPENCODE_PLUGIN, install(relay), false);
        let first = run(RELAY).unwrap();
        assert_eq!(first.change, Some(Change::Added));
        assert!(first.report.scaffolding.file);
        assert_eq!(fs::read_to_string(&path).unwrap(), render(OPENCODE_PLUGIN, RELAY, "opencode"));
        let again = run(RELAY).unwrap();
        assert_eq!(
            (again.change.clone(), again.report.changed()),
            (Some(Change::Unchanged), false)
        );
        assert_eq!(again.to_string(), "plugin: already installed");
        let moved = run("/usr/bin/hookline-relay").unwrap();
        assert_eq!(moved.to_string(), format!("plugin: updated (was: relay {RELAY})"));
        let removed = apply(&path, OPENCODE_PLUGIN, PluginOp::Uninstall, false).unwrap();
        assert_eq!(removed.change, Some(Change::Removed { why: None }));
        assert!(!path.exists());
        let none = apply(&path, OPENCODE_PLUGIN, PluginOp::Uninstall, false).unwrap();
        assert_eq!((none.change, none.report.changed()), (None, false));
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert!(names.is_empty(), "no temp file or backup left: {names:?}");
    }

    #[test]
    fn a_plugin_written_for_another_cli_is_rewritten_for_this_one() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("hookline.js");
        fs::write(&path, render(OPENCODE_PLUGIN, RELAY, "opencode")).unwrap();
        let op = PluginOp::Install { relay: RELAY, cli: "kilo" };
        let done = apply(&path, OPENCODE_PLUGIN, op, false).unwrap();
        assert_eq!(done.to_string(), "plugin: updated (the shipped plugin changed)");
        assert_eq!(fs::read_to_string(&path).unwrap(), render(OPENCODE_PLUGIN, RELAY, "kilo"));
    }

    #[test]
    fn a_file_that_is_not_our_plugin_is_refused_untouched_both_ways() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("hookline.js");
        let theirs = "export const Theirs = async () => ({});\n";
        fs::write(&path, theirs).unwrap();
        for op in [install(RELAY), PluginOp::Uninstall] {
            let err = apply(&path, OPENCODE_PLUGIN, op, false).unwrap_err();
            assert!(matches!(&err, Error::NotOurPlugin { path: p } if *p == path), "{err}");
            assert_eq!(fs::read_to_string(&path).unwrap(), theirs);
        }
    }

    #[test]
    fn a_symlinked_plugin_is_written_at_its_target_and_stays_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("dotfiles/hookline.js");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, render(OPENCODE_PLUGIN, "/old/hookline-relay", "opencode")).unwrap();
        let link = tmp.path().join("hookline.js");
        symlink(&real, &link).unwrap();
        let report = apply(&link, OPENCODE_PLUGIN, install(RELAY), false);
        assert_eq!(report.unwrap().report.target, real);
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), render(OPENCODE_PLUGIN, RELAY, "opencode"));
    }

    #[test]
    fn a_dry_run_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("plugins/hookline.js");
        let report = apply(&path, OPENCODE_PLUGIN, install(RELAY), true).unwrap();
        assert!(matches!(report.report.outcome, file::Outcome::Planned { .. }));
        assert!(!path.exists());
    }
}
