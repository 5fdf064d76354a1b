//! The envelope: the JSON document stored in each event file, version 1 (`"v": 1`).
//!
//! [`Envelope`] is its one definition, used both ways: the relay writes an
//! [`EnvelopeOut`] (`Envelope<Borrowed>`: every field borrowed, the payload written straight
//! from the buffer it was read into, see [`EnvelopeOut::to_parts`]), readers parse a
//! [`RawEnvelope`] (`Envelope<Raw>`: the payload left undecoded, so every file the relay
//! writes is read) with [`RawEnvelope::parse`]; `Envelope` (`Envelope<Owned>`) decodes
//! the payload whole, for tests and tools that want a `serde_json::Value`. Fields are written in the order
//! they are declared; `payload` is always last.
//!
//! The field reference (types, meanings, what is present when) is the table in
//! `docs/format.md`; a test checks that table against this definition.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The envelope format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The most input bytes the relay keeps: 16 MiB. Longer input is marked `truncated`.
pub const MAX_INPUT_BYTES: usize = 16 << 20;
/// The longest `cli` and `event` the relay writes, in bytes (it cuts longer ones).
pub const MAX_NAME_BYTES: usize = 64;
/// The longest `tag` the relay writes, in bytes.
pub const MAX_TAG_BYTES: usize = 256;
/// The longest `host_session_id` the relay writes, in bytes.
pub const MAX_SESSION_ID_BYTES: usize = 128;

/// Room for every field of an envelope but `raw` and `payload`: the names are clipped
/// ([`MAX_NAME_BYTES`], [`MAX_TAG_BYTES`], [`MAX_SESSION_ID_BYTES`]), so even escaped six bytes
/// per byte they stay far below this.
const MAX_HEAD_BYTES: u64 = 64 << 10;

/// The largest event file the relay writes: its input cap ([`MAX_INPUT_BYTES`]) as base64, the
/// largest form of `raw` ([`raw_encoding_for`]), plus the other fields. Readers use it as their
/// limit, so an event the relay accepted is never refused as too large.
pub const MAX_ENVELOPE_BYTES: u64 = base64_len(MAX_INPUT_BYTES as u64) + MAX_HEAD_BYTES;

/// Input up to this size is kept as text whatever its escaped size: short text stays readable.
const SMALL_RAW_BYTES: usize = 4 << 10;

// The clipped names and short input kept as text, escaped at worst six bytes per byte, fit in
// the head's room.
const _: () = assert!(
    ((2 * MAX_NAME_BYTES + MAX_TAG_BYTES + MAX_SESSION_ID_BYTES + SMALL_RAW_BYTES) * 6) as u64
        <= MAX_HEAD_BYTES
);

/// How the `raw` field encodes the input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RawEncoding {
    /// The bytes were valid UTF-8 and are stored as a JSON string.
    Utf8,
    /// The bytes were not valid UTF-8, or as a JSON string they would take more room than as
    /// base64; they are stored as standard base64 (with padding).
    Base64,
}

