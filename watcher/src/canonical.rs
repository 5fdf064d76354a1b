//! Canonical events: one small, closed, versioned vocabulary across CLIs.
//!
//! Every native hook event is mapped by its CLI's profile to exactly one canonical [`Event`].
//! A native event no rule maps becomes [`Kind::Unknown`]: surfaced, never dropped.
//!
//! On the wire (the NDJSON of `hookline watch`), an event is one flat JSON object: the `kind`
//! and its fields, then the session identity, the time and the `origin` (the file it came
//! from): see `docs/events.md`. The origin is not called `source`: `session_start` has a field
//! of that name, and one object cannot hold the key twice.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::vocab::{CompactPhase, FailureKind, KindName, WaitReason};
use crate::vocab::{TaskStatus, TaskType};

/// The version of the canonical vocabulary, carried as `v` by every event.
pub const CANONICAL_VERSION: u32 = 1;

/// What happened, with the fields that matter for that kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A session started, resumed, was cleared, compacted or forked.
    SessionStart {
        /// `startup`, `resume`, `clear`, `compact`, `fork`, ... as the CLI says.
        #[serde(default)]
        source: Option<String>,
    },
    /// The session ended.
    SessionEnd {
        /// `prompt_input_exit`, `clear`, `logout`, `exit`, `other`, ... as the CLI says.
        #[serde(default)]
        reason: Option<String>,
    },
    /// A prompt was submitted: a turn begins.
    TurnStart,
    /// A tool is about to run.
    ToolStart {
        /// The tool's name in the CLI's own words (`Bash`, `run_shell_command`, ...).
        #[serde(default)]
        tool: Option<String>,
    },
    /// A tool finished.
    ToolEnd {
        /// The tool's name.
        #[serde(default)]
        tool: Option<String>,
        /// Whether it succeeded.
        #[serde(default = "yes")]
        ok: bool,
    },
    /// The CLI is about to ask the human for permission to run a tool.
    PermissionRequest {
        /// The tool's name.
        #[serde(default)]
        tool: Option<String>,
    },
    /// The CLI is waiting for the human.
    WaitingForInput {
        /// Why.
        #[serde(default)]
        reason: WaitReason,
        /// The tool whose call waits (a question tool), when there is one.
        #[serde(default)]
        tool: Option<String>,
        /// The CLI's message, when it gives one.
        #[serde(default)]
        message: Option<String>,
    },
    /// The CLI has been idle at its prompt for a while (e.g. Claude's `idle_prompt`).
    IdlePrompt,
    /// The agent finished its turn.
    Stop {
        /// The last assistant message, capped.
        #[serde(default)]
        last_message: Option<String>,
        /// Background tasks still running when the turn ended.
        #[serde(default)]
        pending_tasks: u32,
        /// Wake-ups the session has scheduled (crons, timers).
        #[serde(default)]
        scheduled_wakes: u32,
        /// The background tasks, item by item, when the CLI lists them (Claude's
        /// `background_tasks[]`): what a stall decision names.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<BackgroundTask>,
        /// The scheduled wakes, item by item, when the CLI lists them (Claude's
        /// `session_crons[]`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        crons: Vec<Cron>,
    },
    /// The turn ended because of an API error: evidence of a quota or environment fault.
    StopFailure {
        /// The class of error.
        #[serde(default)]
        error: FailureKind,
        /// The CLI's own error text, capped.
        #[serde(default)]
        detail: Option<String>,
    },
    /// Context compaction.
    Compact {
        /// Before or after.
        #[serde(default)]
        phase: CompactPhase,
        /// `manual` or `auto`.
        #[serde(default)]
        trigger: Option<String>,
    },
    /// A subagent started.
    SubagentStart {
        /// The subagent's type.
        #[serde(default)]
        agent_type: Option<String>,
    },
    /// A subagent finished.
    SubagentStop {
        /// The subagent's type.
        #[serde(default)]
        agent_type: Option<String>,
    },
    /// The session's own task list changed (a task hook, e.g. Claude's `TaskCreated`); the
    /// change itself is the event's [`Event::todo`].
    Todo,
    /// Any other notification.
    Notification {
        /// The CLI's notification type.
        #[serde(default)]
        notification_type: Option<String>,
        /// The CLI's message.
        #[serde(default)]
        message: Option<String>,
    },
    /// A native event no rule of the profile maps, or an event file whose payload could not
    /// be read. Surfaced so that nothing is silently dropped.
    Unknown {
        /// Why it is unknown (no rule, no profile, unreadable payload).
        #[serde(default)]
        reason: Option<String>,
    },
}

