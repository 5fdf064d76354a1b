//! What a run did, written to the diagnostics file: the relay's only way to report.

use std::path::PathBuf;

use hookline_relay::diag::{self, Level};
use hookline_relay::location;

/// What one run did, for the diagnostics file.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// The events directory, when it could be resolved.
    pub(crate) events_dir: Option<PathBuf>,
    /// Warnings and errors, in the order they happened.
    pub(crate) notes: Vec<(Level, String)>,
    /// The native event name recorded.
    pub(crate) event: Option<String>,
}

/// Writes a report's notes to the diagnostics file beside its events directory.
pub(crate) fn record(report: &Report, cli: &str, ts_ns: u64) {
    let Some(dir) = &report.events_dir else {
        return;
    };
    if report.notes.is_empty() {
        return;
    }
    let path = location::diagnostics_path(dir);
    for (level, message) in &report.notes {
        diag::append(
            &path,
            &diag::Record {
                ts_ns,
                pid: std::process::id(),
                cli: cli.to_owned(),
                event: report.event.clone(),
                level: *level,
                message: message.clone(),
            },
        );
    }
}

/// An error and its causes on one line: `cannot open dir /x: Permission denied`.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    causes.fold(error.to_string(), |line, cause| format!("{line}: {cause}"))
}
