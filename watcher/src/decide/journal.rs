//! The journal: every withheld verdict, and every delivery (`hookline deliver`: typed and
//! confirmed, refused, self-healed, unconfirmed), one JSON object per line, so that a withheld
//! nudge, a pause or a delivery nobody confirmed is visible instead of a new silent
//! degradation.
//!
//! The file lives beside the events directory (`…/hookline/events` →
//! `…/hookline/events.decisions.ndjson`) unless the policy's `journal.path` says otherwise.
//! At `journal.max-bytes` it is renamed to `….1` (replacing the previous one) and started
//! again, so the two never hold much more than twice the cap. It is created with mode 0600 and
//! never written through a symlink. Lines are appended whole with `O_APPEND`, so `hookline
//! serve` and one-shot `hookline decide` runs can share it.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::classifier::ConsultNote;
use super::verdict::{Action, Decision, Question, Signal, Verdict};
use crate::format::caplog;
use crate::state::StateKind;
use crate::units::rfc3339;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// When, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// When, RFC 3339 (UTC).
    pub at: String,
    /// The session as asked.
    pub session: String,
    /// The session's key in the tracker (`cli:session-id`), when it has events.
    pub key: Option<String>,
    /// The question.
    pub question: Question,
    /// `withhold` (allowed verdicts are not journaled), except in a delivery's record, where
    /// it is the `input` decision's verdict, and in a decision with a classifier consult.
    pub verdict: Verdict,
    /// What to do instead.
    pub action: Action,
    /// The source that decided.
    pub signal: Signal,
    /// The rule.
    pub rule: String,
    /// Why.
    pub reason: String,
    /// The session's state.
    pub state: Option<StateKind>,
    /// When that state began (identifies it, with the key).
    pub since_ns: Option<u64>,
    /// The session's epoch.
    pub epoch: Option<u64>,
    /// The tracker's generation.
    pub generation: Option<u64>,
    /// Whether the verdict counts toward `escalate.withheld-in-a-row`: one of a live generation
    /// (`hookline serve`, the library's [`Decider`](super::Decider)), or of a one-shot the
    /// caller asked to count (`hookline decide --count`). A one-shot `nudge` is withheld by
    /// design, so counting it would escalate a healthy session polled from a shell. Lines of
    /// earlier versions, which lack it, do not count.
    #[serde(default)]
    pub counted: bool,
    /// What a delivery did, in a delivery's record (absent in a decision's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<DeliveryNote>,
    /// The classifier consult the decision made (or skipped at a cap). A decision with one is
    /// journaled even when allowed: the caps are counted here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consult: Option<ConsultNote>,
}

/// A step of a delivery worth a journal line.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliveryStep {
    /// Typed, and a `turn_start` confirmed it.
    Confirmed,
    /// Nothing typed: the decision withheld input, or the pane refused it.
    Refused,
    /// The self-heal pressed Enter a second time.
    SelfHeal,
    /// Typed, and nothing confirmed it: loud, never retried.
    Unconfirmed,
}

impl DeliveryStep {
    /// The word used in the journal and in `hookline explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStep::Confirmed => "confirmed",
            DeliveryStep::Refused => "refused",
            DeliveryStep::SelfHeal => "self_heal",
            DeliveryStep::Unconfirmed => "unconfirmed",
        }
    }
}

/// What a delivery did, in its journal record.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeliveryNote {
    /// The step.
    pub step: DeliveryStep,
    /// The tmux target typed into.
    pub tmux: String,
    /// The text's length in bytes (the text itself is not journaled).
    pub bytes: usize,
    /// Whether anything may have been typed.
    pub delivered: bool,
    /// Whether the self-heal pressed Enter a second time.
    pub enter_resent: bool,
    /// From the request to the outcome, in milliseconds.
    pub elapsed_ms: u64,
    /// The `seq` of the `turn_start` that confirmed it.
    pub confirmed_by: Option<u64>,
    /// The pane's id on its tmux server, resolved once at the start (`%12`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    /// The lease it typed under, or took and gave back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<super::LeaseId>,
}

