//! Notifications on state transitions: `[[notify]]` rules run a command when a session enters
//! a state a person should hear about.
//!
//! A [`Notifier`] is a consumer of applied events: after the tracker applies an event, the
//! host hands the notifier that session's [`Snapshot`] and the event ([`Notifier::observe`]);
//! a few times a second it hands it every snapshot ([`Notifier::tick`]), which is how a state
//! that goes stale, and a session `unknown` for longer than a rule's `unknown-after`, are seen
//! without an event. The notifier keeps each session's last state and detail: a snapshot that
//! says the same is not a transition, whatever event brought it.
//!
//! Firing never blocks its caller: the command runs on a thread of its own ([`run`]), with the
//! facts in `HOOKLINE_*` variables, and is killed with its process group at its timeout. Every
//! outcome — ran, failed, timed out, debounced, late, too many running — is one line of the
//! notify journal ([`NotifyJournal`]), which also tells a restarted notifier which `unknown`
//! spells it already announced. Transitions brought by events are fired once per event by the
//! host's cursor (`hookline notify` keeps its own, `notify`: see [`live`]).
//!
//! Hosts: `hookline notify` runs [`live::run`], a follow loop and a tracker of its own over the
//! events directory, or, when a daemon answers, follows the daemon's sessions
//! ([`hookline::daemon::follow`]): the daemon runs no rule itself, so nothing fires twice.
//! Either way it reads the decision journal's delivery outcomes ([`deliveries`]) and fires
//! `delivery_unconfirmed` once per delivery.

mod config;
pub mod deliveries;
pub mod live;
pub mod remote;
pub mod run;
mod trigger;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use self::config::{
    Defaults, FILE_NAME, Glob, KEYS, KeyDoc, NOTIFY_VERSION, NotifyConfig, Rule, Run, user_file,
};
pub use self::run::{NotifyJournal, NotifyRecord, Outcome, Report, Runner};
pub use self::trigger::Trigger;
pub use hookline::ConfigError;
use hookline::canonical::{Event, Kind, SessionKey};
use hookline::state::{Snapshot, State, StateKind, View};

/// Most characters of an event's message passed in `HOOKLINE_MESSAGE`.
pub const MAX_MESSAGE: usize = 1000;

/// Whether observing may fire, or only learns the states (history a restarted host replays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fire on transitions.
    Fire,
    /// Learn the states; fire nothing.
    Prime,
}

/// The facts a command gets, as `HOOKLINE_*` environment variables (an absent one is set
/// empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// `HOOKLINE_SESSION`: the CLI's session id.
    pub session: Option<String>,
    /// `HOOKLINE_TAG`: the orchestrator's tag.
    pub tag: Option<String>,
    /// `HOOKLINE_HOST`: the host the session runs on, for another host's session (read from
    /// a daemon fed through NATS); empty for this machine's.
    #[serde(default)]
    pub host: Option<String>,
    /// `HOOKLINE_CLI`: the profile name.
    pub cli: String,
    /// `HOOKLINE_CWD`: the working directory the CLI reported.
    pub cwd: Option<String>,
    /// `HOOKLINE_STATE`: the state entered.
    pub state: StateKind,
    /// `HOOKLINE_DETAIL`: its detail (wait reason, error class, why unknown).
    pub detail: Option<String>,
    /// `HOOKLINE_REASON`: the trigger that fired (`waiting_on_human.permission`, `unknown`).
    pub reason: Trigger,
    /// `HOOKLINE_TOOL`: the tool the event named, or the running tool.
    pub tool: Option<String>,
    /// `HOOKLINE_MESSAGE`: the CLI's message (a notification, a question, an error text, the
    /// last assistant message, the undelivered text), at most [`MAX_MESSAGE`] characters.
    pub message: Option<String>,
    /// `HOOKLINE_AGE_MS`: how long the state has lasted when it fired.
    pub age_ms: u64,
}

