//! JSON Schemas (draft 2020-12) of hookline's wire formats, generated from the Rust types that
//! write and read them (cargo feature `schema`). The files under `schemas/` are [`all`]
//! rendered with [`render`]; a test regenerates them and fails when they drift (see
//! `schemas/README.md`).
//!
//! Output formats (the envelope, events, views, decisions, replies) are described as written
//! (what a reader can rely on being there); the serve requests as read (what a writer may
//! leave out).

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::Value;

use crate::canonical::Event;
use crate::decide::Decision;
use crate::format::envelope::Envelope;
use crate::protocol::{Reply, Request};
use crate::state::View;

/// One wire format's schema.
#[derive(Debug, Clone)]
pub struct WireSchema {
    /// Its name: the file is `schemas/<name>.schema.json`.
    pub name: &'static str,
    /// What it describes, for the schema's `title`.
    pub title: &'static str,
    /// The schema.
    pub schema: Value,
}

impl WireSchema {
    /// The file's name under `schemas/`.
    pub fn file_name(&self) -> String {
        format!("{}.schema.json", self.name)
    }
}

/// Every wire format's schema, in the order of `schemas/README.md`.
pub fn all() -> Vec<WireSchema> {
    use Contract::{Deserialize as Read, Serialize as Written};
    let mut request =
        wire::<Request>("serve-request", "hookline serve request: one line on serve's stdin", Read);
    request.schema = with_request_id(request.schema);
    vec![
        wire::<Envelope>(
            "envelope",
            "hookline envelope: one event file, as hookline-relay writes it",
            Written,
        ),
        wire::<Event>("event", "hookline canonical event: one line of `hookline watch`", Written),
        wire::<Vec<View>>(
            "status",
            "hookline status --json: every session's view, most recent first",
            Written,
        ),
        wire::<Decision>(
            "decision",
            "hookline decision: `hookline decide --json`, serve's `decide` answer",
            Written,
        ),
        request,
        wire::<Reply>("serve-reply", "hookline serve reply: one line on serve's stdout", Written),
    ]
}

/// The schema of `T` under `contract`, as `schemas/<name>.schema.json`.
fn wire<T: JsonSchema>(name: &'static str, title: &'static str, contract: Contract) -> WireSchema {
    WireSchema { name, title, schema: root::<T>(contract, name, title) }
}

/// The schema as its file holds it: pretty-printed, with a final newline.
pub fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a schema is JSON");
    text.push('\n');
    text
}

/// The root schema of `T` under `contract`: its identity first (`$schema`, `$id`, `title`, a
/// note that it is generated, the type's own description), then the schema, with the doc
/// comments' rustdoc links written as plain text.
fn root<T: JsonSchema>(contract: Contract, name: &str, title: &str) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = contract;
    let mut schema = settings.into_generator().into_root_schema_for::<T>().to_value();
    plain_descriptions(&mut schema);
    let Value::Object(mut generated) = schema else {
        return schema;
    };
    let mut out = serde_json::Map::new();
    let id = format!("https://github.com/hookline/hookline/blob/main/schemas/{name}.schema.json");
    let comment = "Generated from hookline's Rust types (watcher/src/schema.rs); do not edit: \
                   `HOOKLINE_BLESS=1 cargo test -p hookline schema` rewrites it.";
    out.insert("$schema".into(), generated.remove("$schema").unwrap_or(Value::Null));
    out.insert("$id".into(), id.into());
    out.insert("title".into(), title.into());
    out.insert("$comment".into(), comment.into());
    generated.remove("title");
    if let Some(description) = generated.remove("description") {
        out.insert("description".into(), description);
    }
    out.extend(generated);
    Value::Object(out)
}

/// Rewrites every `description` without rustdoc link syntax: ``[`Name`]`` becomes `` `Name` ``
/// and ``[`text`](path)`` becomes `` `text` ``.
fn plain_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => *text = unlink(text),
                    value => plain_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain_descriptions),
        _ => {}
    }
}

/// ``[`code`]`` and ``[`code`](target)`` as `` `code` ``; any other text as it is.
fn unlink(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let Some(len) = rest[start..].find("`]") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&rest[start + 1..start + len + 1]);
        rest = &rest[start + len + 2..];
        if rest.starts_with('(')
            && let Some(close) = rest.find(')')
        {
            rest = &rest[close + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// Adds the optional `id` every request may carry (serve takes it off before reading the
/// rest, and echoes it in the reply) to each of the request's forms.
fn with_request_id(mut schema: Value) -> Value {
    let id = serde_json::json!({
        "description": "Any JSON value, echoed as the reply's `id` (`null` when left out)."
    });
    for form in schema.get_mut("oneOf").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(properties) = form.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert("id".into(), id.clone());
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_schemas_are_the_ones_the_types_give() {
        for schema in all() {
            crate::testing::assert_recorded(
                &format!("../schemas/{}", schema.file_name()),
                &render(&schema.schema),
            );
        }
    }

    #[test]
    fn rustdoc_links_are_written_as_code() {
        assert_eq!(
            unlink("Format version: [`FORMAT_VERSION`]."),
            "Format version: `FORMAT_VERSION`."
        );
        assert_eq!(unlink("([`clock::now_ns`](crate::clock::now_ns))"), "(`clock::now_ns`)");
        assert_eq!(unlink("`claude:map[3]`, [x](y)"), "`claude:map[3]`, [x](y)");
    }

    #[test]
    fn every_request_form_names_its_op_and_takes_an_id() {
        let request = all().into_iter().find(|s| s.name == "serve-request").unwrap().schema;
        let forms = request["oneOf"].as_array().unwrap();
        assert!(!forms.is_empty(), "{request:#}");
        for form in forms {
            assert!(form["properties"]["op"].is_object(), "{form:#}");
            assert!(form["properties"]["id"].is_object(), "{form:#}");
        }
    }
}
