//! The merge rules: what `install` and `uninstall` do to a settings document.
//!
//! * Per event, our entry is one item appended to `hooks.<event>`. Nothing that is not ours
//!   is reordered, rewritten or dropped.
//! * An item of ours whose content differs from what we would write (older relay path, older
//!   flags, another timeout) is replaced where it stands; further items of ours for the same
//!   event are duplicates and are removed, as are our handlers sitting in someone else's group.
//! * Items of ours under events that must not be registered (not known to the installed CLI
//!   version, or never to be registered) are removed, and so is an event array or `hooks`
//!   object that hookline created and that is left empty by that.
//! * `uninstall` removes every item of ours, the containers hookline created that held nothing
//!   else, and the file itself when hookline created it and nothing else is left. A container
//!   the user had, even empty (`"hooks": {}`, `"Stop": []`), stays: install then uninstall
//!   gives back the same bytes. What hookline created is its [`Scaffolding`], kept in the
//!   install record; without a record, every container left empty goes.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::install::dialect::{Dialect, Item, Shape as _};
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

/// What hookline created in a settings file: what uninstall may take away again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scaffolding {
    /// The file did not exist before hookline wrote it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file: bool,
    /// The containers hookline created, by JSON path (`hooks`, `hooks.Stop`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<String>,
    /// The file was empty (or only whitespace, this text) before hookline wrote it: uninstall
    /// gives it back as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blank: Option<String>,
}

impl Scaffolding {
    fn add(&mut self, path: String) {
        if !self.containers.contains(&path) {
            self.containers.push(path);
        }
    }

    fn forget(&mut self, path: &str) {
        self.containers.retain(|c| c != path);
    }
}

/// Whether a container left empty by removing our entries goes: when hookline created it, or,
/// with no record of what it created, always.
fn may_drop(scaffolding: Option<&Scaffolding>, path: &str) -> bool {
    scaffolding.is_none_or(|s| s.containers.iter().any(|c| c == path))
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
    /// What hookline has created in the file, this time and before.
    pub scaffolding: Scaffolding,
}

fn hooks() -> Vec<Step> {
    keys(&["hooks"])
}

fn event_path(event: &str) -> Vec<Step> {
    vec![Step::Key("hooks".into()), Step::Key(event.into())]
}

