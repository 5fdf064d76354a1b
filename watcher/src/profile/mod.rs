//! Profiles: what hookline knows about each CLI, as data.
//!
//! One TOML file per CLI (`profiles/<cli>.toml`), embedded in the binary and overridable by
//! overlays in `$XDG_CONFIG_HOME/hookline/profiles/` (or `~/.config/hookline/profiles/`) and a
//! project's `.hookline/profiles/`, later ones winning. A profile declares the CLI's identity
//! and supported versions, where its payloads keep the session id and friends, the native →
//! canonical mapping rules, which canonical events mean "at the input prompt", the CLI's known
//! holes (states it can leave without any event) and what `install` must register.
//!
//! Shipped profiles parse strictly (an unknown key is an error); overlays only warn about
//! unknown keys. Errors name the file, the key and, where it can be found, the line.

mod embedded;
mod table;
mod wire;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::canonical::FieldType;
use crate::config::Toml;
pub use crate::config::{ConfigError, ConfigKind};
use crate::units::{Version, parse_duration};
use crate::vocab::{Dialect, KindName, StateKind, TodoStatus, TranscriptFormat, words};

/// The profile schema version this build reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A validated profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The profile's name: the relay's `--cli` value.
    pub name: String,
    /// The CLI's name for people.
    pub display_name: String,
    /// The CLI's executable.
    pub binary: String,
    /// Oldest supported CLI version.
    pub min_version: Version,
    /// Newest supported CLI version, if bounded.
    pub max_version: Option<Version>,
    /// Versions this profile was checked against with the real CLI.
    pub tested: Vec<Version>,
    /// How its payloads are told from other CLIs' whatever `--cli` the relay was told (Cursor
    /// and Grok Build run Claude's hooks with their own payloads).
    pub detect: Detect,
    /// Where identity fields live in payloads.
    pub fields: FieldAliases,
    /// Canonical kinds that mean "the CLI is at its input prompt".
    pub input_ready: Vec<KindName>,
    /// `idle-prompt-delay`: how long after a turn ends the CLI fires `idle_prompt`. One that
    /// arrives sooner than this after the session's last `turn_start` belongs to the previous
    /// turn and does not make the new one `idle`. `None`: every `idle_prompt` counts.
    pub idle_prompt_delay: Option<Duration>,
    /// `tool-start-after-approval`: the CLI fires a tool's start only once its permission
    /// dialog was answered (Qwen Code), so that start ends the permission wait for the same
    /// tool. When false (Claude Code, which fires it before the dialog, and whose hooks can
    /// run in parallel), a tool start never ends a wait.
    pub tool_start_after_approval: bool,
    /// Mapping rules, first match wins.
    pub rules: Vec<Rule>,
    /// States the CLI can leave without firing any event.
    pub holes: Vec<Hole>,
    /// What `install` registers, when the CLI can be installed into.
    pub install: Option<InstallSpec>,
    /// What the CLI's screen looks like, for pane sensing (empty: nothing is sensed).
    pub pane: PanePatterns,
    /// How text is typed into the CLI.
    pub deliver: DeliverSpec,
    /// How the CLI writes its transcript, when hookline reads it (the `[transcript]` table).
    pub transcript: Option<TranscriptSpec>,
    /// The files this profile was built from, base first.
    pub origins: Vec<String>,
}

/// How a payload is told to be a CLI's: the `[detect]` table. A relay registered for one CLI
/// can be run by another (Cursor and Grok Build run the hooks of Claude's settings, with their
/// own payloads), so an event is mapped by the CLI that produced it, not by its registration
/// ([`Profiles::resolve`]).
#[derive(Debug, Clone, Default)]
pub struct Detect {
    /// Top-level keys, one of which marks this CLI's payloads (`any-present`).
    pub any_present: Vec<String>,
    /// Conditions on the payload that must all hold as well (`when`, as a rule's).
    pub when: Vec<Condition>,
    /// Top-level keys every payload of this CLI carries (`requires`): a payload recorded under
    /// this CLI's name without one of them was produced by another CLI.
    pub requires: Vec<String>,
}

impl Detect {
    /// Whether a payload carries this CLI's marks (`any-present` and `when`). A profile that
    /// declares neither claims nothing.
    pub fn claims(&self, payload: &Value) -> bool {
        if self.any_present.is_empty() && self.when.is_empty() {
            return false;
        }
        let marked = self.any_present.is_empty()
            || self.any_present.iter().any(|key| payload.get(key).is_some());
        marked && self.when.iter().all(|c| c.holds(payload))
    }

    /// The first key of `requires` the payload lacks, the members the relay left out of it
    /// (`left_out`) aside.
    pub fn lacks<'a>(&'a self, payload: &Value, left_out: &[String]) -> Option<&'a str> {
        self.requires
            .iter()
            .find(|key| payload.get(key.as_str()).is_none() && !left_out.contains(key))
            .map(String::as_str)
    }

    /// The top-level payload keys the detection reads.
    fn keys(&self) -> impl Iterator<Item = &str> {
        self.any_present
            .iter()
            .chain(&self.requires)
            .map(String::as_str)
            .chain(self.when.iter().map(|c| c.path.top_key()))
    }
}

/// How much of a payload the relay kept, for [`Profiles::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen<'a> {
    /// The payload as the CLI sent it, but for these top-level members, left out of an event
    /// too large to write whole (the envelope's `dropped`).
    Whole {
        /// The members left out.
        left_out: &'a [String],
    },
    /// Only what could be salvaged from input that was not a readable payload: a key found
    /// there marks its CLI, a key missing proves nothing.
    Salvaged,
}

/// Why no profile maps an event: the reason of its `unknown`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unresolved {
    /// No profile has the name the relay was given, and none claims the payload.
    NoProfile {
        /// The relay's `--cli`.
        cli: String,
    },
    /// The payload carries the marks of several other CLIs.
    Ambiguous {
        /// The relay's `--cli`.
        cli: String,
        /// The profiles whose marks it carries.
        claimants: Vec<String>,
    },
    /// The payload lacks a key every payload of the CLI it was recorded for carries: another
    /// CLI, one no profile recognises, produced it.
    Foreign {
        /// The relay's `--cli`.
        cli: String,
        /// That profile's name for people.
        display_name: String,
        /// The key it lacks.
        missing: String,
    },
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::NoProfile { cli } => write!(f, "no profile named {cli:?}"),
            Unresolved::Ambiguous { cli, claimants } => write!(
                f,
                "a payload recorded for {cli} carries the marks of {}: which CLI produced it \
                 cannot be told",
                claimants.join(" and ")
            ),
            Unresolved::Foreign { cli, display_name, missing } => write!(
                f,
                "a payload recorded for {cli} has no {missing:?}, which every {display_name} \
                 payload carries: another CLI produced it (one that runs {display_name}'s \
                 hooks?), and no profile recognises it"
            ),
        }
    }
}

