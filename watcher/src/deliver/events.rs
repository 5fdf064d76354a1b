//! Confirmations from structured events: [`turn_started`] recognises a confirming event, for
//! any source that folds canonical events (the daemon); [`EventsConfirmations`] reads an events
//! directory with the library's reader, for tests and callers that follow the directory
//! themselves.

use hookline_relay::envelope::RawEnvelope;
use hookline_relay::rawjson;
use serde_json::Value;

use super::{Confirmations, SessionRef, TurnStarted};
use crate::canonical::{Event, Kind};
use crate::errors::Error;
use crate::ingest::reader::{Reader, ReaderConfig, Start};
use crate::profile::Profiles;

/// The event as a [`TurnStarted`] when it can confirm a delivery to `session` typed at
/// `since_ns`: a `turn_start` of that session (not of a subagent), at or after `since_ns`. Its
/// prompt is read from the event file's payload by the profile's `deliver.prompt-field`.
pub fn turn_started(
    event: &Event,
    profiles: &Profiles,
    session: &SessionRef,
    since_ns: u64,
) -> Option<TurnStarted> {
    let ours = matches!(event.kind, Kind::TurnStart)
        && !event.is_subagent()
        && event.ts_ns >= since_ns
        && session.matches(event.session_id.as_deref(), event.tag.as_deref());
    ours.then(|| TurnStarted {
        seq: event.source.seq,
        ts_ns: event.ts_ns,
        native: event.native.clone(),
        prompt: prompt_of(event, profiles),
        file: event.source.file.clone(),
    })
}

/// The prompt an event's payload reports, by its profile's `deliver.prompt-field`; `None` when
/// the profile names no field or the event file cannot be read back. The payload is decoded as
/// leniently as the reader decodes it ([`rawjson`]): whatever the relay stored (a lone
/// surrogate, a number beyond a float, deep nesting elsewhere in the payload), the prompt is
/// read as the relay stored it, a lone surrogate as U+FFFD.
pub fn prompt_of(event: &Event, profiles: &Profiles) -> Option<String> {
    let field = profiles.get(&event.cli)?.deliver.prompt_field.as_ref()?;
    let path = crate::ingest::source::event_path(&event.source);
    let (bytes, _) = crate::ingest::source::read_file(&path).ok()?;
    let envelope = RawEnvelope::parse(&bytes).ok()?;
    let raw = envelope.payload.as_deref()?.get();
    let first = field.top_key();
    let payload = Value::Object(rawjson::decode_members(raw, |key| key == first));
    field.get(&payload)?.as_str().map(str::to_owned)
}

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
            found.extend(turn_started(&event, &self.profiles, session, since_ns));
        }
        Ok(found)
    }
}
