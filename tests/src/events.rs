//! Reads an events directory back, in `seq` order, for assertions.

use std::fmt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use hookline_relay::envelope::Envelope;

/// How often waits poll the directory.
pub const POLL: Duration = Duration::from_millis(50);

/// One event file.
#[derive(Debug, Clone)]
pub struct Event {
    /// The file name.
    pub file: String,
    /// Its envelope.
    pub envelope: Envelope,
}

impl Event {
    /// The native event name (`?` when the relay could not tell).
    pub fn name(&self) -> &str {
        self.envelope.event.as_deref().unwrap_or("?")
    }

    /// A string field of the payload.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.envelope.payload.as_ref()?.get(key)?.as_str()
    }

    /// The event's qualifier, when it has one: the notification type, the session start source,
    /// the end reason or the compaction trigger.
    pub fn qualifier(&self) -> Option<&str> {
        ["notification_type", "source", "reason", "trigger"].iter().find_map(|k| self.field(k))
    }

    /// `Name` or `Name(qualifier)`, as tables and reports show it.
    pub fn label(&self) -> String {
        match self.qualifier() {
            Some(q) => format!("{}({q})", self.name()),
            None => self.name().to_string(),
        }
    }

    /// Seconds from `earlier` to this event, by the relays' clocks.
    pub fn secs_since(&self, earlier: &Event) -> f64 {
        (self.envelope.ts_ns as f64 - earlier.envelope.ts_ns as f64) / 1e9
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {}", self.envelope.seq, self.label())?;
        if let Some(error) = &self.envelope.error {
            write!(f, " ERROR {error}")?;
        }
        Ok(())
    }
}

/// An events directory.
#[derive(Debug, Clone)]
pub struct EventsDir {
    path: PathBuf,
}

impl EventsDir {
    /// The directory at `path` (it may not exist yet: the relay creates it).
    pub fn new(path: &Path) -> EventsDir {
        EventsDir { path: path.to_owned() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every event file, in name (= `seq`) order. Temp and hidden files are skipped; a file
    /// with an event name that does not parse is an error (the relay writes atomically, so
    /// that is a bug).
    pub fn read(&self) -> Result<Vec<Event>, String> {
        // The library's listing: the top of the directory and its buckets.
        let listing = match hookline_relay::layout::list(&self.path, 0) {
            Ok(listing) => listing,
            Err(_) if !self.path.exists() => return Ok(Vec::new()),
            Err(e) => return Err(e.to_string()),
        };
        if let Some(name) = listing.foreign.first() {
            return Err(format!("unexpected file {name} in the events dir"));
        }
        listing
            .events
            .into_iter()
            .map(|listed| {
                let file = listed.name.to_string();
                let bytes =
                    std::fs::read(listed.path(&self.path)).map_err(|e| format!("{file}: {e}"))?;
                let envelope = Envelope::from_slice(&bytes).map_err(|e| format!("{file}: {e}"))?;
                Ok(Event { file, envelope })
            })
            .collect()
    }

    /// Polls until `done` holds for the events read, and returns them; on timeout (or a read
    /// error), returns the last events read as the error.
    pub fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&[Event]) -> bool,
    ) -> Result<Vec<Event>, Vec<Event>> {
        let deadline = Instant::now() + timeout;
        let mut last = Vec::new();
        loop {
            match self.read() {
                Ok(events) if done(&events) => return Ok(events),
                Ok(events) => last = events,
                Err(e) => eprintln!("e2e: reading events: {e}"),
            }
            if Instant::now() >= deadline {
                return Err(last);
            }
            thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, seq: u64, body: &str) {
        let name = hookline_relay::filename::EventFileName::ordered(seq, 7).to_string();
        std::fs::write(dir.join(name), body).unwrap();
    }

    fn envelope(seq: u64, payload: &str) -> String {
        format!(
            r#"{{"v":1,"seq":{seq},"ts_ns":{ts},"cli":"claude","event":"Notification","tag":null,
            "pid":7,"ppid":1,"relay_version":"0.1.0","payload":{payload}}}"#,
            ts = seq * 1_000_000_000
        )
    }

    #[test]
    fn events_are_read_in_seq_order_skipping_temp_and_hidden_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = EventsDir::new(tmp.path());
        assert!(dir.read().unwrap().is_empty());
        write(tmp.path(), 10, &envelope(10, r#"{"notification_type":"idle_prompt"}"#));
        write(tmp.path(), 9, &envelope(9, "{}"));
        std::fs::write(tmp.path().join(".seq"), "10").unwrap();
        std::fs::write(tmp.path().join(".tmp-1-2"), "partial").unwrap();
        let events = dir.read().unwrap();
        assert_eq!(events.iter().map(|e| e.envelope.seq).collect::<Vec<_>>(), [9, 10]);
        assert_eq!(events[1].label(), "Notification(idle_prompt)");
        assert_eq!(events[1].secs_since(&events[0]), 1.0);
        assert_eq!(events[1].to_string(), "#10 Notification(idle_prompt)");
    }

    #[test]
    fn a_broken_event_file_or_a_foreign_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), 1, "{");
        assert!(EventsDir::new(tmp.path()).read().unwrap_err().contains("not a valid envelope"));
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "").unwrap();
        assert!(EventsDir::new(tmp.path()).read().is_err());
    }

    #[test]
    fn a_wait_returns_the_last_events_on_timeout() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), 1, &envelope(1, "{}"));
        let dir = EventsDir::new(tmp.path());
        let seen = dir.wait_until(Duration::from_millis(120), |e| e.len() == 2).unwrap_err();
        assert_eq!(seen.len(), 1);
        assert_eq!(dir.wait_until(Duration::ZERO, |e| e.len() == 1).unwrap().len(), 1);
    }
}
