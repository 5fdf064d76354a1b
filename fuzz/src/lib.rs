//! The bodies of the fuzz targets, shared by `cargo fuzz` (fuzz_targets/) and the stable
//! harness (tests/corpus.rs). Each panics on a broken promise:
//!
//! * [`relay_input`]: the relay's input scanner ends a JSON value where serde_json does, and
//!   the file the relay would write for any input is read back by the reader with the same
//!   event name, payload text and raw bytes, and maps to an event with that name;
//! * [`reader_envelope`]: for any file content, the reader's envelope parse and payload
//!   decoding never panic, accept whatever the strict parse accepts, and the lenient decoder
//!   agrees with serde_json wherever serde_json decodes.

use std::sync::OnceLock;

use hookline::format::envelope::{
    Envelope, EnvelopeOut, MAX_INPUT_BYTES, RawEncoding, RawEnvelope, base64_encode,
    raw_encoding_for,
};
use hookline::format::rawjson::{MAX_DECODE_DEPTH, Members, decode, decode_lenient, decode_string};
use hookline::profile::Profiles;
use hookline::ingest::reader::event_from_envelope;
use serde_json::Value;

// The relay program's own modules, private to its binary, compiled here as they are.
#[allow(dead_code, unused_imports)]
#[path = "../../relay/src/args.rs"]
mod args;
#[allow(dead_code, unused_imports)]
#[path = "../../relay/src/input.rs"]
mod input;
#[allow(dead_code, unused_imports)]
#[path = "../../relay/src/payload.rs"]
mod payload;
#[allow(dead_code, unused_imports)]
#[path = "../../relay/src/validate.rs"]
mod validate;

use input::{Input, Limits};
use payload::Parsed;

fn profiles() -> &'static Profiles {
    static PROFILES: OnceLock<Profiles> = OnceLock::new();
    PROFILES.get_or_init(|| Profiles::shipped().expect("the shipped profiles load"))
}

/// Runs [`relay_input_capped`] with the relay's cap and with a cap that cuts the input.
pub fn relay_input(data: &[u8]) {
    relay_input_capped(data, MAX_INPUT_BYTES);
    if data.len() > 1 {
        relay_input_capped(data, data.len() / 2);
    }
}

fn relay_input_capped(data: &[u8], cap: usize) {
    let input = Input::from_bytes(data, cap);
    let limits = Limits { max_bytes: cap, ..Limits::default() };
    let parsed = Parsed::from_input(&input, limits);

    // The scanner ends a value where serde_json does.
    let first = input.bytes.iter().find(|b| !b.is_ascii_whitespace());
    if !input.truncated && matches!(first, Some(b'{' | b'[' | b'"')) {
        let mut stream =
            serde_json::Deserializer::from_slice(&input.bytes).into_iter::<serde::de::IgnoredAny>();
        if let Some(Ok(_)) = stream.next() {
            assert_eq!(input.json_end, Some(stream.byte_offset()), "where the value ends");
        }
    }
    if let (Some(payload), Some(end)) = (parsed.payload, input.json_end) {
        assert_eq!(payload.as_bytes(), input.bytes[..end].trim_ascii(), "the payload text");
        // The payload is written as its text without being parsed again: it must be JSON
        // serde_json accepts, whether the scanner vouched for it or serde_json checked it.
        assert!(
            serde_json::from_str::<&serde_json::value::RawValue>(payload).is_ok(),
            "an accepted payload is valid JSON"
        );
    }
    if let Some(Ok(text)) = input.json_end.map(|end| std::str::from_utf8(&input.bytes[..end])) {
        // The scanner vouches for an object exactly when serde_json accepts it (UTF-8 is
        // checked apart, as serde_json's from_str checks it before it parses).
        let accepted = text.trim_start().starts_with('{')
            && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok();
        assert_eq!(input.vouched, accepted, "vouched for exactly what serde_json accepts");
    }

    // The file the relay writes for it (as `run` builds it), read back by the reader.
    let raw_text;
    let (raw_encoding, raw) = match (parsed.payload, input.bytes.is_empty()) {
        (None, false) => {
            match (raw_encoding_for(&input.bytes), std::str::from_utf8(&input.bytes)) {
                (RawEncoding::Utf8, Ok(text)) => (Some(RawEncoding::Utf8), Some(text)),
                _ => {
                    raw_text = base64_encode(&input.bytes);
                    (Some(RawEncoding::Base64), Some(raw_text.as_str()))
                }
            }
        }
        _ => (None, None),
    };
    let out = EnvelopeOut {
        event: parsed.event.as_deref(),
        truncated: input.truncated,
        bytes: input.total,
        error: parsed.error.as_deref(),
        raw_encoding,
        raw,
        ..EnvelopeOut::this_process(7, false, 1, "claude")
    };
    let (head, body, tail) = out.to_parts_with(parsed.payload);
    let file = [&head[..], body, tail].concat();
    let back = RawEnvelope::parse(&file).expect("the reader reads every file the relay writes");
    assert_eq!(back.event, parsed.event, "the event name");
    assert_eq!(back.payload.as_ref().map(|p| p.get()), parsed.payload);
    if raw.is_some() {
        assert_eq!(back.raw_bytes().as_deref(), Some(&input.bytes[..]), "the raw bytes");
    }
    let event = event_from_envelope(profiles(), &back, "f");
    assert_eq!(event.native, back.event, "mapped with its name");
    if let Some(payload) = parsed.payload {
        for (key, value) in Members::new(payload) {
            assert!(decode_string(key).is_some(), "key {key}");
            assert!(decode(value).is_some(), "a member of an accepted payload decodes: {value}");
        }
    }
}

/// The reader on arbitrary file contents.
pub fn reader_envelope(data: &[u8]) {
    let strict = Envelope::from_slice(data);
    let Ok(envelope) = RawEnvelope::parse(data) else {
        assert!(strict.is_err(), "what the strict parse reads, the raw parse reads");
        return;
    };
    let event = event_from_envelope(profiles(), &envelope, "f");
    assert_eq!(event.native, envelope.event);
    let Some(payload) = &envelope.payload else { return };
    for (key, value) in Members::new(payload.get()) {
        let _ = decode_string(key);
        let Ok(full) = serde_json::from_str::<Value>(value) else { continue };
        if depth(value) <= MAX_DECODE_DEPTH {
            assert_eq!(decode_lenient(value).as_ref(), Some(&full), "lenient vs serde: {value}");
        }
    }
}

/// The deepest nesting of containers in a JSON text (strings skipped).
fn depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'{' | b'[') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, _, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
