//! The merge rules: what `install` and `uninstall` do to a settings document.
//!
//! * Per event, our entry is one item appended to `hooks.<event>`. Nothing that is not ours
//!   is reordered, rewritten or dropped.
//! * An item of ours whose content differs from what we would write (older relay path, older
//!   flags, another timeout) is replaced where it stands; further items of ours for the same
//!   event are duplicates and are removed, as are our handlers sitting in someone else's group.
//! * Items of ours under events that must not be registered (not known to the installed CLI
//!   version, or never to be registered) are removed, and so is an event array or `hooks`
//!   object left empty by that.
//! * `uninstall` removes every item of ours and the containers that held nothing else.

use std::fmt;

use serde_json::{Value, json};

use crate::install::dialect::{Dialect, Item};
use crate::install::document::{Doc, DocError, Kind, Step, keys, position};

/// One event to register, with the item the dialect writes for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// The native event name.
    pub event: String,
    /// The item to append to `hooks.<event>`.
    pub entry: Value,
}

/// What happened to one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Our entry was appended.
    Added,
    /// Our entry was there, as we would write it.
    Unchanged,
    /// Our entry was there but different, and was replaced in place; or duplicates of it
    /// were removed.
    Updated {
        /// The command it had, when the command changed.
        was: Option<String>,
        /// How many other entries of ours were removed.
        duplicates: usize,
    },
    /// Our entries were removed.
    Removed {
        /// Why, when it is not an uninstall.
        why: Option<String>,
    },
}

/// One line of a report: `hooks.Stop: already installed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The event.
    pub event: String,
    /// What happened to it.
    pub change: Change,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hooks.{}: ", self.event)?;
        match &self.change {
            Change::Added => write!(f, "added"),
            Change::Unchanged => write!(f, "already installed"),
            Change::Updated { was, duplicates } => {
                write!(f, "updated in place")?;
                if let Some(was) = was {
                    write!(f, " (was: {was})")?;
                }
                match duplicates {
                    0 => Ok(()),
                    1 => write!(f, ", 1 duplicate removed"),
                    n => write!(f, ", {n} duplicates removed"),
                }
            }
            Change::Removed { why: None } => write!(f, "removed"),
            Change::Removed { why: Some(why) } => write!(f, "removed ({why})"),
        }
    }
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The new text; `None` when the file should not exist.
    pub text: Option<String>,
    /// One line per event touched or checked.
    pub lines: Vec<Line>,
    /// Whether the file was missing or empty and was started from `{}`.
    pub created: bool,
}

fn hooks() -> Vec<Step> {
    keys(&["hooks"])
}

fn event_path(event: &str) -> Vec<Step> {
    vec![Step::Key("hooks".into()), Step::Key(event.into())]
}

fn is_blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

fn parse_root(text: String) -> Result<Doc, DocError> {
    let doc = Doc::parse(text)?;
    let root = doc.find(&[])?.ok_or_else(|| DocError::Internal("no root".into()))?;
    if !matches!(root.kind, Kind::Object(_)) {
        let (line, column) = position(doc.text(), root.span.start);
        return Err(DocError::Shape {
            json_path: "the top level".into(),
            expected: "an object",
            line,
            column,
        });
    }
    Ok(doc)
}

/// The items of `hooks.<event>`, classified.
fn items(doc: &Doc, dialect: Dialect, event: &str) -> Result<Vec<(Item, Value)>, DocError> {
    let Some(node) = doc.array(&event_path(event))? else {
        return Ok(Vec::new());
    };
    let Kind::Array(elements) = &node.kind else {
        return Ok(Vec::new());
    };
    Ok(elements
        .iter()
        .map(|e| {
            let value = doc.value(e);
            (dialect.classify(&value), value)
        })
        .collect())
}