impl Facts {
    /// The environment variables, every one of them, in the documented order.
    pub fn env(&self) -> [(&'static str, String); 11] {
        let text = |v: &Option<String>| v.as_deref().map(clean).unwrap_or_default();
        [
            ("HOOKLINE_SESSION", text(&self.session)),
            ("HOOKLINE_TAG", text(&self.tag)),
            ("HOOKLINE_HOST", text(&self.host)),
            ("HOOKLINE_CLI", clean(&self.cli)),
            ("HOOKLINE_CWD", text(&self.cwd)),
            ("HOOKLINE_STATE", self.state.as_str().to_owned()),
            ("HOOKLINE_DETAIL", text(&self.detail)),
            ("HOOKLINE_REASON", self.reason.as_str().to_owned()),
            ("HOOKLINE_TOOL", text(&self.tool)),
            ("HOOKLINE_MESSAGE", text(&self.message)),
            ("HOOKLINE_AGE_MS", self.age_ms.to_string()),
        ]
    }
}

/// An environment variable cannot hold NUL.
fn clean(text: &str) -> String {
    text.replace('\0', "")
}

/// One rule firing for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firing {
    /// The rule's name.
    pub rule: String,
    /// The session's key (`cli:session-id`, or `cli:tag:TAG`).
    pub key: String,
    /// When the state began (with the key, it names the transition).
    pub since_ns: u64,
    /// The facts.
    pub facts: Facts,
    /// What became of it: [`Outcome::Started`] when its command was launched.
    pub outcome: Outcome,
}

/// A session's key as the notifier and its journal write it: `cli:session-id` (or
/// `cli:tag:TAG`), after `host/` for another host's session.
pub fn session_key(s: &Snapshot) -> String {
    key_of(s.host.as_deref(), &s.cli, s.session_id.as_deref(), s.tag.as_deref())
}

/// [`session_key`] of a view (a daemon's).
pub fn view_key(v: &View) -> String {
    key_of(v.host.as_deref(), &v.cli, v.session_id.as_deref(), v.tag.as_deref())
}

fn key_of(host: Option<&str>, cli: &str, id: Option<&str>, tag: Option<&str>) -> String {
    // A session with neither id nor tag is written with `-` for its id (never `None`, then).
    let id = if id.is_none() && tag.is_none() { Some("-") } else { id };
    SessionKey::text_of(host, cli, id, tag).unwrap_or_default()
}

/// A session as the notifier sees it: from a snapshot of a tracker of its own, or from a
/// view a daemon sent ([`From`] either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// [`session_key`].
    pub key: String,
    /// The session id.
    pub session_id: Option<String>,
    /// The tag.
    pub tag: Option<String>,
    /// The host, for another host's session.
    pub host: Option<String>,
    /// The CLI.
    pub cli: String,
    /// The working directory.
    pub cwd: Option<String>,
    /// The state, with its reason.
    pub state: State,
    /// The state's detail, as the wire writes it.
    pub detail: Option<String>,
    /// When the state began.
    pub since_ns: u64,
    /// How long it has lasted.
    pub age_ns: u64,
}

impl From<&Snapshot> for Seen {
    fn from(s: &Snapshot) -> Seen {
        Seen {
            key: session_key(s),
            session_id: s.session_id.clone(),
            tag: s.tag.clone(),
            host: s.host.clone(),
            cli: s.cli.clone(),
            cwd: s.cwd.clone(),
            state: s.state.clone(),
            detail: s.detail(),
            since_ns: s.since_ns,
            age_ns: s.age_ns,
        }
    }
}

impl From<&View> for Seen {
    fn from(v: &View) -> Seen {
        Seen {
            key: view_key(v),
            session_id: v.session_id.clone(),
            tag: v.tag.clone(),
            host: v.host.clone(),
            cli: v.cli.clone(),
            cwd: v.cwd.clone(),
            state: State::from_wire(v.state, v.detail.as_deref()),
            detail: v.detail.clone(),
            since_ns: v.since_ns,
            age_ns: v.age_ms.saturating_mul(1_000_000),
        }
    }
}

/// The state as a transition sees it: a snapshot saying the same is no transition.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mark {
    kind: StateKind,
    detail: Option<String>,
}

/// Fires rules on transitions. See the [module documentation](self).
#[derive(Debug)]
pub struct Notifier {
    config: NotifyConfig,
    runner: Runner,
    marks: HashMap<String, Mark>,
    /// (rule, session, trigger) → when it last fired: the debounce.
    fired_at: HashMap<(usize, String, Trigger), u64>,
    /// (rule, session, since) of the `unknown` spells announced.
    unknown_done: HashSet<(String, String, u64)>,
    /// (rule, session, since) of every transition fired (or journaled) already, by this
    /// notifier or one before it: one transition fires a rule once, across restarts.
    done: HashSet<(String, String, u64)>,
}

impl Notifier {
    /// A notifier firing `config`'s rules through `runner`.
    pub fn new(config: NotifyConfig, runner: Runner) -> Notifier {
        Notifier {
            config,
            runner,
            marks: HashMap::new(),
            fired_at: HashMap::new(),
            unknown_done: HashSet::new(),
            done: HashSet::new(),
        }
    }

