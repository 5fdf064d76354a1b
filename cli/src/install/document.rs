//! A JSON settings document edited as text.
//!
//! The file is validated by serde_json (strict JSON: no comments, no trailing commas), then
//! scanned once more to record where every value, key and member sits. Edits are splices of
//! the original text: a member or array element is inserted after the last one, copying the
//! whitespace between the existing items; an element is replaced or removed by its span. So
//! every byte that is not ours stays as it was: key order, indentation, escapes such as
//! `\u00e9`, number spellings, one-line arrays, `\r\n` line ends and the trailing newline.
//! Inserting then removing the same item gives back the original bytes.
//!
//! After each edit the text is parsed again (settings files are small), so positions are
//! always fresh and a splice that would produce invalid JSON is caught before anything is
//! written.

use std::ops::Range;

use serde_json::Value;

pub use crate::errors::DocError;

/// A parsed value and where it is in the text.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

/// What a node holds.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar,
}

/// An object member.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: Node,
}

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// `hooks.Stop[0].hooks`; the empty path is `the top level`.
pub(crate) fn path_text(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() { "the top level".into() } else { out }
}

/// Builds a path from keys.
pub(crate) fn keys(keys: &[&str]) -> Vec<Step> {
    keys.iter().map(|k| Step::Key((*k).to_owned())).collect()
}

/// 1-based line and character column of a byte offset.
pub(crate) fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Checks that bytes are UTF-8, naming the first bad byte's position.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, DocError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
        let (line, column) = position(good, good.len());
        DocError::NotUtf8 { line, column }
    })
}

/// A clearer message for the two mistakes JSON-with-comments editors invite.
fn hint(text: &str, line: usize, column: usize) -> Option<&'static str> {
    let line_start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[line_start..];
    let at = rest
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(text.len(), |(i, _)| line_start + i);
    if text.starts_with('\u{feff}') && line == 1 && column <= 1 {
        return Some("a byte order mark (BOM) is not allowed");
    }
    let here = text[at..].chars().next();
    let before = text[..at].trim_end().chars().last();
    match (before, here) {
        (_, Some('/')) | (Some('/'), _) => Some("comments are not allowed"),
        (Some(','), Some('}' | ']')) => Some("trailing comma"),
        _ => None,
    }
}

/// How new text is laid out, learned from the document.
#[derive(Debug, Clone)]
struct Style {
    /// One level of indentation.
    unit: String,
    /// Line end.
    newline: &'static str,
    /// Between a key and its value (`": "`).
    key_sep: String,
}

/// A JSON document and the positions of its values.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    text: String,
    root: Node,
    style: Style,
}