/// How the relay stores input that is not a usable payload: as text when it is UTF-8 and its
/// JSON-escaped form is no longer than its base64 form (or it is at most 4 KiB), else as
/// base64. NUL and other control bytes escape to six bytes each (`\u0000`): without this
/// rule 16 MiB of them would make a 96 MiB file. With it, `raw` is never longer than the
/// input as base64, which bounds [`MAX_ENVELOPE_BYTES`].
pub fn raw_encoding_for(bytes: &[u8]) -> RawEncoding {
    if std::str::from_utf8(bytes).is_err() {
        return RawEncoding::Base64;
    }
    let escaped: u64 = bytes
        .iter()
        .map(|&b| match b {
            b'"' | b'\\' | 0x08 | b'\t' | b'\n' | 0x0c | b'\r' => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum();
    if bytes.len() <= SMALL_RAW_BYTES || escaped <= base64_len(bytes.len() as u64) {
        RawEncoding::Utf8
    } else {
        RawEncoding::Base64
    }
}

/// How an envelope holds its text, its `dropped` list and its payload: [`Owned`] to read,
/// [`Borrowed`] to write.
pub trait Repr {
    /// A string field.
    type Str;
    /// The `dropped` list.
    type List;
    /// The `payload` object.
    type Payload;
    /// Whether a `dropped` list is empty (an empty list is not written).
    fn list_is_empty(list: &Self::List) -> bool;
}

/// Envelopes as read back: owned strings, the payload parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned;

impl Repr for Owned {
    type Str = String;
    type List = Vec<String>;
    type Payload = serde_json::Value;
    fn list_is_empty(list: &Vec<String>) -> bool {
        list.is_empty()
    }
}

/// Envelopes as hookline reads them: owned strings, the payload kept as its verbatim text and
/// never decoded whole, so that no payload the relay accepted is refused (see
/// [`rawjson`](crate::rawjson) for reading the members a reader needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw;

impl Repr for Raw {
    type Str = String;
    type List = Vec<String>;
    type Payload = Box<RawValue>;
    fn list_is_empty(list: &Vec<String>) -> bool {
        list.is_empty()
    }
}

/// An envelope as hookline reads it: the payload raw.
pub type RawEnvelope = Envelope<Raw>;

/// Envelopes as written: everything borrowed, the payload as its verbatim text, so that a large
/// payload is never copied before it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Borrowed<'a>(PhantomData<&'a ()>);

impl<'a> Repr for Borrowed<'a> {
    type Str = &'a str;
    type List = &'a [&'a str];
    type Payload = &'a RawValue;
    fn list_is_empty(list: &&'a [&'a str]) -> bool {
        list.is_empty()
    }
}

/// An envelope as the relay writes it.
pub type EnvelopeOut<'a> = Envelope<Borrowed<'a>>;

/// The envelope of one event file. Fields marked optional are left out when empty; readers
/// take a missing optional field as empty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        rename = "Envelope",
        bound = "R::Str: schemars::JsonSchema, \
    R::List: schemars::JsonSchema + Default + Serialize, R::Payload: schemars::JsonSchema"
    )
)]
#[serde(bound(
    serialize = "R::Str: Serialize, R::List: Serialize, R::Payload: Serialize",
    deserialize = "R::Str: Deserialize<'de>, R::List: Deserialize<'de> + Default, \
                   R::Payload: Deserialize<'de>"
))]
pub struct Envelope<R: Repr = Owned> {
    /// Format version: [`FORMAT_VERSION`].
    pub v: u32,
    /// Sequence number, strictly increasing across all relays of one directory.
    pub seq: u64,
    /// Set when the counter lock timed out: `seq` is the counter value seen, order such events
    /// by `ts_ns`. Optional (written only when set).
    #[serde(default, skip_serializing_if = "is_false")]
    pub seq_unordered: bool,
    /// Wall-clock time the relay started, nanoseconds since the Unix epoch
    /// ([`clock::now_ns`](crate::clock::now_ns)).
    pub ts_ns: u64,
    /// Profile name (`--cli`), at most [`MAX_NAME_BYTES`].
    pub cli: R::Str,
    /// Native event name, at most [`MAX_NAME_BYTES`].
    #[serde(default)]
    pub event: Option<R::Str>,
    /// The orchestrator's tag for the session (`$HOOKLINE_TAG`), at most [`MAX_TAG_BYTES`].
    #[serde(default)]
    pub tag: Option<R::Str>,
    /// The writer's pid.
    pub pid: u32,
    /// The writer's parent pid.
    pub ppid: u32,
    /// The host CLI's pid, when its environment gives it.
    #[serde(default)]
    pub host_pid: Option<u32>,
    /// The host's session id from its environment, at most [`MAX_SESSION_ID_BYTES`].
    #[serde(default)]
    pub host_session_id: Option<R::Str>,
    /// Version of the relay that wrote the file.
    pub relay_version: R::Str,
    /// Whether the input was cut at the size cap ([`MAX_INPUT_BYTES`]).
    #[serde(default)]
    pub truncated: bool,
    /// Bytes of input seen (including any beyond the cap).
    #[serde(default)]
    pub bytes: u64,
    /// Top-level payload members left out because the whole event could not be written (a
    /// full disk, a file-size limit): the rest of the payload is as received. Optional.
    #[serde(default, skip_serializing_if = "R::list_is_empty")]
    pub dropped: R::List,
    /// Why the input is not a usable payload. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<R::Str>,
    /// Encoding of `raw` ([`raw_encoding_for`]). Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_encoding: Option<RawEncoding>,
    /// The input, when it is not a usable payload. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<R::Str>,
    /// The hook's JSON object, verbatim. Optional; always the last field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<R::Payload>,
}

