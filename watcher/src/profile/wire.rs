//! The TOML shape of a profile file, as written. Every key is optional here so that a user
//! overlay can give just what it changes; [`super::Profile::from_wire`] checks what a complete
//! profile needs.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A profile file (`profiles/<cli>.toml`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct ProfileFile {
    /// Profile schema version; `1`.
    pub version: Option<u32>,
    /// A shipped profile this one starts from (a fork of that CLI): this file is applied to a
    /// copy of it as an overlay, under its own name.
    pub base: Option<String>,
    pub name: Option<String>,
    pub display_name: Option<String>,
    pub binary: Option<String>,
    pub versions: Option<Versions>,
    pub detect: Option<Detect>,
    pub fields: Option<Fields>,
    pub input_ready: Option<Vec<String>>,
    pub idle_prompt_delay: Option<String>,
    pub tool_start_after_approval: Option<bool>,
    pub map: Option<Vec<Rule>>,
    pub holes: Option<Vec<Hole>>,
    pub install: Option<Install>,
    pub pane: Option<Pane>,
    pub deliver: Option<Deliver>,
    pub transcript: Option<Transcript>,
}

/// `[transcript]`: how the CLI writes its transcript (see `crate::transcript`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Transcript {
    pub format: Option<String>,
    pub dir: Option<String>,
    pub file_suffix: Option<String>,
}

/// `[pane]`: what the CLI's screen looks like (see `crate::pane`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Pane {
    pub prompt: Option<Vec<String>>,
    pub placeholder: Option<Vec<String>>,
    pub pasted: Option<Vec<String>>,
    pub idle: Option<Vec<String>>,
    pub busy: Option<Vec<String>>,
    pub spinner: Option<Vec<String>>,
    pub dialog: Option<Vec<String>>,
    pub login: Option<Vec<String>>,
    pub quota: Option<Vec<String>>,
}

/// `[deliver]`: how text is typed into the CLI (see `crate::deliver`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Deliver {
    pub enter_delay: Option<String>,
    pub prompt_field: Option<String>,
    pub bracketed_paste: Option<bool>,
    pub programs: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Versions {
    pub min: Option<String>,
    pub max: Option<String>,
    pub tested: Vec<String>,
}

/// `[detect]`: how a payload is told to be this CLI's, whatever `--cli` the relay was given.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Detect {
    /// Top-level keys, one of which marks the CLI's payloads.
    pub any_present: Vec<String>,
    /// Conditions that must all hold as well, as a rule's `when`.
    pub when: BTreeMap<String, Match>,
    /// Top-level keys every payload of the CLI carries.
    pub requires: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Fields {
    pub session_id: Option<Vec<String>>,
    pub transcript_path: Option<Vec<String>>,
    pub cwd: Option<Vec<String>>,
    pub agent_id: Option<Vec<String>>,
    pub turn_id: Option<Vec<String>>,
    pub tool: Option<Vec<String>>,
    pub tool_input: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Rule {
    pub native: String,
    pub when: BTreeMap<String, Match>,
    pub unless: BTreeMap<String, Match>,
    pub kind: String,
    pub set: BTreeMap<String, toml::Value>,
    pub from: BTreeMap<String, From>,
    pub todo: Option<TodoSpec>,
    pub note: Option<String>,
}

/// How a rule's event changes the session's own task list.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct TodoSpec {
    /// The payload field holding a whole list that replaces the previous one.
    pub list: Option<String>,
    /// The item's id (relative to each list item with `list`).
    pub id: Option<String>,
    /// The item's subject.
    pub subject: Option<String>,
    /// The item's status.
    pub status: Option<String>,
    /// A fixed status (a hook that means one, such as `TaskCompleted`).
    pub set_status: Option<String>,
}

/// A condition on one payload field.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Match {
    /// The field is present (`true`) or absent (`false`).
    Presence { present: bool },
    /// The field is a string starting with this.
    Prefix { prefix: String },
    /// The field equals one of these.
    AnyOf(Vec<toml::Value>),
    /// The field equals this.
    Equals(toml::Value),
}

/// Where a canonical field's value comes from.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum From {
    /// A payload field path, converted by the canonical field's type.
    Path(String),
    /// A payload field path with a conversion.
    Spec(FromSpec),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct FromSpec {
    pub field: String,
    #[serde(rename = "as")]
    pub convert: Option<String>,
    pub values: BTreeMap<String, String>,
    pub default: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Hole {
    pub id: String,
    pub description: String,
    pub state: Option<String>,
    pub stale_after: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Install {
    pub dialect: Option<String>,
    pub timeout_secs: Option<u32>,
    pub event_arg: Option<bool>,
    pub default_scope: Option<String>,
    pub version_args: Option<Vec<String>>,
    pub scopes: BTreeMap<String, String>,
    pub events: Option<Vec<InstallEvent>>,
    pub never: Option<Vec<Never>>,
    pub shadow: Option<Vec<Shadow>>,
    pub notes: Option<Vec<String>>,
}

/// A file that can take the place of the scopes' hooks (`[[install.shadow]]`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Shadow {
    pub path: String,
    pub note: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct InstallEvent {
    pub native: String,
    /// The settings key, when the CLI spells it otherwise than its payloads name the event.
    pub key: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub matcher: Option<String>,
    pub timeout_secs: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Never {
    pub native: String,
    pub reason: String,
}
