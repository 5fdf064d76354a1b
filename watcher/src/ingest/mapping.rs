//! Envelope + profile → canonical event.
//!
//! The event is mapped by the profile of the CLI that produced it, told from its payload
//! ([`Profiles::resolve`]): the one named by the envelope's `cli` (the registration the relay
//! ran for), unless the payload carries another profile's marks (Cursor and Grok Build run
//! Claude's hooks with their own payloads) or lacks what every payload of the named CLI has.
//! That profile's first rule matching the native event name and the payload builds the
//! canonical kind. Nothing is dropped: no profile, a producer no profile recognises, no event
//! name, no matching rule or a kind the rule cannot build all give [`Kind::Unknown`] with the
//! reason. A payload the relay could not read (truncated, invalid) is mapped by its event name
//! alone, with an empty payload, so that a huge `PostToolUse` still ends its tool; its producer
//! is told from the marks salvaged from its bytes.

use serde_json::{Map, Value};

use crate::canonical::{
    CANONICAL_VERSION, Event, Kind, KindName, SourceRef, TodoChange, TodoEntry,
};
use crate::format::envelope::{RawEnvelope, salvage_field};
use crate::format::rawjson;
use crate::profile::{Convert, Extract, FieldPath, Profile, Profiles, Seen, TodoRule, Unresolved};
use crate::vocab::TaskStatus;

/// Longest text kept in a canonical field (`last_message`, `message`, ...), in bytes. A longer
/// one keeps its head and its tail with [`CUT`] between them (see [`cap_text`]).
pub const MAX_TEXT: usize = 2000;

/// Longest text kept in a field of a list item (`as = "items"`), in bytes.
pub(crate) const MAX_ITEM_TEXT: usize = 500;

/// What stands for the middle taken out of a text longer than its cap.
pub const CUT: &str = " […] ";

/// Most items kept of a list (`as = "items"`, a todo list).
pub(crate) const MAX_ITEMS: usize = 100;

/// Payload keys that hold a session id in one CLI or another: where the session of an event no
/// profile maps is looked for.
const SESSION_KEYS: &[&str] = &["session_id", "sessionId", "conversation_id", "conversationId"];

