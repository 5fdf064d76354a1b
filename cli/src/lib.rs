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

/// How to fix an error, from the first error of its chain that says (this crate's
/// [`Error::fix`], the library's [`hookline::Error::fix`]); `None` when none does.
pub fn fix_of(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut chain = std::iter::successors(Some(error), |e| e.source());
    chain.find_map(|e| {
        if let Some(e) = e.downcast_ref::<Error>() {
            e.fix()
        } else if let Some(e) = e.downcast_ref::<hookline::Error>() {
            e.fix()
        } else {
            None
        }
    })
}

/// What `main` prints for an error a command returned, the one place an error reaches the
/// user: `hookline: ` and the error with its causes on one line, then `  fix: ` and how to fix
/// it, when the error says.
pub fn error_report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut report = format!("hookline: {}", error_chain(error));
    if let Some(fix) = fix_of(error) {
        report.push_str(&format!("\n  fix: {fix}"));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_reported_with_its_causes_and_the_fix_its_chain_names() {
        let library = hookline::Error::AmbiguousSession {
            query: "ab".into(),
            candidates: vec!["abc".into(), "abd".into()],
        };
        let boxed: Box<dyn std::error::Error> = Box::new(Error::from(library));
        let report = error_report(&*boxed);
        let (first, fix) = report.split_once('\n').unwrap();
        assert!(first.starts_with("hookline: ") && first.contains("abc"), "{report}");
        assert_eq!(fix, "  fix: give more of the session id or tag (or all of it)");
        let io = Error::io("read", "/x", std::io::Error::other("no"));
        assert_eq!(error_report(&io), "hookline: cannot read /x: no");
        let text: Box<dyn std::error::Error> = "just words".into();
        assert_eq!(error_report(&*text), "hookline: just words");
    }
}
