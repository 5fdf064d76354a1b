//! Reading a payload without refusing anything the relay accepted.
//!
//! The relay stores any syntactically valid JSON object as a payload, verbatim. A full decode
//! with serde_json refuses some of those: a lone surrogate escape (`"\ud800"`, which Node's
//! `JSON.stringify` writes for a cut emoji), a number beyond `f64` (`1e999999`, a 5,000-digit
//! integer), nesting deeper than 128 levels. So a reader never decodes a payload whole:
//! [`Members`] walks an object's top-level members without decoding them, and [`decode`] turns
//! the few a reader needs into [`Value`]s without ever failing on valid JSON: a lone surrogate
//! becomes U+FFFD, a number out of range is kept as its text (a string), and nesting beyond
//! [`MAX_DECODE_DEPTH`] is kept as its JSON text (a string).

use serde_json::{Map, Number, Value};

/// Containers nested deeper than this inside a decoded value are kept as their JSON text.
pub const MAX_DECODE_DEPTH: usize = 64;

/// The `(key, value)` texts of a JSON object's top-level members, keys with their quotes, the
/// values verbatim (not decoded). On text that is not a valid object it stops early, never
/// panics, and never reads past the end.
#[derive(Debug, Clone)]
pub struct Members<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Members<'a> {
    /// The members of `object` (the text of a JSON object, surrounding whitespace allowed).
    pub fn new(object: &'a str) -> Members<'a> {
        Members { text: object, at: object.find('{').map_or(object.len(), |i| i + 1) }
    }

    fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }
}

/// The end (exclusive) of the string whose opening quote is at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(j) = bytes.get(i..).and_then(|rest| crate::find::either(b'"', b'\\', rest)) {
        if bytes[i + j] == b'"' {
            return i + j + 1;
        }
        i += j + 2;
    }
    bytes.len()
}

/// The end (exclusive) of the value starting at `start`; for a scalar, where the next `,`,
/// `}` or `]` is (trailing whitespace included).
fn value_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return i,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        let bytes = self.text.as_bytes();
        self.skip_ws();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, self.at);
        let key = self.text.get(self.at..key_end)?;
        self.at = key_end;
        self.skip_ws();
        if bytes.get(self.at) != Some(&b':') {
            return None;
        }
        self.at += 1;
        self.skip_ws();
        let start = self.at;
        let end = value_end(bytes, start);
        self.at = end;
        self.skip_ws();
        if bytes.get(self.at) == Some(&b',') {
            self.at += 1;
        }
        Some((key, self.text.get(start..end)?.trim_end()))
    }
}

/// The members of `object` whose (decoded) key `wanted` accepts, each decoded with [`decode`];
/// the others are passed over without being decoded. A later member replaces an earlier one
/// with the same key, as in a full decode.
pub fn decode_members(object: &str, mut wanted: impl FnMut(&str) -> bool) -> Map<String, Value> {
    let mut map = Map::new();
    for (key, value) in Members::new(object) {
        let Some(key) = decode_string(key) else { continue };
        if wanted(&key)
            && let Some(value) = decode(value)
        {
            map.insert(key, value);
        }
    }
    map
}

/// A JSON value's text as a [`Value`]. Never fails on valid JSON (see the module's rules for
/// what cannot be decoded as it is); `None` only for text that is not JSON.
pub fn decode(text: &str) -> Option<Value> {
    // The common case, at serde_json's speed; the lenient parser only for what it refuses.
    serde_json::from_str(text).ok().or_else(|| decode_lenient(text))
}

/// The lenient parser alone, without the serde_json fast path of [`decode`]: for tests that
/// check the two agree where serde_json decodes.
pub fn decode_lenient(text: &str) -> Option<Value> {
    let mut parser = Lenient { text, at: 0 };
    let value = parser.value(0)?;
    parser.skip_ws();
    (parser.at == text.len()).then_some(value)
}

/// A JSON string token (with its quotes) as text, a lone surrogate escape as U+FFFD.
pub fn decode_string(token: &str) -> Option<String> {
    let mut parser = Lenient { text: token, at: 0 };
    let text = parser.string()?;
    (parser.at == token.len()).then_some(text)
}

/// A recursive-descent JSON parser that keeps what serde_json refuses (see the module docs).
struct Lenient<'a> {
    text: &'a str,
    at: usize,
}

