//! The settings dialects: how each CLI's hooks file registers a command.
//!
//! | dialect | shape of `hooks.<event>` | handler | timeout |
//! |---|---|---|---|
//! | `claude`, `codex` | matcher groups `{matcher?, hooks: [handler]}` | `{type, command, timeout}` | seconds |
//! | `gemini` | matcher groups | `{name, type, command, timeout}` | milliseconds |
//! | `copilot` | handlers, in a file of its own with `version: 1` | `{type, bash, timeoutSec}` | seconds |
//! | `cursor` | handlers, with `version: 1` | `{command, timeout}` | seconds |
//!
//! `opencode_plugin` (OpenCode, Kilo Code) and `pi_extension` (Pi) register no hooks: the
//! whole file is hookline's plugin ([`crate::install::plugin`]).

use serde_json::{Map, Value, json};

use crate::install::command::is_relay_command;
pub use hookline::vocab::Dialect;

/// The `name` written on Gemini handlers (`/hooks disable hookline` turns them off).
pub const GEMINI_HOOK_NAME: &str = "hookline";

/// What an item of a `hooks.<event>` array is to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Not ours.
    Foreign,
    /// Ours entirely (a group holding only our handlers, or our handler).
    Ours,
    /// A group holding our handlers (at these indexes of its `hooks`) beside others.
    Mixed(Vec<usize>),
}

/// How a [`Dialect`] shapes a CLI's hooks settings: what `install` writes, and what it
/// recognises as its own. (The dialects are the library's vocabulary; their shapes are the
/// installer's.)
pub trait Shape: Copy {
    /// The plugin a plugin dialect writes whole, with its relay placeholder; `None` for the
    /// dialects that register hooks in a settings file.
    fn plugin_source(self) -> Option<&'static str>;
    /// Whether events hold matcher groups (else handlers directly).
    fn grouped(self) -> bool;
    /// Whether the file carries `"version": 1` at the top.
    fn versioned(self) -> bool;
    /// Whether the file is hookline's own (Copilot reads one file per tool): when nothing
    /// else is left in it, `uninstall` removes it.
    fn own_file(self) -> bool;
    /// The timeout as the dialect writes it.
    fn timeout(self, secs: u32) -> u64;
    /// The item to append to `hooks.<event>`.
    fn entry(self, command: &str, timeout_secs: u32, matcher: Option<&str>) -> Value;
    /// Whether a handler object runs our relay.
    fn is_our_handler(self, handler: &Value) -> bool;
    /// The command of an item of ours, for messages.
    fn command_of(self, item: &Value) -> Option<String>;
    /// Classifies an item of a `hooks.<event>` array.
    fn classify(self, item: &Value) -> Item;
}

/// The handler keys that hold the command.
fn command_keys(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Copilot => &["bash", "command"],
        _ => &["command"],
    }
}