/// Removes our handlers from the given groups/items, last first so indexes stay valid.
fn remove_items(
    doc: &mut Doc,
    event: &str,
    mut targets: Vec<(usize, Option<usize>)>,
) -> Result<(), DocError> {
    targets.sort();
    for (group, handler) in targets.into_iter().rev() {
        let mut path = event_path(event);
        path.push(Step::Index(group));
        if let Some(h) = handler {
            path.push(Step::Key("hooks".into()));
            path.push(Step::Index(h));
        }
        doc.remove(&path)?;
    }
    Ok(())
}

/// Removes every item of ours under `hooks.<event>`, and the event when nothing else is left
/// in it. Returns how many were removed.
fn remove_ours(doc: &mut Doc, dialect: Dialect, event: &str) -> Result<usize, DocError> {
    let found = items(doc, dialect, event)?;
    let total = found.len();
    let mut targets = Vec::new();
    for (i, (item, _)) in found.into_iter().enumerate() {
        match item {
            Item::Ours => targets.push((i, None)),
            Item::Mixed(handlers) => targets.extend(handlers.into_iter().map(|h| (i, Some(h)))),
            Item::Foreign => {}
        }
    }
    let removed = targets.len();
    let whole = targets.iter().filter(|(_, h)| h.is_none()).count();
    if removed == 0 {
        return Ok(0);
    }
    if whole == total {
        doc.remove(&event_path(event))?;
    } else {
        remove_items(doc, event, targets)?;
    }
    Ok(removed)
}

/// Makes `hooks.<event>` hold exactly one entry of ours, as wanted.
fn ensure(doc: &mut Doc, dialect: Dialect, wanted: &Wanted) -> Result<Change, DocError> {
    let event = wanted.event.as_str();
    if doc.object(&hooks())?.is_none() {
        doc.insert_member(&[], "hooks", &json!({ event: [wanted.entry] }))?;
        return Ok(Change::Added);
    }
    if doc.array(&event_path(event))?.is_none() {
        doc.insert_member(&hooks(), event, &json!([wanted.entry]))?;
        return Ok(Change::Added);
    }
    let found = items(doc, dialect, event)?;
    let mut ours = Vec::new();
    let mut stray = Vec::new();
    for (i, (item, _)) in found.iter().enumerate() {
        match item {
            Item::Ours => ours.push(i),
            Item::Mixed(handlers) => stray.extend(handlers.iter().map(|h| (i, Some(*h)))),
            Item::Foreign => {}
        }
    }
    let Some((&keep, others)) = ours.split_first() else {
        remove_items(doc, event, stray)?;
        doc.append(&event_path(event), &wanted.entry)?;
        return Ok(Change::Added);
    };
    let old = &found[keep].1;
    let replaced = *old != wanted.entry;
    if replaced {
        let mut path = event_path(event);
        path.push(Step::Index(keep));
        doc.replace(&path, &wanted.entry)?;
    }
    let duplicates = others.len() + stray.len();
    stray.extend(others.iter().map(|i| (*i, None)));
    remove_items(doc, event, stray)?;
    if !replaced && duplicates == 0 {
        return Ok(Change::Unchanged);
    }
    let was =
        dialect.command_of(old).filter(|c| Some(c) != dialect.command_of(&wanted.entry).as_ref());
    Ok(Change::Updated { was, duplicates })
}

/// Registers `wanted` in a settings text (`None`: the file does not exist). Items of ours
/// under other events are removed, with `why_not(event)` as the reason.
pub fn install(
    before: Option<&str>,
    dialect: Dialect,
    wanted: &[Wanted],
    why_not: impl Fn(&str) -> String,
) -> Result<Merged, DocError> {
    let created = is_blank(before);
    let text = match before {
        Some(text) if !created => text.to_owned(),
        _ => "{}\n".to_owned(),
    };
    let mut doc = parse_root(text)?;
    if created && dialect.versioned() {
        doc.insert_member(&[], "version", &json!(1))?;
    }
    // Refuse before changing anything when a value we must write into has the wrong shape.
    doc.object(&hooks())?;
    for w in wanted {
        doc.array(&event_path(&w.event))?;
    }
    let mut lines = Vec::new();
    for w in wanted {
        let change = ensure(&mut doc, dialect, w)?;
        lines.push(Line { event: w.event.clone(), change });
    }
    for event in event_names(&doc)? {
        if wanted.iter().any(|w| w.event == event) || !is_array(&doc, &event)? {
            continue;
        }
        if remove_ours(&mut doc, dialect, &event)? > 0 {
            lines.push(Line { change: Change::Removed { why: Some(why_not(&event)) }, event });
        }
    }
    drop_empty_hooks(&mut doc, &lines)?;
    Ok(Merged { text: Some(doc.into_text()), lines, created })
}