/// Payload field aliases: for each identity field, the payload keys to try, in order.
#[derive(Debug, Clone, Default)]
pub struct FieldAliases {
    /// Session id.
    pub session_id: Vec<FieldPath>,
    /// Transcript path.
    pub transcript_path: Vec<FieldPath>,
    /// Working directory.
    pub cwd: Vec<FieldPath>,
    /// Subagent id.
    pub agent_id: Vec<FieldPath>,
    /// Turn or prompt id.
    pub turn_id: Vec<FieldPath>,
    /// Tool name (used by tool kinds unless a rule says otherwise).
    pub tool: Vec<FieldPath>,
    /// A tool call's input: `tool_start` events carry its digest (repeated identical calls).
    pub tool_input: Vec<FieldPath>,
}

/// A dotted path into a payload (`details.type`); a number steps into an array
/// (`input-messages.0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(Vec<String>);

impl FieldPath {
    /// Parses `a.b.c`.
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let parts: Vec<String> = text.split('.').map(str::to_owned).collect();
        if parts.iter().any(String::is_empty) {
            return Err(format!("{text:?} is not a field path like \"a.b\""));
        }
        Ok(FieldPath(parts))
    }

    /// The payload's top-level key this path starts with.
    pub fn top_key(&self) -> &str {
        &self.0[0]
    }

    /// The value at this path in a payload.
    pub fn get<'a>(&self, payload: &'a Value) -> Option<&'a Value> {
        self.0
            .iter()
            .try_fold(payload, |value, key| match value {
                Value::Array(items) => items.get(key.parse::<usize>().ok()?),
                _ => value.get(key),
            })
            .filter(|v| !v.is_null())
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// One native → canonical mapping rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Where the rule comes from: `claude.toml#map[3]`.
    pub label: String,
    /// The native event name it applies to.
    pub native: String,
    /// Conditions that must all hold.
    pub when: Vec<Condition>,
    /// Conditions none of which may hold.
    pub unless: Vec<Condition>,
    /// The canonical kind produced.
    pub kind: KindName,
    /// Constant canonical fields.
    pub set: serde_json::Map<String, Value>,
    /// Canonical fields taken from the payload.
    pub from: Vec<(String, Extract)>,
    /// How the event changes the session's own task list, when it does.
    pub todo: Option<TodoRule>,
    /// Why the rule is as it is.
    pub note: Option<String>,
}

/// A condition on a payload field.
#[derive(Debug, Clone)]
pub struct Condition {
    /// The field.
    pub path: FieldPath,
    /// The test.
    pub test: Test,
}

/// What a condition tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// The field is present (not null) or absent.
    Present(bool),
    /// The field equals one of these values.
    AnyOf(Vec<Value>),
    /// The field is a string starting with this.
    Prefix(String),
}

impl Condition {
    /// Whether the condition holds for a payload.
    pub fn holds(&self, payload: &Value) -> bool {
        let value = self.path.get(payload);
        match &self.test {
            Test::Present(present) => value.is_some() == *present,
            Test::AnyOf(values) => value.is_some_and(|v| values.contains(v)),
            Test::Prefix(prefix) => {
                value.and_then(Value::as_str).is_some_and(|v| v.starts_with(prefix.as_str()))
            }
        }
    }
}

/// How a rule's event changes the session's own task list (a rule's `todo`).
#[derive(Debug, Clone)]
pub struct TodoRule {
    /// The payload field holding a whole list that replaces the previous one; the paths
    /// below are then relative to each item.
    pub list: Option<FieldPath>,
    /// The item's id.
    pub id: Option<FieldPath>,
    /// The item's subject.
    pub subject: Option<FieldPath>,
    /// The item's status, read from the payload.
    pub status: Option<FieldPath>,
    /// A fixed status, when the event itself means one.
    pub set_status: Option<TodoStatus>,
}

/// How a canonical field is taken from a payload.
#[derive(Debug, Clone)]
pub struct Extract {
    /// The payload field.
    pub path: FieldPath,
    /// The conversion.
    pub convert: Convert,
    /// For closed-set fields: payload value → canonical word.
    pub values: BTreeMap<String, String>,
    /// For closed-set fields: the word used when the payload value is not in `values`.
    pub default: Option<String>,
}

/// Conversions from a payload value to a canonical field (a rule's `as`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Convert {
    /// A string (other JSON values as compact JSON), capped.
    Text,
    /// A boolean.
    Bool,
    /// A number, or an array's length.
    Count,
    /// The number of array items whose `status` is not a finished one.
    CountActive,
    /// A word mapped through `values`.
    Word,
    /// A list of objects, item by item: scalar values kept (text capped), anything else
    /// dropped, a non-object item kept as an empty one.
    Items,
}

words!(Convert {
    Text = "text", Bool = "bool", Count = "count", CountActive = "count-active", Word = "word",
    Items = "items",
});

/// A state the CLI can leave without any event.
#[derive(Debug, Clone)]
pub struct Hole {
    /// Short id.
    pub id: String,
    /// What happens.
    pub description: String,
    /// The state a session is left in.
    pub state: Option<StateKind>,
    /// After this much silence in `state`, the state reads `unknown`.
    pub stale_after: Option<Duration>,
}

/// What `install` registers for a CLI.
#[derive(Debug, Clone)]
pub struct InstallSpec {
    /// The settings dialect.
    pub dialect: Dialect,
    /// The hook timeout, in seconds (the dialect converts units).
    pub timeout_secs: u32,
    /// Pass `--event <native>` to the relay (for payloads without the event name).
    pub event_arg: bool,
    /// The scope used when none is given.
    pub default_scope: String,
    /// Arguments that make the CLI print its version.
    pub version_args: Vec<String>,
    /// Scope name → settings path template (`${VAR:-default}` and a leading `~` expand).
    pub scopes: Vec<(String, String)>,
    /// Native events to register.
    pub events: Vec<InstallEvent>,
    /// Native events that must never be registered, with why.
    pub never: Vec<(String, String)>,
    /// Files that, when they exist, can take the place of the hooks hookline registers (a
    /// hooks file the CLI documents but a version ignores, or reads instead): path template →
    /// what it means. `doctor` names each one it finds.
    pub shadows: Vec<(String, String)>,
    /// Notes shown after installing.
    pub notes: Vec<String>,
}