impl Lenient<'_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        if self.text.get(self.at..)?.starts_with(word) {
            self.at += word.len();
            Some(value)
        } else {
            None
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        self.skip_ws();
        let start = self.at;
        match self.peek()? {
            b'{' | b'[' if depth >= MAX_DECODE_DEPTH => {
                let end = value_end(self.bytes(), start);
                self.at = end;
                Some(Value::String(self.text.get(start..end)?.to_owned()))
            }
            b'{' => {
                self.at += 1;
                let mut map = Map::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Some(Value::Object(map));
                }
                loop {
                    self.skip_ws();
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    let value = self.value(depth + 1)?;
                    map.insert(key, value);
                    self.skip_ws();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(Value::Object(map));
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(Value::Array(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => {
                let len = self.bytes()[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                    .count();
                self.at = start + len;
                let text = self.text.get(start..self.at)?;
                match text.parse::<Number>() {
                    Ok(number) => Some(Value::Number(number)),
                    // Valid JSON beyond f64: kept as written.
                    Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
                        Some(Value::String(text.to_owned()))
                    }
                    Err(_) => None,
                }
            }
            _ => None,
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// The string whose opening quote is at the current position.
    fn string(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        let mut out = String::new();
        loop {
            let j = crate::find::either(b'"', b'\\', self.bytes().get(self.at..)?)?;
            // Quote and backslash are ASCII: both ends are char boundaries.
            out.push_str(self.text.get(self.at..self.at + j)?);
            self.at += j;
            let quote = self.peek()? == b'"';
            self.at += 1;
            if quote {
                return Some(out);
            }
            let escape = self.peek()?;
            self.at += 1;
            let c = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.unicode_escape()?,
                _ => return None,
            };
            out.push(c);
        }
    }

    /// After `\u`: the character, a surrogate pair joined, a lone surrogate as U+FFFD.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) && self.text.get(self.at..)?.starts_with("\\u") {
            let save = self.at;
            self.at += 2;
            match self.hex4() {
                Some(low @ 0xDC00..0xE000) => {
                    let c = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
                    return char::from_u32(c);
                }
                // Not a low surrogate: the lone high one is replaced, the next escape is read
                // on its own.
                _ => self.at = save,
            }
        }
        Some(char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_serde_json_refuses_is_decoded_all_the_same() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let digits = "9".repeat(5000);
        let object = format!(
            r#"{{"lone": "a\ud800b", "low": "\udc00", "pair": "\ud83d\ude00", "big": 1e999999,
                "long": {digits}, "deep": {deep}, "ok": [1, -2.5e3, true, null]}}"#
        );
        assert!(serde_json::from_str::<Value>(&object).is_err());
        let map = decode_members(&object, |_| true);
        assert_eq!(map["lone"], "a\u{fffd}b");
        assert_eq!(map["low"], "\u{fffd}");
        assert_eq!(map["pair"], "😀");
        assert_eq!(map["big"], "1e999999");
        assert_eq!(map["long"], digits.as_str());
        assert_eq!(map["ok"], serde_json::json!([1, -2.5e3, true, null]));
        let mut deep_value = &map["deep"];
        for _ in 0..MAX_DECODE_DEPTH {
            deep_value = &deep_value[0];
        }
        let rest = deep_value.as_str().unwrap();
        assert!(rest.starts_with('[') && rest.ends_with(']'), "{rest}");
    }

    #[test]
    fn members_not_wanted_are_not_decoded() {
        let object = r#"{"a": 1, "b\u0022": {"x": "\ud800"}, "a": 2}"#;
        let mut seen = Vec::new();
        let map = decode_members(object, |key| {
            seen.push(key.to_owned());
            key == "a"
        });
        assert_eq!(seen, ["a", "b\"", "a"]);
        assert_eq!(Value::Object(map), serde_json::json!({"a": 2}));
    }

    #[test]
    fn the_lenient_parser_agrees_with_serde_json_on_what_both_accept() {
        let texts = [
            r#"{"a":"x\"y\\\/\b\f\n\r\t\u00e9","b":[[],{}],"c":-0.5E+2,"d":0}"#,
            r#" [ 1 , "two" , { "three" : 3 } ] "#,
            r#""\ud83d\ude00 and \u20ac""#,
        ];
        for text in texts {
            let mut parser = Lenient { text, at: 0 };
            let lenient = parser.value(0).unwrap();
            assert_eq!(lenient, serde_json::from_str::<Value>(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_none_and_never_panics() {
        for text in ["", "{", r#"{"a":}"#, r#""\u12"#, r#""\x""#, "1e", "tru", "[1,]x", "\"é"] {
            assert_eq!(decode(text), None, "{text}");
            assert_eq!(decode_string(text), None, "{text}");
        }
    }
}
