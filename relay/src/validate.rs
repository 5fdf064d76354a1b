//! Checking a JSON object as it arrives: one pass that both finds where the object ends and
//! proves it is JSON serde_json accepts, so that a large payload is looked at once, while it
//! is read, and never parsed again.
//!
//! The check is a proof, never a verdict: [`Validator`] vouches only for what it is sure
//! serde_json accepts as a `RawValue` (JSON's grammar, at any depth: serde_json skips over a
//! raw value without its recursion limit; UTF-8 is checked by the caller). On anything else it
//! steps aside, saying where the strings are at that point, and the caller goes on with its
//! structural scan and lets serde_json judge, as before, with its message.

/// What one call to [`Validator::feed`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// Every byte was consumed; the object goes on.
    More,
    /// The object ended with the byte before this index: it is valid JSON.
    Ended(usize),
    /// The byte at this index is not valid here: the validator steps aside. The structural
    /// state before that byte, for the caller's scan to go on from.
    Aside { at: usize, depth: u32, in_string: bool, escaped: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must come next (after `:`, or `,` in an array).
    Value,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a member or an element: `,` or the container's close.
    Next,
    /// Inside a string; `key`: an object's key.
    Str { key: bool },
    /// After a backslash in a string.
    Escape { key: bool },
    /// In a `\u` escape, `left` hex digits to go.
    Hex { key: bool, left: u8 },
    /// In a number.
    Num(Num),
    /// In `true`, `false` or `null`: the bytes still to come.
    Literal(&'static [u8]),
}

/// Where a number is, in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ExpSign,
    Exp,
}

impl Num {
    /// The number after one more byte, or `None` when the byte does not belong to it.
    fn push(self, byte: u8) -> Option<Num> {
        Some(match (self, byte) {
            (Num::Minus, b'0') => Num::Zero,
            (Num::Minus, b'1'..=b'9') => Num::Int,
            (Num::Int, b'0'..=b'9') => Num::Int,
            (Num::Zero | Num::Int, b'.') => Num::Dot,
            (Num::Dot | Num::Frac, b'0'..=b'9') => Num::Frac,
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::E,
            (Num::E, b'+' | b'-') => Num::ExpSign,
            (Num::E | Num::ExpSign | Num::Exp, b'0'..=b'9') => Num::Exp,
            _ => return None,
        })
    }

    /// Whether a number can end here.
    fn complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// An incremental check of one JSON object, fed in chunks, starting after its opening brace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Validator {
    state: State,
    /// The containers open, outermost first: true for an object.
    open: Vec<bool>,
}

impl Validator {
    /// A validator that has just seen the object's `{`.
    pub(crate) fn after_open_brace() -> Validator {
        Validator { state: State::KeyOrClose, open: vec![true] }
    }

    fn in_object(&self) -> bool {
        self.open.last() == Some(&true)
    }

    /// Where the strings are, for a caller that goes on without the validator.
    fn aside(&self, at: usize) -> Fed {
        let (in_string, escaped) = match self.state {
            State::Str { .. } | State::Hex { .. } => (true, false),
            State::Escape { .. } => (true, true),
            _ => (false, false),
        };
        let depth = u32::try_from(self.open.len()).unwrap_or(u32::MAX);
        Fed::Aside { at, depth, in_string, escaped }
    }

    /// After a complete value: the end of the object, or what its container expects next.
    fn after_value(&mut self) -> bool {
        self.state = State::Next;
        self.open.is_empty()
    }

