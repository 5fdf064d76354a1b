//! The hook command: building it, quoting it for a POSIX shell, and recognising ours.
//!
//! Our entries are recognised by their command alone: the program it runs is a file named
//! `hookline-relay`, at any path and with any flags. No marker key is added to anyone's
//! schema.

use std::borrow::Cow;
use std::path::Path;

/// The relay's file name.
pub const RELAY_PROGRAM: &str = "hookline-relay";

/// Quotes a word for a POSIX shell: left as it is when it only holds characters no shell
/// treats specially, else in single quotes (a single quote inside becomes `'\''`).
pub fn quote(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// The command that runs the relay for one CLI (and one event, when the CLI's payload lacks
/// the event name).
pub fn relay_command(relay: &str, cli: &str, event: Option<&str>) -> String {
    let mut words = vec![quote(relay), Cow::Borrowed("--cli"), quote(cli)];
    if let Some(event) = event {
        words.push(Cow::Borrowed("--event"));
        words.push(quote(event));
    }
    words.join(" ")
}

/// Splits a command line the way a POSIX shell splits simple words: blanks separate words,
/// single quotes are literal, double quotes and backslashes escape. `None` when a quote is
/// not closed. Expansions (`$VAR`) are kept as text.
pub fn split(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => word.push(c),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The words of a command after any leading `NAME=value` assignments.
pub fn program_words(command: &str) -> Option<Vec<String>> {
    let words = split(command)?;
    let skip = words
        .iter()
        .take_while(|w| {
            w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .count();
    Some(words[skip..].to_vec())
}

/// Whether a hook command runs hookline's relay.
pub fn is_relay_command(command: &str) -> bool {
    program_words(command).and_then(|words| words.first().cloned()).is_some_and(|program| {
        Path::new(&program).file_name().is_some_and(|name| name == RELAY_PROGRAM)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_stay_bare_and_others_are_single_quoted() {
        assert_eq!(quote("/usr/local/bin/hookline-relay"), "/usr/local/bin/hookline-relay");
        assert_eq!(quote("/My Tools/hookline-relay"), "'/My Tools/hookline-relay'");
        assert_eq!(quote("/it's/x"), r"'/it'\''s/x'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn quoted_commands_split_back_into_the_same_words() {
        for relay in [
            "/usr/bin/hookline-relay",
            "/My Tools/hookline-relay",
            "/it's \"quoted\"/hookline-relay",
            "/tab\there/$x/`y`/hookline-relay",
        ] {
            let command = relay_command(relay, "claude", Some("Stop"));
            let words = split(&command).unwrap();
            assert_eq!(words, [relay, "--cli", "claude", "--event", "Stop"], "{command}");
            assert!(is_relay_command(&command), "{command}");
        }
    }

    #[test]
    fn ours_are_recognised_by_the_program_name_only() {
        assert!(is_relay_command("/old/path/hookline-relay"));
        assert!(is_relay_command("hookline-relay --cli codex"));
        assert!(is_relay_command("\"/x y/hookline-relay\" --cli claude"));
        assert!(is_relay_command("HOOKLINE_TAG=t /x/hookline-relay"));
        assert!(!is_relay_command(
            "python3 \"$CLAUDE_PROJECT_DIR\"/.bmad-loop/bmad_loop_hook.py Stop"
        ));
        assert!(!is_relay_command("/x/hookline-relay-old"));
        assert!(!is_relay_command("echo hookline-relay"));
        assert!(!is_relay_command("'unclosed /x/hookline-relay"));
        assert!(!is_relay_command(""));
    }
}
