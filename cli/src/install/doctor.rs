//! `hookline doctor`: is everything in place for events to arrive?
//!
//! For each installable CLI and each of its scopes (and each file `install` recorded): is
//! the relay registered; does the registered binary exist and run silently; would `install`
//! change anything (stale command, events missing for the version detected, events that
//! version does not know); were our hooks stripped from a file we installed into; for Codex,
//! will it skip them because nobody trusted them in its `/hooks` screen. Then: is
//! the events directory present and safe, what the relay reported in its diagnostics file
//! lately, and when the last event of each CLI arrived.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hookline::format::diag::{self, Level as DiagLevel};
use hookline::format::envelope::RawEnvelope;
use hookline::format::location;
use hookline::format::store::EventsDir;

use crate::errors::Error;
use crate::install::codex_trust::{self, Trust, TrustRecords};
use crate::install::dialect::Shape as _;
use crate::install::{
    Change, Dialect, Installable, PUT_ON_PATH, Purpose, build_dir, command, document, expand, file,
    find_relay, merge, probe, record,
};
use hookline::profile::Profiles;
use hookline::units::format_age;

/// How long the registered relay may take to run with `HOOKLINE_DISABLE=1`.
pub const RELAY_TIMEOUT: Duration = Duration::from_secs(5);
/// How far back relay diagnostics are reported.
pub const DIAG_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// How many of the newest event files are read to find each CLI's last event.
pub const NEWEST_EVENTS: usize = 2000;

/// How a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// All good.
    Ok,
    /// Worth knowing, nothing wrong.
    Info,
    /// Something is wrong; `doctor` exits non-zero.
    Problem,
}

/// One thing `doctor` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How it weighs.
    pub level: Level,
    /// What was found.
    pub text: String,
    /// How to fix it, for problems.
    pub fix: Option<String>,
}

impl Finding {
    fn ok(text: impl Into<String>) -> Finding {
        Finding { level: Level::Ok, text: text.into(), fix: None }
    }

    fn info(text: impl Into<String>) -> Finding {
        Finding { level: Level::Info, text: text.into(), fix: None }
    }

    fn problem(text: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding { level: Level::Problem, text: text.into(), fix: Some(fix.into()) }
    }
}

/// The findings about one subject (a CLI, the events directory).
#[derive(Debug, Clone)]
pub struct Section {
    /// The subject.
    pub title: String,
    /// What was found.
    pub findings: Vec<Finding>,
}

/// Everything `doctor` found.
#[derive(Debug, Clone)]
pub struct Checkup {
    /// One section per subject.
    pub sections: Vec<Section>,
}

impl Checkup {
    /// The problems found.
    pub fn problems(&self) -> impl Iterator<Item = &Finding> {
        self.sections.iter().flat_map(|s| &s.findings).filter(|f| f.level == Level::Problem)
    }
}

impl fmt::Display for Checkup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for section in &self.sections {
            writeln!(f, "{}", section.title)?;
            for finding in &section.findings {
                let mark = match finding.level {
                    Level::Ok => "ok",
                    Level::Info => "--",
                    Level::Problem => "!!",
                };
                writeln!(f, "  {mark} {}", finding.text)?;
                if let Some(fix) = &finding.fix {
                    writeln!(f, "     fix: {fix}")?;
                }
            }
        }
        let n = self.problems().count();
        match n {
            0 => writeln!(f, "no problems found"),
            1 => writeln!(f, "1 problem found"),
            n => writeln!(f, "{n} problems found"),
        }
    }
}

/// What `doctor` needs from its surroundings.
pub struct Context<'a> {
    /// The environment.
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
    /// The directory project scopes are relative to.
    pub cwd: &'a Path,
    /// The relay `install` would register (`None`: found as `install` finds it).
    pub relay: Option<String>,
    /// Now, in nanoseconds since the Unix epoch.
    pub now_ns: u64,
}