impl Doc {
    /// Parses strict JSON.
    pub fn parse(text: String) -> Result<Doc, DocError> {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&text) {
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(i) => message[..i].to_owned(),
                None => message,
            };
            let message = hint(&text, e.line(), e.column()).map_or(message, str::to_owned);
            return Err(DocError::Syntax { line: e.line(), column: e.column(), message });
        }
        let mut scanner = Scanner { text: &text, pos: 0 };
        let root = scanner
            .value()
            .ok_or_else(|| DocError::Internal("the scanner disagrees with serde_json".into()))?;
        let style = Style::learn(&text, &root);
        Ok(Doc { text, root, style })
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Consumes the document, giving its text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Whether the document is written on one line.
    pub fn is_one_line(&self) -> bool {
        !self.text[self.root.span.clone()].contains('\n')
    }

    /// The value of a node.
    pub fn value(&self, node: &Node) -> Value {
        serde_json::from_str(&self.text[node.span.clone()]).unwrap_or(Value::Null)
    }

    /// The node at a path; `None` when a key or index is missing. Fails when a step goes
    /// through a value of the wrong type or an object with the key twice.
    pub fn find(&self, path: &[Step]) -> Result<Option<&Node>, DocError> {
        let mut node = &self.root;
        for (i, step) in path.iter().enumerate() {
            match (step, &node.kind) {
                (Step::Key(key), Kind::Object(members)) => {
                    let mut found = members.iter().filter(|m| m.key == *key);
                    let Some(first) = found.next() else {
                        return Ok(None);
                    };
                    if let Some(dup) = found.next() {
                        let (line, column) = position(&self.text, dup.key_span.start);
                        return Err(DocError::DuplicateKey {
                            json_path: path_text(&path[..=i]),
                            line,
                            column,
                        });
                    }
                    node = &first.value;
                }
                (Step::Index(j), Kind::Array(items)) => match items.get(*j) {
                    Some(item) => node = item,
                    None => return Ok(None),
                },
                (Step::Key(_), _) => return Err(self.shape(&path[..i], node, "an object")),
                (Step::Index(_), _) => return Err(self.shape(&path[..i], node, "an array")),
            }
        }
        Ok(Some(node))
    }

    /// The node at a path, which must be an object when present.
    pub fn object(&self, path: &[Step]) -> Result<Option<&Node>, DocError> {
        match self.find(path)? {
            Some(node) if !matches!(node.kind, Kind::Object(_)) => {
                Err(self.shape(path, node, "an object"))
            }
            found => Ok(found),
        }
    }

    /// The node at a path, which must be an array when present.
    pub fn array(&self, path: &[Step]) -> Result<Option<&Node>, DocError> {
        match self.find(path)? {
            Some(node) if !matches!(node.kind, Kind::Array(_)) => {
                Err(self.shape(path, node, "an array"))
            }
            found => Ok(found),
        }
    }

    fn shape(&self, path: &[Step], node: &Node, expected: &'static str) -> DocError {
        let (line, column) = position(&self.text, node.span.start);
        DocError::Shape { json_path: path_text(path), expected, line, column }
    }

    /// Adds `key: value` at the end of the object at `path`.
    pub fn insert_member(
        &mut self,
        path: &[Step],
        key: &str,
        value: &Value,
    ) -> Result<(), DocError> {
        let node = self
            .object(path)?
            .ok_or_else(|| DocError::Internal(format!("{} is missing", path_text(path))))?
            .clone();
        let Kind::Object(members) = &node.kind else { unreachable!("checked by object()") };
        let items: Vec<Range<usize>> =
            members.iter().map(|m| m.key_span.start..m.value.span.end).collect();
        let key_json = Value::String(key.to_owned()).to_string();
        self.insert(&node, &items, |doc, indent, multiline| {
            let sep = if multiline { ": ".to_owned() } else { doc.style.key_sep.clone() };
            format!(
                "{key_json}{sep}{}",
                doc.render(value, indent, multiline, doc.compact_gap(&node))
            )
        })
    }

    /// Adds `value` at the end of the array at `path`.
    pub fn append(&mut self, path: &[Step], value: &Value) -> Result<(), DocError> {
        let node = self
            .array(path)?
            .ok_or_else(|| DocError::Internal(format!("{} is missing", path_text(path))))?
            .clone();
        let Kind::Array(elements) = &node.kind else { unreachable!("checked by array()") };
        let items: Vec<Range<usize>> = elements.iter().map(|e| e.span.clone()).collect();
        self.insert(&node, &items, |doc, indent, multiline| {
            doc.render(value, indent, multiline, doc.compact_gap(&node))
        })
    }

    /// Replaces the value at `path`, laid out like the value it replaces (on one line if it
    /// was on one line).
    pub fn replace(&mut self, path: &[Step], value: &Value) -> Result<(), DocError> {
        let node = self
            .find(path)?
            .ok_or_else(|| DocError::Internal(format!("{} is missing", path_text(path))))?;
        let span = node.span.clone();
        let old = &self.text[span.clone()];
        let multiline = old.contains('\n');
        let gap = if old.contains(", ") || old.contains(": ") { " " } else { "" };
        let indent = self.line_indent(span.start);
        let text = self.render(value, &indent, multiline, gap);
        self.splice(span, &text)
    }

    /// Removes the member or element at `path` with the separator that joined it to its
    /// neighbours, so that removing an item just inserted restores the text exactly.
    pub fn remove(&mut self, path: &[Step]) -> Result<(), DocError> {
        let (last, parent_path) = path
            .split_last()
            .ok_or_else(|| DocError::Internal("cannot remove the top level".into()))?;
        let parent = self
            .find(parent_path)?
            .ok_or_else(|| DocError::Internal(format!("{} is missing", path_text(path))))?;
        let (items, index): (Vec<Range<usize>>, Option<usize>) = match (&parent.kind, last) {
            (Kind::Object(members), Step::Key(key)) => (
                members.iter().map(|m| m.key_span.start..m.value.span.end).collect(),
                members.iter().position(|m| m.key == *key),
            ),
            (Kind::Array(elements), Step::Index(i)) => (
                elements.iter().map(|e| e.span.clone()).collect(),
                (*i < elements.len()).then_some(*i),
            ),
            _ => {
                return Err(DocError::Internal(format!("{} is missing", path_text(path))));
            }
        };
        let i =
            index.ok_or_else(|| DocError::Internal(format!("{} is missing", path_text(path))))?;
        let range = if items.len() == 1 {
            parent.span.start + 1..parent.span.end - 1
        } else if i + 1 < items.len() {
            items[i].start..items[i + 1].start
        } else {
            items[i - 1].end..items[i].end
        };
        self.splice(range, "")
    }

    /// Inserts a new item after the last one of a container, or into an empty container.
    fn insert(
        &mut self,
        container: &Node,
        items: &[Range<usize>],
        item: impl Fn(&Doc, &str, bool) -> String,
    ) -> Result<(), DocError> {
        let open = container.span.start;
        let close = container.span.end - 1;
        let Some(last) = items.last() else {
            let multiline = open == self.root.span.start || !self.is_one_line();
            let text = if multiline {
                let base = self.line_indent(open);
                let indent = format!("{base}{}", self.style.unit);
                let nl = self.style.newline;
                format!("{nl}{indent}{}{nl}{base}", item(self, &indent, true))
            } else {
                item(self, "", false)
            };
            return self.splice(open + 1..close, &text);
        };
        // The whitespace before the last item: after the comma that precedes it, or after the
        // opening bracket when it is the only one.
        let ws = match items.len() {
            1 => &self.text[open + 1..last.start],
            n => {
                let gap = &self.text[items[n - 2].end..last.start];
                gap.split_once(',').map_or(gap, |(_, after)| after)
            }
        };
        let text = if ws.contains('\n') {
            let indent = ws.rsplit('\n').next().unwrap_or_default().to_owned();
            format!(",{ws}{}", item(self, &indent, true))
        } else {
            let ws = if items.len() == 1 { self.compact_gap(container) } else { ws };
            format!(",{ws}{}", item(self, "", false))
        };
        self.splice(last.end..last.end, &text)
    }

    /// The space used after commas in a one-line container: copied from the container, else
    /// from how the document separates keys from values.
    fn compact_gap(&self, node: &Node) -> &'static str {
        let text = &self.text[node.span.clone()];
        if text.contains(", ") || text.contains(": ") || self.style.key_sep.ends_with(' ') {
            " "
        } else {
            ""
        }
    }

    /// Lays out a new value: over several lines indented from `indent`, or on one line.
    fn render(&self, value: &Value, indent: &str, multiline: bool, gap: &str) -> String {
        let nl = self.style.newline;
        let inner = format!("{indent}{}", self.style.unit);
        let key_sep = if multiline { ": ".to_owned() } else { format!(":{gap}") };
        match value {
            Value::Object(map) if !map.is_empty() => {
                let parts: Vec<String> = map
                    .iter()
                    .map(|(k, v)| {
                        let key = Value::String(k.clone()).to_string();
                        let v = self.render(v, &inner, multiline, gap);
                        if multiline {
                            format!("{nl}{inner}{key}{key_sep}{v}")
                        } else {
                            format!("{key}{key_sep}{v}")
                        }
                    })
                    .collect();
                if multiline {
                    format!("{{{}{nl}{indent}}}", parts.join(","))
                } else {
                    format!("{{{}}}", parts.join(&format!(",{gap}")))
                }
            }
            Value::Array(list) if !list.is_empty() => {
                let parts: Vec<String> = list
                    .iter()
                    .map(|v| {
                        let v = self.render(v, &inner, multiline, gap);
                        if multiline { format!("{nl}{inner}{v}") } else { v }
                    })
                    .collect();
                if multiline {
                    format!("[{}{nl}{indent}]", parts.join(","))
                } else {
                    format!("[{}]", parts.join(&format!(",{gap}")))
                }
            }
            other => other.to_string(),
        }
    }

    /// The indentation of the line holding `offset`.
    fn line_indent(&self, offset: usize) -> String {
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        self.text[start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
    }

    fn splice(&mut self, range: Range<usize>, with: &str) -> Result<(), DocError> {
        let mut text = String::with_capacity(self.text.len() + with.len());
        text.push_str(&self.text[..range.start]);
        text.push_str(with);
        text.push_str(&self.text[range.end..]);
        let style = self.style.clone();
        let mut doc = Doc::parse(text)
            .map_err(|e| DocError::Internal(format!("an edit broke the JSON: {e}")))?;
        // Keep what was learned from the original (an expanded `{}` has no members to learn
        // from; an edit must not change the style of the next one).
        doc.style = style;
        *self = doc;
        Ok(())
    }
}

