//! The envelope: the JSON document stored in each event file.
//!
//! Version 1 (`"v": 1`). Fields, in the order they are written:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `v` | integer | format version, `1` |
//! | `seq` | integer | sequence number, strictly increasing across all relays of one directory |
//! | `seq_unordered` | bool, only when `true` | the counter lock was not obtained in time: `seq` is a best-effort copy of the counter, order this event by `ts_ns` |
//! | `ts_ns` | integer | wall-clock time the relay started, nanoseconds since the Unix epoch |
//! | `cli` | string | profile name given with `--cli` (default `claude`) |
//! | `event` | string or null | native event name: `--event`, else the payload's `hook_event_name`, `hookEventName` or `type` |
//! | `tag` | string or null | `$HOOKLINE_TAG`: the orchestrator's own id for the session |
//! | `pid`, `ppid` | integer | the relay's pid and parent pid (usually the hook shell or the CLI) |
//! | `host_pid` | integer or null | the host CLI's pid when its environment gives it (`CLAUDE_PID`) |
//! | `host_session_id` | string or null | the host's session id from its environment (`CLAUDE_CODE_SESSION_ID`, `GEMINI_SESSION_ID`) |
//! | `relay_version` | string | version of the relay that wrote the file |
//! | `truncated` | bool | stdin was longer than the cap; only its head was kept |
//! | `bytes` | integer | bytes of input seen (including any beyond the cap) |
//! | `error` | string, optional | why the input is not a usable payload (empty, invalid JSON, not an object, stdin deadline) |
//! | `raw_encoding` | `"utf8"` or `"base64"`, optional | how `raw` is encoded ([`raw_encoding_for`]) |
//! | `raw` | string, optional | the input bytes, losslessly, when they are not a usable payload |
//! | `payload` | object, optional | the hook's JSON object, verbatim |
//!
//! Exactly one of `payload` and `raw` is present, except for empty input, which has neither.
//! `payload` is always the last field: the relay writes it straight from the buffer it read it
//! into ([`EnvelopeOut::to_parts`]).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The envelope format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Room for every field of an envelope but `raw` and `payload`: names are clipped by the relay
/// (`cli`, `event` 64 bytes, `tag` 256, `host_session_id` 128), so even escaped six bytes per
/// byte they stay far below this.
const MAX_HEAD_BYTES: u64 = 64 << 10;

/// The largest event file the relay writes: its input cap
/// ([`DEFAULT_MAX_BYTES`](crate::input::DEFAULT_MAX_BYTES)) as base64, the largest form of
/// `raw` ([`raw_encoding_for`]), plus the other fields. Readers use it as their limit, so an
/// event the relay accepted is never refused as too large.
pub const MAX_ENVELOPE_BYTES: u64 =
    base64_len(crate::input::DEFAULT_MAX_BYTES as u64) + MAX_HEAD_BYTES;

/// Input up to this size is kept as text whatever its escaped size: short text stays readable.
const SMALL_RAW_BYTES: usize = 4 << 10;

// Short input kept as text, escaped at worst six bytes per byte, fits in the head's room.
const _: () = assert!(SMALL_RAW_BYTES as u64 * 6 <= MAX_HEAD_BYTES);

/// How the `raw` field encodes the input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// An envelope as written by the relay: it borrows everything, and [`EnvelopeOut::to_parts`]
/// leaves the payload where it is, so that a large payload is never copied before it is
/// written.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct EnvelopeOut<'a> {
    /// Format version.
    pub v: u32,
    /// Sequence number.
    pub seq: u64,
    /// Set when the counter lock timed out; readers order such events by time.
    #[serde(skip_serializing_if = "is_false")]
    pub seq_unordered: bool,
    /// Wall-clock nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Profile name.
    pub cli: &'a str,
    /// Native event name.
    pub event: Option<&'a str>,
    /// Orchestrator tag.
    pub tag: Option<&'a str>,
    /// Relay pid.
    pub pid: u32,
    /// Relay parent pid.
    pub ppid: u32,
    /// Host CLI pid.
    pub host_pid: Option<u32>,
    /// Host session id from the environment.
    pub host_session_id: Option<&'a str>,
    /// Relay version.
    pub relay_version: &'a str,
    /// Whether the input was cut at the size cap.
    pub truncated: bool,
    /// Bytes of input seen.
    pub bytes: u64,
    /// Top-level payload members left out because the whole event could not be written.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub dropped: &'a [&'a str],
    /// Why the input is not a usable payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// Encoding of `raw`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_encoding: Option<RawEncoding>,
    /// The input, when it is not a usable payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<&'a str>,
    /// The payload, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<&'a RawValue>,
}

impl<'a> EnvelopeOut<'a> {
    /// The event file's bytes in three pieces, to be written one after the other: every field
    /// but the payload (ending with `"payload":` when there is one), the payload's text
    /// verbatim (borrowed), and the closing brace and newline. The same bytes as serializing
    /// the envelope whole and adding a newline, without copying the payload.
    pub fn to_parts(&self) -> (Vec<u8>, &'a [u8], &'static [u8]) {
        let rest = EnvelopeOut { payload: None, ..*self };
        let mut head = Vec::with_capacity(512 + self.raw.map_or(0, |r| r.len() + r.len() / 8));
        // Serializing borrowed strings and numbers into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut head, &rest);
        match self.payload {
            Some(payload) => {
                // `payload` is the last field: reopen the object to add it.
                head.pop();
                head.extend_from_slice(b",\"payload\":");
                (head, payload.get().as_bytes(), b"}\n")
            }
            None => {
                head.push(b'\n');
                (head, b"", b"")
            }
        }
    }
}