/// Runs every check, for one CLI or all installable ones.
pub fn check(profiles: &Profiles, only: Option<&str>, ctx: &Context<'_>) -> Result<Checkup, Error> {
    let clis = match only {
        Some(name) => vec![Installable::find(profiles, name)?],
        None => Installable::all(profiles),
    };
    let events_dir = location::events_dir_from(|k| (ctx.env)(k));
    let last = events_dir.as_ref().map(|dir| last_events(dir)).unwrap_or_default();
    let mut sections: Vec<Section> =
        clis.iter().map(|cli| check_cli(cli, only.is_some(), &last, ctx)).collect();
    sections.push(check_events_dir(events_dir, ctx));
    Ok(Checkup { sections })
}

fn install_fix(cli: &str, scope: &str, path: &Path) -> String {
    if scope == "custom" {
        format!("hookline install {cli} --settings {}", command::quote(&path.display().to_string()))
    } else {
        format!("hookline install {cli} --scope {scope}")
    }
}

fn check_cli(
    cli: &Installable<'_>,
    asked: bool,
    last: &BTreeMap<String, (u64, Option<String>)>,
    ctx: &Context<'_>,
) -> Section {
    let name = cli.profile.name.as_str();
    let path_var = (ctx.env)("PATH");
    let detected = cli.detect(path_var.as_deref());
    let mut findings = vec![Finding::info(cli.version_line(&detected, Purpose::Check))];
    let relay = ctx.relay.clone().map(Ok).unwrap_or_else(|| {
        find_relay(path_var.as_deref()).and_then(|p| {
            p.to_str()
                .map(str::to_owned)
                .ok_or(Error::BadRelay { path: p.clone(), reason: "the path is not valid UTF-8" })
        })
    });
    let wanted = relay.as_ref().ok().map(|r| cli.wanted(r, &detected));
    // Without a relay to register, `hookline install` fails: the fixes put one on PATH first.
    let then_install = |fix: String| match &relay {
        Ok(_) => fix,
        Err(_) => format!("{PUT_ON_PATH}; then {fix}"),
    };
    let records = record::records_path(ctx.env).map(|p| record::load(&p)).unwrap_or_default();
    let mut places: Vec<(String, PathBuf)> = cli
        .scopes()
        .into_iter()
        .filter_map(|scope| {
            cli.settings_path(scope, ctx.env, ctx.cwd).ok().map(|p| (scope.to_owned(), p))
        })
        .collect();
    for r in records.iter().filter(|r| r.cli == name) {
        if !places.iter().any(|(_, p)| *p == r.path) {
            places.push((r.scope.clone(), r.path.clone()));
        }
    }
    let mut registered_somewhere = false;
    let mut stripped = false;
    let mut checked_commands = Vec::new();
    let scopes_start = findings.len();
    for (scope, path) in places {
        let label = format!("{scope} {}", path.display());
        let fix = then_install(install_fix(name, &scope, &path));
        let recorded = records.iter().any(|r| r.cli == name && r.path == path);
        let target = match file::resolve(&path) {
            Ok(r) => r.target,
            Err(e) => {
                findings
                    .push(Finding::problem(format!("{label}: {e}"), e.fix().unwrap_or_default()));
                continue;
            }
        };
        let bytes = match file::read(&target) {
            Ok(Some(bytes)) => bytes,
            Ok(None) if recorded => {
                findings.push(Finding::problem(
                    format!("{label}: hookline installed here but the file is gone"),
                    fix,
                ));
                continue;
            }
            Ok(None) => {
                findings.push(Finding::info(format!("{label}: not registered (no file)")));
                continue;
            }
            Err(e) => {
                findings.push(Finding::problem(
                    format!("{label}: {e}"),
                    "check the file's permissions",
                ));
                continue;
            }
        };
        if let Some(source) = cli.dialect.plugin_source() {
            let found =
                check_plugin(name, &label, source, &bytes, recorded, relay.as_ref().ok(), &fix);
            registered_somewhere |= found.installed;
            stripped |= found.replaced;
            findings.extend(found.findings);
            if let Some(command) = found.command
                && !checked_commands.contains(&command)
            {
                findings.push(check_command(&command, &fix));
                findings.extend(check_build_dir(&command, name));
                checked_commands.push(command);
            }
            continue;
        }
        let parsed =
            document::utf8(&bytes).and_then(|t| Ok((t, merge::registered(t, cli.dialect)?)));
        let (text, registered) = match parsed {
            Ok(found) => found,
            Err(problem) => {
                let fix = problem.fix().to_owned();
                let e = Error::Settings { path: target.clone(), problem };
                findings.push(Finding::problem(format!("{e}"), fix));
                continue;
            }
        };
        if registered.is_empty() {
            if recorded {
                let backup = file::backup_path(&target);
                let kept = file::read_through(&backup)
                    .ok()
                    .flatten()
                    .and_then(|b| String::from_utf8(b).ok())
                    .and_then(|t| merge::registered(&t, cli.dialect).ok())
                    .is_some_and(|r| !r.is_empty());
                let mut text = format!(
                    "{label}: hookline's hooks were removed by another program (running sessions of some CLIs rewrite their settings from a stale copy)"
                );
                if kept {
                    text.push_str(&format!("; {} still has them", backup.display()));
                }
                stripped = true;
                findings.push(Finding::problem(text, fix));
            } else {
                findings.push(Finding::info(format!("{label}: not registered")));
            }
            continue;
        }
        registered_somewhere = true;
        findings.push(Finding::ok(format!("{label}: registered for {} events", registered.len())));
        if cli.dialect == Dialect::Codex {
            findings.push(check_codex_trust(&label, &path, text, ctx));
        }
        for command in registered.iter().flat_map(|(_, c)| c) {
            if !checked_commands.contains(command) {
                checked_commands.push(command.clone());
                findings.push(check_command(command, &fix));
                findings.extend(check_build_dir(command, name));
            }
        }
        if let Some(wanted) = &wanted {
            let why_not = |e: &str| cli.why_not(e, &detected);
            if let Ok(merged) = merge::install(Some(text), cli.dialect, wanted, why_not, None) {
                let stale = stale_summary(&merged.lines);
                if !stale.is_empty() {
                    findings.push(Finding::problem(
                        format!("{label}: stale: {}", stale.join("; ")),
                        fix,
                    ));
                }
            }
        }
    }
    for (template, note) in &cli.spec.shadows {
        if let Ok(path) = expand(template, ctx.env, ctx.cwd)
            && fs::symlink_metadata(&path).is_ok()
        {
            findings.push(Finding::info(format!("{} exists: {note}", path.display())));
        }
    }
    if registered_somewhere && let Err(e) = &relay {
        // First: every other fix needs a relay.
        let finding = Finding::problem(e.to_string(), e.fix().unwrap_or_default());
        findings.insert(scopes_start, finding);
    }
    if !registered_somewhere && !stripped && asked {
        findings.push(Finding::problem(
            format!("{name}: the relay is registered in no scope"),
            then_install(format!("hookline install {name}")),
        ));
    }
    findings.push(match last.get(name) {
        Some((ts, event)) => Finding::info(format!(
            "last event {} ago{}",
            format_age(Duration::from_nanos(ctx.now_ns.saturating_sub(*ts))),
            event.as_deref().map(|e| format!(" ({})", crate::term::escape(e))).unwrap_or_default()
        )),
        None => Finding::info("no event received yet"),
    });
    Section { title: format!("{} ({name})", cli.profile.display_name), findings }
}

