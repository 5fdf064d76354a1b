//! One module per subcommand.

mod doctor;
mod install;
mod uninstall;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// The result of a subcommand: an exit code, or an error printed by `main`.
pub type Outcome = Result<ExitCode, Box<dyn std::error::Error>>;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Outcome {
    match cli.command {
        Command::Sample => Ok(ExitCode::SUCCESS),
        Command::Install(args) => install::run(&args),
        Command::Uninstall(args) => uninstall::run(&args),
        Command::Doctor(args) => doctor::run(&args),
    }
}