impl Style {
    fn learn(text: &str, root: &Node) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let mut style = Style { unit: "  ".into(), newline, key_sep: ": ".into() };
        if let Kind::Object(members) = &root.kind
            && let Some(first) = members.first()
        {
            style.key_sep = text[first.key_span.end..first.value.span.start].to_owned();
            let gap = &text[root.span.start + 1..first.key_span.start];
            if let Some((_, indent)) = gap.rsplit_once('\n') {
                let base_start = text[..root.span.start].rfind('\n').map_or(0, |i| i + 1);
                let base: String =
                    text[base_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
                if let Some(unit) = indent.strip_prefix(base.as_str())
                    && !unit.is_empty()
                    && unit.chars().all(|c| c == ' ' || c == '\t')
                {
                    style.unit = unit.to_owned();
                }
            }
        }
        style
    }
}

/// Records spans of text serde_json has already validated.
struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    fn value(&mut self) -> Option<Node> {
        self.ws();
        let start = self.pos;
        let kind = match self.peek()? {
            b'{' => {
                self.pos += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek()? == b'}' {
                    self.pos += 1;
                } else {
                    loop {
                        self.ws();
                        let key_start = self.pos;
                        self.string()?;
                        let key_span = key_start..self.pos;
                        let key: String =
                            serde_json::from_str(&self.text[key_span.clone()]).ok()?;
                        self.eat(b':')?;
                        let value = self.value()?;
                        members.push(Member { key, key_span, value });
                        self.ws();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b'}' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Object(members)
            }
            b'[' => {
                self.pos += 1;
                let mut elements = Vec::new();
                self.ws();
                if self.peek()? == b']' {
                    self.pos += 1;
                } else {
                    loop {
                        elements.push(self.value()?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b']' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Array(elements)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Kind::Scalar
            }
        };
        Some(Node { span: start..self.pos, kind })
    }

    /// Skips a string, from its opening quote to just after its closing one.
    fn string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        loop {
            match *bytes.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(text: &str) -> Doc {
        Doc::parse(text.to_owned()).unwrap()
    }

    #[test]
    fn appending_to_an_indented_array_copies_the_siblings_layout() {
        let mut d = doc("{\n    \"a\": [\n        1\n    ]\n}\n");
        d.append(&keys(&["a"]), &json!({"x": [2]})).unwrap();
        assert_eq!(
            d.text(),
            "{\n    \"a\": [\n        1,\n        {\n            \"x\": [\n                2\n            ]\n        }\n    ]\n}\n"
        );
    }

    #[test]
    fn inserting_then_removing_gives_back_the_same_bytes() {
        for original in [
            "{\n  \"a\": 1\n}\n",
            "{\n\t\"a\": [1, 2],\n\t\"b\": {\"c\": \"\\u00e9\"}\n}",
            "{\"a\":1,\"b\":[true]}",
            "{ \"a\" : 1 }",
            "{\r\n  \"a\": 1.50,\r\n  \"b\": 1e3\r\n}\r\n",
            "{}",
        ] {
            let mut d = doc(original);
            d.insert_member(&[], "hooks", &json!({"Stop": [{"hooks": []}]})).unwrap();
            assert!(d.text().contains("hooks"));
            d.remove(&keys(&["hooks"])).unwrap();
            assert_eq!(d.text(), original);
        }
    }

    #[test]
    fn an_empty_root_is_expanded_over_several_lines() {
        let mut d = doc("{}\n");
        d.insert_member(&[], "hooks", &json!({"Stop": []})).unwrap();
        assert_eq!(d.text(), "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n");
    }

    #[test]
    fn a_one_line_document_gets_one_line_additions() {
        let mut d = doc("{\"a\":{\"b\":[1]}}");
        d.append(&keys(&["a", "b"]), &json!({"c": [1, 2]})).unwrap();
        assert_eq!(d.text(), "{\"a\":{\"b\":[1,{\"c\":[1,2]}]}}");
        let mut d = doc("{\"a\": {}}");
        d.insert_member(&keys(&["a"]), "k", &json!([1])).unwrap();
        assert_eq!(d.text(), "{\"a\": {\"k\": [1]}}");
    }

    #[test]
    fn removing_any_element_keeps_the_others_laid_out() {
        let original = "[\n  1,\n  2,\n  3\n]";
        let expected = ["[\n  2,\n  3\n]", "[\n  1,\n  3\n]", "[\n  1,\n  2\n]"];
        for (i, want) in expected.iter().enumerate() {
            let mut d = doc(original);
            d.remove(&[Step::Index(i)]).unwrap();
            assert_eq!(d.text(), *want);
        }
        let mut d = doc("[1]");
        d.remove(&[Step::Index(0)]).unwrap();
        assert_eq!(d.text(), "[]");
    }

    #[test]
    fn replacing_keeps_the_position_and_indentation() {
        let mut d = doc("{\n  \"a\": [\n    {\n      \"x\": 1\n    },\n    2\n  ]\n}");
        d.replace(&[Step::Key("a".into()), Step::Index(0)], &json!({"y": 2})).unwrap();
        assert_eq!(d.text(), "{\n  \"a\": [\n    {\n      \"y\": 2\n    },\n    2\n  ]\n}");
    }

    #[test]
    fn the_indentation_unit_is_learned_from_the_file() {
        let mut d = doc("{\n    \"a\": 1\n}");
        d.insert_member(&[], "b", &json!({"c": 1})).unwrap();
        assert_eq!(d.text(), "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 1\n    }\n}");
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let err = Doc::parse("{\n  \"a\": 1,\n}".into()).unwrap_err();
        assert!(
            matches!(&err, DocError::Syntax { line: 3, column: 1, message } if message.contains("trailing comma")),
            "{err:?}"
        );
        let err = Doc::parse("{\n  // note\n  \"a\": 1\n}".into()).unwrap_err();
        assert!(matches!(err, DocError::Syntax { line: 2, .. }), "{err:?}");
        let err = Doc::parse("\u{feff}{}".into()).unwrap_err();
        assert!(
            matches!(&err, DocError::Syntax { message, .. } if message.contains("BOM")),
            "{err:?}"
        );
        let err = Doc::parse(String::new()).unwrap_err();
        assert!(matches!(err, DocError::Syntax { line: 1, .. }), "{err:?}");
    }

    #[test]
    fn wrong_shapes_and_duplicate_keys_name_the_json_path() {
        let d = doc("{\"hooks\": {\"Stop\": {}}}");
        let err = d.array(&keys(&["hooks", "Stop"])).unwrap_err();
        assert_eq!(err.to_string(), "1:20: hooks.Stop is not an array");
        let d = doc("{\"hooks\": [], \"x\": 1}");
        let err = d.object(&keys(&["hooks"])).unwrap_err();
        assert_eq!(err.to_string(), "1:11: hooks is not an object");
        let d = doc("{\"hooks\": {}, \"hooks\": {}}");
        let err = d.find(&keys(&["hooks"])).unwrap_err();
        assert_eq!(err.to_string(), "1:15: duplicate key hooks");
    }

    #[test]
    fn escaped_keys_are_matched_by_their_value() {
        let d = doc("{\"hoo\\u006bs\": {\"Stop\": []}}");
        assert!(d.array(&keys(&["hooks", "Stop"])).unwrap().is_some());
    }

    #[test]
    fn invalid_utf8_is_located() {
        let err = utf8(b"{\n  \"a\": \"\xff\"\n}").unwrap_err();
        assert_eq!(err, DocError::NotUtf8 { line: 2, column: 9 });
    }
}
