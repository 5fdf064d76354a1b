//! The policy: every threshold the decisions use, read from one TOML file.
//!
//! Keys are kebab-case and grouped in tables (`[nudge]`, `[escalate]`, ...). Every key is
//! optional: a missing key keeps its default, and every default lives in the one
//! [`impl Default for Policy`](Policy::default). Parsing is strict: an unknown key is an error
//! that names it (a misspelt threshold must not silently keep its default), and `version` is
//! read first. [`KEYS`] documents each key; `docs/policy.md` and `docs/policy.example.toml`
//! are rendered from it and from the defaults, and a test keeps them in sync.
//!
//! `[stale]` is the one table whose keys are not fixed: states, and CLIs holding states
//! ([`STALE_KEYS`]). Its default is empty: every window is the profile's own. A state name is
//! checked when parsing; a CLI name, and whether a profile has a hole for the state at all, by
//! [`Policy::check_profiles`] against the profiles in force.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::canonical::FailureKind;
use crate::config::{ConfigError, ConfigKind, Toml};
use crate::profile::Profiles;
use crate::state::{StaleWindows, StateKind};
use crate::units::{format_duration, parse_duration};

/// The policy file's schema version.
pub const POLICY_VERSION: u32 = 1;

/// The decisions' thresholds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `input.max-idle-age`: an `idle` older than this no longer authorizes input or a nudge;
    /// zero means no limit.
    pub max_idle_age: Duration,
    /// `input.lease-expires-after`: a lease on an idle's input slot that has been neither used
    /// nor released this long is given up, and the slot is free again; zero: never (a holder
    /// that dies keeps the slot until the session leaves that idle).
    pub lease_expires_after: Duration,
    /// `nudge.min-idle`: how long a session must have been idle before a stall nudge.
    pub nudge_min_idle: Duration,
    /// `nudge.max-in-a-row`: nudges allowed with no real input in between; the next is
    /// withheld and escalated.
    pub nudge_max_in_a_row: u32,
    /// `crashed.check-host-pid`: probe the host CLI's pid to see whether it is dead.
    pub check_host_pid: bool,
    /// `env-fault.pause-on`: error classes that pause the run.
    pub pause_on: Vec<FailureKind>,
    /// `env-fault.backoff-on`: error classes that pause for `backoff`, then allow a retry.
    pub backoff_on: Vec<FailureKind>,
    /// `env-fault.backoff`: how long a transient error pauses.
    pub backoff: Duration,
    /// `env-fault.quota-notification-types`: notification types (substrings, any case) that
    /// report a quota.
    pub quota_notification_types: Vec<String>,
    /// `env-fault.quota-messages`: notification message substrings (any case) that report a
    /// quota.
    pub quota_messages: Vec<String>,
    /// `env-fault.quota-notice-for`: how long a quota notification counts (while it is still
    /// the session's freshest evidence).
    pub quota_notice_for: Duration,
    /// `env-fault.zero-tokens-after`: a turn whose transcript shows zero output tokens this
    /// long after it started is env-fault evidence (a session that died before its first
    /// token looks like a slow one otherwise). Zero turns it off.
    pub zero_tokens_after: Duration,
    /// `stall.services`: patterns for the commands of long-lived services (dev servers): a
    /// running background shell task whose command holds one (as a whole word) never wakes
    /// the session, so it never gates a stall.
    pub stall_services: Vec<String>,
    /// `stall.livelock-repeats`: this many identical consecutive tool calls in one turn (same
    /// tool, same input) are a definite stall.
    pub livelock_repeats: u32,
    /// `escalate.unknown-after`: escalate a session `unknown` for this long.
    pub escalate_unknown_after: Duration,
    /// `escalate.waiting-after`: escalate a session waiting on its human for this long.
    pub escalate_waiting_after: Duration,
    /// `escalate.withheld-in-a-row`: escalate after this many withheld nudge or crashed
    /// verdicts in a row while the session's state stays the same.
    pub escalate_withheld_in_a_row: u32,
    /// `journal.enabled`: append withheld verdicts to the journal.
    pub journal_enabled: bool,
    /// `journal.path`: the journal file; `None`: beside the events directory.
    pub journal_path: Option<PathBuf>,
    /// `journal.max-bytes`: the journal's size cap; at the cap it is rotated to `….1`.
    pub journal_max_bytes: u64,
    /// `[stale]`: staleness windows replacing the profiles' `stale-after`; empty: the
    /// profiles' own.
    pub stale: StaleWindows,
    /// `[classifier]`: the act-gated classifier consult (off unless a command is set).
    pub classifier: ClassifierPolicy,
}

/// `[classifier]`: the external command consulted at the `stall` and `crashed` consult points
/// (docs/classifier.md). Its verdicts go through the act-gate: they can only make an answer
/// more careful, except `stalled` at `stall`'s `fall_back`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifierPolicy {
    /// `classifier.command`: the argv to run; `None` (the default): never consulted.
    pub command: Option<Vec<String>>,
    /// `classifier.timeout`: how long one consult may take; the command's process group is
    /// killed then, and the answer is the deterministic one.
    pub timeout: Duration,
    /// `classifier.max-per-session`: consults of one session the journal may hold; past it,
    /// the answer is the deterministic one.
    pub max_per_session: u32,
    /// `classifier.max-per-hour`: consults, all sessions together, in the last hour.
    pub max_per_hour: u32,
    /// `classifier.waiting-in-a-row`: this many consecutive `waiting_on_human` verdicts for a
    /// session escalate.
    pub waiting_in_a_row: u32,
}