fn yes() -> bool {
    true
}

/// A background task a `stop` listed, as the CLI wrote it (every field optional: an item the
/// CLI writes in another shape keeps what could be read, and says so by what is missing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct BackgroundTask {
    /// The task's id.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its type, in the CLI's words (`shell`, `monitor`, `subagent`, `workflow`).
    #[serde(rename = "type", deserialize_with = "lenient_text")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// Its status (`running`, `completed`, ...).
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What it is, in the agent's words.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The command it runs (shell and monitor tasks).
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The subagent's type (subagent tasks).
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

impl BackgroundTask {
    /// What its status says (`None` when the CLI wrote none): a word hookline does not know
    /// is pending work.
    pub fn task_status(&self) -> Option<TaskStatus> {
        self.status.as_deref().map(TaskStatus::read)
    }

    /// Its type (`None` when the CLI wrote none).
    pub fn kind(&self) -> Option<TaskType> {
        self.task_type.as_deref().map(TaskType::read)
    }
}

/// A scheduled wake a `stop` listed (Claude's `session_crons[]`; a `ScheduleWakeup` is a
/// one-shot cron), as the CLI wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Cron {
    /// The cron's id.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its schedule (`*/5 * * * *`).
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Whether it fires again and again; missing when the CLI did not say.
    #[serde(deserialize_with = "lenient_bool", skip_serializing_if = "Option::is_none")]
    pub recurring: Option<bool>,
    /// The prompt it sends.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// A list item's text field: a string, or a number or boolean written out; anything else
/// reads as missing (an item of another shape is kept, never refused).
fn lenient_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    })
}

/// A list item's boolean: `true`/`false`, or those words; anything else reads as missing.
fn lenient_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(b) => Some(b),
        serde_json::Value::String(s) if s == "true" || s == "false" => Some(s == "true"),
        _ => None,
    })
}

/// How an event changes the session's own task list (todo list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TodoChange {
    /// One item, by id, created or changed (`TaskCreated`, `TaskCreate`, `TaskUpdate`,
    /// `TaskCompleted`). What is missing stays as it was.
    Item {
        /// The item's id.
        id: String,
        /// Its subject, when the event says it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subject: Option<String>,
        /// Its new status in the CLI's words, when the event says it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
    },
    /// The whole list, replacing the one before (`TodoWrite`).
    List {
        /// The items, in order.
        items: Vec<TodoEntry>,
    },
}

/// One item of a whole list ([`TodoChange::List`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct TodoEntry {
    /// Its id, when the CLI gives one (else its position).
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What it says.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Its status, in the CLI's words.
    #[serde(deserialize_with = "lenient_text", skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// The type of a kind's field, for validating profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Free text.
    Text,
    /// `true` or `false`.
    Bool,
    /// A non-negative count.
    Count,
    /// One of a closed set of words.
    OneOf(&'static [&'static str]),
    /// A list of objects, kept item by item (`as = "items"`).
    Items,
}

impl KindName {
    /// The kind's fields and their types, in the order of the vocabulary.
    pub fn fields(self) -> &'static [(&'static str, FieldType)] {
        match self {
            KindName::SessionStart => &[("source", FieldType::Text)],
            KindName::SessionEnd => &[("reason", FieldType::Text)],
            KindName::TurnStart => &[],
            KindName::ToolStart => &[("tool", FieldType::Text)],
            KindName::ToolEnd => &[("tool", FieldType::Text), ("ok", FieldType::Bool)],
            KindName::PermissionRequest => &[("tool", FieldType::Text)],
            KindName::WaitingForInput => &[
                ("reason", FieldType::OneOf(&WaitReason::WORDS)),
                ("tool", FieldType::Text),
                ("message", FieldType::Text),
            ],
            KindName::IdlePrompt => &[],
            KindName::Stop => &[
                ("last_message", FieldType::Text),
                ("pending_tasks", FieldType::Count),
                ("scheduled_wakes", FieldType::Count),
                ("tasks", FieldType::Items),
                ("crons", FieldType::Items),
            ],
            KindName::StopFailure => {
                &[("error", FieldType::OneOf(&FailureKind::WORDS)), ("detail", FieldType::Text)]
            }
            KindName::Compact => {
                &[("phase", FieldType::OneOf(&CompactPhase::WORDS)), ("trigger", FieldType::Text)]
            }
            KindName::SubagentStart => &[("agent_type", FieldType::Text)],
            KindName::SubagentStop => &[("agent_type", FieldType::Text)],
            KindName::Todo => &[],
            KindName::Notification => {
                &[("notification_type", FieldType::Text), ("message", FieldType::Text)]
            }
            KindName::Unknown => &[("reason", FieldType::Text)],
        }
    }
}