impl Shape for Dialect {
    fn plugin_source(self) -> Option<&'static str> {
        match self {
            Dialect::OpencodePlugin => Some(crate::install::plugin::OPENCODE_PLUGIN),
            Dialect::PiExtension => Some(crate::install::plugin::PI_EXTENSION),
            _ => None,
        }
    }

    fn grouped(self) -> bool {
        matches!(self, Dialect::Claude | Dialect::Codex | Dialect::Gemini)
    }

    fn versioned(self) -> bool {
        matches!(self, Dialect::Copilot | Dialect::Cursor)
    }

    fn own_file(self) -> bool {
        self == Dialect::Copilot
    }

    fn timeout(self, secs: u32) -> u64 {
        match self {
            Dialect::Gemini => u64::from(secs) * 1000,
            _ => u64::from(secs),
        }
    }

    fn entry(self, command: &str, timeout_secs: u32, matcher: Option<&str>) -> Value {
        let timeout = self.timeout(timeout_secs);
        let mut item = Map::new();
        match self {
            Dialect::Claude | Dialect::Codex | Dialect::Gemini => {
                let handler = if self == Dialect::Gemini {
                    json!({"name": GEMINI_HOOK_NAME, "type": "command", "command": command, "timeout": timeout})
                } else {
                    json!({"type": "command", "command": command, "timeout": timeout})
                };
                if let Some(m) = matcher {
                    item.insert("matcher".into(), m.into());
                }
                item.insert("hooks".into(), json!([handler]));
            }
            Dialect::Copilot => {
                item.insert("type".into(), "command".into());
                item.insert("bash".into(), command.into());
                item.insert("timeoutSec".into(), timeout.into());
                if let Some(m) = matcher {
                    item.insert("matcher".into(), m.into());
                }
            }
            // A plugin dialect registers no events, so it has no entries; written as Cursor's
            // should one ever be asked for.
            Dialect::Cursor | Dialect::OpencodePlugin | Dialect::PiExtension => {
                item.insert("command".into(), command.into());
                item.insert("timeout".into(), timeout.into());
                if let Some(m) = matcher {
                    item.insert("matcher".into(), m.into());
                }
            }
        }
        Value::Object(item)
    }

    fn is_our_handler(self, handler: &Value) -> bool {
        command_keys(self)
            .iter()
            .any(|key| handler.get(key).and_then(Value::as_str).is_some_and(is_relay_command))
    }

    fn command_of(self, item: &Value) -> Option<String> {
        let handler = if self.grouped() { item.get("hooks")?.as_array()?.first()? } else { item };
        command_keys(self)
            .iter()
            .find_map(|k| handler.get(k).and_then(Value::as_str))
            .map(str::to_owned)
    }

    fn classify(self, item: &Value) -> Item {
        if !self.grouped() {
            return if self.is_our_handler(item) { Item::Ours } else { Item::Foreign };
        }
        let Some(handlers) = item.get("hooks").and_then(Value::as_array) else {
            return Item::Foreign;
        };
        let ours: Vec<usize> = handlers
            .iter()
            .enumerate()
            .filter(|(_, h)| self.is_our_handler(h))
            .map(|(i, _)| i)
            .collect();
        if ours.is_empty() {
            Item::Foreign
        } else if ours.len() == handlers.len() {
            Item::Ours
        } else {
            Item::Mixed(ours)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_writes_its_own_entry_shape() {
        let c = "/bin/hookline-relay --cli x";
        assert_eq!(
            Dialect::Claude.entry(c, 10, None),
            json!({"hooks": [{"type": "command", "command": c, "timeout": 10}]})
        );
        assert_eq!(
            Dialect::Codex.entry(c, 5, Some("*")),
            json!({"matcher": "*", "hooks": [{"type": "command", "command": c, "timeout": 5}]})
        );
        assert_eq!(
            Dialect::Gemini.entry(c, 10, None),
            json!({"hooks": [{"name": "hookline", "type": "command", "command": c, "timeout": 10000}]})
        );
        assert_eq!(
            Dialect::Copilot.entry(c, 10, None),
            json!({"type": "command", "bash": c, "timeoutSec": 10})
        );
        assert_eq!(Dialect::Cursor.entry(c, 10, None), json!({"command": c, "timeout": 10}));
    }

    #[test]
    fn groups_are_ours_mixed_or_foreign() {
        let d = Dialect::Claude;
        let ours = json!({"type": "command", "command": "/a/hookline-relay"});
        let other = json!({"type": "command", "command": "notify-send hi"});
        assert_eq!(d.classify(&json!({"hooks": [ours.clone()]})), Item::Ours);
        assert_eq!(
            d.classify(&json!({"hooks": [other.clone(), ours.clone()]})),
            Item::Mixed(vec![1])
        );
        assert_eq!(d.classify(&json!({"hooks": [other]})), Item::Foreign);
        assert_eq!(d.classify(&json!({"hooks": []})), Item::Foreign);
        assert_eq!(d.classify(&json!("text")), Item::Foreign);
        assert_eq!(
            Dialect::Copilot.classify(&json!({"bash": "/a/hookline-relay --cli copilot"})),
            Item::Ours
        );
        assert_eq!(Dialect::Cursor.classify(&ours), Item::Ours);
    }
}