/// What [`check_plugin`] found in a plugin file.
struct PluginCheck {
    findings: Vec<Finding>,
    /// The file is hookline's plugin.
    installed: bool,
    /// hookline installed its plugin here, and another file took its place.
    replaced: bool,
    /// The relay command the plugin runs, to be checked like a hook's.
    command: Option<String>,
}

/// Whether the file at a plugin scope is hookline's plugin, and the one install would write
/// now (the same plugin, the same relay).
fn check_plugin(
    cli: &str,
    label: &str,
    source: &str,
    bytes: &[u8],
    recorded: bool,
    relay: Option<&String>,
    fix: &str,
) -> PluginCheck {
    use crate::install::plugin;
    let mut check =
        PluginCheck { findings: Vec::new(), installed: false, replaced: false, command: None };
    if !plugin::is_ours(source, bytes) {
        check.findings.push(if recorded {
            check.replaced = true;
            Finding::problem(
                format!("{label}: hookline installed its plugin here, but the file is now another"),
                format!("move the file away, then {fix}"),
            )
        } else {
            Finding::info(format!("{label}: not hookline's plugin (left alone)"))
        });
        return check;
    }
    check.installed = true;
    let text = String::from_utf8_lossy(bytes);
    let registered = plugin::relay_of(source, &text);
    check.findings.push(Finding::ok(format!("{label}: hookline's plugin is installed")));
    match &registered {
        Some(path) => check.command = Some(command::relay_command(path, cli, None)),
        None => check.findings.push(Finding::problem(
            format!("{label}: the plugin names no relay it can run"),
            fix.to_owned(),
        )),
    }
    if let Some(relay) = relay
        && plugin::render(source, relay, cli).as_bytes() != bytes
    {
        let why = match registered.as_deref() {
            Some(was) if was != relay.as_str() => {
                format!("it runs {was}, install would write {relay}")
            }
            _ => "it differs from the plugin this hookline ships".to_owned(),
        };
        check.findings.push(Finding::problem(format!("{label}: stale: {why}"), fix.to_owned()));
    }
    check
}