impl<R: Repr> Envelope<R>
where
    R::List: Default,
{
    /// Format [`FORMAT_VERSION`], the given profile and relay version, every other field zero
    /// or empty.
    fn blank(cli: R::Str, relay_version: R::Str) -> Envelope<R> {
        Envelope {
            v: FORMAT_VERSION,
            seq: 0,
            seq_unordered: false,
            ts_ns: 0,
            cli,
            event: None,
            tag: None,
            pid: 0,
            ppid: 0,
            host_pid: None,
            host_session_id: None,
            relay_version,
            truncated: false,
            bytes: 0,
            dropped: R::List::default(),
            error: None,
            raw_encoding: None,
            raw: None,
            payload: None,
        }
    }
}

impl<'a> EnvelopeOut<'a> {
    /// The envelope of an event this process writes: the given `seq`, time and profile, this
    /// process's pid and parent pid, this crate's [`RELAY_VERSION`](crate::RELAY_VERSION);
    /// no event name, tag, host fields or input yet.
    pub fn this_process(seq: u64, seq_unordered: bool, ts_ns: u64, cli: &'a str) -> Self {
        Envelope {
            seq,
            seq_unordered,
            ts_ns,
            pid: std::process::id(),
            ppid: std::os::unix::process::parent_id(),
            ..Envelope::blank(cli, crate::RELAY_VERSION)
        }
    }

    /// The event file's bytes in three pieces, to be written one after the other: every field
    /// but the payload (ending with `"payload":` when there is one), the payload's text
    /// verbatim (borrowed), and the closing brace and newline. The same bytes as serializing
    /// the envelope whole and adding a newline, without copying the payload.
    pub fn to_parts(&self) -> (Vec<u8>, &'a [u8], &'static [u8]) {
        self.to_parts_with(self.payload.map(RawValue::get))
    }

    /// [`EnvelopeOut::to_parts`] with `payload` (the text of a JSON object) written as the
    /// payload in place of the envelope's own: for a writer that has checked the text already
    /// (the relay validates its input as it reads it), where a `RawValue` would parse it again.
    pub fn to_parts_with(&self, payload: Option<&'a str>) -> (Vec<u8>, &'a [u8], &'static [u8]) {
        let rest = Envelope { payload: None, ..*self };
        let mut head = Vec::with_capacity(512 + self.raw.map_or(0, |r| r.len() + r.len() / 8));
        // Serializing borrowed strings and numbers into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut head, &rest);
        match payload {
            Some(payload) => {
                // `payload` is the last field: reopen the object to add it.
                head.pop();
                head.extend_from_slice(b",\"payload\":");
                (head, payload.as_bytes(), b"}\n")
            }
            None => {
                head.push(b'\n');
                (head, b"", b"")
            }
        }
    }
}

