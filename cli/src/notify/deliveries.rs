//! Delivery outcomes, as `hookline deliver` and the daemon journal them in the decision
//! journal (`delivery.step`): what `delivery_unconfirmed` rules fire on. The notifier reads
//! the journal's new lines as they are appended; the daemon itself runs no rule.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use hookline::decide::{DeliveryStep, Record as JournalRecord};

/// The most bytes read from the journal at once.
const MAX_READ: u64 = 4 << 20;

/// New records of a decision journal, followed by offset (from its start again when it was
/// rotated or truncated).
#[derive(Debug)]
pub struct Deliveries {
    path: PathBuf,
    offset: u64,
    /// Records written at or before this instant were handled by a notifier before.
    after_ns: u64,
}

impl Deliveries {
    /// Follows the journal at `path`, handing out the unconfirmed deliveries journaled after
    /// `after_ns` (nanoseconds since the Unix epoch).
    pub fn new(path: impl Into<PathBuf>, after_ns: u64) -> Deliveries {
        Deliveries { path: path.into(), offset: 0, after_ns }
    }

    /// The journal.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The newest delivery handed out (or the instant given at first): where a restarted
    /// notifier goes on from.
    pub fn after_ns(&self) -> u64 {
        self.after_ns
    }

    /// The deliveries journaled `unconfirmed` since the last call, oldest first.
    pub fn unconfirmed(&mut self) -> Vec<JournalRecord> {
        let Ok(mut file) = File::open(&self.path) else { return Vec::new() };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < self.offset {
            // Rotated (or truncated): the new file from its start.
            self.offset = 0;
        }
        if len == self.offset || file.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut bytes = Vec::new();
        if file.take(MAX_READ).read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        // Only whole lines: one being written is read at the next call.
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.offset += whole as u64;
        let mut found = Vec::new();
        for line in bytes[..whole].split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(record) = serde_json::from_slice::<JournalRecord>(line) else { continue };
            let unconfirmed =
                record.delivery.as_ref().is_some_and(|d| d.step == DeliveryStep::Unconfirmed);
            if unconfirmed && record.ts_ns > self.after_ns {
                self.after_ns = record.ts_ns;
                found.push(record);
            }
        }
        found
    }
}