/// Removes every entry of ours from a settings text, and the containers that held nothing
/// else. For a file of hookline's own, `text` is `None` when nothing else is left.
pub fn uninstall(before: Option<&str>, dialect: Dialect) -> Result<Merged, DocError> {
    let Some(text) = before.filter(|t| !t.trim().is_empty()) else {
        return Ok(Merged { text: before.map(str::to_owned), lines: Vec::new(), created: false });
    };
    let mut doc = parse_root(text.to_owned())?;
    doc.object(&hooks())?;
    let mut lines = Vec::new();
    for event in event_names(&doc)? {
        if doc.find(&event_path(&event))?.is_some_and(|n| matches!(n.kind, Kind::Array(_)))
            && remove_ours(&mut doc, dialect, &event)? > 0
        {
            lines.push(Line { event, change: Change::Removed { why: None } });
        }
    }
    drop_empty_hooks(&mut doc, &lines)?;
    let root = doc.value(doc.find(&[])?.ok_or_else(|| DocError::Internal("no root".into()))?);
    let scaffolding = root == json!({}) || root == json!({"version": 1});
    let text = if dialect.own_file() && scaffolding && !lines.is_empty() {
        None
    } else {
        Some(doc.into_text())
    };
    Ok(Merged { text, lines, created: false })
}

/// The events under which a settings text has entries of ours, with their commands.
pub fn registered(text: &str, dialect: Dialect) -> Result<Vec<(String, Vec<String>)>, DocError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let doc = parse_root(text.to_owned())?;
    doc.object(&hooks())?;
    let mut out = Vec::new();
    for event in event_names(&doc)? {
        if !doc.find(&event_path(&event))?.is_some_and(|n| matches!(n.kind, Kind::Array(_))) {
            continue;
        }
        let mut commands = Vec::new();
        for (item, value) in items(&doc, dialect, &event)? {
            match item {
                Item::Ours => commands.extend(dialect.command_of(&value)),
                Item::Mixed(handlers) => {
                    for h in handlers {
                        let handler = &value["hooks"][h];
                        commands.extend(
                            ["command", "bash"]
                                .iter()
                                .find_map(|k| handler.get(k).and_then(Value::as_str))
                                .map(str::to_owned),
                        );
                    }
                }
                Item::Foreign => {}
            }
        }
        if !commands.is_empty() {
            out.push((event, commands));
        }
    }
    Ok(out)
}

fn is_array(doc: &Doc, event: &str) -> Result<bool, DocError> {
    Ok(doc.find(&event_path(event))?.is_some_and(|n| matches!(n.kind, Kind::Array(_))))
}

fn event_names(doc: &Doc) -> Result<Vec<String>, DocError> {
    Ok(match doc.object(&hooks())? {
        Some(node) => match &node.kind {
            Kind::Object(members) => members.iter().map(|m| m.key.clone()).collect(),
            _ => Vec::new(),
        },
        None => Vec::new(),
    })
}

/// Removes `hooks` when our removals left it empty.
fn drop_empty_hooks(doc: &mut Doc, lines: &[Line]) -> Result<(), DocError> {
    let removed = lines.iter().any(|l| matches!(l.change, Change::Removed { .. }));
    let empty =
        doc.object(&hooks())?.is_some_and(|n| matches!(&n.kind, Kind::Object(m) if m.is_empty()));
    if removed && empty {
        doc.remove(&hooks())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
