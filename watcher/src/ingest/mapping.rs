//! Envelope + profile → canonical event.
//!
//! The profile named by the envelope's `cli` (or the one whose identifying keys the payload
//! carries) is looked up; its first rule matching the native event name and the payload
//! builds the canonical kind. Nothing is dropped: no profile, no event name, no matching rule
//! or a kind the rule cannot build all give [`Kind::Unknown`] with the reason. A payload the
//! relay could not read (truncated, invalid) is mapped by its event name alone, with an empty
//! payload, so that a huge `PostToolUse` still ends its tool.

use serde_json::{Map, Value};

use crate::canonical::{CANONICAL_VERSION, Event, Kind, KindName, SourceRef};
use crate::format::envelope::{Envelope, salvage_field};
use crate::profile::{Convert, Extract, FieldPath, Profile, Profiles};

/// Longest text kept in a canonical field (`last_message`, `message`, ...), in bytes.
pub const MAX_TEXT: usize = 2000;

/// Array item `status` values that mean a background task is finished.
const FINISHED: &[&str] = &[
    "completed",
    "complete",
    "done",
    "finished",
    "succeeded",
    "success",
    "failed",
    "failure",
    "error",
    "killed",
    "cancelled",
    "canceled",
    "stopped",
    "exited",
    "timeout",
];

/// Maps one envelope to its canonical event.
pub fn map_envelope(profiles: &Profiles, envelope: &Envelope, source: SourceRef) -> Event {
    let empty = Value::Object(Map::new());
    let payload = envelope.payload.as_ref().filter(|p| p.is_object()).unwrap_or(&empty);
    let profile = profiles.resolve(&envelope.cli, payload);
    let native = envelope.event.as_deref();
    let (kind, rule) = match (profile, native) {
        (None, _) => (unknown(format!("no profile named {:?}", envelope.cli)), "none".to_owned()),
        (Some(_), None) => {
            let why = envelope.error.as_deref().unwrap_or("the payload names no event");
            (unknown(format!("no event name: {why}")), "none".to_owned())
        }
        (Some(profile), Some(native)) => match profile.rule_for(native, payload) {
            Some(rule) => (
                build(profile, rule.kind, &rule.set, &rule.from, payload, &rule.label),
                rule.label.clone(),
            ),
            None => (
                unknown(format!("no rule for {native:?} in profile {}", profile.name)),
                format!("{}:none", profile.name),
            ),
        },
    };
    let ident = |pick: fn(&Profile) -> &[FieldPath]| {
        profile.and_then(|p| pick(p).iter().find_map(|path| text(path.get(payload)?)))
    };
    let raw = || envelope.raw_bytes();
    let session_id = ident(|p| &p.fields.session_id)
        .or_else(|| envelope.host_session_id.clone())
        .or_else(|| {
            let raw = raw()?;
            ["session_id", "sessionId", "conversation_id"]
                .iter()
                .find_map(|k| salvage_field(&raw, k))
        });
    Event {
        v: CANONICAL_VERSION,
        kind,
        cli: profile.map_or_else(|| envelope.cli.clone(), |p| p.name.clone()),
        session_id,
        tag: envelope.tag.clone(),
        agent_id: ident(|p| &p.fields.agent_id),
        turn_id: ident(|p| &p.fields.turn_id),
        cwd: ident(|p| &p.fields.cwd),
        transcript_path: ident(|p| &p.fields.transcript_path),
        native: envelope.event.clone(),
        rule,
        ts_ns: envelope.ts_ns,
        host_pid: envelope.host_pid,
        source,
        echo_of: None,
    }
}

fn unknown(reason: String) -> Kind {
    Kind::Unknown { reason: Some(reason) }
}

fn build(
    profile: &Profile,
    kind: KindName,
    set: &Map<String, Value>,
    from: &[(String, Extract)],
    payload: &Value,
    label: &str,
) -> Kind {
    let mut object = Map::new();
    object.insert("kind".into(), Value::String(kind.as_str().to_owned()));
    for (field, value) in set {
        object.insert(field.clone(), value.clone());
    }
    for (field, extract) in from {
        if let Some(value) = extract_value(extract, payload) {
            object.insert(field.clone(), value);
        }
    }
    let has_tool = kind.fields().iter().any(|(name, _)| *name == "tool");
    if has_tool && !object.contains_key("tool") {
        let tool = profile.fields.tool.iter().find_map(|path| text(path.get(payload)?));
        if let Some(tool) = tool {
            object.insert("tool".into(), Value::String(tool));
        }
    }
    serde_json::from_value(Value::Object(object))
        .unwrap_or_else(|e| unknown(format!("rule {label} built an invalid {kind}: {e}")))
}

fn extract_value(extract: &Extract, payload: &Value) -> Option<Value> {
    let value = extract.path.get(payload)?;
    match extract.convert {
        Convert::Text => text(value).map(Value::String),
        Convert::Bool => match value {
            Value::Bool(b) => Some(Value::Bool(*b)),
            Value::String(s) if s == "true" || s == "false" => Some(Value::Bool(s == "true")),
            _ => None,
        },
        Convert::Count => match value {
            Value::Number(n) => n.as_u64().map(|n| Value::from(n.min(u64::from(u32::MAX)))),
            Value::Array(items) => Some(Value::from(items.len())),
            _ => None,
        },
        Convert::CountActive => {
            let items = value.as_array()?;
            let active = items
                .iter()
                .filter(|item| {
                    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
                    !FINISHED.contains(&status.to_ascii_lowercase().as_str())
                })
                .count();
            Some(Value::from(active))
        }
        Convert::Word => {
            let word = match value {
                Value::String(s) => extract.values.get(s),
                other => extract.values.get(&other.to_string()),
            };
            word.or(extract.default.as_ref()).map(|w| Value::String(w.clone()))
        }
    }
}

/// A payload value as capped text: strings as they are, other values as compact JSON.
fn text(value: &Value) -> Option<String> {
    let text = match value {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(cap(text))
}

fn cap(mut text: String) -> String {
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests;