/// Maps one envelope to its canonical event.
///
/// Only the payload members some profile looks at are decoded ([`Profile::payload_keys`]),
/// leniently ([`rawjson`]): a payload the relay accepted is never refused, however large or odd
/// the members mapping does not need.
pub fn map_envelope(profiles: &Profiles, envelope: &RawEnvelope, source: SourceRef) -> Event {
    let readable = envelope.payload.as_deref().filter(|raw| raw.get().starts_with('{'));
    let payload = Value::Object(match readable {
        Some(raw) => rawjson::decode_members(raw.get(), |key| profiles.wants_key(key)),
        None => Map::new(),
    });
    let payload = &payload;
    let resolved = match readable {
        Some(_) => {
            profiles.resolve(&envelope.cli, payload, Seen::Whole { left_out: &envelope.dropped })
        }
        None => {
            let marks = salvage_marks(profiles, envelope);
            profiles.resolve(&envelope.cli, &marks, Seen::Salvaged)
        }
    };
    // The host's pid and session id come from the environment the relay saw, read under the
    // names of the CLI it was registered for (`CLAUDE_PID`, ...): another CLI running that
    // registration may have inherited them from an ancestor, so they are not its.
    let own = match &resolved {
        Ok(p) => p.name == envelope.cli,
        Err(why) => matches!(why, Unresolved::NoProfile { .. }),
    };
    let profile = resolved.as_ref().ok().copied();
    let native = envelope.event.as_deref();
    let mut todo = None;
    let (kind, rule) = match (&resolved, native) {
        (Err(why), _) => (unknown(why.to_string()), "none".to_owned()),
        (Ok(_), None) => {
            let why = envelope.error.as_deref().unwrap_or("the payload names no event");
            (unknown(format!("no event name: {why}")), "none".to_owned())
        }
        (Ok(profile), Some(native)) => match profile.rule_for(native, payload) {
            Some(rule) => {
                todo = rule.todo.as_ref().and_then(|t| todo_change(t, payload));
                (
                    build(profile, rule.kind, &rule.set, &rule.from, payload, &rule.label),
                    rule.label.clone(),
                )
            }
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
    let session_id = match profile {
        Some(_) => ident(|p| &p.fields.session_id),
        None => SESSION_KEYS.iter().find_map(|k| text(payload.get(*k)?)),
    }
    .or_else(|| envelope.host_session_id.clone().filter(|_| own))
    .or_else(|| {
        let raw = raw()?;
        SESSION_KEYS.iter().find_map(|k| salvage_field(&raw, k))
    });
    let input_digest = match (&kind, profile) {
        (Kind::ToolStart { .. }, Some(p)) => {
            p.fields.tool_input.iter().find_map(|path| path.get(payload)).map(digest)
        }
        _ => None,
    };
    Event {
        v: CANONICAL_VERSION,
        kind,
        cli: profile.map_or_else(|| envelope.cli.clone(), |p| p.name.clone()),
        session_id,
        tag: envelope.tag.clone(),
        host: None,
        agent_id: ident(|p| &p.fields.agent_id),
        turn_id: ident(|p| &p.fields.turn_id),
        cwd: ident(|p| &p.fields.cwd),
        transcript_path: ident(|p| &p.fields.transcript_path),
        native: envelope.event.clone(),
        rule,
        ts_ns: envelope.ts_ns,
        host_pid: envelope.host_pid.filter(|_| own),
        todo,
        input_digest,
        source,
        echo_of: None,
    }
}

/// The marks a producer is told by (the keys [`Profiles::detect_keys`] reads), salvaged from
/// the bytes of input that was not a readable payload: a key followed by `:` is there, with
/// its value when that is a short string ([`salvage_field`]), else `true`. Only used to tell
/// the producer: its rules still see an empty payload, so a salvaged value never meets a
/// rule's condition.
fn salvage_marks(profiles: &Profiles, envelope: &RawEnvelope) -> Value {
    let mut marks = Map::new();
    let Some(raw) = envelope.raw_bytes() else {
        return Value::Object(marks);
    };
    for key in profiles.detect_keys() {
        let value = match salvage_field(&raw, key) {
            Some(text) => Value::String(text),
            None if has_key(&raw, key) => Value::Bool(true),
            None => continue,
        };
        marks.insert(key.to_owned(), value);
    }
    Value::Object(marks)
}

/// Whether `"key"` followed by `:` appears in the bytes.
fn has_key(bytes: &[u8], key: &str) -> bool {
    let quoted = format!("\"{key}\"");
    let quoted = quoted.as_bytes();
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(quoted.len()).position(|w| w == quoted) {
        from += at + quoted.len();
        let rest = &bytes[from..];
        let n = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if rest.get(n) == Some(&b':') {
            return true;
        }
    }
    false
}

/// A stable digest of a JSON value (FNV-1a over its compact form): equal inputs, equal digests,
/// from one run to the next.
pub fn digest(value: &Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in value.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// What a rule's `todo` reads from the payload: one item by id, or a whole list. Nothing when
/// the payload lacks the id (or the list).
fn todo_change(rule: &TodoRule, payload: &Value) -> Option<TodoChange> {
    let read = |path: &Option<FieldPath>, from: &Value| {
        path.as_ref().and_then(|p| p.get(from)).and_then(|v| item_text(v, MAX_TEXT))
    };
    let status = |from: &Value| {
        read(&rule.status, from).or_else(|| rule.set_status.map(|s| s.as_str().to_owned()))
    };
    match &rule.list {
        Some(list) => {
            let items = list.get(payload)?.as_array()?;
            let items = items
                .iter()
                .take(MAX_ITEMS)
                .map(|item| TodoEntry {
                    id: read(&rule.id, item),
                    subject: read(&rule.subject, item),
                    status: status(item),
                })
                .collect();
            Some(TodoChange::List { items })
        }
        None => Some(TodoChange::Item {
            id: read(&rule.id, payload)?,
            subject: read(&rule.subject, payload),
            status: status(payload),
        }),
    }
}

/// A scalar as capped text (numbers and booleans written out); nothing for other values.
fn item_text(value: &Value, max: usize) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    Some(cap_at(text, max))
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
                    TaskStatus::read(status) != TaskStatus::Finished
                })
                .count();
            Some(Value::from(active))
        }
        Convert::Items => {
            let items = value.as_array()?;
            let items = items
                .iter()
                .take(MAX_ITEMS)
                .map(|item| {
                    let mut kept = Map::new();
                    for (key, value) in item.as_object().into_iter().flatten() {
                        let value = match value {
                            Value::Bool(_) => value.clone(),
                            other => match item_text(other, MAX_ITEM_TEXT) {
                                Some(text) => Value::String(text),
                                None => continue,
                            },
                        };
                        kept.insert(key.clone(), value);
                    }
                    Value::Object(kept)
                })
                .collect();
            Some(Value::Array(items))
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

fn cap(text: String) -> String {
    cap_at(text, MAX_TEXT)
}

fn cap_at(text: String, max: usize) -> String {
    match cap_text(&text, max) {
        Some(capped) => capped,
        None => text,
    }
}

/// `text` cut to at most `max` bytes, or `None` when it fits: its first fifth, [`CUT`], and
/// its tail, on character boundaries. The tail is what decisions read of a long message (its
/// last sentence: the nudge quotes it, the classifier is shown the last few); the head says
/// what it was about.
pub fn cap_text(text: &str, max: usize) -> Option<String> {
    if text.len() <= max {
        return None;
    }
    let room = max.saturating_sub(CUT.len());
    let mut head = room / 5;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (room - room / 5);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Some(format!("{}{CUT}{}", &text[..head], &text[tail..]))
}

/// The part of a text after the last [`CUT`] (the whole text when it was not cut): where the
/// sentences of a long message that was cut can be found whole.
pub(crate) fn after_cut(text: &str) -> &str {
    text.rfind(CUT).map_or(text, |i| &text[i + CUT.len()..])
}

#[cfg(test)]
mod tests;