/// Whether Codex will run hookline's hooks in `hooks_file`: each must be trusted, with its
/// current content, in `$CODEX_HOME/config.toml` (the TUI's `/hooks` screen writes it).
fn check_codex_trust(label: &str, hooks_file: &Path, text: &str, ctx: &Context<'_>) -> Finding {
    let config = match expand(codex_trust::CONFIG_PATH, ctx.env, ctx.cwd) {
        Ok(config) => config,
        Err(e) => return Finding::problem(format!("{label}: {e}"), e.fix().unwrap_or_default()),
    };
    let toml =
        file::read_through(&config).map(|b| b.map(|b| String::from_utf8_lossy(&b).into_owned()));
    let records = match toml {
        Ok(None) => TrustRecords::default(),
        Ok(Some(toml)) => match TrustRecords::parse(&toml) {
            Ok(records) => records,
            Err(e) => {
                return Finding::problem(
                    format!("{}: cannot read Codex's hook trust records: {e}", config.display()),
                    "fix the file so Codex can read it too",
                );
            }
        },
        Err(e) => {
            return Finding::problem(
                format!("{label}: cannot read Codex's hook trust records: {e}"),
                e.fix().unwrap_or_else(|| "check the file's permissions".to_owned()),
            );
        }
    };
    let hooks = codex_trust::our_hooks(hooks_file, text, &records);
    let with = |trust: Trust| -> Vec<&str> {
        hooks.iter().filter(|h| h.trust == trust).map(|h| h.event.as_str()).collect()
    };
    let (untrusted, modified, disabled) =
        (with(Trust::Untrusted), with(Trust::Modified), with(Trust::Disabled));
    let skipped = untrusted.len() + modified.len() + disabled.len();
    if skipped == 0 {
        return Finding::ok(format!(
            "{label}: Codex trusts all {} of hookline's hooks ({})",
            hooks.len(),
            config.display()
        ));
    }
    let mut why = Vec::new();
    if !untrusted.is_empty() {
        why.push(format!("not trusted (no trust record): {}", untrusted.join(", ")));
    }
    if !modified.is_empty() {
        why.push(format!("changed since they were trusted: {}", modified.join(", ")));
    }
    if !disabled.is_empty() {
        why.push(format!("turned off in /hooks: {}", disabled.join(", ")));
    }
    let mut fix = "trust them in the Codex TUI: /hooks, then t (trust all) or enter to review \
                   each event; or \"Trust all and continue\" when the TUI asks at start. Until \
                   then Codex skips them, silently in `codex exec`"
        .to_owned();
    if !disabled.is_empty() {
        fix.push_str("; turn the ones turned off back on there (space)");
    }
    Finding::problem(
        format!(
            "{label}: Codex will skip {skipped} of hookline's {} hooks: {}",
            hooks.len(),
            why.join("; ")
        ),
        fix,
    )
}