/// A native event to register.
#[derive(Debug, Clone)]
pub struct InstallEvent {
    /// The native name: as the CLI's payloads name the event, which the mapping rules match.
    pub native: String,
    /// The key written in the settings file, when the CLI spells it otherwise than its
    /// payloads name the event (Grok Build registers `SessionStart` and reports
    /// `session_start`).
    pub key: Option<String>,
    /// First CLI version that knows it.
    pub since: Option<Version>,
    /// First CLI version that no longer knows it.
    pub until: Option<Version>,
    /// The matcher to write, when the dialect uses one.
    pub matcher: Option<String>,
    /// This event's hook timeout in seconds, when it differs from the spec's.
    pub timeout_secs: Option<u32>,
}

impl InstallEvent {
    /// The key written in the settings file.
    pub fn key(&self) -> &str {
        self.key.as_deref().unwrap_or(&self.native)
    }
}

impl InstallSpec {
    /// The events to register for a CLI version; with no version, the conservative set every
    /// supported version (from `min`) knows.
    pub fn events_for<'a>(
        &'a self,
        version: Option<&Version>,
        min: &Version,
    ) -> Vec<&'a InstallEvent> {
        let v = version.unwrap_or(min);
        self.events
            .iter()
            .filter(|e| e.since.as_ref().is_none_or(|s| s <= v))
            .filter(|e| e.until.as_ref().is_none_or(|u| v < u))
            .collect()
    }

    /// The events the newest version knows: every one no version dropped (no `until`).
    pub fn newest_events(&self) -> Vec<&InstallEvent> {
        self.events.iter().filter(|e| e.until.is_none()).collect()
    }

    /// The path template of a scope.
    pub fn scope(&self, name: &str) -> Option<&str> {
        self.scopes.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str())
    }
}

/// What a CLI's screen looks like: the `[pane]` table. Every list holds plain text, matched
/// case-sensitively on the visible screen with escape sequences stripped (see
/// [`crate::pane::sense`] for how each is used). An empty list senses nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PanePatterns {
    /// The composer's line starts with one of these exactly (`"❯ "`, Gemini's `" > "`); what
    /// follows is the composer's text.
    pub prompt: Vec<String>,
    /// Composer text starting with one of these is a placeholder, not typed text.
    pub placeholder: Vec<String>,
    /// Composer text containing one of these stands for a paste the CLI folded
    /// (`[Pasted text #1`).
    pub pasted: Vec<String>,
    /// Text shown only while the input prompt is ready (a footer hint).
    pub idle: Vec<String>,
    /// Text shown only while the CLI is processing (`esc to interrupt`).
    pub busy: Vec<String>,
    /// Spinner glyphs: a line starting with one, then a space, then a word ending in `…` or
    /// `...`, is a spinner line.
    pub spinner: Vec<String>,
    /// Text shown only while a permission, choice or question dialog is open.
    pub dialog: Vec<String>,
    /// Text of login, trust and onboarding screens.
    pub login: Vec<String>,
    /// Text of quota, rate-limit and billing messages.
    pub quota: Vec<String>,
}

/// How text is typed into a CLI: the `[deliver]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliverSpec {
    /// The pause between the end of a paste and the Enter that submits it (Codex takes an
    /// Enter within ~120 ms of a paste burst as a newline).
    pub enter_delay: Duration,
    /// Where the `turn_start` event's payload holds the submitted prompt, when the CLI
    /// reports it: a delivery is confirmed only by a turn whose prompt matches.
    pub prompt_field: Option<FieldPath>,
    /// The CLI enables bracketed paste at its prompt (`deliver.bracketed-paste`), so that a
    /// multi-line text pasted into it stays one submission; without it a multi-line text is
    /// never typed.
    pub bracketed_paste: bool,
    /// The names (`/proc/PID/comm`) of the CLI's programs (`deliver.programs`): with no host
    /// pid to compare with, a multi-line text is typed only when one of them holds the
    /// foreground of the pane's terminal.
    pub programs: Vec<String>,
}

/// How a CLI writes its transcript: the `[transcript]` table. The path of a session's
/// transcript comes from its events (`fields.transcript-path`); `dir` is where the CLI keeps
/// them, for sessions that have no events (the fallback producer, `docs/transcripts.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptSpec {
    /// The entry format, which says which entries mean what (see [`crate::transcript`]).
    pub format: TranscriptFormat,
    /// Where the CLI writes its transcripts, as a path template (`${VAR:-default}`, `~`), when
    /// known: a tree searched for files ending in `file-suffix`.
    pub dir: Option<String>,
    /// The end of a transcript file's name (`.jsonl`).
    pub file_suffix: String,
}

fn transcript_spec(
    src: &Source<'_>,
    w: &wire::Transcript,
    base: Option<&TranscriptSpec>,
) -> Result<TranscriptSpec, ConfigError> {
    let format = match (&w.format, base) {
        (None, Some(base)) => base.format,
        (given, _) => {
            let word = given.as_deref().unwrap_or_default();
            TranscriptFormat::from_word(word).ok_or_else(|| {
                let known = TranscriptFormat::WORDS;
                src.error(
                    Some("transcript.format"),
                    format!("{word:?} is not a transcript format ({known:?})"),
                )
            })?
        }
    };
    let file_suffix = w
        .file_suffix
        .clone()
        .or_else(|| base.map(|b| b.file_suffix.clone()))
        .unwrap_or_else(|| ".jsonl".into());
    if file_suffix.is_empty() || file_suffix.contains('/') {
        return Err(src.error(
            Some("transcript.file-suffix"),
            format!("{file_suffix:?}: give the end of a file name, such as \".jsonl\""),
        ));
    }
    Ok(TranscriptSpec {
        format,
        dir: w.dir.clone().or_else(|| base.and_then(|b| b.dir.clone())),
        file_suffix,
    })
}