impl Kind {
    /// The kind's name.
    pub fn kind_name(&self) -> KindName {
        match self {
            Kind::SessionStart { .. } => KindName::SessionStart,
            Kind::SessionEnd { .. } => KindName::SessionEnd,
            Kind::TurnStart => KindName::TurnStart,
            Kind::ToolStart { .. } => KindName::ToolStart,
            Kind::ToolEnd { .. } => KindName::ToolEnd,
            Kind::PermissionRequest { .. } => KindName::PermissionRequest,
            Kind::WaitingForInput { .. } => KindName::WaitingForInput,
            Kind::IdlePrompt => KindName::IdlePrompt,
            Kind::Stop { .. } => KindName::Stop,
            Kind::StopFailure { .. } => KindName::StopFailure,
            Kind::Compact { .. } => KindName::Compact,
            Kind::SubagentStart { .. } => KindName::SubagentStart,
            Kind::SubagentStop { .. } => KindName::SubagentStop,
            Kind::Todo => KindName::Todo,
            Kind::Notification { .. } => KindName::Notification,
            Kind::Unknown { .. } => KindName::Unknown,
        }
    }

    /// The kind's name, as on the wire.
    pub fn name(&self) -> &'static str {
        self.kind_name().as_str()
    }
}

/// Which session an event belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SessionKey {
    /// The profile (CLI) name.
    pub cli: String,
    /// The CLI's session id, when the payload (or the host's environment) gave one.
    pub session_id: Option<String>,
    /// The orchestrator's tag (`HOOKLINE_TAG` or a legacy task id).
    pub tag: Option<String>,
    /// The host it runs on, for a session a central reader heard of through NATS (the host
    /// its messages' subject names); `None` for the local events directory's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl SessionKey {
    /// The text a tracker stores the session under, which the journal, the decisions' `key`
    /// and the notifier write too: `<cli>:<session id>`, else `<cli>:tag:<tag>`, after
    /// `<host>/` for another host's session (so one host's events never reach another's
    /// session, whatever ids they carry); `None` with neither a session id nor a tag.
    pub fn text(&self) -> Option<String> {
        SessionKey::text_of(
            self.host.as_deref(),
            &self.cli,
            self.session_id.as_deref(),
            self.tag.as_deref(),
        )
    }

    /// [`SessionKey::text`] of a session given by its parts (no key built): the one place
    /// the text is made.
    pub fn text_of(
        host: Option<&str>,
        cli: &str,
        session_id: Option<&str>,
        tag: Option<&str>,
    ) -> Option<String> {
        let host = host.map(|h| format!("{h}/")).unwrap_or_default();
        match (session_id, tag) {
            (Some(id), _) => Some(format!("{host}{cli}:{id}")),
            (None, Some(tag)) => Some(format!("{host}{cli}:tag:{tag}")),
            (None, None) => None,
        }
    }

    /// The session as a person reads it: `<session id> (<cli>, tag <tag>)`, the id written
    /// `<session id>@<host>` for another host's session (the name that finds it exactly).
    pub fn describe(&self) -> String {
        let tag = self.tag.as_deref().map(|t| format!(", tag {t}")).unwrap_or_default();
        let at = self.host.as_deref().map(|h| format!("@{h}")).unwrap_or_default();
        match &self.session_id {
            Some(id) => format!("{id}{at} ({}{tag})", self.cli),
            None => format!("no session id{at} ({}{tag})", self.cli),
        }
    }
}

