//! `install`, `uninstall` and `doctor`: registering the relay in each CLI's settings file
//! without ever damaging it.
//!
//! * [`document`]: the JSON file edited as text, so that what is not ours keeps its bytes.
//! * [`merge`]: the merge rules (what is ours, what is replaced, what is removed).
//! * [`dialect`]: the shape of each CLI's hooks settings.
//! * [`command`]: the relay command, quoted for a POSIX shell, and how ours is recognised.
//! * [`file`](mod@file): symlinks, locking, atomic write, backup, re-read on concurrent change.
//! * [`diff`]: the unified diff shown by `--dry-run`.
//! * [`plugin`]: a CLI with no command hooks (OpenCode): hookline's plugin, one file.
//! * [`probe`]: finding programs, detecting a CLI's version, bounded runs.
//! * [`record`]: where hookline installed, so that `doctor` can tell stripped hooks.
//! * [`doctor`]: the health checks.
//! * [`codex_trust`]: which of hookline's hooks Codex will skip because nobody trusted them.

pub mod codex_trust;
pub mod command;
pub mod dialect;
pub mod diff;
pub mod doctor;
pub mod document;
pub mod file;
pub mod merge;
pub mod plugin;
pub mod probe;
pub mod record;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::errors::Error;
use crate::install::dialect::Shape as _;
use hookline::profile::{InstallEvent, InstallSpec, Profile, Profiles};

pub use dialect::Dialect;
pub use merge::{Change, Line, Scaffolding, Wanted};
pub use probe::Detected;

/// How to put both binaries in a stable place on `PATH`, from a clone of hookline. A relay
/// registered inside the clone's `target/` breaks every hook on `cargo clean`.
pub const PUT_ON_PATH: &str = "in your hookline clone: cargo install --locked --path relay && cargo install --locked --path cli (both go to ~/.cargo/bin)";

/// The mode of a settings file hookline creates.
pub const NEW_FILE_MODE: u32 = 0o644;

/// Why the events are listed: to register them or to check for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `install`: they are written.
    Install,
    /// `doctor`: they are only looked for.
    Check,
}

/// A CLI that can be installed into: its profile, install spec and dialect.
#[derive(Debug, Clone, Copy)]
pub struct Installable<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// Its `[install]` table.
    pub spec: &'a InstallSpec,
    /// The dialect named by the spec.
    pub dialect: Dialect,
}

impl<'a> Installable<'a> {
    /// Looks a CLI up among the profiles.
    pub fn find(profiles: &'a Profiles, name: &str) -> Result<Installable<'a>, Error> {
        let profile = profiles.get(name).ok_or_else(|| Error::UnknownCli {
            name: name.to_owned(),
            known: Installable::all(profiles).iter().map(|i| i.profile.name.clone()).collect(),
        })?;
        Installable::of(profile)
    }

    /// The installable form of a profile.
    pub fn of(profile: &'a Profile) -> Result<Installable<'a>, Error> {
        let spec = profile
            .install
            .as_ref()
            .ok_or_else(|| Error::NotInstallable { name: profile.name.clone() })?;
        Ok(Installable { profile, spec, dialect: spec.dialect })
    }

    /// Every profile that can be installed, by name.
    pub fn all(profiles: &'a Profiles) -> Vec<Installable<'a>> {
        profiles.iter().filter_map(|p| Installable::of(p).ok()).collect()
    }

    /// The scope used when none is given, then the others, in the profile's order.
    pub fn scopes(&self) -> Vec<&'a str> {
        let mut scopes = vec![self.spec.default_scope.as_str()];
        scopes.extend(
            self.spec
                .scopes
                .iter()
                .map(|(name, _)| name.as_str())
                .filter(|name| *name != self.spec.default_scope),
        );
        scopes
    }

    /// The settings file of a scope.
    pub fn settings_path(
        &self,
        scope: &str,
        env: &dyn Fn(&str) -> Option<OsString>,
        cwd: &Path,
    ) -> Result<PathBuf, Error> {
        let template = self.spec.scope(scope).ok_or_else(|| Error::UnknownScope {
            cli: self.profile.name.clone(),
            scope: scope.to_owned(),
            known: self.scopes().iter().map(|s| (*s).to_owned()).collect(),
        })?;
        expand(template, env, cwd)
    }

    /// The events to register, for the version detected, as the settings file names them.
    pub fn events(&self, detected: &Detected) -> Vec<&'a str> {
        self.chosen(detected).into_iter().map(InstallEvent::key).collect()
    }

    /// The events for the version detected: that version's; with the CLI not on `PATH`, the
    /// newest version's (it is most likely about to be installed, and the events missing from
    /// the conservative set, such as Claude Code's task events, feed decisions); with a
    /// version that cannot be read, the conservative set every supported version knows.
    fn chosen(&self, detected: &Detected) -> Vec<&'a InstallEvent> {
        match detected {
            Detected::NotFound { .. } => self.spec.newest_events(),
            _ => self.spec.events_for(detected.version(), &self.profile.min_version),
        }
    }

