//! Bad input never drops the signal: each case still writes exactly one event, keeping the
//! bytes losslessly and saying what was wrong.

use std::time::Duration;

use hookline_relay::envelope::{Envelope, RawEncoding};

use crate::util::{Sandbox, Stdin, fixture, payload_text};

/// Runs the relay on `stdin` and returns the one event it wrote.
fn event_for(stdin: Stdin) -> Envelope {
    let sandbox = Sandbox::new();
    sandbox.relay().stdin(stdin).run();
    sandbox.only_event().envelope
}

fn error_of(e: &Envelope) -> &str {
    e.error.as_deref().unwrap_or_else(|| panic!("an error is recorded: {e:?}"))
}

#[test]
fn empty_stdin_is_an_event_with_an_empty_input_error() {
    let e = event_for(Stdin::Bytes(Vec::new()));
    assert_eq!(error_of(&e), "empty input");
    assert_eq!((e.bytes, &e.raw, &e.payload, e.event.as_deref()), (0, &None, &None, None));
}

#[test]
fn whitespace_only_is_empty_input_and_the_whitespace_is_kept() {
    let e = event_for(Stdin::Bytes(b" \n\t\r\n ".to_vec()));
    assert_eq!(error_of(&e), "empty input");
    assert_eq!(e.raw_encoding, Some(RawEncoding::Utf8));
    assert_eq!(e.raw.as_deref(), Some(" \n\t\r\n "));
    assert_eq!(e.payload, None);
}

#[test]
fn invalid_json_is_kept_raw_and_still_names_its_event() {
    let text = r#"{"session_id": "s", "hook_event_name": "Stop", oops}"#;
    let e = event_for(Stdin::Bytes(text.into()));
    assert!(error_of(&e).starts_with("invalid JSON: "), "{e:?}");
    assert_eq!(e.raw_encoding, Some(RawEncoding::Utf8));
    assert_eq!(e.raw.as_deref(), Some(text));
    assert_eq!(e.event.as_deref(), Some("Stop"), "the event name is salvaged");
    assert_eq!(e.payload, None);
}

#[test]
fn a_json_value_that_is_not_an_object_is_kept_raw_with_its_kind() {
    for (text, kind) in [
        ("[1, 2, {\"hook_event_name\": \"Stop\"}]", "an array"),
        ("42", "a number"),
        ("-1.5e3\n", "a number"),
        ("\"PreToolUse\"", "a string"),
        ("true", "a boolean"),
        ("null\n", "null"),
    ] {
        let e = event_for(Stdin::Bytes(text.into()));
        assert_eq!(error_of(&e), format!("payload is {kind}, not a JSON object"), "{text:?}");
        assert_eq!(e.raw.as_deref(), Some(text), "{text:?}");
        assert_eq!(e.raw_encoding, Some(RawEncoding::Utf8));
        assert_eq!(e.payload, None);
    }
}

/// Deterministic bytes that are not UTF-8 and contain every byte value, whitespace and JSON
/// punctuation included.
fn garbage(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    bytes[0] = 0xff;
    bytes
}

#[test]
fn binary_garbage_is_kept_as_base64_that_decodes_to_the_exact_bytes() {
    for len in [1, 2, 3, 100, 5000] {
        let bytes = garbage(len);
        let e = event_for(Stdin::Bytes(bytes.clone()));
        assert!(error_of(&e).contains("UTF-8"), "{len}: {e:?}");
        assert_eq!(e.raw_encoding, Some(RawEncoding::Base64));
        assert_eq!(e.raw_bytes().as_deref(), Some(&bytes[..]), "{len} bytes round-trip");
        assert_eq!(e.bytes, len as u64);
    }
}

#[test]
fn binary_garbage_arriving_in_pieces_is_kept_whole() {
    // Garbage is no JSON value: the relay must read it to EOF, not stop at the first
    // whitespace byte of the first read.
    let bytes = garbage(200 << 10);
    let pieces = bytes.chunks(50 << 10).map(<[u8]>::to_vec).collect();
    let e = event_for(Stdin::Pieces(pieces, Duration::from_millis(50)));
    assert_eq!(e.raw_encoding, Some(RawEncoding::Base64));
    assert_eq!(e.bytes, bytes.len() as u64);
    assert!(e.raw_bytes().unwrap() == bytes, "all {} bytes round-trip", bytes.len());
}