impl Record {
    /// The journal line for a decision; `counted` as [`Record::counted`].
    pub fn of(decision: &Decision, key: Option<&str>, counted: bool) -> Record {
        let view = decision.evidence.view.as_ref();
        Record {
            ts_ns: decision.at_ns,
            at: rfc3339(decision.at_ns),
            session: decision.session.clone(),
            key: key.map(str::to_owned),
            question: decision.question,
            verdict: decision.verdict,
            action: decision.action,
            signal: decision.signal,
            rule: decision.rule.as_str().to_owned(),
            reason: decision.reason.clone(),
            state: view.map(|v| v.state),
            since_ns: view.map(|v| v.since_ns),
            epoch: view.map(|v| v.epoch),
            generation: view.map(|v| v.generation),
            delivery: None,
            consult: decision.evidence.classifier.clone(),
            counted,
        }
    }

    /// Whether this record is about `session` (as asked, or its tracker key `cli:id`).
    pub fn concerns(&self, session: &str, key: Option<&str>) -> bool {
        self.session == session || (key.is_some() && self.key.as_deref() == key)
    }
}

/// An append-only, size-capped NDJSON file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    path: PathBuf,
    max_bytes: u64,
}

impl Journal {
    /// A journal at `path`, rotated at `max_bytes`.
    pub fn new(path: impl Into<PathBuf>, max_bytes: u64) -> Journal {
        Journal { path: path.into(), max_bytes }
    }

    /// The default journal path for an events directory: beside it, named after it.
    pub fn default_path(events_dir: &Path) -> PathBuf {
        let mut name = events_dir.file_name().unwrap_or(OsStr::new("events")).to_os_string();
        name.push(".decisions.ndjson");
        events_dir.with_file_name(name)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rotated copy: the same name with `.1` appended.
    pub fn rotated_path(&self) -> PathBuf {
        caplog::rotated_path(&self.path)
    }

    /// Appends one record, rotating first when it would pass the cap.
    pub fn append(&self, record: &Record) -> io::Result<()> {
        let line = serde_json::to_vec(record).map_err(io::Error::other)?;
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        caplog::append_line(&self.path, &line, self.max_bytes)
    }

    /// The records of the rotated copy and the file, oldest first; lines that do not parse
    /// are skipped.
    pub fn read(&self) -> Vec<Record> {
        caplog::read(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> Record {
        Record {
            ts_ns: n as u64,
            at: rfc3339(n as u64),
            session: "s1".into(),
            key: Some("claude:s1".into()),
            question: Question::Nudge,
            verdict: Verdict::Withhold,
            action: Action::Hold,
            signal: Signal::StructuredEvent,
            rule: "nudge-never-while-waiting-on-human".into(),
            reason: format!("withheld number {n}"),
            state: Some(StateKind::WaitingOnHuman),
            since_ns: Some(1),
            epoch: Some(1),
            generation: Some(7),
            delivery: None,
            consult: None,
            counted: true,
        }
    }

    #[test]
    fn the_journal_never_grows_past_twice_its_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::new(tmp.path().join("j.ndjson"), 8192);
        for i in 0..500 {
            journal.append(&record(i)).unwrap();
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(size(journal.path()) <= 8192);
        assert!(size(&journal.rotated_path()) <= 8192);
        let records = journal.read();
        assert_eq!(records.last().unwrap().reason, "withheld number 499");
        assert!(records.len() > 20, "{}", records.len());
        assert!(records.windows(2).all(|w| w[0].ts_ns < w[1].ts_ns));
    }

    #[test]
    fn a_symlinked_journal_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "").unwrap();
        let path = tmp.path().join("j.ndjson");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(Journal::new(&path, 8192).append(&record(1)).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }

    #[test]
    fn the_default_path_sits_beside_the_events_dir() {
        assert_eq!(
            Journal::default_path(Path::new("/s/hookline/events")),
            Path::new("/s/hookline/events.decisions.ndjson")
        );
    }
}
