//! The command-line grammar. One variant per subcommand; each is run by `cmd::<name>`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// Register hookline's relay in a CLI's hooks settings (merging, never replacing).
    Install(InstallArgs),
    /// Remove hookline's relay from a CLI's hooks settings, leaving everything else.
    Uninstall(InstallArgs),
    /// Check that hooks are registered, the relay runs and events arrive.
    Doctor(DoctorArgs),
}

/// Where a CLI's hooks settings live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The user's settings (e.g. `~/.claude/settings.json`).
    User,
    /// The project's shared settings (e.g. `.claude/settings.json`).
    Project,
    /// The project's local, untracked settings (e.g. `.claude/settings.local.json`).
    Local,
}

impl Scope {
    /// The scope's name in profiles.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// Arguments of `install` and `uninstall`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The CLI: claude, codex, gemini, copilot or cursor.
    pub cli: String,
    /// Which settings file (default: the profile's, usually user).
    #[arg(long, value_enum, conflicts_with = "settings")]
    pub scope: Option<Scope>,
    /// Edit this settings file instead of a scope's.
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Print the change as a unified diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The relay to register (default: hookline-relay beside hookline, else on PATH).
    #[arg(long, value_name = "PATH")]
    pub relay: Option<PathBuf>,
}

/// Arguments of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check only this CLI (and fail when it is registered nowhere).
    pub cli: Option<String>,
    /// The relay `install` would register (default: found as `install` finds it).
    #[arg(long, value_name = "PATH")]
    pub relay: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_grammar_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