#[test]
fn plain_text_is_kept_whole_too() {
    let text = "hook failed: permission denied\nsee log\n";
    let e = event_for(Stdin::Bytes(text.into()));
    assert!(error_of(&e).starts_with("invalid JSON"), "{e:?}");
    assert_eq!(e.raw.as_deref(), Some(text));
}

#[test]
fn a_utf8_bom_before_valid_json_is_stripped() {
    let payload = fixture("claude-code/PreToolUse.json");
    let mut input = b"\xEF\xBB\xBF".to_vec();
    input.extend_from_slice(&payload);
    let sandbox = Sandbox::new();
    sandbox.relay().input(input.clone()).run();
    let event = sandbox.only_event();
    let e = &event.envelope;
    assert_eq!(e.error, None);
    assert_eq!(e.event.as_deref(), Some("PreToolUse"));
    assert_eq!(e.bytes, input.len() as u64, "bytes counts what was read, BOM included");
    assert!(event.text.contains(&format!("\"payload\":{}", payload_text(&payload))));
}

#[test]
fn json_followed_by_trailing_garbage_keeps_the_payload_and_notes_the_rest() {
    let sandbox = Sandbox::new();
    let text = r#"{"hook_event_name": "Stop", "session_id": "s"} trailing {junk"#;
    sandbox.relay().input(text).run();
    let e = sandbox.only_event().envelope;
    assert_eq!(e.error, None, "the object is a usable payload");
    assert_eq!(e.event.as_deref(), Some("Stop"));
    assert_eq!(e.payload.unwrap()["session_id"], "s");
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("after the JSON value")), "{notes:?}");
}

#[test]
fn a_payload_over_16_mib_keeps_its_head_and_is_marked_truncated() {
    let cap = 16 << 20;
    let head = br#"{"session_id": "s", "hook_event_name": "PostToolUse", "tool_response": ""#;
    let mut input = head.to_vec();
    input.resize(cap + (1 << 20), b'x');
    input.extend_from_slice(b"\"}");
    let sandbox = Sandbox::new();
    sandbox.relay().input(input.clone()).run();
    let e = sandbox.only_event().envelope;
    assert!(e.truncated);
    assert_eq!(e.bytes, input.len() as u64);
    assert!(error_of(&e).contains("cap"), "{e:?}");
    assert_eq!(e.event.as_deref(), Some("PostToolUse"), "salvaged from the head");
    assert_eq!(e.raw_encoding, Some(RawEncoding::Utf8));
    let raw = e.raw.unwrap();
    assert_eq!(raw.len(), cap);
    assert!(raw.as_bytes() == &input[..cap], "the head is kept byte for byte");
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("cut to")), "{notes:?}");
}

#[test]
fn stdin_at_dev_null_is_an_empty_input_event() {
    let e = event_for(Stdin::Null);
    assert_eq!(error_of(&e), "empty input");
}

#[test]
fn no_stdin_at_all_is_an_empty_input_event() {
    let e = event_for(Stdin::Closed);
    assert_eq!(error_of(&e), "empty input");
}

#[test]
fn codex_notify_passes_the_json_as_the_last_argument() {
    let json = r#"{"type":"agent-turn-complete","thread-id":"t1","turn-id":"u1","cwd":"/p","input-messages":["hi"],"last-assistant-message":"done"}"#;
    let sandbox = Sandbox::new();
    sandbox.relay().args(["--cli", "codex", json]).stdin(Stdin::Null).run();
    let event = sandbox.only_event();
    let e = &event.envelope;
    assert_eq!(e.cli, "codex");
    assert_eq!(e.event.as_deref(), Some("agent-turn-complete"));
    assert_eq!(e.error, None);
    assert_eq!(e.bytes, json.len() as u64);
    assert!(event.text.ends_with(&format!("\"payload\":{json}}}\n")), "verbatim");
    assert!(sandbox.diagnostics().is_empty(), "{:?}", sandbox.diagnostics());
}

// The relay checks an object as it reads it and writes the text it checked without parsing it
// again: what it vouches for must be exactly what serde_json accepts, whatever the size.

/// A `PostToolUse` object of exactly `len` bytes, its bulk a string full of escapes.
fn escaped_object(len: usize) -> Vec<u8> {
    let head = br#"{"hook_event_name":"PostToolUse","session_id":"s","tool_response":""#;
    let line = br#"    let x = \"a\\b\"; // \u00e9 \/ \t\n"#;
    let mut text = head.to_vec();
    while text.len() + line.len() + 2 <= len {
        text.extend_from_slice(line);
    }
    text.resize(len - 2, b' ');
    text.extend_from_slice(b"\"}");
    text
}

