//! The canonical vocabulary as a markdown table, rendered from the profiles themselves so that
//! the documentation cannot drift from the mapping it describes.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Condition, Profile, Profiles, Rule, Test};
use crate::canonical::FieldType;
use crate::vocab::KindName;

impl Profiles {
    /// A markdown table with one row per canonical kind: its fields, then, for each profile
    /// named in `clis`, the native events (with their conditions and constant fields) that
    /// produce it, and a last line with each profile's input-ready kinds.
    pub fn canonical_table(&self, clis: &[&str]) -> String {
        let profiles: Vec<&Profile> = clis.iter().filter_map(|name| self.get(name)).collect();
        let mut out = String::from("| kind | fields |");
        for p in &profiles {
            let _ = write!(out, " {} |", p.display_name);
        }
        out.push_str("\n|---|---|");
        for _ in &profiles {
            out.push_str("---|");
        }
        out.push('\n');
        for kind in KindName::ALL {
            let _ = write!(out, "| `{kind}` | {} |", fields_cell(kind.fields()));
            for p in &profiles {
                let cell = if kind == KindName::Unknown {
                    "any event no rule maps".to_owned()
                } else {
                    rules_cell(p, kind)
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
        out.push_str("| *input-ready* | |");
        for p in &profiles {
            let kinds: Vec<String> = p.input_ready.iter().map(|k| format!("`{k}`")).collect();
            let _ = write!(out, " {} |", kinds.join(", "));
        }
        out.push('\n');
        out
    }
}

fn fields_cell(fields: &[(&str, FieldType)]) -> String {
    if fields.is_empty() {
        return "—".to_owned();
    }
    fields
        .iter()
        .map(|(name, ty)| match ty {
            FieldType::OneOf(words) => format!("`{name}` ({})", words.join(", ")),
            _ => format!("`{name}`"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rules of a profile producing `kind`, those differing only by native name merged
/// (`sessionStart` / `SessionStart`), in rule order.
fn rules_cell(profile: &Profile, kind: KindName) -> String {
    let mut entries: Vec<(Vec<&str>, String)> = Vec::new();
    for rule in profile.rules.iter().filter(|r| r.kind == kind) {
        let detail = detail(rule);
        match entries.iter_mut().find(|(_, d)| *d == detail) {
            Some((natives, _)) if !natives.contains(&rule.native.as_str()) => {
                natives.push(&rule.native)
            }
            Some(_) => {}
            None => entries.push((vec![&rule.native], detail)),
        }
    }
    if entries.is_empty() {
        return "—".to_owned();
    }
    entries
        .iter()
        .map(|(natives, detail)| {
            let names: Vec<String> = natives.iter().map(|n| format!("`{n}`")).collect();
            format!("{}{detail}", names.join(" / "))
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// ` if a = x, not b present (c = y)`: the rule's conditions and constant fields.
fn detail(rule: &Rule) -> String {
    let conditions: Vec<String> = rule
        .when
        .iter()
        .map(|c| condition(c, false))
        .chain(rule.unless.iter().map(|c| condition(c, true)))
        .collect();
    let mut out = String::new();
    if !conditions.is_empty() {
        let _ = write!(out, " if {}", conditions.join(", "));
    }
    let set: Vec<String> = rule.set.iter().map(|(k, v)| format!("{k} = {}", value(v))).collect();
    if !set.is_empty() {
        let _ = write!(out, " ({})", set.join(", "));
    }
    out
}

fn condition(c: &Condition, negated: bool) -> String {
    let not = if negated { "not " } else { "" };
    match &c.test {
        Test::Present(true) => format!("{not}{} present", c.path),
        Test::Present(false) => format!("{not}{} absent", c.path),
        Test::AnyOf(values) if values.len() == 1 => {
            format!("{not}{} = {}", c.path, value(&values[0]))
        }
        Test::AnyOf(values) => {
            let values: Vec<String> = values.iter().map(value).collect();
            format!("{not}{} ∈ {{{}}}", c.path, values.join(", "))
        }
        Test::Prefix(prefix) => {
            format!("{not}{} starts with \"{}…\"", c.path, value(&Value::String(prefix.clone())))
        }
    }
}

fn value(v: &Value) -> String {
    match v {
        Value::String(s) => s.replace('|', "\\|"),
        other => other.to_string(),
    }
}