    /// Checks `bytes`, the next bytes of the object.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Fed {
        let mut i = 0;
        while i < bytes.len() {
            if let State::Str { key } = self.state {
                // The bulk of a payload: skip to the next byte that ends or interrupts the
                // string, taking the common escapes (`\n`, `\"`) in stride.
                let (at, stop) = skip_string(bytes, i);
                match stop {
                    Stop::End => return Fed::More,
                    Stop::Quote => {
                        i = at + 1;
                        if key {
                            self.state = State::Colon;
                        } else if self.after_value() {
                            return Fed::Ended(i);
                        }
                    }
                    // `\u`, an invalid escape, or a backslash that ends the chunk: byte by byte.
                    Stop::Backslash => {
                        self.state = State::Escape { key };
                        i = at + 1;
                    }
                    // A control byte, which serde_json refuses unescaped.
                    Stop::Control => return self.aside(at),
                }
                continue;
            }
            let byte = bytes[i];
            match self.step(byte) {
                Step::Consumed => i += 1,
                Step::Again => {}
                Step::Ended => return Fed::Ended(i + 1),
                Step::Invalid => return self.aside(i),
            }
        }
        Fed::More
    }

    /// One byte outside a string's content.
    fn step(&mut self, byte: u8) -> Step {
        match self.state {
            State::Str { .. } => unreachable!("string content is skipped in feed"),
            State::Escape { key } => match byte {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                    self.state = State::Str { key };
                }
                b'u' => self.state = State::Hex { key, left: 4 },
                _ => return Step::Invalid,
            },
            State::Hex { key, left } if byte.is_ascii_hexdigit() => {
                self.state =
                    if left == 1 { State::Str { key } } else { State::Hex { key, left: left - 1 } };
            }
            State::Hex { .. } => return Step::Invalid,
            State::Literal(rest) => {
                if rest[0] != byte {
                    return Step::Invalid;
                }
                if rest.len() > 1 {
                    self.state = State::Literal(&rest[1..]);
                } else if self.after_value() {
                    return Step::Ended;
                }
            }
            State::Num(num) => match num.push(byte) {
                Some(num) => self.state = State::Num(num),
                // The byte after a number is the container's: looked at again.
                None if num.complete() => {
                    self.state = State::Next;
                    return Step::Again;
                }
                None => return Step::Invalid,
            },
            _ if is_ws(byte) => {}
            State::Colon => match byte {
                b':' => self.state = State::Value,
                _ => return Step::Invalid,
            },
            State::Key | State::KeyOrClose if byte == b'"' => self.state = State::Str { key: true },
            State::KeyOrClose | State::ValueOrClose | State::Next
                if (byte == b'}' && self.in_object()) || (byte == b']' && !self.in_object()) =>
            {
                // `}` after `{`, `]` after `[` (an object is never after `[`, nor an array
                // after `{`), or the close after a member or an element.
                self.open.pop();
                if self.after_value() {
                    return Step::Ended;
                }
            }
            State::Next => match byte {
                b',' if self.in_object() => self.state = State::Key,
                b',' => self.state = State::Value,
                _ => return Step::Invalid,
            },
            State::Value | State::ValueOrClose => return self.value_start(byte),
            State::Key | State::KeyOrClose => return Step::Invalid,
        }
        Step::Consumed
    }

    /// The first byte of a value.
    fn value_start(&mut self, byte: u8) -> Step {
        self.state = match byte {
            b'"' => State::Str { key: false },
            b'{' => {
                self.open.push(true);
                State::KeyOrClose
            }
            b'[' => {
                self.open.push(false);
                State::ValueOrClose
            }
            b'-' => State::Num(Num::Minus),
            b'0' => State::Num(Num::Zero),
            b'1'..=b'9' => State::Num(Num::Int),
            b't' => State::Literal(b"rue"),
            b'f' => State::Literal(b"alse"),
            b'n' => State::Literal(b"ull"),
            _ => return Step::Invalid,
        };
        Step::Consumed
    }
}

/// What one byte did.
enum Step {
    Consumed,
    /// Not consumed: look at it again in the new state.
    Again,
    /// It closed the object.
    Ended,
    Invalid,
}

/// What stopped [`skip_string`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The bytes ran out inside the string.
    End,
    /// The closing quote.
    Quote,
    /// A backslash not followed by a one-byte escape in these bytes (`\u`, an invalid
    /// escape, or the end of the bytes).
    Backslash,
    /// A control byte (below 0x20), which JSON allows only escaped.
    Control,
}

/// Whether `byte` after a backslash completes an escape by itself.
fn short_escape(byte: u8) -> bool {
    matches!(byte, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
}

/// Skips string content from `bytes[from..]`, one-byte escapes included: the index of the
/// byte that stopped it (`bytes.len()` for [`Stop::End`]) and what it is.
fn skip_string(bytes: &[u8], from: usize) -> (usize, Stop) {
    let mut i = from;
    'blocks: while i + 64 <= bytes.len() {
        let base = i;
        let mut mask = special_bytes(&bytes[base..base + 64]);
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            match bytes[at] {
                b'\\' => match bytes.get(at + 1) {
                    Some(&next) if short_escape(next) => {
                        let after = at + 2 - base;
                        if after >= 64 {
                            i = at + 2;
                            continue 'blocks;
                        }
                        // The escaped byte may itself be special (`\"`, `\\`): passed over.
                        mask &= u64::MAX << after;
                    }
                    _ => return (at, Stop::Backslash),
                },
                b'"' => return (at, Stop::Quote),
                _ => return (at, Stop::Control),
            }
        }
        i = base + 64;
    }
    skip_string_bytewise(bytes, i)
}

/// [`skip_string`] a byte at a time: for the last bytes, and as its reference in tests.
fn skip_string_bytewise(bytes: &[u8], from: usize) -> (usize, Stop) {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => match bytes.get(i + 1) {
                Some(&next) if short_escape(next) => i += 2,
                _ => return (i, Stop::Backslash),
            },
            b'"' => return (i, Stop::Quote),
            0..0x20 => return (i, Stop::Control),
            _ => i += 1,
        }
    }
    (bytes.len(), Stop::End)
}

