//! A transcript follower: a [`Tail`] of one session's transcript, read in its CLI's format,
//! bound to the session id the file names, folded into a [`Reading`].

use std::path::PathBuf;

use crate::Error;
use crate::vocab::TranscriptFormat;

use super::entry::{self, Entry};
use super::reading::Reading;
use super::tail::{Change, Tail, TailLimits};

/// What one [`Follower::poll`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    /// What happened to the file.
    pub change: Change,
    /// The file grew: the transcript activity key, distinct from pane activity.
    pub grew: bool,
    /// Entries folded in.
    pub entries: usize,
    /// Lines that were not JSON objects, not UTF-8, or too long.
    pub unreadable: usize,
    /// Entries naming another session than the one the follower is bound to.
    pub foreign: usize,
}

/// Follows one session's transcript.
#[derive(Debug)]
pub struct Follower {
    tail: Tail,
    format: TranscriptFormat,
    session_id: Option<String>,
    reading: Reading,
    grew_ns: Option<u64>,
    started_ns: u64,
}

impl Follower {
    /// A follower of the transcript at `path`, written in `format`, for the session
    /// `session_id` when the caller knows it (else the first session id the file names).
    /// `now_ns`: when it starts; what the file holds then is history.
    pub fn new(
        path: impl Into<PathBuf>,
        format: TranscriptFormat,
        session_id: Option<String>,
        limits: TailLimits,
        now_ns: u64,
    ) -> Follower {
        Follower {
            tail: Tail::new(path, limits),
            format,
            session_id,
            reading: Reading::default(),
            grew_ns: None,
            started_ns: now_ns,
        }
    }

    /// The file followed.
    pub fn path(&self) -> &std::path::Path {
        self.tail.path()
    }

    /// Whether it has found the file (and read it) at least once.
    pub fn bound(&self) -> bool {
        self.tail.identity().is_some()
    }

    /// The format read.
    pub fn format(&self) -> TranscriptFormat {
        self.format
    }

    /// The session id it is bound to, once known.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// What the transcript says about the current turn.
    pub fn reading(&self) -> &Reading {
        &self.reading
    }

    /// When the file last grew, as seen by this follower (arrival time): the transcript
    /// activity key.
    pub fn grew_ns(&self) -> Option<u64> {
        self.grew_ns
    }

    /// When the follower started: lines it read then were history.
    pub fn started_ns(&self) -> u64 {
        self.started_ns
    }

    /// Reads what was appended since the last poll and folds it in. Lines that were already
    /// in the file (on opening, or after a truncation or replacement) are folded at their own
    /// timestamp, so they count only where they are newer than what the consumer knows; a
    /// history line without a timestamp is skipped. A line appended since is stamped with its
    /// own timestamp, else `now_ns`.
    pub fn poll(&mut self, now_ns: u64) -> Result<Update, Error> {
        let poll = self.tail.poll()?;
        if matches!(poll.change, Change::Replaced | Change::Truncated) {
            // The file's tail is read again as history: fold it from a clean slate.
            self.reading = Reading::default();
        }
        let mut update = Update {
            change: poll.change,
            grew: poll.grew,
            entries: 0,
            unreadable: poll.dropped,
            foreign: 0,
        };
        if poll.grew {
            self.grew_ns = Some(now_ns);
        }
        for line in &poll.lines {
            let Ok(entry) = entry::read(self.format, &line.bytes) else {
                update.unreadable += 1;
                continue;
            };
            if !self.binds(&entry) {
                update.foreign += 1;
                continue;
            }
            let ts = match (entry.ts_ns, line.history) {
                (Some(ts), _) => ts,
                (None, false) => now_ns,
                (None, true) => continue,
            };
            self.reading.apply(&entry, ts);
            update.entries += 1;
        }
        Ok(update)
    }

    /// Whether an entry belongs to the session followed (binding to the first id named).
    fn binds(&mut self, entry: &Entry) -> bool {
        match (&self.session_id, &entry.session_id) {
            (Some(bound), Some(named)) => bound == named,
            (None, Some(named)) => {
                self.session_id = Some(named.clone());
                true
            }
            (_, None) => true,
        }
    }
}

/// Reads the tail of a transcript once (`status`, `explain`, one-shot `decide`): every line
/// is history, counted at its own timestamp.
pub fn read_tail(
    path: impl Into<PathBuf>,
    format: TranscriptFormat,
    session_id: Option<String>,
    limits: TailLimits,
    now_ns: u64,
) -> Result<Follower, Error> {
    let mut follower = Follower::new(path, format, session_id, limits, now_ns);
    follower.poll(now_ns)?;
    Ok(follower)
}