/// What `install` would change, in one sentence per kind of change.
fn stale_summary(lines: &[merge::Line]) -> Vec<String> {
    let mut missing = Vec::new();
    let mut differ = 0;
    let mut was = Vec::new();
    let mut removed = Vec::new();
    for line in lines {
        match &line.change {
            Change::Unchanged => {}
            Change::Added => missing.push(line.event.as_str()),
            Change::Updated { was: old, .. } => {
                differ += 1;
                if let Some(old) = old
                    && !was.contains(old)
                {
                    was.push(old.clone());
                }
            }
            Change::Removed { why } => {
                removed.push(format!("{} ({})", line.event, why.as_deref().unwrap_or("not wanted")))
            }
        }
    }
    let mut out = Vec::new();
    if differ > 0 {
        let mut text = format!("{differ} entries differ from what install writes now");
        if !was.is_empty() {
            text.push_str(&format!(" (registered: {})", was.join(", ")));
        }
        out.push(text);
    }
    if !missing.is_empty() {
        out.push(format!("missing events: {}", missing.join(", ")));
    }
    if !removed.is_empty() {
        out.push(format!("events to remove: {}", removed.join(", ")));
    }
    out
}

/// A registered relay inside a cargo build directory works until `cargo clean`: said, with
/// the way out.
fn check_build_dir(command: &str, cli: &str) -> Option<Finding> {
    let program = command::program_words(command)?.into_iter().next()?;
    let dir = build_dir(Path::new(&program))?;
    Some(Finding::info(format!(
        "relay {program} is inside the cargo build directory {}: `cargo clean` or moving the clone breaks every hook; to keep it working: {PUT_ON_PATH}, then hookline install {cli}",
        dir.display()
    )))
}

/// Runs a registered command the way the CLI would (`sh -c`), with the relay disabled: it
/// must exit 0 and print nothing.
fn check_command(command: &str, fix: &str) -> Finding {
    let program =
        command::program_words(command).and_then(|w| w.first().cloned()).unwrap_or_default();
    if Path::new(&program).is_absolute() && !probe::is_executable(Path::new(&program)) {
        return Finding::problem(
            format!("relay {program} is missing or not executable"),
            fix.to_owned(),
        );
    }
    let mut sh = Command::new("/bin/sh");
    sh.arg("-c").arg(command).env(location::ENV_DISABLE, "1");
    match probe::run_bounded(sh, RELAY_TIMEOUT) {
        Ok(ran) => match ran.status {
            Some(status) if status.success() && ran.stdout.is_empty() && ran.stderr.is_empty() => {
                Finding::ok(format!("relay {program} runs"))
            }
            Some(status) => {
                let output = String::from_utf8_lossy(if ran.stderr.is_empty() {
                    &ran.stdout
                } else {
                    &ran.stderr
                })
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
                Finding::problem(
                    format!(
                        "relay command `{command}` failed: {status}{}",
                        if output.is_empty() {
                            String::new()
                        } else {
                            format!(", printed {output:?}")
                        }
                    ),
                    fix.to_owned(),
                )
            }
            None => Finding::problem(
                format!(
                    "relay command `{command}` did not finish within {}s",
                    RELAY_TIMEOUT.as_secs()
                ),
                fix.to_owned(),
            ),
        },
        Err(e) => Finding::problem(format!("cannot run /bin/sh: {e}"), "check /bin/sh"),
    }
}