impl Default for ClassifierPolicy {
    fn default() -> ClassifierPolicy {
        ClassifierPolicy {
            command: None,
            timeout: Duration::from_secs(30),
            max_per_session: 20,
            max_per_hour: 60,
            waiting_in_a_row: 3,
        }
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            max_idle_age: Duration::ZERO,
            lease_expires_after: Duration::ZERO,
            nudge_min_idle: Duration::from_secs(30),
            nudge_max_in_a_row: 3,
            check_host_pid: true,
            pause_on: vec![FailureKind::RateLimit, FailureKind::Billing, FailureKind::Auth],
            backoff_on: vec![FailureKind::Overloaded, FailureKind::Server],
            backoff: Duration::from_secs(120),
            quota_notification_types: ["quota", "rate_limit", "usage_limit", "billing"]
                .map(String::from)
                .to_vec(),
            quota_messages: ["usage limit", "rate limit", "quota", "out of credits"]
                .map(String::from)
                .to_vec(),
            quota_notice_for: Duration::from_secs(5 * 3600),
            zero_tokens_after: Duration::from_secs(600),
            stall_services: [
                "http.server",
                "npm run dev",
                "npm start",
                "yarn dev",
                "pnpm dev",
                "bun dev",
                "vite",
                "next dev",
                "webpack serve",
                "webpack-dev-server",
                "manage.py runserver",
                "flask run",
                "uvicorn",
                "gunicorn",
                "rails server",
                "php -S",
                "hugo server",
                "jekyll serve",
            ]
            .map(String::from)
            .to_vec(),
            livelock_repeats: 5,
            escalate_unknown_after: Duration::from_secs(600),
            escalate_waiting_after: Duration::from_secs(1800),
            escalate_withheld_in_a_row: 10,
            journal_enabled: true,
            journal_path: None,
            journal_max_bytes: 1 << 20,
            stale: StaleWindows::default(),
            classifier: ClassifierPolicy::default(),
        }
    }
}

/// One documented key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// `table.key`.
    pub path: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// Every key, in file order, with what it does.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc {
        path: "input.max-idle-age",
        doc: "An `idle` older than this no longer authorizes input or a nudge (ask again after a fresh event). `0s`: no limit.",
    },
    KeyDoc {
        path: "input.lease-expires-after",
        doc: "A lease on an idle's input slot (what an allowed `input` or `nudge` hands out) that has been neither used nor released this long is given up, freeing the slot. `0s`: never; a holder that dies keeps the slot until the session leaves that idle.",
    },
    KeyDoc {
        path: "nudge.min-idle",
        doc: "A stall nudge waits until the session has been explicitly idle this long (a blocked stop hook shows activity first).",
    },
    KeyDoc {
        path: "nudge.max-in-a-row",
        doc: "Nudges allowed with no real input (an allowed `input`) in between; the next one is withheld and escalated.",
    },
    KeyDoc {
        path: "crashed.check-host-pid",
        doc: "Probe the host CLI's pid (`kill(pid, 0)`, and its start time on Linux to see pid reuse). Turn off when the CLIs run in another pid namespace (a container) than hookline.",
    },
    KeyDoc {
        path: "env-fault.pause-on",
        doc: "`stop_failure` error classes that pause the run: never retried, never counted as a crash.",
    },
    KeyDoc {
        path: "env-fault.backoff-on",
        doc: "Error classes that are the provider's transient trouble: paused for `backoff`, then a retry is allowed. A class in neither list (`other`) is escalated.",
    },
    KeyDoc { path: "env-fault.backoff", doc: "How long a transient error (`backoff-on`) pauses." },
    KeyDoc {
        path: "env-fault.quota-notification-types",
        doc: "A notification whose type contains one of these (any case) reports a quota: pause.",
    },
    KeyDoc {
        path: "env-fault.quota-messages",
        doc: "A notification whose message contains one of these (any case) reports a quota: pause.",
    },
    KeyDoc {
        path: "env-fault.quota-notice-for",
        doc: "How long a quota notification counts, while no later event has changed the session's state.",
    },
    KeyDoc {
        path: "env-fault.zero-tokens-after",
        doc: "A turn whose transcript shows zero output tokens this long after it started is env-fault evidence (`transcript-zero-tokens`: pause); `\"0s\"` turns it off. Vendor-neutral: only the transcript's token counts are read, never its text.",
    },
    KeyDoc {
        path: "stall.services",
        doc: "Long-lived services (dev servers): a running background `shell` task whose command contains one of these, as whole words, never ends, so it never wakes the session and never gates `stall` or `nudge`. Every other running task does.",
    },
    KeyDoc {
        path: "stall.livelock-repeats",
        doc: "This many identical consecutive tool calls in one turn (the same tool with the same input) are a livelock: `stall` allows a nudge. At least 2.",
    },
    KeyDoc {
        path: "escalate.unknown-after",
        doc: "Escalate a session that has been `unknown` this long.",
    },
    KeyDoc {
        path: "escalate.waiting-after",
        doc: "Escalate a session that has been waiting on its human this long.",
    },
    KeyDoc {
        path: "escalate.withheld-in-a-row",
        doc: "Escalate after this many withheld `nudge` or `crashed` verdicts in a row for a session whose state has not changed.",
    },
    KeyDoc {
        path: "journal.enabled",
        doc: "Append every withheld verdict (hold, pause, escalate, fall back) to the journal.",
    },
    KeyDoc {
        path: "journal.path",
        doc: "The journal file. Unset: beside the events directory, `<events dir>.decisions.ndjson`.",
    },
    KeyDoc {
        path: "journal.max-bytes",
        doc: "At this size the journal is renamed to `<journal>.1` (replacing the previous one) and started again.",
    },
    KeyDoc {
        path: "classifier.command",
        doc: "The classifier to consult at `stall`'s `fall_back` and before `crashed` on a silent session, as an argv array (`[\"claude\", \"-p\", \"--model\", \"haiku\"]`); it reads hookline's instruction and the bounded input on stdin and answers one word on its first stdout line. Unset: never consulted. Its verdicts are act-gated (docs/classifier.md).",
    },
    KeyDoc {
        path: "classifier.timeout",
        doc: "How long one consult may take. At the timeout the command's process group is killed and the answer is the deterministic one.",
    },
    KeyDoc {
        path: "classifier.max-per-session",
        doc: "Consults of one session the journal may hold; past it, the answer is the deterministic one. At least 1.",
    },
    KeyDoc {
        path: "classifier.max-per-hour",
        doc: "Consults in the last hour, all sessions together (counted in the journal, so one-shot `hookline decide` runs share it); past it, the answer is the deterministic one. At least 1.",
    },
    KeyDoc {
        path: "classifier.waiting-in-a-row",
        doc: "This many consecutive `waiting_on_human` verdicts for one session escalate `crashed` (a session that talks its classifier into a pause gets a human). At least 1.",
    },
];