/// Parses an event file's bytes as an `Envelope<R>`.
fn parse<R: Repr>(bytes: &[u8]) -> Result<Envelope<R>, EnvelopeError>
where
    Envelope<R>: serde::de::DeserializeOwned,
{
    #[derive(Deserialize)]
    struct Version {
        v: u32,
    }
    // One pass in the common case; the version is looked at on its own only to say why a
    // file does not parse.
    let version_of = |bytes| serde_json::from_slice::<Version>(bytes).ok().map(|v| v.v);
    match serde_json::from_slice::<Envelope<R>>(bytes) {
        Ok(envelope) if envelope.v == FORMAT_VERSION => Ok(envelope),
        Ok(envelope) => Err(EnvelopeError::Version(envelope.v)),
        Err(e) => match version_of(bytes) {
            Some(v) if v != FORMAT_VERSION => Err(EnvelopeError::Version(v)),
            _ => Err(EnvelopeError::Json(e)),
        },
    }
}

impl RawEnvelope {
    /// An envelope built rather than read (from a legacy file, in tests): format
    /// [`FORMAT_VERSION`], the given cli, event and payload, everything else zero or empty.
    pub fn built(cli: &str, event: Option<String>, payload: &serde_json::Value) -> RawEnvelope {
        RawEnvelope {
            event,
            payload: serde_json::value::to_raw_value(payload).ok(),
            ..Envelope::blank(cli.to_owned(), String::new())
        }
    }

    /// Parses an event file's bytes, leaving the payload undecoded: it accepts every file the
    /// relay writes. Fails on invalid JSON, a missing field or a format version this crate
    /// does not know.
    pub fn parse(bytes: &[u8]) -> Result<RawEnvelope, EnvelopeError> {
        parse(bytes)
    }

    /// The input bytes as the relay received them, as [`Envelope::raw_bytes`].
    pub fn raw_bytes(&self) -> Option<Vec<u8>> {
        raw_bytes(self.raw.as_deref(), self.raw_encoding)
    }
}

impl Envelope {
    /// Parses an event file's bytes and decodes the payload whole. Fails on invalid JSON, a
    /// missing field, a format version this crate does not know, and on a payload serde_json
    /// cannot decode (a lone surrogate, a number beyond `f64`, deep nesting) although the
    /// relay wrote it: readers use [`RawEnvelope::parse`], which never refuses one.
    pub fn from_slice(bytes: &[u8]) -> Result<Envelope, EnvelopeError> {
        parse(bytes)
    }

    /// The input bytes as the relay received them (after BOM stripping and within the cap):
    /// the payload's text when there is one is not kept byte for byte here, only `raw` is.
    /// Returns `None` when there is no `raw` field or it cannot be decoded.
    pub fn raw_bytes(&self) -> Option<Vec<u8>> {
        raw_bytes(self.raw.as_deref(), self.raw_encoding)
    }
}

fn raw_bytes(raw: Option<&str>, encoding: Option<RawEncoding>) -> Option<Vec<u8>> {
    let raw = raw?;
    match encoding.unwrap_or(RawEncoding::Utf8) {
        RawEncoding::Utf8 => Some(raw.as_bytes().to_vec()),
        RawEncoding::Base64 => base64_decode(raw),
    }
}

/// Why an event file could not be read as an envelope.
#[derive(Debug)]
pub enum EnvelopeError {
    /// Not JSON, or a required field is missing or mistyped.
    Json(serde_json::Error),
    /// A format version this build does not read.
    Version(u32),
}

impl std::fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnvelopeError::Json(e) => write!(f, "not a valid envelope: {e}"),
            EnvelopeError::Version(v) => {
                write!(
                    f,
                    "envelope version {v} is not supported (this build reads {FORMAT_VERSION})"
                )
            }
        }
    }
}

impl std::error::Error for EnvelopeError {}