fn check_events_dir(dir: Result<PathBuf, hookline::format::Error>, ctx: &Context<'_>) -> Section {
    let mut findings = Vec::new();
    let title;
    let checked = dir.as_ref().ok().cloned();
    match &dir {
        Err(e) => {
            title = "events dir".to_owned();
            findings.push(Finding::problem(
                e.to_string(),
                "set HOOKLINE_EVENTS_DIR to an absolute path",
            ));
        }
        Ok(dir) => {
            let dir = dir.clone();
            title = format!("events dir {}", dir.display());
            match fs::symlink_metadata(&dir) {
                Err(_) => findings.push(Finding::info(
                    "not created yet (the relay creates it, mode 0700, on its first event)",
                )),
                Ok(meta) => match EventsDir::open(&dir) {
                    Ok(_) => {
                        findings.push(Finding::ok("present, owned by you, not writable by others"));
                        findings.push(check_writable(&dir));
                    }
                    Err(e) => {
                        let fix = if meta.file_type().is_symlink() {
                            "replace the symlink with a real directory, or point HOOKLINE_EVENTS_DIR at the target".to_owned()
                        } else if !meta.is_dir() {
                            format!("move {} out of the way", dir.display())
                        } else if meta.uid() != euid() {
                            "set HOOKLINE_EVENTS_DIR to a directory you own".to_owned()
                        } else {
                            format!("chmod go-w {}", command::quote(&dir.display().to_string()))
                        };
                        findings.push(Finding::problem(e.to_string(), fix));
                    }
                },
            }
            let log = location::diagnostics_path(&dir);
            let since = ctx.now_ns.saturating_sub(DIAG_WINDOW.as_nanos() as u64);
            let mut recent: Vec<diag::Record> =
                diag::read(&log).into_iter().filter(|r| r.ts_ns >= since).collect();
            recent.sort_by_key(|r| r.ts_ns);
            let errors = recent.iter().filter(|r| r.level == DiagLevel::Error).count();
            if recent.is_empty() {
                findings.push(Finding::ok("no relay diagnostics in the last 24h"));
            } else {
                for r in recent.iter().rev().take(3) {
                    let age = format_age(Duration::from_nanos(ctx.now_ns.saturating_sub(r.ts_ns)));
                    let level = match r.level {
                        DiagLevel::Warn => "warn",
                        DiagLevel::Error => "error",
                    };
                    let event = r.event.as_deref().map(|e| format!(" {e}")).unwrap_or_default();
                    findings.push(Finding::info(format!(
                        "relay {level} {age} ago ({}{event}): {}",
                        r.cli, r.message
                    )));
                }
                if errors > 0 {
                    findings.push(Finding::problem(
                        format!(
                            "the relay reported {errors} error(s) in the last 24h: events were lost"
                        ),
                        format!("see {} and fix what it says", log.display()),
                    ));
                }
            }
        }
    }
    findings.extend(fallback_findings(ctx, checked.as_deref()));
    Section { title, findings }
}

/// Whether the relay can create a file in the events directory: a hidden probe file is
/// created, written and removed (a read-only directory or filesystem, or a full disk, makes
/// the relay lose every event).
fn check_writable(dir: &Path) -> Finding {
    let probe = tempfile::Builder::new()
        .prefix(".hookline-doctor-")
        .tempfile_in(dir)
        .and_then(|mut f| f.write_all(b"probe\n").and_then(|()| f.as_file().sync_all()));
    match probe {
        Ok(()) => Finding::ok("writable"),
        Err(e) => {
            let shown = dir.display().to_string();
            let quoted = command::quote(&shown);
            let fix = match e.raw_os_error() {
                Some(libc::EACCES | libc::EPERM) => format!("chmod u+w {quoted}"),
                Some(libc::ENOSPC | libc::EDQUOT) => {
                    format!("free space (or inodes) on the filesystem of {quoted}")
                }
                _ => "set HOOKLINE_EVENTS_DIR to a writable directory you own".to_owned(),
            };
            Finding::problem(
                format!("not writable ({e}): the relay loses every event it is given"),
                fix,
            )
        }
    }
}

