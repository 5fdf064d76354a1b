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

/// Writes a report's notes to the diagnostics file beside its events directory, or, when that
/// cannot be written (or there is no events directory), to the fallback log, saying why.
pub(crate) fn record(report: &Report, cli: &str, ts_ns: u64) {
    if report.notes.is_empty() {
        return;
    }
    let path = report.events_dir.as_deref().map(location::diagnostics_path);
    for (level, message) in &report.notes {
        let record = diag::Record {
            ts_ns,
            pid: std::process::id(),
            cli: cli.to_owned(),
            event: report.event.clone(),
            level: *level,
            message: message.clone(),
            events_dir: None,
        };
        let why = match &path {
            None => "no events directory".to_owned(),
            Some(path) => match diag::try_append(path, &record) {
                Ok(()) => continue,
                Err(e) => format!("cannot write {}: {e}", path.display()),
            },
        };
        let message = format!("{message} ({why})");
        // Lossy: a path that is not UTF-8 still names its directory to a reader.
        let events_dir = report.events_dir.as_ref().map(|d| d.to_string_lossy().into_owned());
        let record = diag::Record { message, events_dir, ..record };
        let _ = diag::append_fallback(|key| std::env::var_os(key), &record);
    }
}

/// An error and its causes on one line: `cannot open dir /x: Permission denied`.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    causes.fold(error.to_string(), |line, cause| format!("{line}: {cause}"))
}