/// The `[stale]` keys, which name states and CLIs rather than being fixed.
pub const STALE_KEYS: &[KeyDoc] = &[
    KeyDoc {
        path: "stale.<state>",
        doc: "After this long without an event, a state a CLI can leave silently reads `unknown`: for every CLI whose profile declares a hole for that state, this replaces the hole's `stale-after` (a hole without one never goes stale by itself). `0s` turns staleness off. A shorter window is the safe direction: the state reads `unknown` sooner, so the decisions fall back (or escalate after `escalate.unknown-after`) sooner. A longer one, or `0s`, makes a state the CLI may have left silently look fresh for longer. Read by `decide` and `serve` (and a `Decider`), and by `status` and `explain`, so they show the staleness the decisions use.",
    },
    KeyDoc {
        path: "stale.<cli>.<state>",
        doc: "The same for one CLI (a profile name), winning over `stale.<state>`. Unknown states, CLIs, and a state the CLI's profile declares no hole for, are errors.",
    },
];

impl Policy {
    /// Reads a policy file strictly.
    pub fn load(path: &Path) -> Result<Policy, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Toml::unreadable(ConfigKind::Policy, path, e))?;
        Policy::parse(&text, &path.display().to_string())
    }

    /// Parses policy text strictly; `label` names it in errors.
    pub fn parse(text: &str, label: &str) -> Result<Policy, ConfigError> {
        let file = Toml::new(ConfigKind::Policy, label, text);
        let root = file.parse()?;
        if let Some(v) = file.version(&root)
            && v.get_ref().as_integer().and_then(|i| i.as_str().parse::<i64>().ok())
                != Some(i64::from(POLICY_VERSION))
        {
            let message = format!(
                "policy version {} is not supported (this build reads {POLICY_VERSION})",
                file.written(v)
            );
            return Err(file.error(Some("version"), message));
        }
        let (wire, unknown): (wire::PolicyFile, _) = file.read(root)?;
        if let Some(key) = unknown.first() {
            let known: Vec<&str> = KEYS.iter().map(|k| k.path).chain(["version"]).collect();
            let mut tables: Vec<&str> =
                KEYS.iter().filter_map(|k| k.path.split_once('.')).map(|(t, _)| t).collect();
            tables.dedup();
            tables.push("stale");
            let hint = crate::config::suggest(key, &known, &tables, &[]);
            return Err(file.error(Some(key), format!("unknown key{hint}")));
        }
        let mut policy = Policy::default();
        wire.apply(&mut policy).map_err(|(key, message)| file.error(Some(key), message))?;
        if let Some(table) = &wire.stale {
            policy.stale = stale_windows(table).map_err(|(key, m)| file.error(Some(&key), m))?;
        }
        for kind in &policy.pause_on {
            if policy.backoff_on.contains(kind) {
                return Err(file.error(
                    Some("env-fault.backoff-on"),
                    format!("{} is also in env-fault.pause-on: list a class once", kind.as_str()),
                ));
            }
        }
        Ok(policy)
    }

    /// Checks the `[stale]` windows against the profiles in force: every CLI must have a
    /// profile, and every state a hole in some profile (in that CLI's, for a per-CLI window),
    /// since a window for a state no CLI can leave silently would change nothing. `label`
    /// names the policy in errors (when it is the path of the file the policy was read from,
    /// they carry the key's line and column). [`Decider::new`](super::Decider::new) does not
    /// check.
    pub fn check_profiles(&self, profiles: &Profiles, label: &str) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(label).unwrap_or_default();
        let file = Toml::new(ConfigKind::Policy, label, &text);
        let error = |key: String, message: String| file.error(Some(&key), message);
        let why = "a state the CLI always leaves with an event never goes stale";
        for &state in self.stale.by_state.keys() {
            if !profiles.iter().any(|p| p.holes_in(state).next().is_some()) {
                let message = format!("no profile declares a hole for {state}: {why}");
                return Err(error(format!("stale.{state}"), message));
            }
        }
        for (cli, windows) in &self.stale.by_cli {
            let Some(profile) = profiles.get(cli) else {
                let names: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
                let message = format!("no profile is named {cli} (profiles: {})", names.join(", "));
                return Err(error(format!("stale.{cli}"), message));
            };
            for &state in windows.keys() {
                if profile.holes_in(state).next().is_none() {
                    let message = format!("{cli}'s profile declares no hole for {state}: {why}");
                    return Err(error(format!("stale.{cli}.{state}"), message));
                }
            }
        }
        Ok(())
    }

    /// The policy as TOML values, key by key (`table.key` → value), for documentation.
    pub fn values(&self) -> Vec<(&'static str, Option<toml::Value>)> {
        let duration = |d: Duration| Some(toml::Value::String(format_duration(d)));
        let words = |v: &[String]| {
            Some(toml::Value::Array(v.iter().cloned().map(toml::Value::String).collect()))
        };
        let kinds = |v: &[FailureKind]| {
            Some(toml::Value::Array(v.iter().map(|k| k.as_str().into()).collect()))
        };
        let count = |n: u64| Some(toml::Value::Integer(n.try_into().unwrap_or(i64::MAX)));
        KEYS.iter()
            .map(|k| {
                let value = match k.path {
                    "input.max-idle-age" => duration(self.max_idle_age),
                    "input.lease-expires-after" => duration(self.lease_expires_after),
                    "nudge.min-idle" => duration(self.nudge_min_idle),
                    "nudge.max-in-a-row" => count(self.nudge_max_in_a_row.into()),
                    "crashed.check-host-pid" => Some(self.check_host_pid.into()),
                    "env-fault.pause-on" => kinds(&self.pause_on),
                    "env-fault.backoff-on" => kinds(&self.backoff_on),
                    "env-fault.backoff" => duration(self.backoff),
                    "env-fault.quota-notification-types" => words(&self.quota_notification_types),
                    "env-fault.quota-messages" => words(&self.quota_messages),
                    "env-fault.quota-notice-for" => duration(self.quota_notice_for),
                    "env-fault.zero-tokens-after" => duration(self.zero_tokens_after),
                    "stall.services" => words(&self.stall_services),
                    "stall.livelock-repeats" => count(self.livelock_repeats.into()),
                    "escalate.unknown-after" => duration(self.escalate_unknown_after),
                    "escalate.waiting-after" => duration(self.escalate_waiting_after),
                    "escalate.withheld-in-a-row" => count(self.escalate_withheld_in_a_row.into()),
                    "journal.enabled" => Some(self.journal_enabled.into()),
                    "journal.path" => {
                        self.journal_path.as_ref().map(|p| p.display().to_string().into())
                    }
                    "journal.max-bytes" => count(self.journal_max_bytes),
                    "classifier.command" => self.classifier.command.as_ref().map(|argv| {
                        toml::Value::Array(argv.iter().cloned().map(toml::Value::String).collect())
                    }),
                    "classifier.timeout" => duration(self.classifier.timeout),
                    "classifier.max-per-session" => count(self.classifier.max_per_session.into()),
                    "classifier.max-per-hour" => count(self.classifier.max_per_hour.into()),
                    "classifier.waiting-in-a-row" => count(self.classifier.waiting_in_a_row.into()),
                    other => unreachable!("KEYS lists {other} but Policy::values does not"),
                };
                (k.path, value)
            })
            .collect()
    }

    /// The documented example file: every key at its default, with what it does.
    pub fn render_example(&self) -> String {
        let mut out = String::from(
            "# hookline decision policy (`hookline decide --policy FILE`, `hookline serve --policy FILE`).\n\
             # Every key is optional; the values below are the defaults. Unknown keys are errors.\n\
             # Generated from watcher/src/decide/policy.rs by the test\n\
             # the_policy_docs_match_the_defaults: run `HOOKLINE_BLESS=1 cargo test -p hookline policy_docs`.\n\
             version = 1\n",
        );
        let mut table = "";
        for ((path, value), key) in self.values().into_iter().zip(KEYS) {
            let (section, name) = path.split_once('.').unwrap_or(("", path));
            if section != table {
                out.push_str(&format!("\n[{section}]\n"));
                table = section;
            }
            for line in wrap(key.doc, 96) {
                out.push_str(&format!("# {line}\n"));
            }
            match value {
                Some(value) => out.push_str(&format!("{name} = {value}\n")),
                None if path == "classifier.command" => out.push_str(&format!(
                    "# {name} = [\"claude\", \"-p\", \"--model\", \"haiku\"]\n"
                )),
                None => out.push_str(&format!("# {name} = \"/path/to/file\"\n")),
            }
        }
        out.push_str("\n[stale]\n");
        let examples = ["active = \"5m\"", "claude.child_command = \"30m\""];
        for (key, example) in STALE_KEYS.iter().zip(examples) {
            for line in wrap(key.doc, 96) {
                out.push_str(&format!("# {line}\n"));
            }
            if key.path == "stale.<cli>.<state>" {
                for line in wrap(&shipped_windows(), 96) {
                    out.push_str(&format!("# {line}\n"));
                }
            }
            out.push_str(&format!("# {example}\n"));
        }
        out
    }

    /// The documentation table: key, default, meaning.
    pub fn render_table(&self) -> String {
        let mut out = String::from("| key | default | meaning |\n|---|---|---|\n");
        for ((path, value), key) in self.values().into_iter().zip(KEYS) {
            let value = value.map_or("unset".to_owned(), |v| format!("`{v}`"));
            out.push_str(&format!("| `{path}` | {value} | {} |\n", key.doc));
        }
        for key in STALE_KEYS {
            let default = "the profile hole's `stale-after`";
            let mut doc = key.doc.to_owned();
            if key.path == "stale.<cli>.<state>" {
                doc = format!("{doc} {}", shipped_windows());
            }
            out.push_str(&format!("| `{}` | {default} | {doc} |\n", key.path));
        }
        out
    }
}