    /// The rules.
    pub fn config(&self) -> &NotifyConfig {
        &self.config
    }

    /// Learns from journal records which `unknown` spells were already announced, so that a
    /// restarted notifier does not announce them again.
    pub fn remember(&mut self, records: &[NotifyRecord]) {
        for r in records {
            let done = (r.rule.clone(), r.key.clone(), r.since_ns);
            if r.trigger == Trigger::Unknown {
                self.unknown_done.insert(done.clone());
            }
            self.done.insert(done);
        }
    }

    /// A session's snapshot after an event was applied to it (`cause`), at `now_ns`. Fires the
    /// rules whose `on` the new state enters, unless the state and detail are what this
    /// notifier last saw for the session.
    pub fn observe(
        &mut self,
        snapshot: &Snapshot,
        cause: Option<&Event>,
        now_ns: u64,
        mode: Mode,
    ) -> Vec<Firing> {
        self.observe_seen(&Seen::from(snapshot), cause, now_ns, mode)
    }

    /// [`Notifier::observe`] of a session as a snapshot or a view shows it.
    pub fn observe_seen(
        &mut self,
        snapshot: &Seen,
        cause: Option<&Event>,
        now_ns: u64,
        mode: Mode,
    ) -> Vec<Firing> {
        let key = snapshot.key.clone();
        let mark = Mark { kind: snapshot.state.kind(), detail: snapshot.detail.clone() };
        if self.marks.get(&key) == Some(&mark) {
            return Vec::new();
        }
        self.marks.insert(key.clone(), mark);
        if mode == Mode::Prime {
            return Vec::new();
        }
        let late = !self.config.late_after.is_zero()
            && cause.is_some_and(|e| {
                u128::from(now_ns.saturating_sub(e.ts_ns)) > self.config.late_after.as_nanos()
            });
        let mut firings = Vec::new();
        for i in 0..self.config.rules.len() {
            let rule = &self.config.rules[i];
            let Some(trigger) = rule.on.iter().copied().find(|t| t.entered_by(&snapshot.state))
            else {
                continue;
            };
            if !admits(rule, snapshot)
                || self.done.contains(&(rule.name.clone(), key.clone(), snapshot.since_ns))
            {
                continue;
            }
            let facts = facts(snapshot, cause, trigger);
            let late = late.then_some(Outcome::Late);
            firings.push(self.fire(i, &key, snapshot.since_ns, facts, now_ns, late));
        }
        firings
    }

    /// Every session's snapshot at `now_ns`: states that changed without an event (gone
    /// stale), and `unknown` spells longer than a rule's `unknown-after`.
    pub fn tick(&mut self, snapshots: &[Snapshot], now_ns: u64, mode: Mode) -> Vec<Firing> {
        let seen: Vec<Seen> = snapshots.iter().map(Seen::from).collect();
        self.tick_seen(&seen, now_ns, mode)
    }

    /// [`Notifier::tick`] of sessions as snapshots or views show them.
    pub fn tick_seen(&mut self, sessions: &[Seen], now_ns: u64, mode: Mode) -> Vec<Firing> {
        let mut firings = Vec::new();
        for snapshot in sessions {
            firings.extend(self.observe_seen(snapshot, None, now_ns, mode));
            if !matches!(snapshot.state, State::Unknown(_)) {
                continue;
            }
            let key = snapshot.key.clone();
            for i in 0..self.config.rules.len() {
                let rule = &self.config.rules[i];
                if !rule.on.contains(&Trigger::Unknown)
                    || u128::from(snapshot.age_ns) < rule.unknown_after.as_nanos()
                    || !admits(rule, snapshot)
                {
                    continue;
                }
                let spell = (rule.name.clone(), key.clone(), snapshot.since_ns);
                if mode == Mode::Prime || !self.unknown_done.insert(spell) {
                    continue;
                }
                // The spell crossed the threshold at since + unknown-after: long before now,
                // it happened while no notifier ran.
                let crossed = u128::from(snapshot.since_ns) + rule.unknown_after.as_nanos();
                let late = !self.config.late_after.is_zero()
                    && u128::from(now_ns) > crossed + self.config.late_after.as_nanos();
                let facts = facts(snapshot, None, Trigger::Unknown);
                let late = late.then_some(Outcome::Late);
                firings.push(self.fire(i, &key, snapshot.since_ns, facts, now_ns, late));
            }
        }
        firings
    }

