//! Text from events, made safe to print on a terminal.

use std::borrow::Cow;

/// `text` with every control character (C0 but tab, DEL, C1: ESC and CSI among them) written
/// as `\u{..}`, so that a tag, a cwd or a message an agent wrote can never move the cursor,
/// recolour the screen or retitle the window when printed. The one place hookline escapes
/// event strings for a terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    let bad = |c: char| (c.is_control() && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c);
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_out_and_plain_text_is_borrowed() {
        assert!(matches!(printable("/home/me/work ❯ ok\t"), Cow::Borrowed(_)));
        assert_eq!(
            printable("a\u{1b}]0;pwned\u{7}b\u{9b}2J\n"),
            "a\\u{1b}]0;pwned\\u{7}b\\u{9b}2J\\u{a}"
        );
    }
}
