//! The command-line grammar. One variant per subcommand; each is run by `cmd::<name>`.

use clap::{Parser, Subcommand};

/// Structured signals about agent CLI sessions.
#[derive(Debug, Parser)]
#[command(name = "hookline", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// hookline's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a sample event written by the relay (temporary until `demo` lands).
    Sample,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_grammar_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
