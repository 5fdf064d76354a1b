//! hookline-cli: the `hookline` command line, built on the [`hookline`] library.
//!
//! The workspace is three crates by layer:
//!
//! * `hookline-relay`: the relay, the hook executable that writes one event file per hook
//!   call, and the on-disk event format (its library);
//! * `hookline`: the library an orchestrator embeds: profiles, canonical events, session
//!   state, decisions and leases, the engine, verified delivery into tmux, the daemon's
//!   protocol, server and client (and the NATS fleet behind its `nats` feature);
//! * `hookline-cli` (this package): the `hookline` binary. Its subcommands ([`cmd`], one
//!   module each) parse arguments ([`cli`]) and print; what only they need lives here too:
//!   installing the relay into each CLI's settings file and `doctor` ([`install`]),
//!   notifications ([`notify`]), tmux pane marks ([`marks`]), terminal output ([`term`]) and
//!   their errors ([`errors`]).
//!
//! This library exists for the binary and its tests; it is no stable API. Embed `hookline`.
//!
//! Features (both on by default): `nats` (`hookline forward`, and `--nats` of `watch`, `serve`
//! and `daemon`, through the library's `nats` feature) and `tui` (the `hookline top`
//! dashboard, ratatui and crossterm).

pub mod cli;
pub mod cmd;
pub mod errors;
pub mod install;
pub mod marks;
pub mod notify;
pub mod term;

pub use errors::Error;

/// An error and its causes on one line: `cannot read /x: Permission denied`.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    causes.fold(error.to_string(), |line, cause| format!("{line}: {cause}"))
}
