//! `hookline install CLI [--scope S | --settings PATH] [--dry-run] [--relay PATH]`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Error;
use crate::install::dialect::Shape as _;
use crate::install::plugin::{self, PluginOp, PluginReport};
use crate::install::{self, Installable, Operation, Report, Scaffolding, file::Outcome, record};
use hookline::profile::{OverlayDirs, Profiles};

use crate::cli::InstallArgs;
use crate::cmd::Outcome as CmdOutcome;

/// The process environment as a lookup.
pub fn env(key: &str) -> Option<OsString> {
    std::env::var_os(key)
}

/// Everything `install` and `uninstall` resolve before touching a file.
pub struct Setup {
    /// The shipped profiles with overlays.
    pub profiles: Profiles,
    /// The current directory.
    pub cwd: PathBuf,
}

impl Setup {
    /// Loads the profiles.
    pub fn load() -> Result<Setup, Error> {
        let profiles = Profiles::load(&OverlayDirs::standard())
            .map_err(hookline::Error::from)
            .map_err(Error::from)?;
        for warning in &profiles.warnings {
            eprintln!("hookline: warning: {warning}");
        }
        let cwd = std::env::current_dir().map_err(|e| Error::Io {
            op: "read the current directory",
            path: PathBuf::from("."),
            source: e,
        })?;
        Ok(Setup { profiles, cwd })
    }

    /// The CLI, the scope name and the settings path chosen by the arguments.
    pub fn target(&self, args: &InstallArgs) -> Result<(Installable<'_>, String, PathBuf), Error> {
        let cli = Installable::find(&self.profiles, &args.cli)?;
        if let Some(path) = &args.settings {
            return Ok((cli, "custom".into(), self.cwd.join(path)));
        }
        let scope = args
            .scope
            .map(|s| s.name().to_owned())
            .unwrap_or_else(|| cli.spec.default_scope.clone());
        let path = cli.settings_path(&scope, &env, &self.cwd)?;
        Ok((cli, scope, path))
    }
}

/// Prints the settings path (and where a symlink leads).
pub fn print_target(report: &Report, scope: &str) {
    if report.target != report.path {
        println!("settings: {} ({scope}) -> {}", report.path.display(), report.target.display());
    } else {
        println!("settings: {} ({scope})", report.path.display());
    }
}

/// Prints what happened to the file.
pub fn print_outcome(report: &Report) {
    if report.one_line && report.changed() {
        println!(
            "note: the file is written on one line; hookline's entries are written on one line too"
        );
    }
    match &report.outcome {
        Outcome::Unchanged => println!("nothing to change"),
        Outcome::Planned { .. } => {
            print!("{}", report.diff());
            println!("dry run: nothing written");
        }
        Outcome::Written { after: None, backup, .. } => {
            println!("removed {} (it held only hookline's hooks)", report.target.display());
            if let Some(backup) = backup {
                println!("previous content: {}", backup.display());
            }
        }
        Outcome::Written { backup, .. } => {
            print!("wrote {}", report.target.display());
            match backup {
                Some(backup) => println!(" (previous content: {})", backup.display()),
                None => println!(),
            }
        }
    }
}

/// The record of an earlier install of `cli` into `path`, if any.
pub fn find_record(cli: &str, path: &Path) -> Option<record::Record> {
    record::find(&record::records_path(&env)?, cli, path)
}

/// Adds the record of an install (with what it created), or removes it (`None`); a failure
/// is only a warning.
pub fn update_record(cli: &str, scope: &str, path: &Path, scaffolding: Option<Scaffolding>) {
    let Some(records) = record::records_path(&env) else {
        return;
    };
    let present = scaffolding.is_some();
    let entry = record::Record {
        cli: cli.to_owned(),
        scope: scope.to_owned(),
        path: path.to_owned(),
        scaffolding: scaffolding.unwrap_or_default(),
    };
    if let Err(e) = record::set(&records, &entry, present) {
        eprintln!("hookline: warning: {}", crate::error_chain(&e));
    }
}

/// Runs `hookline install`.
pub fn run(args: &InstallArgs) -> CmdOutcome {
    let setup = Setup::load()?;
    let (cli, scope, path) = setup.target(args)?;
    let path_var = env("PATH");
    let relay = match &args.relay {
        Some(relay) => install::check_relay(relay, &setup.cwd),
        None => install::find_relay(path_var.as_deref())
            .and_then(|p| install::check_relay(&p, &setup.cwd)),
    }?;
    if let Some(dir) = install::build_dir(Path::new(&relay)) {
        eprintln!(
            "hookline: warning: registering {relay}, inside the cargo build directory {}: `cargo clean` or moving the clone will break every hook\n  to avoid it: {}; then run `hookline install {}` with the hookline on PATH",
            dir.display(),
            install::PUT_ON_PATH,
            cli.profile.name
        );
    }
    let detected = cli.detect(path_var.as_deref());
    if let Some(source) = cli.dialect.plugin_source() {
        println!("{}", cli.version_line(&detected, install::Purpose::Install));
        let op = PluginOp::Install { relay: &relay, cli: &cli.profile.name };
        let done = plugin::apply(&path, source, op, args.dry_run)?;
        return finish_plugin(&cli, &scope, &path, &done, args.dry_run);
    }
    let wanted = cli.wanted(&relay, &detected);
    let why_not = |event: &str| cli.why_not(event, &detected);
    println!("{}", cli.version_line(&detected, install::Purpose::Install));
    let previous = find_record(&cli.profile.name, &path);
    let scaffolding = previous.as_ref().map(|r| &r.scaffolding);
    let op = Operation::Install { wanted: &wanted, why_not: &why_not, scaffolding };
    let report = install::apply(&path, cli.dialect, op, args.dry_run)?;
    print_target(&report, &scope);
    for line in &report.lines {
        println!("{line}");
    }
    print_outcome(&report);
    if !args.dry_run {
        update_record(&cli.profile.name, &scope, &path, Some(report.scaffolding.clone()));
        if report.changed() {
            for note in &cli.spec.notes {
                println!("note: {note}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what an install or uninstall of a plugin did and records it (`present`: installed).
pub fn finish_plugin(
    cli: &Installable<'_>,
    scope: &str,
    path: &Path,
    done: &PluginReport,
    dry_run: bool,
) -> CmdOutcome {
    let installing = !matches!(done.change, Some(install::Change::Removed { .. }) | None);
    print_target(&done.report, scope);
    println!("{done}");
    print_outcome(&done.report);
    if !dry_run {
        let scaffolding = installing.then(|| done.report.scaffolding.clone());
        update_record(&cli.profile.name, scope, path, scaffolding);
        if installing && done.report.changed() {
            for note in &cli.spec.notes {
                println!("note: {note}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