#[test]
fn an_object_ending_exactly_where_a_read_ends_is_complete_while_stdin_stays_open() {
    // 64 KiB: the first read's size and a default pipe's; the others, later reads' ends.
    for len in [64 << 10, 128 << 10, 1 << 20] {
        let sandbox = Sandbox::new();
        let payload = escaped_object(len);
        let run = sandbox.relay().stdin(Stdin::HeldOpen(payload.clone())).run();
        assert!(run.elapsed < Duration::from_secs(1), "{len}: took {:?}", run.elapsed);
        let event = sandbox.only_event();
        assert_eq!(event.envelope.error, None, "{len}");
        assert_eq!(event.envelope.event.as_deref(), Some("PostToolUse"));
        let text = std::str::from_utf8(&payload).unwrap();
        assert!(event.text.ends_with(&format!("\"payload\":{text}}}\n")), "{len}: verbatim");
    }
}

#[test]
fn a_large_object_arriving_in_pieces_is_the_same_payload() {
    let payload = escaped_object(300 << 10);
    // Cut inside escapes and \u sequences alike, whatever the reads return.
    let pieces: Vec<Vec<u8>> = payload.chunks(4099).map(<[u8]>::to_vec).collect();
    let sandbox = Sandbox::new();
    sandbox.relay().stdin(Stdin::Pieces(pieces, Duration::from_millis(1))).run();
    let event = sandbox.only_event();
    assert_eq!(event.envelope.error, None);
    let text = std::str::from_utf8(&payload).unwrap();
    assert!(event.text.ends_with(&format!("\"payload\":{text}}}\n")));
}

#[test]
fn invalid_utf8_inside_a_string_is_kept_raw_and_names_its_event() {
    let mut text = br#"{"hook_event_name":"Stop","x":"caf"#.to_vec();
    text.extend_from_slice(b"\xe9\"}");
    let e = event_for(Stdin::Bytes(text.clone()));
    assert!(error_of(&e).starts_with("input is not UTF-8"), "{e:?}");
    assert_eq!(e.raw_encoding, Some(RawEncoding::Base64));
    assert_eq!(e.raw_bytes().as_deref(), Some(&text[..]));
    assert_eq!(e.event.as_deref(), Some("Stop"));
    assert_eq!(e.payload, None);
}

#[test]
fn a_nul_or_other_control_byte_inside_a_string_is_invalid_json_kept_raw() {
    for control in [0u8, 0x1f, b'\n'] {
        let mut text = br#"{"hook_event_name":"Stop","x":"a"#.to_vec();
        text.push(control);
        text.extend_from_slice(b"b\"}");
        let e = event_for(Stdin::Bytes(text.clone()));
        assert!(error_of(&e).starts_with("invalid JSON: control character"), "{e:?}");
        assert_eq!(e.raw_bytes().as_deref(), Some(&text[..]), "{control}");
        assert_eq!(e.event.as_deref(), Some("Stop"));
        assert_eq!(e.payload, None);
    }
}

#[test]
fn a_large_object_that_goes_wrong_near_its_end_is_kept_raw_whole() {
    let mut text = escaped_object(1 << 20);
    let at = text.len() - 10;
    text[at] = b'\x01';
    let e = event_for(Stdin::Bytes(text.clone()));
    assert!(error_of(&e).starts_with("invalid JSON: control character"), "{e:?}");
    assert_eq!(e.raw_bytes().as_deref(), Some(&text[..]));
    assert_eq!(e.event.as_deref(), Some("PostToolUse"), "salvaged");
}

#[test]
fn deep_nesting_is_a_payload_kept_verbatim() {
    // Deeper than a full decode goes (serde_json's 128): the relay accepts any depth it can
    // store, and readers keep what they cannot decode as text.
    for depth in [100, 5000] {
        let text = format!(
            r#"{{"hook_event_name":"Stop","deep":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let sandbox = Sandbox::new();
        sandbox.relay().input(text.clone()).run();
        let listing = hookline_relay::layout::list(&sandbox.events, 0).unwrap();
        assert_eq!(listing.events.len(), 1, "{depth}");
        let bytes = std::fs::read(listing.events[0].path(&sandbox.events)).unwrap();
        let envelope = hookline_relay::envelope::RawEnvelope::parse(&bytes).unwrap();
        assert_eq!(envelope.error, None, "{depth}");
        assert_eq!(envelope.event.as_deref(), Some("Stop"));
        assert_eq!(envelope.payload.map(|p| p.get().to_owned()), Some(text), "{depth}");
    }
}
