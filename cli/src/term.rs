//! Text from events on its way to a terminal.
//!
//! A session id, a tag, a cwd, a tool name or a message comes from whoever wrote the hook's
//! payload; printed raw, an ESC, CR, LF or BEL in it can move the cursor, spoof a table row,
//! retitle the window or leave an escape sequence open. Every string from an event that a
//! command prints as text goes through [`escape`] first; JSON output needs nothing more (serde
//! escapes every control character).

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character that a terminal would act on instead of showing written as a
/// visible escape: C0 controls (`\e`, `\r`, `\n`, `\a`, `\t`, `\x01`…), DEL, C1 controls
/// (`\u{9b}`…) and the bidirectional overrides and isolates that reorder what follows them
/// (`\u{202e}`…). Everything else, including other non-ASCII text, is kept as it is.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\x07' => out.push_str("\\a"),
            c if (c as u32) < 0x80 && needs_escape(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The width of each column of `rows`, in characters: its longest cell's, so that every row
/// lines up whatever its cells hold.
pub fn widths<const N: usize>(rows: &[[String; N]]) -> [usize; N] {
    let mut widths = [0; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    widths
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn control_characters_are_written_visibly_and_the_rest_is_kept() {
        let cases = [
            ("plain /home/dev/proj", "plain /home/dev/proj"),
            ("naïve – 日本", "naïve – 日本"),
            ("\x1b]0;pwned\x07", "\\e]0;pwned\\a"),
            ("row\r\nfake row", "row\\r\\nfake row"),
            ("tab\there", "tab\\there"),
            ("\x00\x01\x7f", "\\x00\\x01\\x7f"),
            ("\u{9b}31m", "\\u{9b}31m"),
            ("abc\u{202e}fdp.exe", "abc\\u{202e}fdp.exe"),
        ];
        for (raw, shown) in cases {
            assert_eq!(escape(raw), shown, "{raw:?}");
            assert!(!escape(raw).chars().any(|c| c.is_control()), "{raw:?}");
        }
    }
}