/// Bit `k` set when `block[k]` is a quote, a backslash or a control byte.
fn special_bytes(block: &[u8]) -> u64 {
    debug_assert_eq!(block.len(), 64);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        let mut mask = 0u64;
        // SAFETY: SSE2 is part of every x86_64 CPU (the intrinsics are unsafe only for that);
        // the four loads read the 64 bytes of `block`, unaligned.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let control_max = _mm_set1_epi8(0x1f);
            for part in 0..4 {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * part).cast::<__m128i>());
                let special = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                    // min(v, 0x1f) == v: v is at most 0x1f, unsigned.
                    _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v),
                );
                mask |= u64::from(_mm_movemask_epi8(special) as u16) << (16 * part);
            }
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    block
        .iter()
        .enumerate()
        .fold(0, |mask, (k, &b)| mask | (u64::from(b == b'"' || b == b'\\' || b < 0x20) << k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xorshift::Rng;

    /// The validator's verdict on a whole text that starts with `{`: `Some(end)` when it
    /// vouches for the object ending there.
    fn vouched(text: &[u8], chunk: usize) -> Option<usize> {
        let mut validator = Validator::after_open_brace();
        let mut at = 1;
        while at < text.len() {
            let next = (at + chunk).min(text.len());
            match validator.feed(&text[at..next]) {
                Fed::More => at = next,
                Fed::Ended(end) => return Some(at + end),
                Fed::Aside { .. } => return None,
            }
        }
        None
    }

    fn serde_accepts(text: &[u8]) -> bool {
        serde_json::from_slice::<&serde_json::value::RawValue>(text).is_ok()
    }

    #[test]
    fn the_block_skip_stops_where_a_byte_by_byte_skip_does() {
        let mut rng = Rng(7);
        let alphabet = [b'a', b'"', b'\\', b'n', b'u', 0x1f, 0x20, 0x7f, 0x80, 0xff, 0];
        for _ in 0..20000 {
            let len = rng.below(300);
            let rare = rng.below(40) + 2;
            let bytes: Vec<u8> =
                (0..len)
                    .map(|_| {
                        if rng.below(rare) == 0 {
                            alphabet[rng.below(alphabet.len())]
                        } else {
                            b'x'
                        }
                    })
                    .collect();
            let from = rng.below(len + 1);
            assert_eq!(
                skip_string(&bytes, from),
                skip_string_bytewise(&bytes, from),
                "{bytes:?} from {from}"
            );
        }
        // Escapes across the 64-byte blocks' edges.
        for at in 55..75 {
            for escape in [&b"\\n"[..], b"\\\"", b"\\\\", b"\\u", b"\\"] {
                let mut bytes = vec![b'x'; 140];
                bytes.splice(at..at + escape.len(), escape.iter().copied());
                bytes[130] = b'"';
                assert_eq!(
                    skip_string(&bytes, 0),
                    skip_string_bytewise(&bytes, 0),
                    "{at} {escape:?}"
                );
            }
        }
    }

    #[test]
    fn objects_are_vouched_for_exactly_when_serde_json_accepts_them() {
        let cases: &[&[u8]] = &[
            br#"{}"#,
            br#"{ "a" : [ 1 , -0.5e+3 , 0 , 10E2 , true , false , null , { } , [ ] , "x" ] }"#,
            br#"{"a":"\u00e9\ud800\"\\\/\b\f\n\r\t","b":{"c":[[],[{}]]}}"#,
            br#"{"a":01}"#,
            br#"{"a":1.}"#,
            br#"{"a":.5}"#,
            br#"{"a":-}"#,
            br#"{"a":1e}"#,
            br#"{"a":1e+}"#,
            br#"{"a":+1}"#,
            br#"{"a":tru}"#,
            br#"{"a":truex}"#,
            br#"{"a":nul,"b":1}"#,
            br#"{"a":1,}"#,
            br#"{"a":[1,]}"#,
            br#"{"a":[1 2]}"#,
            br#"{"a" 1}"#,
            br#"{a:1}"#,
            br#"{"a":1]"#,
            br#"{"a":[1}}"#,
            br#"{"a":"\x"}"#,
            br#"{"a":"\u12g4"}"#,
            br#"{"a":"\u12"}"#,
            b"{\"a\":\"tab\there\"}",
            b"{\"a\":\"nul\x00\"}",
            b"{\"a\":\"\xc3\xa9\"}",
            br#"{"a":1 , "b" : 2}"#,
            b"{\x0c\"a\":1}",
            br#"{"a":[1,{"b":[true]}],"c":{}}"#,
            br#"{,}"#,
            br#"{"a":1,"b"}"#,
            br#"{"a":[,1]}"#,
            br#"{"a":-0.0e-0}"#,
        ];
        for &text in cases {
            for chunk in [1, 2, 3, 7, 1000] {
                let verdict = vouched(text, chunk);
                let expected = serde_accepts(text).then_some(text.len());
                assert_eq!(
                    verdict,
                    expected,
                    "{} in chunks of {chunk}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }

    #[test]
    fn nesting_at_any_depth_is_vouched_for_as_serde_json_accepts_it() {
        for depth in [1, 2, 127, 128, 129, 10_000] {
            for open in [b'[', b'{'] {
                let mut text = b"{\"k\":".to_vec();
                for _ in 1..depth {
                    text.extend_from_slice(if open == b'[' { b"[" } else { b"{\"k\":" });
                }
                text.push(b'1');
                for _ in 1..depth {
                    text.push(if open == b'[' { b']' } else { b'}' });
                }
                text.push(b'}');
                let expected = serde_accepts(&text).then_some(text.len());
                assert_eq!(vouched(&text, 5), expected, "depth {depth}, {}", open as char);
            }
        }
    }

    /// A random JSON value's text, with escapes, numbers of every form and random whitespace.
    fn random_value(rng: &mut Rng, depth: usize, out: &mut Vec<u8>) {
        let ws = |rng: &mut Rng, out: &mut Vec<u8>| {
            for _ in 0..rng.below(3) {
                out.push(b" \t\n\r"[rng.below(4)]);
            }
        };
        let strings: [&[u8]; 6] = [
            b"\"\"",
            b"\"a\\\"b\"",
            b"\"\\u00e9\\ud800\\n\"",
            b"\"\xc3\xa9 \\/\"",
            b"\"}]\\\\\"",
            b"\"x\"",
        ];
        let scalars: [&[u8]; 9] =
            [b"0", b"-1", b"12.5", b"1e9", b"-0.0E-7", b"true", b"false", b"null", b"3"];
        ws(rng, out);
        match rng.below(if depth > 4 { 2 } else { 4 }) {
            0 => out.extend_from_slice(strings[rng.below(strings.len())]),
            1 => out.extend_from_slice(scalars[rng.below(scalars.len())]),
            kind => {
                let object = kind == 2;
                out.push(if object { b'{' } else { b'[' });
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(b',');
                    }
                    if object {
                        ws(rng, out);
                        out.extend_from_slice(strings[rng.below(strings.len())]);
                        ws(rng, out);
                        out.push(b':');
                    }
                    random_value(rng, depth + 1, out);
                }
                ws(rng, out);
                out.push(if object { b'}' } else { b']' });
            }
        }
        ws(rng, out);
    }

    #[test]
    fn random_objects_and_their_mutants_are_vouched_for_exactly_where_serde_json_accepts_them() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let pieces: [&[u8]; 16] = [
            b"{", b"}", b"[", b"]", b":", b",", b"\"", b"\\", b"\\u00", b"a", b"0", b"-", b".",
            b"e", b"\x01", b"\xc3",
        ];
        let (mut accepted, mut refused) = (0, 0);
        for round in 0..20000 {
            let mut text = b"{\"k\":".to_vec();
            random_value(&mut rng, 1, &mut text);
            text.push(b'}');
            if round % 2 == 1 {
                // One byte replaced, removed, or a piece inserted.
                let at = rng.below(text.len());
                match rng.below(3) {
                    0 => text[at] = pieces[rng.below(pieces.len())][0],
                    1 => {
                        text.remove(at);
                    }
                    _ => {
                        let piece = pieces[rng.below(pieces.len())];
                        text.splice(at..at, piece.iter().copied());
                    }
                }
            }
            // UTF-8 is the caller's to check, as serde_json's from_str does before it parses.
            if text.first() != Some(&b'{') || std::str::from_utf8(&text).is_err() {
                continue;
            }
            let chunk = if round % 3 == 0 { text.len() } else { rng.below(8) + 1 };
            let verdict = vouched(&text, chunk);
            if let Some(end) = verdict {
                assert!(serde_accepts(&text[..end]), "{}", String::from_utf8_lossy(&text));
            }
            // serde_json accepts the text up to where its first value ends.
            let mut stream = serde_json::Deserializer::from_slice(&text)
                .into_iter::<&serde_json::value::RawValue>();
            match stream.next() {
                Some(Ok(_)) => {
                    assert_eq!(
                        verdict,
                        Some(stream.byte_offset()),
                        "{}",
                        String::from_utf8_lossy(&text)
                    );
                    accepted += 1;
                }
                _ => {
                    assert_eq!(verdict, None, "{}", String::from_utf8_lossy(&text));
                    refused += 1;
                }
            }
        }
        assert!(accepted > 5000 && refused > 2000, "{accepted} accepted, {refused} refused");
    }
}
