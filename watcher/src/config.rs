//! Reading hookline's TOML files (the decision policy, the notifications file, profiles and
//! their overlays) so that every error names the file, the line and column, and the key path
//! (`notify[0].on`, `classifier.command`), says what a wrong type should have been, and
//! suggests the key or table meant by a misspelt one ([`suggest`]).
//!
//! The text is parsed once for reading; positions are looked up only when there is an error
//! to report, by parsing it again with spans. The command line reads its own files (its
//! notifications file) with the same [`Toml`].

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

pub use crate::errors::{ConfigError, ConfigKind};

/// One file's text, with what it is and how errors name it.
pub struct Toml<'a> {
    kind: ConfigKind,
    label: String,
    text: &'a str,
}

impl<'a> Toml<'a> {
    /// `label` names the file in errors (its path, or `embedded:claude.toml`).
    pub fn new(kind: ConfigKind, label: impl Into<String>, text: &'a str) -> Toml<'a> {
        Toml { kind, label: label.into(), text }
    }

    /// An error of a file that could not be read at all.
    pub fn unreadable(kind: ConfigKind, path: &std::path::Path, e: std::io::Error) -> ConfigError {
        ConfigError {
            kind,
            file: path.display().to_string(),
            line: None,
            column: None,
            key: None,
            message: "cannot read".into(),
            source: Some(std::sync::Arc::new(e)),
        }
    }

    /// An error about `key` (a path such as `notify[0].run`, `map.3.kind` or `classifier`),
    /// at the key's position when the file has it, else at the nearest table it would be in.
    pub fn error(&self, key: Option<&str>, message: impl Into<String>) -> ConfigError {
        let at = key.and_then(|key| {
            let root = DeTable::parse(self.text).ok()?;
            locate(root.get_ref(), &segments(key))
        });
        self.at(at, key.map(str::to_owned), message.into())
    }

    /// An error at a byte offset of the text.
    fn at(&self, offset: Option<usize>, key: Option<String>, message: String) -> ConfigError {
        let (line, column) = match offset {
            Some(offset) => {
                let (line, column) = line_column(self.text, offset);
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        let file = self.label.clone();
        ConfigError { kind: self.kind, file, line, column, key, message, source: None }
    }

    /// The document with the spans of its keys and values; a syntax error names its line and
    /// column.
    pub fn parse(&self) -> Result<Spanned<DeTable<'a>>, ConfigError> {
        DeTable::parse(self.text).map_err(|e| self.toml_error(&e))
    }

    /// The `version` key's value, as written, when the file has one.
    pub fn version<'t>(&self, root: &'t Spanned<DeTable<'a>>) -> Option<&'t Spanned<DeValue<'a>>> {
        root.get_ref().iter().find(|(k, _)| k.get_ref() == "version").map(|(_, v)| v)
    }

    /// The text of a value as written (`2`, `"x"`).
    pub fn written(&self, value: &Spanned<DeValue<'_>>) -> &'a str {
        self.text.get(value.span()).unwrap_or_default()
    }

    /// Reads the document into `T`; the keys `T` does not know are returned, as key paths
    /// (`notify[0].shel`). A value of the wrong type is an error naming its key.
    pub fn read<T: DeserializeOwned>(
        &self,
        root: Spanned<DeTable<'a>>,
    ) -> Result<(T, Vec<String>), ConfigError> {
        let mut unknown = Vec::new();
        let de = toml::de::Deserializer::from(root);
        let value = serde_ignored::deserialize(de, |path| unknown.push(key_path(&path)))
            .map_err(|e: toml::de::Error| self.toml_error(&e))?;
        Ok((value, unknown))
    }

    /// Parses and reads in one step.
    pub fn parse_and_read<T: DeserializeOwned>(&self) -> Result<(T, Vec<String>), ConfigError> {
        self.read(self.parse()?)
    }

    /// A TOML error (syntax, or a value of the wrong type) at its position, with the key whose
    /// value it is about and a message a person can act on.
    pub fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let Some(span) = e.span() else {
            return self.at(None, None, one_line(e.message()));
        };
        let found = DeTable::parse(self.text).ok().and_then(|root| {
            let mut best = None;
            innermost(root.get_ref(), span.start, &mut Vec::new(), &mut best);
            best.map(|(path, _)| path)
        });
        let message = match &found {
            Some(path) => explain(e.message(), path, self.text.get(span.clone()).unwrap_or("")),
            None => one_line(e.message()),
        };
        let key = found.map(|path| render(&path));
        self.at(Some(span.start), key, message)
    }
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `notify[0].run`, `map.3.kind`, `holes.?.0.id` (serde_ignored's optional marker) as steps.
fn segments(path: &str) -> Vec<Segment> {
    path.split(['.', '[', ']'])
        .filter(|p| !p.is_empty() && *p != "?")
        .map(|p| p.parse().map_or_else(|_| Segment::Key(p.to_owned()), Segment::Index))
        .collect()
}

/// Steps written as a user reads them: `notify[0].run`.
fn render(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A path serde_ignored reports, as [`render`] writes paths: `notify.0.runn` becomes
/// `notify[0].runn`.
pub(crate) fn key_path(path: &serde_ignored::Path) -> String {
    render(&segments(&path.to_string()))
}

/// The byte offset of a key path: the key's own position, or an array element's; when the
/// path goes further than the file, the position of the deepest step it has.
fn locate(table: &DeTable<'_>, path: &[Segment]) -> Option<usize> {
    let (Segment::Key(first), rest) = path.split_first()? else { return None };
    let (key, value) = table.iter().find(|(k, _)| k.get_ref() == first)?;
    let here = key.span().start;
    Some(descend(value, rest).unwrap_or(here))
}

fn descend(value: &Spanned<DeValue<'_>>, path: &[Segment]) -> Option<usize> {
    let step = path.first()?;
    match (step, value.get_ref()) {
        (Segment::Key(_), DeValue::Table(table)) => locate(table, path),
        (Segment::Index(i), DeValue::Array(array)) => {
            let element = array.get(*i)?;
            Some(descend(element, &path[1..]).unwrap_or(element.span().start))
        }
        _ => None,
    }
}

/// The key path whose value holds `offset` most tightly (its span the shortest), among every
/// key and array element of the document: a table's own span is only its header, so the
/// search goes through every table, not only those around the offset.
fn innermost(
    table: &DeTable<'_>,
    offset: usize,
    path: &mut Vec<Segment>,
    best: &mut Option<(Vec<Segment>, usize)>,
) {
    for (key, value) in table {
        path.push(Segment::Key(key.get_ref().to_string()));
        consider(value, offset, path, best);
        path.pop();
    }
}

fn consider(
    value: &Spanned<DeValue<'_>>,
    offset: usize,
    path: &mut Vec<Segment>,
    best: &mut Option<(Vec<Segment>, usize)>,
) {
    let span = value.span();
    if span.contains(&offset) && best.as_ref().is_none_or(|(_, len)| span.len() <= *len) {
        *best = Some((path.clone(), span.len()));
    }
    match value.get_ref() {
        DeValue::Table(table) => innermost(table, offset, path, best),
        DeValue::Array(array) => {
            for (i, element) in array.iter().enumerate() {
                path.push(Segment::Index(i));
                consider(element, offset, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

/// serde's "invalid type: string "idle", expected a sequence", said as what to write instead.
fn explain(message: &str, path: &[Segment], written: &str) -> String {
    let name = match path.last() {
        Some(Segment::Key(key)) => key.clone(),
        _ => render(path),
    };
    if message.starts_with("data did not match any variant of untagged enum") {
        return "must be a string or a list of strings".into();
    }
    let Some((found, expected)) =
        message.strip_prefix("invalid type: ").and_then(|m| m.split_once(", expected "))
    else {
        return one_line(message);
    };
    match (found, expected) {
        ("map", "a sequence") => format!(
            "is one table where a list of tables is expected: write [[{}]] (two brackets) \
             for each",
            render(path)
        ),
        (found, "a sequence") if found.starts_with("string") => {
            let words: Vec<String> = written
                .trim_matches(['"', '\''])
                .split_whitespace()
                .map(|w| format!("{w:?}"))
                .collect();
            format!("must be a list, not a string: {name} = [{}]", words.join(", "))
        }
        (found, expected) => format!("must be {expected}, not {found}"),
    }
}

/// A multi-line parser message on one line.
fn one_line(message: &str) -> String {
    message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": ")
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// "Did you mean": the known key path (`nudge.min-idle`) or table (`[classifier]`) a typed
/// path most likely meant, as a hint to put after "unknown key": ` (did you mean X?)`, or
/// ` (keys are kebab-case: X)` when only the underscores differ. Known paths are written with
/// dots; `tables` are the names that are tables (`classifier`), `arrays` those that are
/// arrays of tables (`notify`).
pub fn suggest(typed: &str, known: &[&str], tables: &[&str], arrays: &[&str]) -> String {
    let parts: Vec<String> = segments(typed)
        .into_iter()
        .filter_map(|s| match s {
            Segment::Key(k) => Some(k),
            Segment::Index(_) => None,
        })
        .collect();
    let Some((name, parents)) = parts.split_last() else { return String::new() };
    let kebab = |s: &str| s.replace('_', "-");
    // Keys of the same table (or the top level).
    let siblings: Vec<&str> = known
        .iter()
        .filter_map(|k| {
            let (table, key) = k.rsplit_once('.').unwrap_or(("", k));
            (table.split('.').collect::<Vec<_>>() == parents
                || table.is_empty() && parents.is_empty())
            .then_some(key)
        })
        .collect();
    if let Some(key) = siblings.iter().find(|k| kebab(k) == kebab(name) && **k != name.as_str()) {
        return format!(" (keys are kebab-case: {key})");
    }
    let near = |a: &str, b: &str| edit_distance(a, b) <= 2;
    // The typed path with the key replaced: `notify[0].shell`, `nudge.min-idle`.
    let full = |key: &str| match typed.rsplit_once('.') {
        Some((prefix, _)) => format!("{prefix}.{key}"),
        None => key.to_owned(),
    };
    if let Some(key) = siblings.iter().find(|k| near(k, name)) {
        return format!(" (did you mean {}?)", full(key));
    }
    if parents.is_empty() {
        if let Some(table) = tables.iter().find(|t| near(t, name)) {
            return format!(" (did you mean [{table}]?)");
        }
        if let Some(array) = arrays.iter().find(|t| near(t, name)) {
            return format!(" (did you mean [[{array}]]?)");
        }
    }
    // The same key name in another table.
    if let Some(key) =
        known.iter().find(|k| kebab(k.rsplit('.').next().unwrap_or(k)) == kebab(name))
    {
        return format!(" (did you mean {key}?)");
    }
    if siblings.is_empty() {
        String::new()
    } else {
        format!(" (keys here: {})", siblings.join(", "))
    }
}

/// The edit distance (Levenshtein) between `a` and `b`, in characters: how near a misspelt key
/// or word is to a known one.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str) -> Toml<'_> {
        Toml::new(ConfigKind::Notifications, "n.toml", text)
    }

    #[test]
    fn a_key_path_is_found_at_its_key_or_element_and_else_at_its_table() {
        let text =
            "version = 1\n\n[[notify]]\non = [\"idle\"]\n\n[[notify]]\n  run = [\"a\", \"b\"]\n";
        let t = toml(text);
        let at = |key: &str| {
            let e = t.error(Some(key), "x");
            (e.line.unwrap(), e.column.unwrap())
        };
        assert_eq!(at("version"), (1, 1));
        assert_eq!(at("notify[0].on"), (4, 1));
        assert_eq!(at("notify.1.run"), (7, 3));
        assert_eq!(at("notify[1].run[1]"), (7, 15));
        // Not in the file: the rule it would be in.
        assert_eq!(at("notify[1].on"), (6, 1));
        assert_eq!(t.error(Some("nowhere"), "x").line, None);
    }

    #[test]
    fn a_wrong_type_names_its_key_and_says_what_to_write() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct File {
            notify: Vec<Rule>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Rule {
            on: Vec<String>,
        }
        let read = |text: &str| toml(text).parse_and_read::<File>().unwrap_err().to_string();
        assert_eq!(
            read("[[notify]]\non = \"idle\"\n"),
            "notifications n.toml:2:6: notify[0].on: must be a list, not a string: on = [\"idle\"]"
        );
        assert_eq!(
            read("[notify]\non = [\"idle\"]\n"),
            "notifications n.toml:1:1: notify: is one table where a list of tables is \
             expected: write [[notify]] (two brackets) for each"
        );
        assert_eq!(
            read("[[notify]]\non = [\"idle\", 3]\n"),
            "notifications n.toml:2:15: notify[0].on[1]: must be a string, not integer `3`"
        );
        let syntax = read("[[notify]]\non = [\"idle\"\nrun = 1\n");
        assert!(syntax.starts_with("notifications n.toml:3:1: "), "{syntax}");
    }

    #[test]
    fn a_misspelt_key_or_table_is_suggested() {
        let known = ["nudge.min-idle", "nudge.max-in-a-row", "classifier.command", "version"];
        let tables = ["nudge", "classifier"];
        let s = |typed: &str| suggest(typed, &known, &tables, &["notify"]);
        assert_eq!(s("nudge.min-idel"), " (did you mean nudge.min-idle?)");
        assert_eq!(s("nudge.min_idle"), " (keys are kebab-case: min-idle)");
        assert_eq!(s("classifer"), " (did you mean [classifier]?)");
        assert_eq!(s("notfy"), " (did you mean [[notify]]?)");
        assert_eq!(s("escalate.min-idle"), " (did you mean nudge.min-idle?)");
        assert_eq!(s("versoin"), " (did you mean version?)");
        assert_eq!(s("nudge.when"), " (keys here: min-idle, max-in-a-row)");
    }
}