impl Policy {
    /// The `stall.services` pattern a command holds as whole words, if any: the command of a
    /// long-lived service, which never wakes the session.
    pub fn service_in(&self, command: &str) -> Option<&str> {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        self.stall_services.iter().map(String::as_str).find(|pattern| {
            !pattern.is_empty()
                && command.match_indices(pattern).any(|(at, _)| {
                    !word(command[..at].chars().next_back())
                        && !word(command[at + pattern.len()..].chars().next())
                })
        })
    }
}

impl Serialize for Policy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let values = self.values();
        let mut map = serializer.serialize_map(Some(values.len()))?;
        for (path, value) in values {
            map.serialize_entry(path, &value)?;
        }
        // States in the order of their words, as the keys read.
        let by_word = |windows: &std::collections::BTreeMap<StateKind, Duration>| {
            let mut windows: Vec<(StateKind, Duration)> =
                windows.iter().map(|(s, d)| (*s, *d)).collect();
            windows.sort_by_key(|(s, _)| s.as_str());
            windows
        };
        let windows = &self.stale;
        let by_cli = windows.by_cli.iter().flat_map(|(cli, w)| {
            by_word(w).into_iter().map(move |(state, d)| (format!("stale.{cli}.{state}"), d))
        });
        for (key, window) in by_word(&windows.by_state)
            .into_iter()
            .map(|(s, d)| (format!("stale.{s}"), d))
            .chain(by_cli)
        {
            map.serialize_entry(&key, &format_duration(window))?;
        }
        map.end()
    }
}

