//! Test support: documentation sections generated from the code, kept in sync by tests; and
//! for the story harnesses (`state/tests.rs`, `decide/tests.rs`, the command line's
//! notification tests), events built from real fixture payloads, as the relay would have
//! written them. Built for this crate's tests and, with the `testing` feature, for the crates
//! built on it; not an API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::canonical::{Event, SourceRef};
use crate::format::envelope::RawEnvelope;
use crate::format::filename::EventFileName;
use crate::ingest::mapping::map_envelope;
use crate::profile::Profiles;

/// Checks that the section `name` of the file at `path` (relative to the workspace root),
/// between `<!-- generated:NAME:start -->` and `<!-- generated:NAME:end -->`, is exactly
/// `content`. With `HOOKLINE_BLESS=1` in the environment it rewrites the section instead.
pub fn assert_generated_section(path: &str, name: &str, content: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = format!("<!-- generated:{name}:start -->\n");
    let end = format!("<!-- generated:{name}:end -->");
    let (Some(a), Some(b)) = (text.find(&start), text.find(&end)) else {
        panic!("{path} has no {start:?} … {end:?} markers");
    };
    let current = &text[a + start.len()..b];
    if current == content {
        return;
    }
    if std::env::var_os("HOOKLINE_BLESS").is_some() {
        let updated = format!("{}{content}{}", &text[..a + start.len()], &text[b..]);
        std::fs::write(&file, updated).unwrap();
        return;
    }
    panic!(
        "the generated section {name:?} of {path} is out of date: run \
         `HOOKLINE_BLESS=1 cargo test -p hookline -p hookline-cli` and commit the result"
    );
}

/// Checks that the file at `path` (relative to the watcher crate) holds exactly `content`, a
/// recorded wire form; with `HOOKLINE_BLESS=1` in the environment it rewrites the file instead.
/// The failure names the first line that differs.
pub fn assert_recorded(path: &str, content: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("HOOKLINE_BLESS").is_some() {
        std::fs::write(&file, content).unwrap();
    }
    let recorded = std::fs::read_to_string(&file).unwrap_or_default();
    let first_difference = recorded.lines().zip(content.lines()).position(|(a, b)| a != b);
    assert!(
        recorded == content,
        "{path} differs from what the code gives now (first at line {first_difference:?}); \
         after a deliberate change of the wire form, `HOOKLINE_BLESS=1 cargo test -p hookline` \
         rewrites it"
    );
}

/// Writes an event the way the relay does, for a session and an orchestrator tag.
pub fn write_event(dir: &Path, native: &str, session: &str, tag: Option<&str>) {
    use crate::format::store::{EventsDir, WriteOptions, write_payload};
    let payload = format!(r#"{{"session_id":"{session}","hook_event_name":"{native}"}}"#);
    let payload = serde_json::value::RawValue::from_string(payload).unwrap();
    let events = EventsDir::create(dir).unwrap();
    write_payload(&events, "claude", native, tag, &payload, &WriteOptions::default()).unwrap();
}

/// Time zero of every story, in nanoseconds (2026-01-01 or so).
pub const T0: u64 = 1_767_225_600_000_000_000;

/// The real payloads captured from the CLIs.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One hook call of a story.
#[derive(Debug)]
pub struct HookCall<'a> {
    pub cli: &'a str,
    pub session: &'a str,
    pub native: Option<&'a str>,
    pub fixture: Option<&'a str>,
    pub payload: &'a BTreeMap<String, toml::Value>,
    pub tag: Option<&'a str>,
    pub host_pid: Option<u32>,
    /// Delivered as an unordered event (lock timeout): ordered by time, not seq.
    pub unordered: bool,
}

impl<'a> HookCall<'a> {
    /// A call that replays one captured payload, with nothing else set.
    pub fn of_fixture(
        cli: &'a str,
        session: &'a str,
        fixture: &'a str,
        payload: &'a BTreeMap<String, toml::Value>,
    ) -> HookCall<'a> {
        HookCall {
            cli,
            session,
            native: None,
            fixture: Some(fixture),
            payload,
            tag: None,
            host_pid: None,
            unordered: false,
        }
    }

    /// The canonical event, as the `seq`-th event file written at `at`; `None` when the call
    /// names neither a fixture nor a native event (a step that only moves the clock).
    pub fn event(&self, profiles: &Profiles, seq: u64, at: u64) -> Option<Event> {
        let mut payload = match self.fixture {
            Some(file) => {
                let text = std::fs::read_to_string(fixtures_dir().join(file)).unwrap();
                serde_json::from_str::<Map<String, Value>>(&text).unwrap()
            }
            None if self.native.is_some() => Map::new(),
            None => return None,
        };
        for (key, value) in self.payload {
            payload.insert(key.clone(), serde_json::to_value(value).unwrap());
        }
        for key in ["session_id", "sessionId", "conversation_id", "conversationId"] {
            if payload.contains_key(key) {
                payload.insert(key.into(), Value::String(self.session.to_owned()));
            }
        }
        if !["session_id", "sessionId", "conversation_id", "conversationId", "thread-id"]
            .iter()
            .any(|k| payload.contains_key(*k))
        {
            // Where the profile reads the id first (OpenCode's nested `properties.sessionID`,
            // Antigravity's `conversationId`); else at the top, as `session_id`.
            let path = profiles
                .get(self.cli)
                .and_then(|p| p.fields.session_id.first())
                .map(|path| path.to_string())
                .unwrap_or_else(|| "session_id".to_owned());
            let mut keys: Vec<&str> = path.split('.').collect();
            let last = keys.pop().unwrap_or("session_id");
            let mut object = &mut payload;
            for key in keys {
                object = object
                    .entry(key)
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .unwrap();
            }
            object.insert(last.into(), Value::String(self.session.to_owned()));
        }
        let native = self.native.map(str::to_owned).or_else(|| {
            ["hook_event_name", "hookEventName", "type"]
                .iter()
                .find_map(|k| payload.get(*k)?.as_str().map(str::to_owned))
        });
        let name = if self.unordered {
            EventFileName::unordered(seq, at, 1)
        } else {
            EventFileName::ordered(seq, 1)
        };
        let envelope = RawEnvelope {
            seq,
            seq_unordered: self.unordered,
            ts_ns: at,
            tag: self.tag.map(str::to_owned),
            pid: 1,
            ppid: 1,
            host_pid: self.host_pid,
            relay_version: "test".into(),
            ..RawEnvelope::built(self.cli, native, &Value::Object(payload))
        };
        let source =
            SourceRef { dir: "/events".into(), seq, file: name.to_string(), legacy: false };
        Some(map_envelope(profiles, &envelope, source))
    }
}

/// A bare event of `kind` for session `s1`, at [`T0`], for unit tests.
#[cfg(test)]
pub(crate) fn event(kind: crate::canonical::Kind) -> Event {
    let source =
        SourceRef { dir: PathBuf::from("/events"), seq: 1, file: "f".into(), legacy: false };
    Event {
        kind,
        cli: "claude".into(),
        session_id: Some("s1".into()),
        rule: "test".into(),
        ..crate::ingest::reader::unreadable(source, String::new(), T0)
    }
}
