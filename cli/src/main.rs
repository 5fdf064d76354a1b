//! The `hookline` command line: parses arguments, runs one subcommand, maps the result to an
//! exit code.

use std::process::ExitCode;

use clap::Parser;
use hookline_cli::{cli, cmd, error_report};

fn main() -> ExitCode {
    // Die quietly when the reader of stdout goes away (`hookline watch | head`), like other
    // Unix tools; a watch cursor is saved only after its lines were written, so nothing is lost.
    // SAFETY: restoring the default disposition of SIGPIPE has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = cli::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // The one place an error reaches the user, with its fix when it has one.
            eprintln!("{}", error_report(&*e));
            ExitCode::from(2)
        }
    }
}