/// The schema of the policy as [`Policy`]'s `Serialize` writes it: one member per key of
/// [`KEYS`], typed as its default is, and one `stale.…` member per window set.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Policy {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Policy".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut properties = serde_json::Map::new();
        for ((path, value), key) in Policy::default().values().into_iter().zip(KEYS) {
            let kind = match value {
                None if path == "classifier.command" => serde_json::json!({
                    "type": ["array", "null"], "items": {"type": "string"}
                }),
                None => serde_json::json!({"type": ["string", "null"]}),
                Some(toml::Value::Integer(_)) => {
                    serde_json::json!({"type": "integer", "minimum": 0})
                }
                Some(toml::Value::Boolean(_)) => serde_json::json!({"type": "boolean"}),
                Some(toml::Value::Array(_)) => {
                    serde_json::json!({"type": "array", "items": {"type": "string"}})
                }
                Some(_) => serde_json::json!({"type": "string"}),
            };
            let mut kind = kind;
            kind["description"] = key.doc.into();
            properties.insert(path.to_owned(), kind);
        }
        let required: Vec<&str> = KEYS.iter().map(|k| k.path).collect();
        schemars::json_schema!({
            "description": "The policy in force: every key of the policy file (docs/policy.md) \
                            with its value, durations as text; then a `stale.<state>` or \
                            `stale.<cli>.<state>` member for each staleness window set.",
            "type": "object",
            "properties": properties,
            "required": required,
            "patternProperties": {"^stale\\.": {"type": "string"}},
            "additionalProperties": false,
        })
    }
}

/// Parses `[stale]`: `<state> = "15m"` and `<cli>.<state> = "15m"` (CLI names are checked
/// later, against the profiles).
fn stale_windows(table: &toml::Table) -> Result<StaleWindows, (String, String)> {
    let window = |key: &str, state: &str, value: &toml::Value| {
        let Some(state) = StateKind::from_word(state) else {
            let hint = StateKind::WORDS
                .iter()
                .find(|s| crate::config::edit_distance(s, state) <= 2)
                .map(|s| format!("did you mean {s}?"))
                .unwrap_or_else(|| format!("states: {}", StateKind::WORDS.join(", ")));
            return Err((key.to_owned(), format!("not a state ({hint})")));
        };
        match value {
            toml::Value::String(text) => {
                parse_duration(text).map(|d| (state, d)).map_err(|e| (key.to_owned(), e))
            }
            _ => Err((key.to_owned(), "must be a duration such as \"15m\" (\"0s\": never)".into())),
        }
    };
    let mut windows = StaleWindows::default();
    for (name, value) in table {
        let key = format!("stale.{name}");
        match value {
            toml::Value::Table(states) => {
                let cli = windows.by_cli.entry(name.clone()).or_default();
                for (state, value) in states {
                    let (state, window) = window(&format!("{key}.{state}"), state, value)?;
                    cli.insert(state, window);
                }
            }
            value => {
                let (state, window) = window(&key, name, value)?;
                windows.by_state.insert(state, window);
            }
        }
    }
    Ok(windows)
}