/// Where an event came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceRef {
    /// The events directory (or legacy directory) the file was read from.
    pub dir: PathBuf,
    /// The envelope's `seq` (0 for legacy files, which have none).
    pub seq: u64,
    /// The file's name: at the top of that directory, or in its bucket for an ordered event
    /// (`ingest::source::event_path` finds it).
    pub file: String,
    /// Whether the file came from a legacy directory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy: bool,
}

/// A canonical event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Event {
    /// The canonical vocabulary's version.
    pub v: u32,
    /// What happened.
    #[serde(flatten)]
    pub kind: Kind,
    /// The profile (CLI) name.
    pub cli: String,
    /// The CLI's session id.
    pub session_id: Option<String>,
    /// The orchestrator's tag.
    pub tag: Option<String>,
    /// The host the event came from, for an event read from NATS: set by the central reader
    /// from the subject the message arrived on (`<prefix>.<host>.<cli>.<session>`), never
    /// from what the message says. Absent for an event of the local events directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The subagent's id, when a subagent fired the event.
    pub agent_id: Option<String>,
    /// The turn's (or prompt's) id, when the CLI gives one.
    pub turn_id: Option<String>,
    /// The working directory the CLI reported.
    pub cwd: Option<String>,
    /// The CLI's transcript file.
    pub transcript_path: Option<String>,
    /// The native event name.
    pub native: Option<String>,
    /// The profile rule that produced this event (`claude:map[3]`), for `explain`.
    pub rule: String,
    /// When the relay ran, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// The host CLI's pid, when known.
    pub host_pid: Option<u32>,
    /// How the event changes the session's own task list, when it does (a task hook, or a
    /// task tool's call: the profile rule's `todo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoChange>,
    /// A digest of a `tool_start`'s input (the profile's `fields.tool-input`): two calls of
    /// one tool with the same digest are the same call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_digest: Option<String>,
    /// The file it came from; `origin` on the wire, because `session_start`'s `source` field
    /// shares the object.
    #[serde(rename = "origin")]
    pub source: SourceRef,
    /// Set when this event is an echo: the same native event of the same session, reported
    /// again by another producer (the legacy directory, a second registration of the hook).
    /// It names the `origin` of the copy that came first, the one that counts: an echo never
    /// changes a session's state. Absent from the wire when unset. See `docs/events.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_of: Option<SourceRef>,
}

impl Event {
    /// The session this event belongs to.
    pub fn session(&self) -> SessionKey {
        SessionKey {
            cli: self.cli.clone(),
            session_id: self.session_id.clone(),
            tag: self.tag.clone(),
            host: self.host.clone(),
        }
    }

