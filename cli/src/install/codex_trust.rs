//! Codex's hook trust: which of hookline's hooks Codex will skip.
//!
//! Codex (0.171) runs a hook that is not managed by an administrator only once a person has
//! trusted it in the TUI's `/hooks` screen; until then it skips it — silently in `codex exec`.
//! The TUI records each decision in `$CODEX_HOME/config.toml`:
//!
//! ```toml
//! [hooks.state."/home/me/.codex/hooks.json:pre_tool_use:0:0"]
//! trusted_hash = "sha256:1aff7f56…"
//! enabled = false            # only when the hook was turned off in /hooks
//! ```
//!
//! The key is the hooks file, the event in snake case, the index of the matcher group and the
//! index of the handler in it. The hash covers what the hook does, not where it sits: SHA-256
//! of the compact, key-sorted JSON of `{event_name, matcher?, hooks: [handler]}`, the handler
//! normalised to `{type: "command", command, timeout, async, statusMessage?}` with the timeout
//! Codex applies (600 s when absent, at least 1, and at most 3 for `SessionEnd` and
//! `Interrupt`, which Codex clamps). Read from the Codex source (`hooks/src/engine/discovery.rs`,
//! `command_hook_hash`) and checked against what the 0.171 TUI wrote for each of the events
//! hookline registers. A hook whose hash differs from the recorded one (changed since it was
//! trusted, e.g. the relay moved) is skipped too.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::install::dialect::Dialect;
use crate::install::dialect::Shape as _;

/// Where Codex keeps the trust decisions (a path template, as profiles write them).
pub const CONFIG_PATH: &str = "${CODEX_HOME:-~/.codex}/config.toml";

/// Events whose matcher Codex ignores (and leaves out of the hash).
const MATCHERLESS: &[&str] = &["user_prompt_submit", "stop", "pre_compact", "post_compact"];
/// Events whose timeout Codex clamps to [`CLAMPED_TIMEOUT`] seconds.
const CLAMPED: &[&str] = &["session_end", "interrupt"];
const CLAMPED_TIMEOUT: u64 = 3;
/// Codex's timeout for a handler without one, in seconds.
const DEFAULT_TIMEOUT: u64 = 600;

/// What Codex will do with one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Trusted with this very content: it runs.
    Trusted,
    /// No trust record: skipped until trusted in `/hooks`.
    Untrusted,
    /// Trusted once, changed since (the hash differs): skipped until trusted again.
    Modified,
    /// Turned off in `/hooks`: skipped even with `--dangerously-bypass-hook-trust`.
    Disabled,
}

/// One of hookline's hooks in a Codex hooks file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookTrust {
    /// The native event (`PreToolUse`).
    pub event: String,
    /// The key of its trust record.
    pub key: String,
    /// What Codex will do with it.
    pub trust: Trust,
}

/// The `hooks.state` records of a Codex `config.toml`: key → (trusted hash, enabled).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustRecords(Vec<(String, Option<String>, Option<bool>)>);

impl TrustRecords {
    /// Reads the records from the text of `config.toml`.
    pub fn parse(text: &str) -> Result<TrustRecords, String> {
        let value: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let Some(state) = value.get("hooks").and_then(|h| h.get("state")) else {
            return Ok(TrustRecords::default());
        };
        let state = state.as_table().ok_or("hooks.state is not a table")?;
        Ok(TrustRecords(
            state
                .iter()
                .map(|(key, record)| {
                    let hash =
                        record.get("trusted_hash").and_then(|h| h.as_str()).map(str::to_owned);
                    let enabled = record.get("enabled").and_then(toml::Value::as_bool);
                    (key.clone(), hash, enabled)
                })
                .collect(),
        ))
    }

    fn get(&self, keys: &[String]) -> Option<(Option<&str>, Option<bool>)> {
        self.0
            .iter()
            .find(|(k, ..)| keys.contains(k))
            .map(|(_, hash, enabled)| (hash.as_deref(), *enabled))
    }
}