/// An envelope as read back from an event file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Envelope {
    /// Format version.
    pub v: u32,
    /// Sequence number.
    pub seq: u64,
    /// Set when the counter lock timed out; order such events by `ts_ns`.
    #[serde(default)]
    pub seq_unordered: bool,
    /// Wall-clock nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Profile name.
    pub cli: String,
    /// Native event name.
    #[serde(default)]
    pub event: Option<String>,
    /// Orchestrator tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Relay pid.
    pub pid: u32,
    /// Relay parent pid.
    pub ppid: u32,
    /// Host CLI pid.
    #[serde(default)]
    pub host_pid: Option<u32>,
    /// Host session id from the environment.
    #[serde(default)]
    pub host_session_id: Option<String>,
    /// Relay version.
    pub relay_version: String,
    /// Whether the input was cut at the size cap.
    #[serde(default)]
    pub truncated: bool,
    /// Bytes of input seen.
    #[serde(default)]
    pub bytes: u64,
    /// Top-level payload members left out because the whole event could not be written (a
    /// full disk, a file-size limit): the rest of the payload is as received.
    #[serde(default)]
    pub dropped: Vec<String>,
    /// Why the input is not a usable payload.
    #[serde(default)]
    pub error: Option<String>,
    /// Encoding of `raw`.
    #[serde(default)]
    pub raw_encoding: Option<RawEncoding>,
    /// The input, when it is not a usable payload.
    #[serde(default)]
    pub raw: Option<String>,
    /// The payload.
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
}

impl Envelope {
    /// An envelope built rather than read (from a legacy file, in tests): format
    /// [`FORMAT_VERSION`], the given cli, event and payload, everything else zero or empty.
    pub fn built(cli: &str, event: Option<String>, payload: serde_json::Value) -> Envelope {
        Envelope {
            v: FORMAT_VERSION,
            seq: 0,
            seq_unordered: false,
            ts_ns: 0,
            cli: cli.to_owned(),
            event,
            tag: None,
            pid: 0,
            ppid: 0,
            host_pid: None,
            host_session_id: None,
            relay_version: String::new(),
            truncated: false,
            bytes: 0,
            dropped: Vec::new(),
            error: None,
            raw_encoding: None,
            raw: None,
            payload: Some(payload),
        }
    }

    /// Parses an event file's bytes. Fails on invalid JSON, a missing field or a format
    /// version this crate does not know.
    pub fn from_slice(bytes: &[u8]) -> Result<Envelope, EnvelopeError> {
        #[derive(Deserialize)]
        struct Version {
            v: u32,
        }
        // One pass in the common case; the version is looked at on its own only to say why a
        // file does not parse.
        let version_of = |bytes| serde_json::from_slice::<Version>(bytes).ok().map(|v| v.v);
        match serde_json::from_slice::<Envelope>(bytes) {
            Ok(envelope) if envelope.v == FORMAT_VERSION => Ok(envelope),
            Ok(envelope) => Err(EnvelopeError::Version(envelope.v)),
            Err(e) => match version_of(bytes) {
                Some(v) if v != FORMAT_VERSION => Err(EnvelopeError::Version(v)),
                _ => Err(EnvelopeError::Json(e)),
            },
        }
    }

    /// The input bytes as the relay received them (after BOM stripping and within the cap):
    /// the payload's text when there is one is not kept byte for byte here, only `raw` is.
    /// Returns `None` when there is no `raw` field or it cannot be decoded.
    pub fn raw_bytes(&self) -> Option<Vec<u8>> {
        let raw = self.raw.as_ref()?;
        match self.raw_encoding.unwrap_or(RawEncoding::Utf8) {
            RawEncoding::Utf8 => Some(raw.as_bytes().to_vec()),
            RawEncoding::Base64 => base64_decode(raw),
        }
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
        let cap = crate::input::DEFAULT_MAX_BYTES;
        assert_eq!(base64_len(cap as u64), base64_encode(&vec![0; cap]).len() as u64);
    }

    #[test]
    fn an_envelope_written_reads_back_with_every_field() {
        let payload =
            RawValue::from_string(r#"{"hook_event_name": "Stop", "x": [1, 2]}"#.into()).unwrap();
        let out = EnvelopeOut {
            v: FORMAT_VERSION,
            seq: 42,
            seq_unordered: true,
            ts_ns: 1_700_000_000_000_000_000,
            cli: "claude",
            event: Some("Stop"),
            tag: Some("task-1"),
            pid: 10,
            ppid: 9,
            host_pid: Some(8),
            host_session_id: Some("abc"),
            relay_version: "0.1.0",
            truncated: false,
            bytes: 40,
            dropped: &[],
            error: None,
            raw_encoding: None,
            raw: None,
            payload: Some(&payload),
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
            v: FORMAT_VERSION,
            seq: 1,
            seq_unordered: false,
            ts_ns: 2,
            cli: "claude",
            event: None,
            tag: Some("t\"1"),
            pid: 3,
            ppid: 4,
            host_pid: None,
            host_session_id: None,
            relay_version: "0.1.0",
            truncated: false,
            bytes: 30,
            dropped: &[],
            error: None,
            raw_encoding: None,
            raw: None,
            payload: Some(&payload),
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

    #[test]
    fn an_unknown_version_is_refused_by_number() {
        let err = Envelope::from_slice(br#"{"v": 7}"#).unwrap_err();
        assert!(err.to_string().contains("version 7"), "{err}");
    }
}