    /// The entries to register, running `relay`.
    pub fn wanted(&self, relay: &str, detected: &Detected) -> Vec<Wanted> {
        self.chosen(detected)
            .into_iter()
            .map(|e| {
                let event = self.spec.event_arg.then_some(e.native.as_str());
                let command = command::relay_command(relay, &self.profile.name, event);
                Wanted {
                    event: e.key().to_owned(),
                    entry: self.dialect.entry(
                        &command,
                        e.timeout_secs.unwrap_or(self.spec.timeout_secs),
                        e.matcher.as_deref(),
                    ),
                }
            })
            .collect()
    }

    /// Why an event is not registered for the version detected.
    pub fn why_not(&self, event: &str, detected: &Detected) -> String {
        if let Some((_, why)) = self.spec.never.iter().find(|(n, _)| n == event) {
            return format!("never registered: {why}");
        }
        let name = &self.profile.display_name;
        match self.spec.events.iter().find(|e| e.key() == event) {
            None => format!("not an event hookline registers for {name}"),
            Some(e) => match (detected.version(), detected) {
                (Some(v), _) => format!("{name} {v} does not know it"),
                (None, Detected::NotFound { .. }) => {
                    let until =
                        e.until.as_ref().map(|u| format!(" (gone in {u})")).unwrap_or_default();
                    format!("the newest {name} does not know it{until}")
                }
                (None, _) => {
                    let since =
                        e.since.as_ref().map(|s| format!(" (needs {s})")).unwrap_or_default();
                    format!("not known to every supported version{since}")
                }
            },
        }
    }

    /// One line saying which version the events were chosen for: `install` registers them,
    /// `doctor` only checks for them.
    pub fn version_line(&self, detected: &Detected, purpose: Purpose) -> String {
        let name = &self.profile.display_name;
        if self.dialect.plugin_source().is_some() {
            // The plugin decides what it sends; only the version is worth saying.
            return match detected {
                Detected::Version { .. } => format!("{name} {detected}: hookline's plugin"),
                _ => format!(
                    "{detected}: hookline's plugin needs {name} {} or later",
                    self.profile.min_version
                ),
            };
        }
        let n = self.events(detected).len();
        let events = if n == 1 { "event" } else { "events" };
        let verb = match purpose {
            Purpose::Install => "registering",
            Purpose::Check => "checking for",
        };
        match detected {
            Detected::Version { .. } => format!("{name} {detected}: {n} {events}"),
            Detected::NotFound { .. } if purpose == Purpose::Install => format!(
                "{detected}: {verb} the {n} {events} the newest {name} knows (run `hookline \
                 install {}` again once it is on PATH, for an older version's)",
                self.profile.name
            ),
            Detected::NotFound { .. } => {
                format!("{detected}: {verb} the {n} {events} the newest {name} knows")
            }
            Detected::Unreadable { .. } => format!(
                "{detected}: {verb} the {n} {events} every {name} since {} knows",
                self.profile.min_version
            ),
        }
    }