fn pane_patterns(w: &wire::Pane, base: &PanePatterns) -> PanePatterns {
    let pick = |given: &Option<Vec<String>>, old: &Vec<String>| {
        given.clone().unwrap_or_else(|| old.clone())
    };
    PanePatterns {
        prompt: pick(&w.prompt, &base.prompt),
        placeholder: pick(&w.placeholder, &base.placeholder),
        pasted: pick(&w.pasted, &base.pasted),
        idle: pick(&w.idle, &base.idle),
        busy: pick(&w.busy, &base.busy),
        spinner: pick(&w.spinner, &base.spinner),
        dialog: pick(&w.dialog, &base.dialog),
        login: pick(&w.login, &base.login),
        quota: pick(&w.quota, &base.quota),
    }
}

fn deliver_spec(
    src: &Source<'_>,
    w: &wire::Deliver,
    base: &DeliverSpec,
) -> Result<DeliverSpec, ConfigError> {
    let enter_delay = match &w.enter_delay {
        Some(text) => {
            parse_duration(text).map_err(|e| src.error(Some("deliver.enter-delay"), e))?
        }
        None => base.enter_delay,
    };
    let prompt_field = match &w.prompt_field {
        Some(path) => {
            Some(FieldPath::parse(path).map_err(|e| src.error(Some("deliver.prompt-field"), e))?)
        }
        None => base.prompt_field.clone(),
    };
    let bracketed_paste = w.bracketed_paste.unwrap_or(base.bracketed_paste);
    let programs = w.programs.clone().unwrap_or_else(|| base.programs.clone());
    Ok(DeliverSpec { enter_delay, prompt_field, bracketed_paste, programs })
}

/// A profile source: its label (a path or `embedded:<name>.toml`) and its text.
struct Source<'a> {
    label: String,
    text: &'a str,
}

impl Source<'_> {
    fn toml(&self) -> Toml<'_> {
        Toml::new(ConfigKind::Profile, self.label.clone(), self.text)
    }

    fn error(&self, key: Option<&str>, message: impl Into<String>) -> ConfigError {
        self.toml().error(key, message)
    }

    /// Parses the TOML. `strict`: unknown keys are errors; otherwise they are returned as
    /// warnings.
    fn parse(&self, strict: bool) -> Result<(wire::ProfileFile, Vec<String>), ConfigError> {
        let (file, unknown): (wire::ProfileFile, _) = self.toml().parse_and_read()?;
        if strict && let Some(key) = unknown.first() {
            return Err(self.error(Some(key), "unknown key"));
        }
        let warnings = unknown
            .iter()
            .map(|key| self.error(Some(key), "unknown key ignored").to_string())
            .collect();
        if let Some(v) = file.version
            && v != SCHEMA_VERSION
        {
            return Err(self.error(
                Some("version"),
                format!("profile schema version {v} is not supported (this build reads {SCHEMA_VERSION})"),
            ));
        }
        Ok((file, warnings))
    }
}

fn paths(src: &Source<'_>, key: &str, list: &[String]) -> Result<Vec<FieldPath>, ConfigError> {
    list.iter().map(|p| FieldPath::parse(p).map_err(|e| src.error(Some(key), e))).collect()
}

fn toml_to_json(value: &toml::Value) -> Option<Value> {
    Some(match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number)?,
        _ => return None,
    })
}

fn version(src: &Source<'_>, key: &str, text: &str) -> Result<Version, ConfigError> {
    text.parse().map_err(|e: String| src.error(Some(key), e))
}

impl Rule {
    fn from_wire(src: &Source<'_>, index: usize, rule: &wire::Rule) -> Result<Rule, ConfigError> {
        let key = |k: &str| format!("map[{index}].{k}");
        if rule.native.is_empty() {
            return Err(src.error(Some(&key("native")), "a rule needs a native event name"));
        }
        let kind = KindName::from_word(&rule.kind).ok_or_else(|| {
            src.error(Some(&key("kind")), format!("{:?} is not a canonical kind", rule.kind))
        })?;
        let fields = kind.fields();
        let field_type = |name: &str, k: &str| {
            fields.iter().find(|(f, _)| *f == name).map(|(_, t)| *t).ok_or_else(|| {
                let known: Vec<_> = fields.iter().map(|(f, _)| *f).collect();
                src.error(Some(k), format!("{kind} has no field {name:?} (fields: {known:?})"))
            })
        };
        let conditions =
            |map: &BTreeMap<String, wire::Match>, which: &str| conditions(src, &key(which), map);
        let mut set = serde_json::Map::new();
        for (name, value) in &rule.set {
            let k = key(&format!("set.{name}"));
            let ty = field_type(name, &k)?;
            let value = toml_to_json(value).ok_or_else(|| src.error(Some(&k), "not a scalar"))?;
            let fits = match ty {
                FieldType::Text => value.is_string(),
                FieldType::Bool => value.is_boolean(),
                FieldType::Count => value.is_u64(),
                FieldType::OneOf(words) => value.as_str().is_some_and(|w| words.contains(&w)),
                FieldType::Items => false,
            };
            if !fits {
                return Err(src.error(Some(&k), format!("{value} does not fit {name} ({ty:?})")));
            }
            set.insert(name.clone(), value);
        }
        let mut from = Vec::new();
        for (name, spec) in &rule.from {
            let k = key(&format!("from.{name}"));
            let ty = field_type(name, &k)?;
            let (path, convert, values, default) = match spec {
                wire::From::Path(path) => (path.as_str(), None, BTreeMap::new(), None),
                wire::From::Spec(s) => {
                    (s.field.as_str(), s.convert.as_deref(), s.values.clone(), s.default.clone())
                }
            };
            let convert = match (convert, ty) {
                (Some(word), _) => Convert::from_word(word).ok_or_else(|| {
                    let known = Convert::WORDS.join(", ");
                    src.error(Some(&k), format!("unknown conversion {word:?} ({known})"))
                })?,
                (None, FieldType::Text) => Convert::Text,
                (None, FieldType::Bool) => Convert::Bool,
                (None, FieldType::Count) => Convert::Count,
                (None, FieldType::OneOf(_)) => Convert::Word,
                (None, FieldType::Items) => Convert::Items,
            };
            if let FieldType::OneOf(words) = ty {
                for word in values.values().chain(default.iter()) {
                    if !words.contains(&word.as_str()) {
                        return Err(
                            src.error(Some(&k), format!("{word:?} is not one of {words:?}"))
                        );
                    }
                }
            }
            let path = FieldPath::parse(path).map_err(|e| src.error(Some(&k), e))?;
            from.push((name.clone(), Extract { path, convert, values, default }));
        }
        let todo = rule.todo.as_ref().map(|t| todo_rule(src, &key("todo"), t)).transpose()?;
        Ok(Rule {
            todo,
            label: format!("{}#map[{index}]", src.label.trim_start_matches("embedded:")),
            native: rule.native.clone(),
            when: conditions(&rule.when, "when")?,
            unless: conditions(&rule.unless, "unless")?,
            kind,
            set,
            from,
            note: rule.note.clone(),
        })
    }