/// Finds the first `"key": "value"` in bytes that are not valid JSON: the `raw` field of an
/// envelope (see [`Envelope::raw_bytes`]), or input the relay could not parse, so that a
/// truncated or damaged payload still names its event and session. Only plain values are
/// accepted (letters, digits, `_ . : -`, at most [`MAX_SESSION_ID_BYTES`] bytes), so nothing
/// odd is ever salvaged.
pub fn salvage_field(bytes: &[u8], key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    let quoted = quoted.as_bytes();
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(quoted.len()).position(|w| w == quoted) {
        let rest = &bytes[from + at + quoted.len()..];
        from += at + quoted.len();
        let rest = skip_ws(rest).strip_prefix(b":").map(skip_ws);
        let Some(rest) = rest.and_then(|r| r.strip_prefix(b"\"")) else {
            continue;
        };
        let len =
            rest.iter().take_while(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(b)).count();
        if len > 0 && len <= MAX_SESSION_ID_BYTES && rest.get(len) == Some(&b'"') {
            return Some(String::from_utf8_lossy(&rest[..len]).into_owned());
        }
    }
    None
}

fn skip_ws(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[n..]
}

fn is_false(b: &bool) -> bool {
    !*b
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The length of `len` bytes as standard base64 with padding.
pub const fn base64_len(len: u64) -> u64 {
    len.div_ceil(3) * 4
}

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for (i, s) in sextets.iter().enumerate() {
            if i <= chunk.len() {
                out.push(B64[(*s & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding; `None` on any invalid input.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let last = index + 1 == bytes.len() / 4;
        let mut n = 0u32;
        let mut pad = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if last && i >= 2 => {
                    pad += 1;
                    0
                }
                _ => return None,
            };
            if pad > 0 && c != b'=' {
                return None;
            }
            n = (n << 6) | u32::from(v);
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length_and_byte() {
        let data: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..data.len() {
            let encoded = base64_encode(&data[..len]);
            assert_eq!(base64_decode(&encoded).as_deref(), Some(&data[..len]), "len {len}");
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_decode("Zm8"), None);
        assert_eq!(base64_decode("Z=m8"), None);
    }

    #[test]
    fn raw_input_is_text_unless_escaping_would_make_it_larger_than_base64() {
        assert_eq!(raw_encoding_for(b"hook failed\n"), RawEncoding::Utf8);
        assert_eq!(raw_encoding_for(b"\xff"), RawEncoding::Base64);
        assert_eq!(raw_encoding_for(&[0; 100]), RawEncoding::Utf8, "small input stays text");
        let text = "line \"quoted\"\twith tabs\n".repeat(1000);
        assert_eq!(raw_encoding_for(text.as_bytes()), RawEncoding::Utf8);
        let controls: Vec<u8> = (0..0x20).cycle().take(SMALL_RAW_BYTES + 1).collect();
        assert_eq!(raw_encoding_for(&controls), RawEncoding::Base64);
        let nul = vec![0; SMALL_RAW_BYTES + 1];
        assert_eq!(raw_encoding_for(&nul), RawEncoding::Base64);
    }

    #[test]
    fn the_largest_raw_field_fits_the_envelope_bound() {
        let cap = MAX_INPUT_BYTES;
        assert_eq!(base64_len(cap as u64), base64_encode(&vec![0; cap]).len() as u64);
    }

    #[test]
    fn an_envelope_written_reads_back_with_every_field() {
        let payload =
            RawValue::from_string(r#"{"hook_event_name": "Stop", "x": [1, 2]}"#.into()).unwrap();
        let out = EnvelopeOut {
            event: Some("Stop"),
            tag: Some("task-1"),
            host_pid: Some(8),
            host_session_id: Some("abc"),
            bytes: 40,
            payload: Some(&payload),
            ..EnvelopeOut::this_process(42, true, 1_700_000_000_000_000_000, "claude")
        };
        let text = serde_json::to_string(&out).unwrap();
        assert!(text.contains(r#""payload":{"hook_event_name": "Stop", "x": [1, 2]}"#), "{text}");
        let back = Envelope::from_slice(text.as_bytes()).unwrap();
        assert_eq!(back.seq, 42);
        assert!(back.seq_unordered);
        assert_eq!(back.event.as_deref(), Some("Stop"));
        assert_eq!(back.tag.as_deref(), Some("task-1"));
        assert_eq!(back.host_pid, Some(8));
        assert_eq!(back.payload.unwrap()["x"][1], 2);
    }

    #[test]
    fn the_parts_are_the_whole_envelope_serialized() {
        let payload = RawValue::from_string(r#"{ "hook_event_name" : "Stop" }"#.into()).unwrap();
        let mut out = EnvelopeOut {
            tag: Some("t\"1"),
            bytes: 30,
            payload: Some(&payload),
            ..EnvelopeOut::this_process(1, false, 2, "claude")
        };
        for _ in 0..2 {
            let (head, body, tail) = out.to_parts();
            let mut whole = serde_json::to_vec(&out).unwrap();
            whole.push(b'\n');
            assert_eq!([&head[..], body, tail].concat(), whole);
            assert!(Envelope::from_slice(&whole).is_ok());
            out = EnvelopeOut { payload: None, error: Some("empty input"), raw: Some(" "), ..out };
        }
    }

    /// The keys of a JSON object, in the order they are written.
    fn keys_in_order(json: &str) -> Vec<String> {
        struct Keys(Vec<String>);
        impl<'de> Deserialize<'de> for Keys {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
                struct Visitor;
                impl<'de> serde::de::Visitor<'de> for Visitor {
                    type Value = Keys;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(
                        self,
                        mut map: M,
                    ) -> Result<Keys, M::Error> {
                        let mut keys = Vec::new();
                        while let Some(key) = map.next_key::<String>()? {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            keys.push(key);
                        }
                        Ok(Keys(keys))
                    }
                }
                d.deserialize_map(Visitor)
            }
        }
        serde_json::from_str::<Keys>(json).unwrap().0
    }

    /// The field names in the first column of the table under `## Envelope` in a markdown file.
    fn documented_fields(markdown: &str) -> Vec<String> {
        let section = markdown.split("\n## ").find(|s| s.starts_with("Envelope")).unwrap();
        section
            .lines()
            .filter(|line| line.starts_with("| `"))
            .flat_map(|line| line.split('|').nth(1).unwrap().split('`').skip(1).step_by(2))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_format_reference_lists_every_field_in_the_order_written() {
        // Every field set, so that none is left out when written. A new field fails to compile
        // here until it is added, and then this test fails until docs/format.md documents it.
        let envelope = Envelope::<Owned> {
            v: FORMAT_VERSION,
            seq: 1,
            seq_unordered: true,
            ts_ns: 2,
            cli: "claude".into(),
            event: Some("Stop".into()),
            tag: Some("t".into()),
            pid: 3,
            ppid: 4,
            host_pid: Some(5),
            host_session_id: Some("s".into()),
            relay_version: "0.1.0".into(),
            truncated: true,
            bytes: 6,
            dropped: vec!["tool_response".into()],
            error: Some("invalid JSON".into()),
            raw_encoding: Some(RawEncoding::Utf8),
            raw: Some("{".into()),
            payload: Some(serde_json::json!({})),
        };
        let written = keys_in_order(&serde_json::to_string(&envelope).unwrap());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/format.md");
        let markdown = std::fs::read_to_string(path).unwrap();
        assert_eq!(documented_fields(&markdown), written, "the envelope table in {path}");
        assert_eq!(written.last().map(String::as_str), Some("payload"));
    }

    #[test]
    fn an_unknown_version_is_refused_by_number() {
        let err = Envelope::from_slice(br#"{"v": 7}"#).unwrap_err();
        assert!(err.to_string().contains("version 7"), "{err}");
    }
}