    /// Detects the installed CLI's version.
    pub fn detect(&self, path_var: Option<&OsStr>) -> Detected {
        probe::detect(&self.profile.binary, &self.spec.version_args, path_var)
    }
}

/// Expands a settings path template: `${VAR:-default}` (the default when `VAR` is unset or
/// empty), `$VAR`, then a leading `~`. A relative result is taken from `cwd`.
pub fn expand(
    template: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
    cwd: &Path,
) -> Result<PathBuf, Error> {
    let var =
        |name: &str| env(name).filter(|v| !v.is_empty()).map(|v| v.to_string_lossy().into_owned());
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(body) = rest.strip_prefix('{')
            && let Some(end) = body.find('}')
        {
            let inner = &body[..end];
            let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
            out.push_str(&var(name).unwrap_or_else(|| default.to_owned()));
            rest = &body[end + 1..];
        } else {
            let end =
                rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            out.push_str(&var(&rest[..end]).unwrap_or_default());
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    let path = if out == "~" || out.starts_with("~/") {
        let home = var("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .ok_or_else(|| Error::NoHome { template: template.to_owned() })?;
        match out.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => home,
        }
    } else {
        PathBuf::from(out)
    };
    Ok(if path.is_relative() { cwd.join(path) } else { path })
}

/// The `hookline-relay` to register: beside the running `hookline`, else on `PATH`.
pub fn find_relay(path_var: Option<&OsStr>) -> Result<PathBuf, Error> {
    let mut searched = Vec::new();
    if let Some(dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_owned))
    {
        let beside = dir.join(command::RELAY_PROGRAM);
        if probe::is_executable(&beside) {
            return Ok(beside);
        }
        searched.push(dir);
    }
    if let Some(found) = probe::which(command::RELAY_PROGRAM, path_var) {
        return Ok(found);
    }
    searched.push(PathBuf::from("PATH"));
    Err(Error::NoRelay { searched })
}

/// Checks a relay path given by the user: made absolute from `cwd`, an executable file, and
/// valid UTF-8 (it is written into a JSON string).
pub fn check_relay(path: &Path, cwd: &Path) -> Result<String, Error> {
    let path = if path.is_relative() { cwd.join(path) } else { path.to_owned() };
    let bad = |reason| Error::BadRelay { path: path.clone(), reason };
    if !probe::is_executable(&path) {
        return Err(bad("not an executable file"));
    }
    path.to_str().map(str::to_owned).ok_or_else(|| bad("the path is not valid UTF-8"))
}

/// What an install or uninstall did to one file.
#[derive(Debug, Clone)]
pub struct Report {
    /// The settings path given.
    pub path: PathBuf,
    /// The file actually read and written (the end of a symlink chain).
    pub target: PathBuf,
    /// One line per event.
    pub lines: Vec<Line>,
    /// What happened to the file.
    pub outcome: file::Outcome,
    /// The file was missing or empty.
    pub created: bool,
    /// The file is written on one line (new entries are written on one line too).
    pub one_line: bool,
    /// What hookline has created in the file (after an install), for the install record.
    pub scaffolding: Scaffolding,
}

impl Report {
    /// Whether the file was (or, in a dry run, would be) changed.
    pub fn changed(&self) -> bool {
        !matches!(self.outcome, file::Outcome::Unchanged)
    }

    /// The unified diff of the change.
    pub fn diff(&self) -> String {
        let (before, after) = match &self.outcome {
            file::Outcome::Unchanged => return String::new(),
            file::Outcome::Planned { before, after }
            | file::Outcome::Written { before, after, .. } => (before, after),
        };
        let text = |b: &Option<Vec<u8>>| {
            String::from_utf8_lossy(b.as_deref().unwrap_or_default()).into_owned()
        };
        diff::unified(&self.target.display().to_string(), &text(before), &text(after))
    }
}