    /// Whether the rule applies to a native event and its payload.
    pub fn matches(&self, native: &str, payload: &Value) -> bool {
        self.native == native
            && self.when.iter().all(|c| c.holds(payload))
            && !self.unless.iter().any(|c| c.holds(payload))
    }
}

/// The conditions of a `when` or `unless` table, whose key path is `table`.
fn conditions(
    src: &Source<'_>,
    table: &str,
    map: &BTreeMap<String, wire::Match>,
) -> Result<Vec<Condition>, ConfigError> {
    map.iter()
        .map(|(path, m)| {
            let k = format!("{table}.{path}");
            let test = match m {
                wire::Match::Presence { present } => Test::Present(*present),
                wire::Match::Prefix { prefix } => Test::Prefix(prefix.clone()),
                wire::Match::AnyOf(values) => Test::AnyOf(
                    values.iter().map(toml_to_json).collect::<Option<_>>().ok_or_else(|| {
                        src.error(Some(&k), "values must be strings, numbers or booleans")
                    })?,
                ),
                wire::Match::Equals(value) => Test::AnyOf(vec![toml_to_json(value).ok_or_else(
                    || src.error(Some(&k), "a value must be a string, number, boolean, list, { present = bool } or { prefix = \"...\" }"),
                )?]),
            };
            Ok(Condition { path: FieldPath::parse(path).map_err(|e| src.error(Some(&k), e))?, test })
        })
        .collect()
}

fn detect(src: &Source<'_>, w: &wire::Detect) -> Result<Detect, ConfigError> {
    Ok(Detect {
        any_present: w.any_present.clone(),
        when: conditions(src, "detect.when", &w.when)?,
        requires: w.requires.clone(),
    })
}

fn holes(src: &Source<'_>, list: &[wire::Hole]) -> Result<Vec<Hole>, ConfigError> {
    list.iter()
        .enumerate()
        .map(|(i, h)| {
            let key = |k: &str| format!("holes[{i}].{k}");
            if h.id.is_empty() || h.description.is_empty() {
                return Err(src.error(Some(&key("id")), "a hole needs an id and a description"));
            }
            let state = h
                .state
                .as_deref()
                .map(|state| {
                    StateKind::from_word(state).ok_or_else(|| {
                        let states = StateKind::WORDS;
                        src.error(
                            Some(&key("state")),
                            format!("{state:?} is not a state ({states:?})"),
                        )
                    })
                })
                .transpose()?;
            let stale_after = h
                .stale_after
                .as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| src.error(Some(&key("stale-after")), e))?;
            if stale_after.is_some() && h.state.is_none() {
                return Err(src.error(Some(&key("stale-after")), "stale-after needs a state"));
            }
            Ok(Hole { id: h.id.clone(), description: h.description.clone(), state, stale_after })
        })
        .collect()
}