/// What the shipped profiles' holes say, for the documentation: the window of each state that
/// has a hole, per CLI.
fn shipped_windows() -> String {
    let Ok(profiles) = Profiles::shipped() else {
        return String::new();
    };
    let mut states = Vec::new();
    for state in StateKind::ALL {
        let clis: Vec<String> = profiles
            .iter()
            .filter(|p| p.holes_in(state).next().is_some())
            .map(|p| {
                // The shortest window goes stale first.
                let window = p.holes_in(state).filter_map(|h| h.stale_after).min();
                let window = window.map_or("never".to_owned(), format_duration);
                format!("{} {window}", p.name)
            })
            .collect();
        if !clis.is_empty() {
            states.push(format!("`{state}`: {}", clis.join(", ")));
        }
    }
    format!("Shipped profiles: {}.", states.join("; "))
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_owned());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// The file as written: every key optional.
mod wire {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct PolicyFile {
        pub version: Option<u32>,
        pub input: Input,
        pub nudge: Nudge,
        pub crashed: Crashed,
        pub env_fault: EnvFault,
        pub stall: Stall,
        pub escalate: Escalate,
        pub journal: Journal,
        pub classifier: Classifier,
        /// Parsed by hand: its keys are states and CLIs.
        pub stale: Option<toml::Table>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Input {
        pub max_idle_age: Option<String>,
        pub lease_expires_after: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Nudge {
        pub min_idle: Option<String>,
        pub max_in_a_row: Option<u32>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Crashed {
        pub check_host_pid: Option<bool>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct EnvFault {
        pub pause_on: Option<Vec<FailureKind>>,
        pub backoff_on: Option<Vec<FailureKind>>,
        pub backoff: Option<String>,
        pub quota_notification_types: Option<Vec<String>>,
        pub quota_messages: Option<Vec<String>>,
        pub quota_notice_for: Option<String>,
        pub zero_tokens_after: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Stall {
        pub services: Option<Vec<String>>,
        pub livelock_repeats: Option<u32>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Escalate {
        pub unknown_after: Option<String>,
        pub waiting_after: Option<String>,
        pub withheld_in_a_row: Option<u32>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Journal {
        pub enabled: Option<bool>,
        pub path: Option<PathBuf>,
        pub max_bytes: Option<u64>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Classifier {
        pub command: Option<Vec<String>>,
        pub timeout: Option<String>,
        pub max_per_session: Option<u32>,
        pub max_per_hour: Option<u32>,
        pub waiting_in_a_row: Option<u32>,
    }

    type Fault = (&'static str, String);

    fn duration(
        key: &'static str,
        text: &Option<String>,
        into: &mut Duration,
    ) -> Result<(), Fault> {
        if let Some(text) = text {
            *into = parse_duration(text).map_err(|e| (key, e))?;
        }
        Ok(())
    }

    fn set<T: Clone>(value: &Option<T>, into: &mut T) {
        if let Some(value) = value {
            *into = value.clone();
        }
    }

    impl PolicyFile {
        pub(super) fn apply(&self, p: &mut Policy) -> Result<(), Fault> {
            let _ = self.version;
            duration("input.max-idle-age", &self.input.max_idle_age, &mut p.max_idle_age)?;
            duration(
                "input.lease-expires-after",
                &self.input.lease_expires_after,
                &mut p.lease_expires_after,
            )?;
            duration("nudge.min-idle", &self.nudge.min_idle, &mut p.nudge_min_idle)?;
            set(&self.nudge.max_in_a_row, &mut p.nudge_max_in_a_row);
            set(&self.crashed.check_host_pid, &mut p.check_host_pid);
            set(&self.env_fault.pause_on, &mut p.pause_on);
            set(&self.env_fault.backoff_on, &mut p.backoff_on);
            duration("env-fault.backoff", &self.env_fault.backoff, &mut p.backoff)?;
            set(&self.env_fault.quota_notification_types, &mut p.quota_notification_types);
            set(&self.env_fault.quota_messages, &mut p.quota_messages);
            duration(
                "env-fault.quota-notice-for",
                &self.env_fault.quota_notice_for,
                &mut p.quota_notice_for,
            )?;
            duration(
                "env-fault.zero-tokens-after",
                &self.env_fault.zero_tokens_after,
                &mut p.zero_tokens_after,
            )?;
            set(&self.stall.services, &mut p.stall_services);
            set(&self.stall.livelock_repeats, &mut p.livelock_repeats);
            if p.livelock_repeats < 2 {
                return Err(("stall.livelock-repeats", "must be at least 2".into()));
            }
            duration(
                "escalate.unknown-after",
                &self.escalate.unknown_after,
                &mut p.escalate_unknown_after,
            )?;
            duration(
                "escalate.waiting-after",
                &self.escalate.waiting_after,
                &mut p.escalate_waiting_after,
            )?;
            set(&self.escalate.withheld_in_a_row, &mut p.escalate_withheld_in_a_row);
            set(&self.journal.enabled, &mut p.journal_enabled);
            if let Some(path) = &self.journal.path {
                p.journal_path = Some(path.clone());
            }
            set(&self.journal.max_bytes, &mut p.journal_max_bytes);
            if p.journal_max_bytes < 4096 {
                return Err(("journal.max-bytes", "must be at least 4096".into()));
            }
            if p.escalate_withheld_in_a_row == 0 {
                return Err(("escalate.withheld-in-a-row", "must be at least 1".into()));
            }
            self.classifier.apply(&mut p.classifier)
        }
    }

    impl Classifier {
        fn apply(&self, c: &mut ClassifierPolicy) -> Result<(), Fault> {
            if let Some(argv) = &self.command {
                match argv.first() {
                    None => {
                        return Err((
                            "classifier.command",
                            "is empty: give the argv to run (`[\"claude\", \"-p\"]`), or \
                             remove the key to turn the classifier off"
                                .into(),
                        ));
                    }
                    Some(program) if program.trim().is_empty() => {
                        return Err((
                            "classifier.command",
                            format!("the program (first word) is blank: {program:?}"),
                        ));
                    }
                    Some(_) => c.command = Some(argv.clone()),
                }
            }
            duration("classifier.timeout", &self.timeout, &mut c.timeout)?;
            if c.timeout.is_zero() {
                return Err((
                    "classifier.timeout",
                    format!(
                        "{:?} is no time at all: give the longest a consult may take, such as \
                         \"30s\"",
                        self.timeout.as_deref().unwrap_or("")
                    ),
                ));
            }
            for (key, value, into) in [
                ("classifier.max-per-session", self.max_per_session, &mut c.max_per_session),
                ("classifier.max-per-hour", self.max_per_hour, &mut c.max_per_hour),
                ("classifier.waiting-in-a-row", self.waiting_in_a_row, &mut c.waiting_in_a_row),
            ] {
                match value {
                    Some(0) => return Err((key, "is 0: must be at least 1".into())),
                    Some(n) => *into = n,
                    None => {}
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "../docs/policy.example.toml";
    const TABLE: &str = "../docs/policy.md";
    const TABLE_HEADER: &str = "<!-- Generated from watcher/src/decide/policy.rs by the test \
the_policy_docs_match_the_defaults. Do not edit: run \
`HOOKLINE_BLESS=1 cargo test -p hookline policy_docs` and commit. -->

# Decision policy

`hookline decide` and `hookline serve` read their thresholds from one TOML file given with
`--policy FILE` (else `$XDG_CONFIG_HOME/hookline/policy.toml` or
`~/.config/hookline/policy.toml` when it exists). `hookline status`, `explain`, `top` and
`tmux` read the same file, the same way, for its `[stale]` windows. Every key is optional;
unknown keys are errors, which name the file, line, column and key and suggest the key or
table meant (`policy policy.toml:2:1: nudge.min-idel: unknown key (did you mean
nudge.min-idle?)`). A file that cannot be used stops `decide`, `serve`, `daemon` and
`notify` (exit 2); `status`, `explain`, `top` and `tmux` only display, so they say it as a
warning and show the states under the defaults.
[`policy.example.toml`](policy.example.toml) sets every key to its default.

";

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    }

    fn check(path: &str, rendered: &str, what: &str) {
        let path = repo(path);
        if std::env::var_os("HOOKLINE_BLESS").is_some() {
            std::fs::write(&path, rendered).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == rendered,
            "{} is out of date with {what}: run `HOOKLINE_BLESS=1 cargo test -p hookline \
             policy_docs` and commit the result",
            path.display()
        );
    }

    #[test]
    fn the_policy_docs_match_the_defaults() {
        let policy = Policy::default();
        check(EXAMPLE, &policy.render_example(), "the policy defaults");
        check(TABLE, &format!("{TABLE_HEADER}{}", policy.render_table()), "the policy defaults");
    }

    #[test]
    fn the_example_file_parses_strictly_to_the_defaults() {
        let text = std::fs::read_to_string(repo(EXAMPLE)).unwrap();
        assert_eq!(Policy::parse(&text, "example").unwrap(), Policy::default());
    }

    #[test]
    fn every_key_is_documented_and_parsed() {
        // Each documented key, set to a value other than its default, must change the policy:
        // a key in KEYS that the wire struct does not read would be an unknown key here.
        let defaults = Policy::default();
        for key in KEYS {
            let (table, name) = key.path.split_once('.').unwrap();
            let value = match defaults.values().into_iter().find(|(p, _)| *p == key.path) {
                Some((_, Some(toml::Value::String(_)))) if key.path.ends_with("path") => {
                    "\"/x\"".to_owned()
                }
                Some((_, None)) if key.path == "classifier.command" => "[\"/x\"]".to_owned(),
                Some((_, None)) => "\"/x\"".to_owned(),
                Some((_, Some(toml::Value::String(_)))) => "\"7m\"".to_owned(),
                Some((_, Some(toml::Value::Integer(_)))) => "99999".to_owned(),
                Some((_, Some(toml::Value::Boolean(b)))) => (!b).to_string(),
                Some((_, Some(toml::Value::Array(_)))) => "[]".to_owned(),
                other => panic!("{}: {other:?}", key.path),
            };
            let text = format!("[{table}]\n{name} = {value}\n");
            let parsed = Policy::parse(&text, "t").unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(parsed, defaults, "{} has no effect", key.path);
        }
    }

    #[test]
    fn unknown_keys_are_errors_that_name_the_key() {
        let e = Policy::parse("[nudge]\nmax-in-row = 2\n", "p.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("nudge.max-in-row"));
        assert!(e.to_string().contains("did you mean nudge.max-in-a-row?"), "{e}");
        let e = Policy::parse("[nudges]\nmin-idle = \"1m\"\n", "p.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("nudges"));
        let e = Policy::parse("[nudge]\nmin_idle = \"1m\"\n", "p.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy p.toml:2:1: nudge.min_idle: unknown key (keys are kebab-case: min-idle)"
        );
        // A misspelt table, and a key in the wrong table.
        let e = Policy::parse("[classifer]\ncommand = [\"x\"]\n", "p.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy p.toml:1:2: classifer: unknown key (did you mean [classifier]?)"
        );
        let e = Policy::parse("[escalate]\nmin-idle = \"1m\"\n", "p.toml").unwrap_err();
        assert!(e.to_string().ends_with("(did you mean nudge.min-idle?)"), "{e}");
        let e = Policy::parse("[nudge]\nmin-idel = \"1m\"\n", "p.toml").unwrap_err();
        assert!(e.to_string().ends_with("(did you mean nudge.min-idle?)"), "{e}");
    }

    #[test]
    fn bad_values_are_errors_that_name_the_key() {
        let e = Policy::parse("[nudge]\nmin-idle = \"soon\"\n", "p").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("nudge.min-idle"));
        let e = Policy::parse("version = 2\n", "p").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("version"));
        let e = Policy::parse("[env-fault]\npause-on = [\"quota\"]\n", "p").unwrap_err();
        assert!(e.to_string().contains("quota"), "{e}");
        let e = Policy::parse("[env-fault]\nbackoff-on = [\"rate_limit\"]\n", "p").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("env-fault.backoff-on"));
        let e = Policy::parse("[journal]\nmax-bytes = 10\n", "p").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("journal.max-bytes"));
    }

    #[test]
    fn stale_windows_parse_per_state_and_per_cli() {
        let text = "[stale]\nactive = \"5m\"\nclaude.child_command = \"0s\"\n\
                    gemini = { active = \"1h\" }\n";
        let p = Policy::parse(text, "p").unwrap();
        p.check_profiles(&Profiles::shipped().unwrap(), "p").unwrap();
        assert_eq!(p.stale.by_state[&StateKind::Active], Duration::from_secs(300));
        assert_eq!(p.stale.by_cli["claude"][&StateKind::ChildCommand], Duration::ZERO);
        assert_eq!(p.stale.by_cli["gemini"][&StateKind::Active], Duration::from_secs(3600));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["stale.active"], "5m");
        assert_eq!(json["stale.claude.child_command"], "0s");
        assert_eq!(Policy { stale: StaleWindows::default(), ..p }, Policy::default());
    }

    #[test]
    fn the_example_files_stale_lines_parse_when_uncommented() {
        let text = std::fs::read_to_string(repo(EXAMPLE)).unwrap();
        let (_, stale) = text.split_once("[stale]\n").unwrap();
        let lines: Vec<&str> = stale
            .lines()
            .filter_map(|l| l.strip_prefix("# ").filter(|l| l.contains(" = \"")))
            .collect();
        assert_eq!(lines.len(), 2, "{stale}");
        let p = Policy::parse(&format!("[stale]\n{}\n", lines.join("\n")), "example").unwrap();
        p.check_profiles(&Profiles::shipped().unwrap(), "example").unwrap();
        assert!(!p.stale.by_state.is_empty() && !p.stale.by_cli.is_empty());
    }

    #[test]
    fn stale_errors_name_the_key() {
        let parse = |text: &str| {
            let text = format!("[stale]\n{text}\n");
            Policy::parse(&text, "p.toml")
                .and_then(|p| p.check_profiles(&Profiles::shipped().unwrap(), "p.toml"))
                .unwrap_err()
        };
        let cases = [
            ("activ = \"5m\"", "stale.activ", "did you mean active?"),
            ("busy = \"5m\"", "stale.busy", "states: unknown, active,"),
            ("claude.activ = \"5m\"", "stale.claude.activ", "did you mean active?"),
            (
                "claud.active = \"5m\"",
                "stale.claud",
                "no profile is named claud (profiles: antigravity, claude,",
            ),
            ("active = \"soon\"", "stale.active", "soon"),
            ("claude.active = 15", "stale.claude.active", "must be a duration"),
            ("ended = \"1h\"", "stale.ended", "no profile declares a hole for ended"),
            ("cursor.child_command = \"1h\"", "stale.cursor.child_command", "declares no hole"),
        ];
        for (text, key, message) in cases {
            let e = parse(text);
            assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
            assert!(e.to_string().contains(message), "{text}: {e}");
            assert!(e.to_string().starts_with("policy p.toml"), "{e}");
            assert!(e.to_string().contains(&format!(": {key}: ")), "{e}");
        }
    }

    #[test]
    fn services_match_whole_words_of_the_command() {
        let p = Policy::default();
        assert_eq!(p.service_in("python3 -m http.server 8765"), Some("http.server"));
        assert_eq!(p.service_in("cd web && npm run dev -- --port 3000"), Some("npm run dev"));
        assert_eq!(p.service_in("npx vite --host"), Some("vite"));
        assert_eq!(p.service_in("./invite-users.sh"), None);
        assert_eq!(p.service_in("sleep 20"), None);
        assert_eq!(p.service_in("npm run develop"), None);
        let none = Policy::parse("[stall]\nservices = []\n", "p").unwrap();
        assert_eq!(none.service_in("python3 -m http.server"), None);
        let e = Policy::parse("[stall]\nlivelock-repeats = 1\n", "p").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("stall.livelock-repeats"));
    }

    #[test]
    fn the_classifier_is_off_by_default_and_its_keys_are_checked_with_their_values() {
        assert_eq!(Policy::default().classifier.command, None);
        let p = Policy::parse(
            "[classifier]\ncommand = [\"claude\", \"-p\"]\ntimeout = \"5s\"\n\
             waiting-in-a-row = 2\n",
            "p",
        )
        .unwrap();
        assert_eq!(p.classifier.command, Some(vec!["claude".to_owned(), "-p".to_owned()]));
        assert_eq!(p.classifier.timeout, Duration::from_secs(5));
        assert_eq!(p.classifier.waiting_in_a_row, 2);
        let cases = [
            ("command = []", "classifier.command", "is empty"),
            ("command = [\" \"]", "classifier.command", "\" \""),
            (
                "command = \"claude -p\"",
                "classifier.command",
                "must be a list, not a string: command = [\"claude\", \"-p\"]",
            ),
            ("timeout = \"soon\"", "classifier.timeout", "soon"),
            ("timeout = \"0s\"", "classifier.timeout", "\"0s\" is no time at all"),
            ("max-per-session = 0", "classifier.max-per-session", "is 0"),
            ("max-per-hour = 0", "classifier.max-per-hour", "is 0"),
            ("waiting-in-a-row = 0", "classifier.waiting-in-a-row", "is 0"),
            ("comand = [\"x\"]", "classifier.comand", "did you mean classifier.command?"),
        ];
        for (line, key, message) in cases {
            let e = Policy::parse(&format!("[classifier]\n{line}\n"), "p").unwrap_err();
            assert_eq!(e.key.as_deref().unwrap_or(""), key, "{line}: {e}");
            assert!(e.to_string().contains(message), "{line}: {e}");
        }
    }

    #[test]
    fn a_partial_file_keeps_the_other_defaults() {
        let p = Policy::parse("version = 1\n[escalate]\nunknown-after = \"2m\"\n", "p").unwrap();
        assert_eq!(p.escalate_unknown_after, Duration::from_secs(120));
        assert_eq!(
            Policy { escalate_unknown_after: Duration::from_secs(600), ..p },
            Policy::default()
        );
    }
}
