//! The `hookline` command line: parses arguments, runs one subcommand, maps the result to an
//! exit code.

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

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
            eprintln!("hookline: {}", error_chain(&*e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line: `cannot read /x: Permission denied`.
fn error_chain(error: &dyn std::error::Error) -> String {
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    causes.fold(error.to_string(), |line, cause| format!("{line}: {cause}"))
}