fn install(
    src: &Source<'_>,
    w: &wire::Install,
    base: Option<&InstallSpec>,
) -> Result<InstallSpec, ConfigError> {
    let dialect = match (w.dialect.as_deref(), base) {
        (None, Some(base)) => base.dialect,
        (name, _) => {
            let name = name.unwrap_or_default();
            Dialect::from_word(name).ok_or_else(|| {
                let dialects = Dialect::WORDS;
                src.error(
                    Some("install.dialect"),
                    format!("{name:?} is not a dialect ({dialects:?})"),
                )
            })?
        }
    };
    let mut scopes: Vec<(String, String)> = base.map(|b| b.scopes.clone()).unwrap_or_default();
    for (name, template) in &w.scopes {
        match scopes.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = template.clone(),
            None => scopes.push((name.clone(), template.clone())),
        }
    }
    if scopes.is_empty() {
        return Err(src.error(Some("install.scopes"), "at least one scope is needed"));
    }
    let default_scope = w
        .default_scope
        .clone()
        .or_else(|| base.map(|b| b.default_scope.clone()))
        .unwrap_or_else(|| scopes[0].0.clone());
    if !scopes.iter().any(|(n, _)| *n == default_scope) {
        return Err(
            src.error(Some("install.default-scope"), format!("{default_scope:?} is not a scope"))
        );
    }
    let never = match &w.never {
        Some(list) => list.iter().map(|n| (n.native.clone(), n.reason.clone())).collect(),
        None => base.map(|b| b.never.clone()).unwrap_or_default(),
    };
    let events = match &w.events {
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let key = |k: &str| format!("install.events[{i}].{k}");
                if let Some((_, why)) = never.iter().find(|(n, _)| *n == e.native) {
                    return Err(src.error(
                        Some(&key("native")),
                        format!("{} must never be registered: {why}", e.native),
                    ));
                }
                if e.key.as_deref().is_some_and(str::is_empty) {
                    return Err(src.error(Some(&key("key")), "an empty settings key"));
                }
                Ok(InstallEvent {
                    native: e.native.clone(),
                    key: e.key.clone(),
                    since: e
                        .since
                        .as_deref()
                        .map(|v| version(src, &key("since"), v))
                        .transpose()?,
                    until: e
                        .until
                        .as_deref()
                        .map(|v| version(src, &key("until"), v))
                        .transpose()?,
                    matcher: e.matcher.clone(),
                    timeout_secs: e.timeout_secs,
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => base.map(|b| b.events.clone()).unwrap_or_default(),
    };
    match (dialect.is_plugin(), events.is_empty()) {
        (false, true) => {
            return Err(src.error(Some("install.events"), "at least one event is needed"));
        }
        (true, false) => {
            return Err(src.error(
                Some("install.events"),
                format!("the {dialect} dialect registers no events: its plugin sends them"),
            ));
        }
        _ => {}
    }
    Ok(InstallSpec {
        dialect,
        timeout_secs: w.timeout_secs.or(base.map(|b| b.timeout_secs)).unwrap_or(10),
        event_arg: w.event_arg.or(base.map(|b| b.event_arg)).unwrap_or(false),
        default_scope,
        version_args: w
            .version_args
            .clone()
            .or_else(|| base.map(|b| b.version_args.clone()))
            .unwrap_or_else(|| vec!["--version".into()]),
        scopes,
        events,
        never,
        shadows: match &w.shadow {
            Some(list) => list.iter().map(|s| (s.path.clone(), s.note.clone())).collect(),
            None => base.map(|b| b.shadows.clone()).unwrap_or_default(),
        },
        notes: w.notes.clone().or_else(|| base.map(|b| b.notes.clone())).unwrap_or_default(),
    })
}

fn input_ready(src: &Source<'_>, list: &[String]) -> Result<Vec<KindName>, ConfigError> {
    list.iter()
        .map(|kind| {
            KindName::from_word(kind).ok_or_else(|| {
                src.error(Some("input-ready"), format!("{kind:?} is not a canonical kind"))
            })
        })
        .collect()
}

fn todo_rule(src: &Source<'_>, key: &str, t: &wire::TodoSpec) -> Result<TodoRule, ConfigError> {
    let path = |name: &str, text: &Option<String>| {
        text.as_deref()
            .map(|p| FieldPath::parse(p).map_err(|e| src.error(Some(&format!("{key}.{name}")), e)))
            .transpose()
    };
    let set_status = t
        .set_status
        .as_deref()
        .map(|word| {
            TodoStatus::from_word(word).ok_or_else(|| {
                let known = TodoStatus::WORDS.join(", ");
                src.error(
                    Some(&format!("{key}.set-status")),
                    format!("{word:?} is not a status ({known})"),
                )
            })
        })
        .transpose()?;
    let rule = TodoRule {
        list: path("list", &t.list)?,
        id: path("id", &t.id)?,
        subject: path("subject", &t.subject)?,
        status: path("status", &t.status)?,
        set_status,
    };
    if rule.list.is_none() && rule.id.is_none() {
        return Err(src.error(Some(key), "needs an id (or a list)"));
    }
    Ok(rule)
}

fn delay(src: &Source<'_>, text: &Option<String>) -> Result<Option<Duration>, ConfigError> {
    text.as_deref()
        .map(|t| parse_duration(t).map_err(|e| src.error(Some("idle-prompt-delay"), e)))
        .transpose()
}

impl Profile {
    /// Builds a complete profile from one file.
    fn from_wire(src: &Source<'_>, w: &wire::ProfileFile) -> Result<Profile, ConfigError> {
        let need = |value: &Option<String>, key: &str| {
            value
                .clone()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| src.error(None, format!("missing key {key}")))
        };
        let name = need(&w.name, "name")?;
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(src.error(Some("name"), format!("{name:?}: use letters, digits, - and _")));
        }
        if w.version.is_none() {
            return Err(src.error(None, "missing key version (the profile schema version, 1)"));
        }
        let versions =
            w.versions.as_ref().ok_or_else(|| src.error(None, "missing table [versions]"))?;
        let min =
            versions.min.as_deref().ok_or_else(|| src.error(None, "missing key versions.min"))?;
        let fields = w.fields.as_ref().ok_or_else(|| src.error(None, "missing table [fields]"))?;
        let alias =
            |list: &Option<Vec<String>>, key: &str| paths(src, key, list.as_deref().unwrap_or(&[]));
        let aliases = FieldAliases {
            session_id: alias(&fields.session_id, "fields.session-id")?,
            transcript_path: alias(&fields.transcript_path, "fields.transcript-path")?,
            cwd: alias(&fields.cwd, "fields.cwd")?,
            agent_id: alias(&fields.agent_id, "fields.agent-id")?,
            turn_id: alias(&fields.turn_id, "fields.turn-id")?,
            tool: alias(&fields.tool, "fields.tool")?,
            tool_input: alias(&fields.tool_input, "fields.tool-input")?,
        };
        if aliases.session_id.is_empty() {
            return Err(
                src.error(Some("fields.session-id"), "at least one session id field is needed")
            );
        }
        let rules = w.map.as_deref().unwrap_or(&[]);
        if rules.is_empty() {
            return Err(src.error(None, "missing [[map]] rules"));
        }
        Ok(Profile {
            display_name: w.display_name.clone().unwrap_or_else(|| name.clone()),
            binary: need(&w.binary, "binary")?,
            min_version: version(src, "versions.min", min)?,
            max_version: versions
                .max
                .as_deref()
                .map(|v| version(src, "versions.max", v))
                .transpose()?,
            tested: versions
                .tested
                .iter()
                .map(|v| version(src, "versions.tested", v))
                .collect::<Result<_, _>>()?,
            detect: w.detect.as_ref().map(|d| detect(src, d)).transpose()?.unwrap_or_default(),
            fields: aliases,
            input_ready: input_ready(src, w.input_ready.as_deref().unwrap_or(&[]))?,
            idle_prompt_delay: delay(src, &w.idle_prompt_delay)?,
            tool_start_after_approval: w.tool_start_after_approval.unwrap_or(false),
            rules: rules
                .iter()
                .enumerate()
                .map(|(i, r)| Rule::from_wire(src, i, r))
                .collect::<Result<_, _>>()?,
            holes: holes(src, w.holes.as_deref().unwrap_or(&[]))?,
            install: w.install.as_ref().map(|i| install(src, i, None)).transpose()?,
            pane: w
                .pane
                .as_ref()
                .map(|p| pane_patterns(p, &PanePatterns::default()))
                .unwrap_or_default(),
            deliver: w
                .deliver
                .as_ref()
                .map(|d| deliver_spec(src, d, &DeliverSpec::default()))
                .transpose()?
                .unwrap_or_default(),
            transcript: w.transcript.as_ref().map(|t| transcript_spec(src, t, None)).transpose()?,
            origins: vec![src.label.clone()],
            name,
        })
    }

    /// Builds a profile from its `base` (a CLI it forks) and this file, applied to a copy of
    /// the base as an overlay under the file's own `name`, which it must give.
    fn forked(
        src: &Source<'_>,
        w: &wire::ProfileFile,
        profiles: &BTreeMap<String, Profile>,
    ) -> Result<Profile, ConfigError> {
        let base_name = w.base.as_deref().unwrap_or_default();
        let base = profiles.get(base_name).ok_or_else(|| {
            let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
            src.error(Some("base"), format!("no profile {base_name:?} to start from ({known:?})"))
        })?;
        let name =
            w.name.clone().filter(|n| !n.is_empty()).ok_or_else(|| {
                src.error(None, "missing key name (a profile with a base needs one)")
            })?;
        if name == base.name {
            return Err(src.error(Some("name"), "a profile cannot be its own base"));
        }
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(src.error(Some("name"), format!("{name:?}: use letters, digits, - and _")));
        }
        let mut profile = base.clone();
        profile.name = name;
        profile.display_name = profile.name.clone();
        profile.apply(src, w)?;
        Ok(profile)
    }

    /// Applies an overlay: what it gives replaces what the profile had, except mapping rules,
    /// which go before the existing ones (so they win), and holes, which replace by id.
    fn apply(&mut self, src: &Source<'_>, w: &wire::ProfileFile) -> Result<(), ConfigError> {
        if let Some(name) = &w.name
            && *name != self.name
        {
            return Err(
                src.error(Some("name"), format!("overlay for {name:?} applied to {:?}", self.name))
            );
        }
        if let Some(v) = &w.display_name {
            self.display_name = v.clone();
        }
        if let Some(v) = &w.binary {
            self.binary = v.clone();
        }
        if let Some(versions) = &w.versions {
            if let Some(min) = &versions.min {
                self.min_version = version(src, "versions.min", min)?;
            }
            if let Some(max) = &versions.max {
                self.max_version = Some(version(src, "versions.max", max)?);
            }
            if !versions.tested.is_empty() {
                self.tested = versions
                    .tested
                    .iter()
                    .map(|v| version(src, "versions.tested", v))
                    .collect::<Result<_, _>>()?;
            }
        }
        if let Some(w_detect) = &w.detect {
            self.detect = detect(src, w_detect)?;
        }
        if let Some(fields) = &w.fields {
            let slots = [
                (&fields.session_id, &mut self.fields.session_id, "fields.session-id"),
                (
                    &fields.transcript_path,
                    &mut self.fields.transcript_path,
                    "fields.transcript-path",
                ),
                (&fields.cwd, &mut self.fields.cwd, "fields.cwd"),
                (&fields.agent_id, &mut self.fields.agent_id, "fields.agent-id"),
                (&fields.turn_id, &mut self.fields.turn_id, "fields.turn-id"),
                (&fields.tool, &mut self.fields.tool, "fields.tool"),
                (&fields.tool_input, &mut self.fields.tool_input, "fields.tool-input"),
            ];
            for (given, slot, key) in slots {
                if let Some(list) = given {
                    *slot = paths(src, key, list)?;
                }
            }
        }
        if let Some(list) = &w.input_ready {
            self.input_ready = input_ready(src, list)?;
        }
        if w.idle_prompt_delay.is_some() {
            self.idle_prompt_delay = delay(src, &w.idle_prompt_delay)?;
        }
        if let Some(after) = w.tool_start_after_approval {
            self.tool_start_after_approval = after;
        }
        if let Some(rules) = &w.map {
            let mut new: Vec<Rule> = rules
                .iter()
                .enumerate()
                .map(|(i, r)| Rule::from_wire(src, i, r))
                .collect::<Result<_, _>>()?;
            new.append(&mut self.rules);
            self.rules = new;
        }
        if let Some(list) = &w.holes {
            for hole in holes(src, list)? {
                match self.holes.iter_mut().find(|h| h.id == hole.id) {
                    Some(slot) => *slot = hole,
                    None => self.holes.push(hole),
                }
            }
        }
        if let Some(w_install) = &w.install {
            self.install = Some(install(src, w_install, self.install.as_ref())?);
        }
        if let Some(pane) = &w.pane {
            self.pane = pane_patterns(pane, &self.pane);
        }
        if let Some(deliver) = &w.deliver {
            self.deliver = deliver_spec(src, deliver, &self.deliver)?;
        }
        if let Some(transcript) = &w.transcript {
            self.transcript = Some(transcript_spec(src, transcript, self.transcript.as_ref())?);
        }
        self.origins.push(src.label.clone());
        Ok(())
    }

    /// The first rule that maps this native event and payload.
    pub fn rule_for(&self, native: &str, payload: &Value) -> Option<&Rule> {
        self.rules.iter().find(|r| r.matches(native, payload))
    }

    /// Every top-level payload key this profile looks at (identification, identity fields,
    /// rule conditions and extracts): the only members a reader decodes.
    pub fn payload_keys(&self) -> impl Iterator<Item = &str> {
        let f = &self.fields;
        let aliases = [
            &f.session_id,
            &f.transcript_path,
            &f.cwd,
            &f.agent_id,
            &f.turn_id,
            &f.tool,
            &f.tool_input,
        ];
        let rules = self.rules.iter().flat_map(|rule| {
            let conditions = rule.when.iter().chain(&rule.unless).map(|c| c.path.top_key());
            // A todo rule reads its item paths inside `list` when it has one, else at the top.
            let todo = rule.todo.iter().flat_map(|t| match &t.list {
                Some(list) => vec![list.top_key()],
                None => [&t.id, &t.subject, &t.status]
                    .into_iter()
                    .flatten()
                    .map(FieldPath::top_key)
                    .collect(),
            });
            conditions
                .chain(rule.from.iter().map(|(_, extract)| extract.path.top_key()))
                .chain(todo)
        });
        self.detect.keys().chain(aliases.into_iter().flatten().map(FieldPath::top_key)).chain(rules)
    }

    /// Whether a canonical kind means "at the input prompt" for this CLI.
    pub fn is_input_ready(&self, kind: KindName) -> bool {
        self.input_ready.contains(&kind)
    }

    /// The holes that leave a session in `state`.
    pub fn holes_in(&self, state: StateKind) -> impl Iterator<Item = &Hole> {
        self.holes.iter().filter(move |h| h.state == Some(state))
    }

    /// Whether some rule maps a native event to `kind`.
    pub fn produces(&self, kind: KindName) -> bool {
        self.rules.iter().any(|r| r.kind == kind)
    }
}