/// `PreToolUse` → `pre_tool_use`: how Codex names events in trust keys and hashes.
pub fn event_key_label(event: &str) -> String {
    let mut label = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                label.push('_');
            }
            label.push(c.to_ascii_lowercase());
        } else {
            label.push(c);
        }
    }
    label
}

/// The hash Codex records when it trusts `handler` of matcher `group` under `event`.
pub fn hook_hash(event: &str, group: &Value, handler: &Value) -> String {
    let label = event_key_label(event);
    let mut timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(DEFAULT_TIMEOUT);
    timeout = timeout.max(1);
    if CLAMPED.contains(&label.as_str()) {
        timeout = timeout.min(CLAMPED_TIMEOUT);
    }
    let mut normalized = Map::new();
    normalized.insert("type".into(), json!("command"));
    normalized.insert("command".into(), handler.get("command").cloned().unwrap_or(json!("")));
    normalized.insert("timeout".into(), json!(timeout));
    normalized.insert(
        "async".into(),
        json!(handler.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(message) = handler.get("statusMessage").filter(|m| m.is_string()) {
        normalized.insert("statusMessage".into(), message.clone());
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(label));
    identity.insert("hooks".into(), json!([Value::Object(normalized)]));
    if let Some(matcher) = group.get("matcher").and_then(Value::as_str)
        && !MATCHERLESS.contains(&label.as_str())
    {
        identity.insert("matcher".into(), json!(matcher));
    }
    let bytes = serde_json::to_vec(&sorted(Value::Object(identity))).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// A JSON value with every object's keys sorted (whatever serde_json's map order is).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The spellings of `hooks_file` Codex may use in keys: as given, and with its folder's
/// symlinks resolved (Codex resolves `CODEX_HOME`).
fn key_sources(hooks_file: &Path) -> Vec<String> {
    let mut sources = vec![hooks_file.display().to_string()];
    let resolved: Option<PathBuf> = hooks_file
        .parent()
        .and_then(|dir| dir.canonicalize().ok())
        .zip(hooks_file.file_name())
        .map(|(dir, name)| dir.join(name));
    if let Some(resolved) = resolved.map(|p| p.display().to_string())
        && !sources.contains(&resolved)
    {
        sources.push(resolved);
    }
    sources
}

/// What Codex will do with each of hookline's hooks in `hooks_json`, the text of
/// `hooks_file`, given the trust records of `config.toml`.
pub fn our_hooks(hooks_file: &Path, hooks_json: &str, records: &TrustRecords) -> Vec<HookTrust> {
    let Ok(root) = serde_json::from_str::<Value>(hooks_json) else {
        return Vec::new();
    };
    let Some(events) = root.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let sources = key_sources(hooks_file);
    let mut out = Vec::new();
    for (event, groups) in events {
        let label = event_key_label(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                if !Dialect::Codex.is_our_handler(handler) {
                    continue;
                }
                let keys: Vec<String> =
                    sources.iter().map(|s| format!("{s}:{label}:{g}:{h}")).collect();
                let trust = match records.get(&keys) {
                    Some((_, Some(false))) => Trust::Disabled,
                    Some((Some(hash), _)) if hash == hook_hash(event, group, handler) => {
                        Trust::Trusted
                    }
                    Some((Some(_), _)) => Trust::Modified,
                    Some((None, _)) | None => Trust::Untrusted,
                };
                out.push(HookTrust { event: event.clone(), key: keys[0].clone(), trust });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../watcher/tests/fixtures/codex/0.171.0");
    /// The hooks file `hookline install codex` wrote in the session whose `/hooks` screen
    /// trusted every hook, and the key prefix Codex wrote for it.
    const HOOKS_FILE: &str = "/tmp/cgx/c1/home/.codex/hooks.json";

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIXTURES}/trust/{name}")).unwrap()
    }

    #[test]
    fn event_names_are_snake_cased_like_codex_keys() {
        assert_eq!(event_key_label("PreToolUse"), "pre_tool_use");
        assert_eq!(event_key_label("SessionEnd"), "session_end");
        assert_eq!(event_key_label("Stop"), "stop");
    }

    #[test]
    fn every_hook_trusted_in_the_real_tui_hashes_to_its_record() {
        let records = TrustRecords::parse(&fixture("config.toml")).unwrap();
        let hooks = our_hooks(Path::new(HOOKS_FILE), &fixture("hooks.json"), &records);
        assert_eq!(hooks.len(), 12, "{hooks:?}");
        for hook in &hooks {
            assert_eq!(hook.trust, Trust::Trusted, "{hook:?}");
        }
        let end = hooks.iter().find(|h| h.event == "SessionEnd").unwrap();
        assert_eq!(end.key, format!("{HOOKS_FILE}:session_end:0:0"));
    }

    #[test]
    fn a_hook_without_a_record_is_untrusted_and_a_changed_one_modified() {
        let hooks_json = fixture("hooks.json");
        let none = our_hooks(Path::new(HOOKS_FILE), &hooks_json, &TrustRecords::default());
        assert!(none.iter().all(|h| h.trust == Trust::Untrusted), "{none:?}");
        // Another relay path: every hash changes.
        let moved = hooks_json.replace("/work/wt/e2e-cg/target/debug/", "/usr/local/bin/");
        let records = TrustRecords::parse(&fixture("config.toml")).unwrap();
        let hooks = our_hooks(Path::new(HOOKS_FILE), &moved, &records);
        assert!(hooks.iter().all(|h| h.trust == Trust::Modified), "{hooks:?}");
        // Another file: no record matches its keys.
        let other = our_hooks(Path::new("/elsewhere/hooks.json"), &hooks_json, &records);
        assert!(other.iter().all(|h| h.trust == Trust::Untrusted), "{other:?}");
    }

    #[test]
    fn a_hook_turned_off_is_disabled_and_foreign_hooks_are_not_reported() {
        let config = format!(
            "{}\n[hooks.state.\"{HOOKS_FILE}:stop:0:1\"]\nenabled = false\n",
            fixture("config.toml")
        );
        let records = TrustRecords::parse(&config).unwrap();
        let hooks_json = r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "notify-send done"},
            {"type": "command", "command": "/x/hookline-relay --cli codex", "timeout": 10}
        ]}]}}"#;
        let hooks = our_hooks(Path::new(HOOKS_FILE), hooks_json, &records);
        assert_eq!(
            hooks,
            [HookTrust {
                event: "Stop".into(),
                key: format!("{HOOKS_FILE}:stop:0:1"),
                trust: Trust::Disabled
            }]
        );
    }

    #[test]
    fn the_hash_follows_codex_normalisation() {
        let handler = json!({"type": "command", "command": "/x/hookline-relay --cli codex"});
        let group = json!({"matcher": "Bash", "hooks": [handler]});
        // No timeout means Codex's 600 s; a matcher counts only where Codex reads one.
        let explicit =
            json!({"type": "command", "command": "/x/hookline-relay --cli codex", "timeout": 600});
        assert_eq!(
            hook_hash("PreToolUse", &group, &handler),
            hook_hash("PreToolUse", &group, &explicit)
        );
        assert_ne!(
            hook_hash("PreToolUse", &group, &handler),
            hook_hash("PreToolUse", &json!({}), &handler)
        );
        assert_eq!(hook_hash("Stop", &group, &handler), hook_hash("Stop", &json!({}), &handler));
        // SessionEnd and Interrupt are clamped to 3 s before hashing.
        let three =
            json!({"type": "command", "command": "/x/hookline-relay --cli codex", "timeout": 3});
        assert_eq!(
            hook_hash("Interrupt", &json!({}), &explicit),
            hook_hash("Interrupt", &json!({}), &three)
        );
        assert!(TrustRecords::parse("hooks = 3").is_ok());
        assert!(TrustRecords::parse("[hooks\n").is_err());
    }
}