    /// A delivery the host typed into the session's pane was not confirmed by a structured
    /// event: fires the rules `on = ["delivery_unconfirmed"]`, with the text as the message.
    pub fn delivery_unconfirmed(
        &mut self,
        snapshot: &Snapshot,
        text: &str,
        now_ns: u64,
    ) -> Vec<Firing> {
        let seen = Seen::from(snapshot);
        let since = seen.since_ns;
        self.delivery_unconfirmed_seen(&seen, since, text, now_ns)
    }

    /// A delivery journaled at `delivered_ns` was not confirmed (the decision journal's
    /// `delivery.step` `unconfirmed`): fires the rules `on = ["delivery_unconfirmed"]` once
    /// per delivery (the delivery's time names it in the notify journal), with `text` (the
    /// journal's reason) as the message.
    pub fn delivery_unconfirmed_seen(
        &mut self,
        session: &Seen,
        delivered_ns: u64,
        text: &str,
        now_ns: u64,
    ) -> Vec<Firing> {
        let key = session.key.clone();
        let mut firings = Vec::new();
        for i in 0..self.config.rules.len() {
            let rule = &self.config.rules[i];
            let done = (rule.name.clone(), key.clone(), delivered_ns);
            if !rule.on.contains(&Trigger::DeliveryUnconfirmed)
                || !admits(rule, session)
                || !self.done.insert(done)
            {
                continue;
            }
            let mut facts = facts(session, None, Trigger::DeliveryUnconfirmed);
            facts.message = Some(text.chars().take(MAX_MESSAGE).collect());
            firings.push(self.fire(i, &key, delivered_ns, facts, now_ns, None));
        }
        firings
    }

    fn fire(
        &mut self,
        i: usize,
        key: &str,
        since_ns: u64,
        facts: Facts,
        now_ns: u64,
        outcome: Option<Outcome>,
    ) -> Firing {
        let rule = &self.config.rules[i];
        let debounce = (i, key.to_owned(), facts.reason);
        let outcome = outcome.unwrap_or_else(|| {
            let last = self.fired_at.get(&debounce).copied();
            if last.is_some_and(|t| u128::from(now_ns - t.min(now_ns)) < rule.debounce.as_nanos()) {
                Outcome::Debounced
            } else {
                Outcome::Started
            }
        });
        self.done.insert((rule.name.clone(), key.to_owned(), since_ns));
        let firing =
            Firing { rule: rule.name.clone(), key: key.to_owned(), since_ns, facts, outcome };
        let record = NotifyRecord::of(&firing, now_ns);
        let outcome = if outcome == Outcome::Started {
            self.fired_at.insert(debounce, now_ns);
            self.runner.launch(Arc::new(rule.clone()), &firing.facts, record)
        } else {
            self.runner.settled(record);
            outcome
        };
        Firing { outcome, ..firing }
    }
}

/// Whether a rule's filters let the session through.
fn admits(rule: &Rule, s: &Seen) -> bool {
    let any = |globs: &[Glob], value: Option<&str>| {
        globs.is_empty() || value.is_some_and(|v| globs.iter().any(|g| g.matches(v)))
    };
    (rule.cli.is_empty() || rule.cli.contains(&s.cli))
        && any(&rule.tag, s.tag.as_deref())
        && any(&rule.cwd, s.cwd.as_deref())
}

fn facts(s: &Seen, cause: Option<&Event>, reason: Trigger) -> Facts {
    let (mut tool, message) = match cause.map(|e| &e.kind) {
        Some(
            Kind::PermissionRequest { tool }
            | Kind::ToolStart { tool }
            | Kind::ToolEnd { tool, .. },
        ) => (tool.clone(), None),
        Some(Kind::WaitingForInput { tool, message, .. }) => (tool.clone(), message.clone()),
        Some(Kind::Notification { message, .. }) => (None, message.clone()),
        Some(Kind::StopFailure { detail, .. }) => (None, detail.clone()),
        Some(Kind::Stop { last_message, .. }) => (None, last_message.clone()),
        _ => (None, None),
    };
    if let State::ChildCommand { tool: running } = &s.state {
        tool = tool.or_else(|| running.clone());
    }
    Facts {
        session: s.session_id.clone(),
        tag: s.tag.clone(),
        host: s.host.clone(),
        cli: s.cli.clone(),
        cwd: s.cwd.clone(),
        state: s.state.kind(),
        detail: s.detail.clone(),
        reason,
        tool,
        message: message.map(|m| m.chars().take(MAX_MESSAGE).collect()),
        age_ms: s.age_ns / 1_000_000,
    }
}

#[cfg(test)]
mod tests;
