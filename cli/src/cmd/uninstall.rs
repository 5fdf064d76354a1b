//! `hookline uninstall CLI [--scope S | --settings PATH] [--dry-run]`.

use std::process::ExitCode;

use crate::install::dialect::Shape as _;
use crate::install::plugin::{self, PluginOp};
use crate::install::{self, Operation};

use crate::cli::InstallArgs;
use crate::cmd::Outcome;
use crate::cmd::install::{
    Setup, find_record, finish_plugin, print_outcome, print_target, update_record,
};

/// Runs `hookline uninstall`.
pub fn run(args: &InstallArgs) -> Outcome {
    let setup = Setup::load()?;
    let (cli, scope, path) = setup.target(args)?;
    if let Some(source) = cli.dialect.plugin_source() {
        let done = plugin::apply(&path, source, PluginOp::Uninstall, args.dry_run)?;
        return finish_plugin(&cli, &scope, &path, &done, args.dry_run);
    }
    let previous = find_record(&cli.profile.name, &path);
    let op = Operation::Uninstall { scaffolding: previous.as_ref().map(|r| &r.scaffolding) };
    let report = install::apply(&path, cli.dialect, op, args.dry_run)?;
    print_target(&report, &scope);
    if report.lines.is_empty() {
        println!("no hookline hooks found");
    }
    for line in &report.lines {
        println!("{line}");
    }
    print_outcome(&report);
    if !args.dry_run {
        update_record(&cli.profile.name, &scope, &path, None);
    }
    Ok(ExitCode::SUCCESS)
}