/// What the relay left in its fallback log in the last 24h: each a run that could write
/// neither its event's diagnostics nor, usually, the event. The log is the user's, shared by
/// every events directory: only the records of `checked` (the directory doctor checks) are
/// its problem; another directory's are mentioned as that directory's, and records naming
/// none (no directory could be resolved, or an older relay wrote them) as such.
fn fallback_findings(ctx: &Context<'_>, checked: Option<&Path>) -> Vec<Finding> {
    let log = location::fallback_log_path_from(|k| (ctx.env)(k));
    let since = ctx.now_ns.saturating_sub(DIAG_WINDOW.as_nanos() as u64);
    let mut by_dir: BTreeMap<Option<String>, Vec<diag::Record>> = BTreeMap::new();
    for record in diag::read(&log).into_iter().filter(|r| r.ts_ns >= since) {
        by_dir.entry(record.events_dir.clone()).or_default().push(record);
    }
    let ours = |dir: &str| checked.is_some_and(|checked| same_dir(Path::new(dir), checked));
    let see = format!("see {} and fix what it says", log.display());
    let mut findings = Vec::new();
    for (dir, records) in &by_dir {
        let Some(newest) = records.iter().max_by_key(|r| r.ts_ns) else { continue };
        let age = format_age(Duration::from_nanos(ctx.now_ns.saturating_sub(newest.ts_ns)));
        let (n, message) = (records.len(), &newest.message);
        findings.push(match dir {
            Some(dir) if ours(dir) => Finding::problem(
                format!(
                    "the relay could not write its diagnostics {n} time(s) in the last 24h \
                     (newest {age} ago: {message}): events may have been lost"
                ),
                see.clone(),
            ),
            Some(dir) => Finding::info(format!(
                "another events directory, {dir}: the relay could not write its diagnostics \
                 there {n} time(s) in the last 24h (newest {age} ago; {})",
                log.display()
            )),
            None => Finding::info(format!(
                "{n} relay failure(s) in the last 24h name no events directory (newest {age} \
                 ago: {message}; {})",
                log.display()
            )),
        });
    }
    findings
}

/// Whether two paths name one directory: the same path, or the same file once resolved.
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || fs::canonicalize(a).is_ok_and(|a| fs::canonicalize(b).is_ok_and(|b| a == b))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The newest event of each CLI: `cli → (ts_ns, native event)`, from the newest files.
fn last_events(dir: &Path) -> BTreeMap<String, (u64, Option<String>)> {
    // The buckets of the newest seqs only, however long the history.
    let newest = hookline::ingest::source::list_newest(dir)
        .map(|l| l.events.iter().map(|e| e.name.seq).max().unwrap_or(0))
        .unwrap_or(0);
    let after = newest.saturating_sub(NEWEST_EVENTS as u64);
    let mut names =
        hookline::ingest::source::list_after(dir, after).map_or(Vec::new(), |l| l.events);
    names.sort_unstable_by_key(|e| std::cmp::Reverse(e.name));
    let mut last: BTreeMap<String, (u64, Option<String>)> = BTreeMap::new();
    for name in names.into_iter().take(NEWEST_EVENTS) {
        // Never a blocking open: a FIFO named like an event is skipped.
        let Ok(Some(bytes)) = file::read(&name.path(dir)) else {
            continue;
        };
        let Ok(envelope) = RawEnvelope::parse(&bytes) else {
            continue;
        };
        let entry = last.entry(envelope.cli.clone()).or_insert((0, None));
        if envelope.ts_ns > entry.0 {
            *entry = (envelope.ts_ns, envelope.event.clone());
        }
    }
    last
}
