//! [`Confirmations`] read from an events directory with the library's reader: for tests and
//! for callers that follow the directory themselves. The daemon answers from the events it
//! folds instead.

use hookline_relay::envelope::Envelope;

use super::{Confirmations, SessionRef, TurnStarted};
use crate::canonical::Kind;
use crate::error::Error;
use crate::profile::Profiles;
use crate::reader::{Reader, ReaderConfig, Start};

/// Confirmations from the events that arrive in a directory after [`EventsConfirmations::open`]:
/// open it before typing.
#[derive(Debug)]
pub struct EventsConfirmations {
    reader: Reader,
    profiles: Profiles,
}

impl EventsConfirmations {
    /// Starts reading the events that arrive from now on (nothing is saved).
    pub fn open(
        events_dir: impl Into<std::path::PathBuf>,
        profiles: Profiles,
    ) -> Result<EventsConfirmations, Error> {
        let reader = Reader::open(ReaderConfig::new(events_dir, Start::Now, profiles.clone()))?;
        Ok(EventsConfirmations { reader, profiles })
    }

    /// The prompt the event's payload reports, by its profile's `deliver.prompt-field`.
    fn prompt(&self, event: &crate::canonical::Event) -> Option<String> {
        let field = self.profiles.get(&event.cli)?.deliver.prompt_field.as_ref()?;
        let path = event.source.dir.join(&event.source.file);
        let bytes = std::fs::read(path).ok()?;
        let payload = Envelope::from_slice(&bytes).ok()?.payload?;
        field.get(&payload)?.as_str().map(str::to_owned)
    }
}

impl Confirmations for EventsConfirmations {
    fn turn_starts(
        &mut self,
        session: &SessionRef,
        since_ns: u64,
    ) -> Result<Vec<TurnStarted>, Error> {
        self.reader.poll()?;
        let mut found = Vec::new();
        while let Some(event) = self.reader.next_event() {
            let ours = matches!(event.kind, Kind::TurnStart)
                && !event.is_subagent()
                && event.ts_ns >= since_ns
                && session.matches(event.session_id.as_deref(), event.tag.as_deref());
            if ours {
                found.push(TurnStarted {
                    seq: event.source.seq,
                    ts_ns: event.ts_ns,
                    native: event.native.clone(),
                    prompt: self.prompt(&event),
                    file: event.source.file.clone(),
                });
            }
        }
        Ok(found)
    }
}