/// Where overlays are read from.
#[derive(Debug, Clone, Default)]
pub struct OverlayDirs {
    /// The user's overlays (`$XDG_CONFIG_HOME/hookline/profiles`).
    pub user: Option<PathBuf>,
    /// The project's overlays (`.hookline/profiles` in the current directory).
    pub project: Option<PathBuf>,
}

impl OverlayDirs {
    /// The standard places, from the environment and the current directory.
    pub fn standard() -> OverlayDirs {
        OverlayDirs {
            user: crate::paths::user_profiles(),
            project: std::env::current_dir().ok().map(|d| d.join(".hookline").join("profiles")),
        }
    }
}

/// The profiles in force: shipped ones, then overlays.
#[derive(Debug, Clone)]
pub struct Profiles {
    profiles: BTreeMap<String, Profile>,
    /// Every top-level payload key some profile looks at ([`Profile::payload_keys`]).
    keys: HashSet<String>,
    /// Warnings from overlays (unknown keys).
    pub warnings: Vec<String>,
    /// The digest of every profile file read, in order: a checkpoint folded with other
    /// profiles is not used (see [`Profiles::digest`]).
    digest: u64,
}

impl Profiles {
    /// The shipped profiles only. They are checked by tests, so this cannot fail in a
    /// released build; it returns the error rather than panic all the same.
    pub fn shipped() -> Result<Profiles, ConfigError> {
        let mut profiles = BTreeMap::new();
        let mut digest = crate::digest::digest(0, b"profiles");
        let mut forks = Vec::new();
        for (file, text) in embedded::FILES {
            digest = crate::digest::digest(digest, text.as_bytes());
            let src = Source { label: format!("embedded:{file}"), text };
            let (wire, _) = src.parse(true)?;
            if wire.base.is_some() {
                forks.push((src, wire));
                continue;
            }
            let profile = Profile::from_wire(&src, &wire)?;
            profiles.insert(profile.name.clone(), profile);
        }
        for (src, wire) in forks {
            let profile = Profile::forked(&src, &wire, &profiles)?;
            profiles.insert(profile.name.clone(), profile);
        }
        let mut set = Profiles { profiles, keys: HashSet::new(), warnings: Vec::new(), digest };
        set.refresh_keys();
        Ok(set)
    }