/// Which operation to run on a settings file.
#[derive(Clone, Copy)]
pub enum Operation<'a> {
    /// Register these entries; remove ours from other events, saying why with the function.
    Install {
        /// The entries.
        wanted: &'a [Wanted],
        /// Why an event is not registered.
        why_not: &'a dyn Fn(&str) -> String,
        /// What earlier installs created in the file (`None`: not known).
        scaffolding: Option<&'a Scaffolding>,
    },
    /// Remove every entry of ours, and what install created (`None`: not known).
    Uninstall {
        /// What install created in the file.
        scaffolding: Option<&'a Scaffolding>,
    },
}

/// Installs or uninstalls in one settings file.
pub fn apply(
    path: &Path,
    dialect: Dialect,
    op: Operation<'_>,
    dry_run: bool,
) -> Result<Report, Error> {
    apply_hooked(path, dialect, op, dry_run, |_| {})
}

/// [`apply`], with a function run just before the final comparison and rename (tests use it
/// to rewrite the file behind hookline's back).
pub fn apply_hooked(
    path: &Path,
    dialect: Dialect,
    op: Operation<'_>,
    dry_run: bool,
    before_commit: impl FnMut(&Path),
) -> Result<Report, Error> {
    let target = file::resolve(path)?.target;
    let options = file::UpdateOptions { dry_run, backup: true, new_mode: NEW_FILE_MODE };
    let settings = |problem| Error::Settings { path: target.clone(), problem };
    let (outcome, (lines, created, one_line, scaffolding)) = file::update(
        path,
        options,
        |before| {
            let text = before.map(|b| document::utf8(b).map_err(settings)).transpose()?;
            let merged = match op {
                Operation::Install { wanted, why_not, scaffolding } => {
                    merge::install(text, dialect, wanted, why_not, scaffolding)
                }
                Operation::Uninstall { scaffolding } => {
                    merge::uninstall(text, dialect, scaffolding)
                }
            }
            .map_err(settings)?;
            let one_line = text.is_some_and(|t| !t.trim().is_empty() && !t.trim().contains('\n'));
            let extra = (merged.lines, merged.created, one_line, merged.scaffolding);
            Ok((merged.text.map(String::into_bytes), extra))
        },
        before_commit,
    )?;
    if let (Operation::Uninstall { scaffolding }, file::Outcome::Written { after: None, .. }) =
        (op, &outcome)
    {
        remove_own_backup(&target, dialect, scaffolding)?;
    }
    Ok(Report { path: path.to_owned(), target, lines, outcome, created, one_line, scaffolding })
}

/// After uninstall removed a file hookline had created, removes `<file>.hookline.bak` too when
/// it holds nothing but hookline's own entries (an earlier install's backup of its own file);
/// a backup holding anything of the user's, or that cannot be read as one, stays.
fn remove_own_backup(
    target: &Path,
    dialect: Dialect,
    scaffolding: Option<&Scaffolding>,
) -> Result<(), Error> {
    let backup = file::backup_path(target);
    let Ok(Some(bytes)) = file::read(&backup) else {
        return Ok(());
    };
    let ours_only = document::utf8(&bytes)
        .ok()
        .and_then(|text| merge::uninstall(Some(text), dialect, scaffolding).ok())
        .is_some_and(|merged| merged.text.is_none());
    if ours_only {
        match std::fs::remove_file(&backup) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("remove", &backup, e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The cargo build directory a relay lives in (`…/target/debug`, `…/target/release`, or any
/// directory holding cargo's `.cargo-lock`), if it does: `cargo clean` or moving the clone
/// would break every hook registered with it.
pub fn build_dir(relay: &Path) -> Option<PathBuf> {
    let dir = relay.parent()?;
    let profile = dir.file_name()?.to_str()?;
    let in_target = matches!(profile, "debug" | "release")
        && dir.parent().and_then(Path::file_name).is_some_and(|n| n == "target");
    (in_target || dir.join(".cargo-lock").is_file()).then(|| dir.to_owned())
}

#[cfg(test)]
mod tests;