/// `hooks.<event>`, as [`Scaffolding`] names it.
fn event_name(event: &str) -> String {
    format!("hooks.{event}")
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
/// in it and `drop_empty`. Returns how many were removed.
fn remove_ours(
    doc: &mut Doc,
    dialect: Dialect,
    event: &str,
    drop_empty: bool,
) -> Result<usize, DocError> {
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
    if whole == total && drop_empty {
        doc.remove(&event_path(event))?;
    } else {
        remove_items(doc, event, targets)?;
    }
    Ok(removed)
}

/// Makes `hooks.<event>` hold exactly one entry of ours, as wanted; the containers it
/// creates are added to `made`.
fn ensure(
    doc: &mut Doc,
    dialect: Dialect,
    wanted: &Wanted,
    made: &mut Scaffolding,
) -> Result<Change, DocError> {
    let event = wanted.event.as_str();
    if doc.object(&hooks())?.is_none() {
        doc.insert_member(&[], "hooks", &json!({ event: [wanted.entry] }))?;
        made.add("hooks".into());
        made.add(event_name(event));
        return Ok(Change::Added);
    }
    if doc.array(&event_path(event))?.is_none() {
        doc.insert_member(&hooks(), event, &json!([wanted.entry]))?;
        made.add(event_name(event));
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
/// under other events are removed, with `why_not(event)` as the reason. `scaffolding` is what
/// earlier installs created (`None`: not known).
pub fn install(
    before: Option<&str>,
    dialect: Dialect,
    wanted: &[Wanted],
    why_not: impl Fn(&str) -> String,
    scaffolding: Option<&Scaffolding>,
) -> Result<Merged, DocError> {
    let mut made = scaffolding.cloned().unwrap_or_default();
    made.file |= before.is_none();
    if let Some(blank) = before.filter(|t| t.trim().is_empty()) {
        made.file = false;
        made.blank = Some(blank.to_owned());
    }
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
        let change = ensure(&mut doc, dialect, w, &mut made)?;
        lines.push(Line { event: w.event.clone(), change });
    }
    for event in event_names(&doc)? {
        if wanted.iter().any(|w| w.event == event) || !is_array(&doc, &event)? {
            continue;
        }
        let drop_empty = may_drop(scaffolding, &event_name(&event));
        if remove_ours(&mut doc, dialect, &event, drop_empty)? > 0 {
            if !is_array(&doc, &event)? {
                made.forget(&event_name(&event));
            }
            lines.push(Line { change: Change::Removed { why: Some(why_not(&event)) }, event });
        }
    }
    if drop_empty_hooks(&mut doc, &lines, scaffolding)? {
        made.forget("hooks");
    }
    Ok(Merged { text: Some(doc.into_text()), lines, created, scaffolding: made })
}

/// Removes every entry of ours from a settings text, and the containers hookline created
/// (`scaffolding`; `None`: not known, then every container left empty) that held nothing else.
/// `text` is `None` when the file should go: hookline created it and exactly what it started
/// the file with is left, or (not knowing) it is a file of hookline's own left empty.
pub fn uninstall(
    before: Option<&str>,
    dialect: Dialect,
    scaffolding: Option<&Scaffolding>,
) -> Result<Merged, DocError> {
    let unchanged = |text: Option<&str>| Merged {
        text: text.map(str::to_owned),
        lines: Vec::new(),
        created: false,
        scaffolding: Scaffolding::default(),
    };
    let Some(text) = before.filter(|t| !t.trim().is_empty()) else {
        return Ok(unchanged(before));
    };
    let mut doc = parse_root(text.to_owned())?;
    doc.object(&hooks())?;
    let mut lines = Vec::new();
    for event in event_names(&doc)? {
        let drop_empty = may_drop(scaffolding, &event_name(&event));
        if is_array(&doc, &event)? && remove_ours(&mut doc, dialect, &event, drop_empty)? > 0 {
            lines.push(Line { event, change: Change::Removed { why: None } });
        }
    }
    drop_empty_hooks(&mut doc, &lines, scaffolding)?;
    let root = doc.value(doc.find(&[])?.ok_or_else(|| DocError::Internal("no root".into()))?);
    let mut text = doc.into_text();
    if let Some(blank) = scaffolding.and_then(|s| s.blank.as_ref())
        && text == fresh_text(dialect)?
    {
        text.clone_from(blank);
    }
    let gone = match scaffolding {
        Some(s) => s.file && text == fresh_text(dialect)?,
        None => {
            let bare = root == json!({}) || root == json!({"version": 1});
            dialect.own_file() && bare && !lines.is_empty()
        }
    };
    Ok(Merged { text: (!gone).then_some(text), lines, ..unchanged(None) })
}

/// The text install starts a missing file with, before adding any entry.
fn fresh_text(dialect: Dialect) -> Result<String, DocError> {
    let mut doc = parse_root("{}\n".to_owned())?;
    if dialect.versioned() {
        doc.insert_member(&[], "version", &json!(1))?;
    }
    Ok(doc.into_text())
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

/// Removes `hooks` when our removals left it empty and hookline created it (or, not knowing,
/// always). Returns whether it was removed.
fn drop_empty_hooks(
    doc: &mut Doc,
    lines: &[Line],
    scaffolding: Option<&Scaffolding>,
) -> Result<bool, DocError> {
    let removed = lines.iter().any(|l| matches!(l.change, Change::Removed { .. }));
    let empty =
        doc.object(&hooks())?.is_some_and(|n| matches!(&n.kind, Kind::Object(m) if m.is_empty()));
    if removed && empty && may_drop(scaffolding, "hooks") {
        doc.remove(&hooks())?;
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
mod tests;