    fn refresh_keys(&mut self) {
        let keys = self.profiles.values().flat_map(Profile::payload_keys);
        self.keys = keys.map(str::to_owned).collect();
    }

    /// Whether some profile looks at this top-level payload key: the members a reader decodes.
    pub fn wants_key(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// Shipped profiles with the overlays found in `dirs` applied, user first, then project.
    pub fn load(dirs: &OverlayDirs) -> Result<Profiles, ConfigError> {
        let mut set = Profiles::shipped()?;
        for dir in [&dirs.user, &dirs.project].into_iter().flatten() {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for file in files {
                set.overlay_file(&file)?;
            }
        }
        Ok(set)
    }

    /// Applies one overlay file (named `<cli>.toml`); a file for a CLI with no shipped profile
    /// must be a complete profile.
    pub fn overlay_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Toml::unreadable(ConfigKind::Profile, path, e))?;
        let src = Source { label: path.display().to_string(), text: &text };
        let (wire, warnings) = src.parse(false)?;
        self.warnings.extend(warnings);
        self.digest = crate::digest::digest(self.digest, path.as_os_str().as_encoded_bytes());
        self.digest = crate::digest::digest(self.digest, text.as_bytes());
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let name = wire.name.clone().unwrap_or_else(|| stem.to_owned());
        match self.profiles.get_mut(&name) {
            Some(_) if wire.base.is_some() => {
                return Err(src.error(
                    Some("base"),
                    format!("{name:?} has a profile already: base starts a new one"),
                ));
            }
            Some(profile) => profile.apply(&src, &wire)?,
            None if wire.base.is_some() => {
                let profile = Profile::forked(&src, &wire, &self.profiles)?;
                self.profiles.insert(profile.name.clone(), profile);
            }
            None => {
                let profile = Profile::from_wire(&src, &wire)?;
                self.profiles.insert(profile.name.clone(), profile);
            }
        }
        self.refresh_keys();
        Ok(())
    }

    /// Checks one file as a complete profile (strict: unknown keys are errors).
    pub fn check_file(path: &Path) -> Result<Profile, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Toml::unreadable(ConfigKind::Profile, path, e))?;
        let src = Source { label: path.display().to_string(), text: &text };
        let (wire, _) = src.parse(true)?;
        if wire.base.is_some() {
            return Profile::forked(&src, &wire, &Profiles::shipped()?.profiles);
        }
        Profile::from_wire(&src, &wire)
    }

    /// The digest of the profile files read (shipped, then each overlay, names and text): two
    /// sets read from the same files have the same digest.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// A profile by name.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// All profiles, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.profiles.values()
    }

    /// The profile that maps an event the relay recorded under `cli`: the one of the CLI that
    /// produced the payload, which is not always the one it was registered for (Cursor, Grok
    /// Build and VS Code run Claude's hooks with their own payloads).
    ///
    /// * A payload carrying the marks of the profile named `cli` ([`Detect::claims`]) is its.
    /// * Else a payload carrying the marks of exactly one other profile is that one's; of
    ///   several, it is [`Unresolved::Ambiguous`].
    /// * Else it is the profile named `cli`'s, unless it lacks a key that profile requires
    ///   ([`Detect::lacks`]): then another CLI produced it, [`Unresolved::Foreign`], and it is
    ///   never mapped by that profile's rules. Only a payload `seen` whole is judged so.
    pub fn resolve(
        &self,
        cli: &str,
        payload: &Value,
        seen: Seen<'_>,
    ) -> Result<&Profile, Unresolved> {
        let registered = self.profiles.get(cli);
        if let Some(p) = registered.filter(|p| p.detect.claims(payload)) {
            return Ok(p);
        }
        let mut claimants =
            self.profiles.values().filter(|p| p.name != cli && p.detect.claims(payload));
        match (claimants.next(), claimants.next()) {
            (Some(one), None) => return Ok(one),
            (Some(one), Some(two)) => {
                let mut names = vec![one.name.clone(), two.name.clone()];
                names.extend(claimants.map(|p| p.name.clone()));
                return Err(Unresolved::Ambiguous { cli: cli.to_owned(), claimants: names });
            }
            (None, _) => {}
        }
        let profile = registered.ok_or_else(|| Unresolved::NoProfile { cli: cli.to_owned() })?;
        if let Seen::Whole { left_out } = seen
            && let Some(missing) = profile.detect.lacks(payload, left_out)
        {
            return Err(Unresolved::Foreign {
                cli: cli.to_owned(),
                display_name: profile.display_name.clone(),
                missing: missing.to_owned(),
            });
        }
        Ok(profile)
    }

    /// Every top-level payload key some profile's `[detect]` reads: what is salvaged from an
    /// unreadable payload to tell its producer.
    pub fn detect_keys(&self) -> BTreeSet<&str> {
        self.profiles.values().flat_map(|p| p.detect.keys()).collect()
    }
}

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;
