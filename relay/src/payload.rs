//! The input, understood: a JSON object payload and its event name, or why there is none.

use hookline_relay::envelope::{MAX_NAME_BYTES, salvage_field};
use hookline_relay::rawjson::{Members, decode_string};
use serde_json::value::RawValue;

use crate::args::clip;
use crate::input::{Input, Limits};

/// The input, understood.
pub(crate) struct Parsed<'a> {
    /// The JSON object's text, when the input is one: JSON serde_json accepts.
    pub(crate) payload: Option<&'a str>,
    /// Its native event name, or one salvaged from input that is not a usable payload.
    pub(crate) event: Option<String>,
    /// Why the input is not a usable payload.
    pub(crate) error: Option<String>,
}

impl<'a> Parsed<'a> {
    pub(crate) fn from_input(input: &'a Input, limits: Limits) -> Parsed<'a> {
        let fail = |error: String| Parsed {
            payload: None,
            event: salvage_event_name(&input.bytes),
            error: Some(error),
        };
        if input.truncated {
            return fail(format!(
                "input is longer than the {} byte cap; only its head is kept",
                limits.max_bytes
            ));
        }
        let Some(end) = input.json_end else {
            return fail(
                match (input.bytes.iter().all(u8::is_ascii_whitespace), input.timed_out) {
                    (true, true) => format!("no input before the {:?} deadline", limits.deadline),
                    (true, false) => "empty input".into(),
                    (false, true) => {
                        format!("input incomplete at the {:?} deadline", limits.deadline)
                    }
                    (false, false) => invalid(&input.bytes),
                },
            );
        };
        let text = match std::str::from_utf8(&input.bytes[..end]) {
            Ok(text) => text,
            Err(e) => return fail(format!("input is not UTF-8: {e}")),
        };
        if input.vouched {
            // Checked as it was read: an object serde_json accepts, now known to be UTF-8.
            let payload = text.trim_start_matches([' ', '\t', '\n', '\r']);
            return Parsed { payload: Some(payload), event: event_name(payload), error: None };
        }
        let raw: &RawValue = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(e) => return fail(format!("invalid JSON: {e}")),
        };
        if !raw.get().starts_with('{') {
            let kind = match raw.get().as_bytes()[0] {
                b'[' => "an array",
                b'"' => "a string",
                b't' | b'f' => "a boolean",
                b'n' => "null",
                _ => "a number",
            };
            return fail(format!("payload is {kind}, not a JSON object"));
        }
        Parsed { payload: Some(raw.get()), event: event_name(raw.get()), error: None }
    }
}

fn invalid(bytes: &[u8]) -> String {
    if let Err(e) = std::str::from_utf8(bytes) {
        return format!("input is not UTF-8: {e}");
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(e) => format!("invalid JSON: {e}"),
        Ok(_) => "invalid JSON".into(),
    }
}

/// The native event name from a payload object: `hook_event_name`, `hookEventName`, or `type`
/// (Codex's `notify`), in that order of preference.
///
/// The payload was validated once already; this walks its top-level keys without parsing the
/// values it passes over, and stops at `hook_event_name`, which CLIs put before their large
/// fields (`tool_input`, `tool_response`): the payload is not parsed a second time.
fn event_name(payload: &str) -> Option<String> {
    const KEYS: [&str; 3] = ["\"hook_event_name\"", "\"hookEventName\"", "\"type\""];
    let mut found: [Option<String>; 3] = Default::default();
    for (key, value) in Members::new(payload) {
        let Some(slot) = KEYS.iter().position(|k| *k == key) else { continue };
        if found[slot].is_none() {
            // Decoded as the readers decode it: a lone surrogate does not lose the name.
            found[slot] = decode_string(value)
                .filter(|name| !name.is_empty())
                .map(|name| clip(&name, MAX_NAME_BYTES).into_owned());
        }
        if found[0].is_some() {
            break;
        }
    }
    found.into_iter().flatten().next()
}

/// Finds `"hook_event_name": "X"` (or `hookEventName`) in bytes that are not valid JSON, so a
/// truncated or damaged payload still names its event.
fn salvage_event_name(bytes: &[u8]) -> Option<String> {
    salvage_field(bytes, "hook_event_name").or_else(|| salvage_field(bytes, "hookEventName"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_name_comes_from_any_known_field() {
        let name = |json: &str| event_name(json);
        assert_eq!(name(r#"{"hook_event_name":"Stop"}"#).as_deref(), Some("Stop"));
        assert_eq!(name(r#"{"hookEventName":"PreToolUse"}"#).as_deref(), Some("PreToolUse"));
        assert_eq!(
            name(r#"{"type":"agent-turn-complete"}"#).as_deref(),
            Some("agent-turn-complete")
        );
        assert_eq!(name(r#"{"hook_event_name":7,"type":"x"}"#).as_deref(), Some("x"));
        assert_eq!(name(r#"{"other":1}"#), None);
    }

    #[test]
    fn top_level_members_are_found_without_looking_inside_values() {
        let text = r#" { "a" : {"hook_event_name": "Nested", "x": [1, {"y": "}"}]},
            "b\"q": "s,\"}", "n": -1.5e3, "t": true, "hook_event_name": "Stop" } "#;
        let members: Vec<(&str, &str)> = Members::new(text).collect();
        let keys: Vec<&str> = members.iter().map(|m| m.0).collect();
        assert_eq!(keys, [r#""a""#, r#""b\"q""#, r#""n""#, r#""t""#, r#""hook_event_name""#]);
        assert_eq!(members[1].1, r#""s,\"}""#);
        assert_eq!(members[2].1, "-1.5e3");
        assert_eq!(members[4].1, r#""Stop""#);
        assert_eq!(event_name(text.trim()).as_deref(), Some("Stop"));
    }

    #[test]
    fn the_event_name_of_every_real_payload_matches_a_full_parse() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let Ok(raw) = serde_json::from_str::<&RawValue>(&text) else { continue };
            let full: serde_json::Value = serde_json::from_str(&text).unwrap();
            let expected = full["hook_event_name"].as_str().map(str::to_owned);
            assert_eq!(event_name(raw.get()), expected, "{text}");
            checked += 1;
        }
        assert!(checked >= 2, "{checked}");
    }

    #[test]
    fn a_damaged_payload_still_names_its_event() {
        let cut = br#"{"session_id":"a","hook_event_name" : "PostToolUse","tool_response":"xxx"#;
        assert_eq!(salvage_event_name(cut).as_deref(), Some("PostToolUse"));
        assert_eq!(salvage_event_name(br#"{"hook_event_name":"a/../b"}"#), None);
    }
}