    /// Whether a subagent fired this event (it must never change its parent's state).
    pub fn is_subagent(&self) -> bool {
        self.agent_id.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_key_is_its_id_else_its_tag_after_its_host() {
        let key = |host: Option<&str>, id: Option<&str>, tag: Option<&str>| SessionKey {
            cli: "claude".into(),
            session_id: id.map(Into::into),
            tag: tag.map(Into::into),
            host: host.map(Into::into),
        };
        assert_eq!(key(None, Some("s1"), Some("t")).text().as_deref(), Some("claude:s1"));
        assert_eq!(key(None, None, Some("t")).text().as_deref(), Some("claude:tag:t"));
        assert_eq!(key(Some("h2"), Some("s1"), None).text().as_deref(), Some("h2/claude:s1"));
        assert_eq!(key(Some("h2"), None, None).text(), None);
    }

    #[test]
    fn kinds_serialize_flat_with_their_name() {
        let kinds = [
            Kind::SessionStart { source: Some("startup".into()) },
            Kind::SessionEnd { reason: None },
            Kind::TurnStart,
            Kind::ToolStart { tool: Some("Bash".into()) },
            Kind::ToolEnd { tool: None, ok: false },
            Kind::PermissionRequest { tool: None },
            Kind::WaitingForInput { reason: WaitReason::Question, tool: None, message: None },
            Kind::IdlePrompt,
            Kind::Stop {
                last_message: None,
                pending_tasks: 2,
                scheduled_wakes: 0,
                tasks: vec![BackgroundTask { id: Some("b1".into()), ..Default::default() }],
                crons: vec![Cron { recurring: Some(true), ..Default::default() }],
            },
            Kind::StopFailure { error: FailureKind::RateLimit, detail: None },
            Kind::Compact { phase: CompactPhase::Post, trigger: Some("manual".into()) },
            Kind::SubagentStart { agent_type: None },
            Kind::SubagentStop { agent_type: None },
            Kind::Todo,
            Kind::Notification { notification_type: None, message: None },
            Kind::Unknown { reason: Some("no rule".into()) },
        ];
        assert_eq!(kinds.len(), KindName::ALL.len());
        for (kind, name) in kinds.iter().zip(KindName::ALL) {
            let (name, fields) = (name.as_str(), name.fields());
            assert_eq!(kind.kind_name().as_str(), name);
            assert_eq!(kind.name(), name);
            let value = serde_json::to_value(kind).unwrap();
            assert_eq!(value["kind"], name);
            for key in value.as_object().unwrap().keys().filter(|k| *k != "kind") {
                assert!(fields.iter().any(|(f, _)| f == key), "{name} has undeclared {key}");
            }
            assert_eq!(&serde_json::from_value::<Kind>(value).unwrap(), kind);
        }
        for reason in [
            WaitReason::Permission,
            WaitReason::Question,
            WaitReason::Elicitation,
            WaitReason::Other,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
        for error in [
            FailureKind::RateLimit,
            FailureKind::Billing,
            FailureKind::Auth,
            FailureKind::Overloaded,
            FailureKind::Server,
            FailureKind::Other,
        ] {
            assert_eq!(serde_json::to_value(error).unwrap(), error.as_str());
        }
        for phase in [CompactPhase::Pre, CompactPhase::Post] {
            assert_eq!(serde_json::to_value(phase).unwrap(), phase.as_str());
        }
    }

    #[test]
    fn every_event_round_trips_through_its_wire_form_with_no_key_twice() {
        let kinds = [
            Kind::SessionStart { source: Some("compact".into()) },
            Kind::SessionEnd { reason: Some("clear".into()) },
            Kind::ToolEnd { tool: Some("Bash".into()), ok: false },
            Kind::WaitingForInput {
                reason: WaitReason::Permission,
                tool: None,
                message: Some("m".into()),
            },
            Kind::Compact { phase: CompactPhase::Post, trigger: Some("manual".into()) },
            Kind::Stop {
                last_message: Some("done".into()),
                pending_tasks: 1,
                scheduled_wakes: 2,
                tasks: Vec::new(),
                crons: Vec::new(),
            },
            Kind::Todo,
        ];
        for kind in kinds {
            let todo = matches!(kind, Kind::Todo).then(|| TodoChange::Item {
                id: "1".into(),
                subject: Some("First task".into()),
                status: Some("pending".into()),
            });
            let event = Event {
                v: CANONICAL_VERSION,
                kind,
                cli: "claude".into(),
                session_id: Some("s".into()),
                tag: Some("t".into()),
                host: Some("h".into()),
                agent_id: None,
                turn_id: None,
                cwd: None,
                transcript_path: None,
                native: Some("SessionStart".into()),
                rule: "claude.toml#map[0]".into(),
                ts_ns: 1,
                host_pid: Some(2),
                todo,
                input_digest: Some("0123456789abcdef".into()),
                source: SourceRef { dir: "/d".into(), seq: 3, file: "f".into(), legacy: false },
                echo_of: None,
            };
            let line = serde_json::to_string(&event).unwrap();
            // A generic JSON reader keeps the last of two equal keys: each field must be
            // there, once, with its value.
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(value, serde_json::to_value(&event).unwrap(), "{line}");
            if let Kind::SessionStart { source } = &event.kind {
                assert_eq!(value["source"].as_str(), source.as_deref(), "{line}");
                assert_eq!(line.matches("\"source\":").count(), 1, "{line}");
            }
            assert_eq!(value["origin"]["seq"], 3, "{line}");
            assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event, "{line}");
        }
    }

    #[test]
    fn missing_fields_take_their_defaults() {
        let kind: Kind = serde_json::from_str(r#"{"kind":"tool_end"}"#).unwrap();
        assert_eq!(kind, Kind::ToolEnd { tool: None, ok: true });
        let kind: Kind = serde_json::from_str(r#"{"kind":"waiting_for_input"}"#).unwrap();
        assert_eq!(
            kind,
            Kind::WaitingForInput { reason: WaitReason::Other, tool: None, message: None }
        );
    }
}
