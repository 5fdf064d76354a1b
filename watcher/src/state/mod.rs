//! Session state you can fail closed on.
//!
//! A [`Tracker`] folds canonical events into one [`Session`] per CLI session and answers, at a
//! given time, with a typed [`Snapshot`] (a [`State`] that carries its reason, an
//! [`InputSlot`] that carries its refusal), or its wire form, a [`View`]: the state (`unknown`, `active`, `child_command`,
//! `waiting_on_human`, `idle`, `env_fault`, `ended`), its `generation`, `epoch`, last applied
//! `seq`, `since`, age, the evidence (which event, which rule) and whether it is fresh and
//! authoritative.
//!
//! The contract:
//! * a tracker is one *generation*; it starts every session `unknown`. Events older than the
//!   generation (history) are replayed so the state can be shown, but a state set by a
//!   replayed event is never authoritative and can never authorize input;
//! * `idle` comes only from an event the CLI's profile declares input-ready — never from
//!   silence, screen text or elapsed time;
//! * an event older than the state (by `seq`, or for unordered and legacy events by time, or
//!   from a producer the session has left behind) is rejected;
//! * compaction and clear never synthesize `idle`; a subagent's events never change its
//!   parent's state;
//! * a permission wait ends on the next end of that tool, a stop or a prompt: a denial that
//!   fires nothing leaves the session waiting on its human;
//! * a state the CLI can leave without any event (a profile hole) turns `unknown`, with the
//!   reason, after the hole's `stale-after` of silence, or the tracker's [`StaleWindows`]
//!   when they set one for that state;
//! * the input slot of an `idle` can be taken once;
//! * an echo ([`Event::echo_of`]: the same native event reported again by another producer)
//!   never changes the state and never opens a slot. It only adds what makes the consumer
//!   more careful: the pending work its `stop` reports, or, when the copy that came first was
//!   a legacy `Stop` that made the session `idle`, a state that is not input-ready (a turn the
//!   human aborted, an error) which that older relay could not tell apart from a stop;
//! * a legacy event belongs to the session a hookline relay reports under the same session
//!   id, when there is one; a session first heard of from a legacy directory is taken over by
//!   the first hookline event of its session id.

mod checkpoint;
mod rules;
mod snapshot;
mod todo;
mod transcript;
mod view;
mod windows;
pub(crate) mod wire;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::canonical::{BackgroundTask, Cron, Event, Kind, SessionKey, SourceRef};
use crate::format::filename::EventFileName;
use crate::profile::{Profile, Profiles};
use crate::transcript::TranscriptFacts;
use crate::vocab::UnknownReason;
use rules::{Effect, Turn};
pub use snapshot::{InputSlot, Snapshot, State};
pub use todo::{RepeatedCall, TodoItem, TodoList};
pub use transcript::TranscriptView;
pub use view::{Evidence, Refusal, Slot, Stale, Transition, View};
pub use windows::StaleWindows;

pub use crate::vocab::StateKind;

/// How many transitions each session keeps for `explain`, by default.
pub const HISTORY: usize = 32;

/// What the last `stop` said was still to come.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pending {
    /// Background tasks still running.
    pub tasks: u32,
    /// Wake-ups scheduled.
    pub wakes: u32,
    /// The background tasks, item by item, when the CLI lists them (running or not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background_tasks: Vec<BackgroundTask>,
    /// The scheduled wakes, item by item, when the CLI lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crons: Vec<Cron>,
}

/// One tracker's identity: a new one starts every session `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// An id unique to this tracker.
    pub id: u64,
    /// When it started, in nanoseconds since the Unix epoch: older events are history.
    pub started_ns: u64,
}

impl Generation {
    /// A generation starting at `started_ns`.
    pub fn new(started_ns: u64) -> Generation {
        let id = started_ns ^ (u64::from(std::process::id()) << 40) ^ next_tracker_number();
        Generation { id, started_ns }
    }
}

fn next_tracker_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    COUNT.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The state proper, as last set by an event.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Current {
    pub state: State,
    pub since_ns: u64,
    pub evidence: Evidence,
    /// Set by an event of this generation (not replayed history).
    pub live: bool,
}

/// One CLI session.
#[derive(Debug, Clone)]
pub struct Session {
    /// Its identity.
    pub key: SessionKey,
    /// The working directory its CLI reported.
    pub cwd: Option<String>,
    /// Its host CLI process, when known.
    pub host_pid: Option<u32>,
    /// Its transcript file, as its last event that named one said.
    pub transcript_path: Option<String>,
    /// What hookline read in its transcript ([`Tracker::observe_transcript`]).
    transcript: Option<TranscriptFacts>,
    current: Current,
    epoch: u64,
    /// Last applied seq, and time (for unordered and legacy events).
    seq: u64,
    ts_ns: u64,
    last_event: Evidence,
    turn: Turn,
    /// The session's own task list.
    todos: TodoList,
    retired_hosts: Vec<u32>,
    slot_taken: bool,
    /// Something happened since the slot was taken (a compaction, a notification...).
    moved_since_slot: bool,
    history: VecDeque<Transition>,
    /// Whether the current epoch has seen anything but its session start (duplicate starts).
    epoch_has_events: bool,
    /// Only legacy directories have reported it so far.
    legacy_only: bool,
    /// No hook event has reported it: only its transcript is read (the fallback producer).
    unhooked: bool,
}

/// What makes an applied event live (of this generation) rather than replayed history: its
/// arrival, never its timestamp, so that a clock stepped back or forward neither stops input
/// nor lets history authorize it. Only the engine ([`crate::engine`]) says when a tracker has
/// caught up: a tracker built on its own replays history forever and authorizes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Liveness {
    /// Nothing is live until the tracker has caught up with history.
    Replaying,
    /// Every event applied since the tracker caught up with history.
    CaughtUp,
}

/// Folds events into sessions.
#[derive(Debug)]
pub struct Tracker {
    generation: Generation,
    liveness: Liveness,
    history_len: usize,
    /// Sessions whose id or tag starts with this keep every transition (`explain`).
    full_history_of: Option<String>,
    profiles: Profiles,
    stale: StaleWindows,
    sessions: HashMap<String, Session>,
    by_tag: HashMap<String, String>,
}

/// A session found by [`Tracker::lookup`].
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The key it is stored under (see [`Tracker::session_key`]).
    pub key: &'a str,
    /// The session.
    pub session: &'a Session,
    /// How the query named it.
    pub by: Match,
}

impl Found<'_> {
    /// The name that finds this session exactly: its session id, else its tag; written
    /// `<name>@<host>` for another host's session.
    pub fn name(&self) -> String {
        let key = &self.session.key;
        let name = key.session_id.as_deref().or(key.tag.as_deref()).unwrap_or(self.key);
        match &key.host {
            Some(host) => format!("{name}@{host}"),
            None => name.to_owned(),
        }
    }
}

/// How a query named a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Its session id or tag, whole.
    Exact,
    /// The start of its session id or tag, which no other session's begins with.
    Prefix,
}

/// What a caller believes about a session when it asks for its input slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Expect {
    /// The generation the caller saw.
    pub generation: Option<u64>,
    /// The epoch the caller saw.
    pub epoch: Option<u64>,
}

/// What applying one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Applied {
    /// The session's key in the tracker, when the event had one.
    pub session: Option<String>,
    /// The rule that decided.
    pub rule: &'static str,
    /// Whether the state changed.
    pub changed: bool,
    /// Why the event was not applied to its session, when it was not.
    pub ignored: Option<Ignored>,
}

/// Why an event was recorded but not applied to its session's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ignored {
    /// A subagent fired it: a subagent's events never change its parent's state.
    Subagent,
    /// It comes from a producer (host process) the session has left behind.
    OlderEpoch,
    /// Its `seq` is not newer than the last applied one.
    OlderSeq,
    /// An unordered or legacy event older than the last applied one.
    Older,
    /// An echo of an event already seen: another producer's copy of it.
    Echo,
}

impl Ignored {
    /// The state rule that names it.
    pub fn rule(self) -> &'static str {
        match self {
            Ignored::Subagent => "subagent-never-changes-parent",
            Ignored::OlderEpoch => "older-epoch-event-rejected",
            Ignored::OlderSeq => "older-seq-event-rejected",
            Ignored::Older => "older-event-rejected",
            Ignored::Echo => "echo-never-changes-state",
        }
    }
}

impl Tracker {
    /// A tracker (one generation) starting at `started_ns`. Every event it applies is
    /// replayed history, shown but never authorizing: only the engine ([`crate::engine`]),
    /// which owns the events' source, can say that the history has been read and what arrives
    /// next is live.
    pub fn new(profiles: Profiles, started_ns: u64) -> Tracker {
        Tracker {
            generation: Generation::new(started_ns),
            liveness: Liveness::Replaying,
            history_len: HISTORY,
            full_history_of: None,
            profiles,
            stale: StaleWindows::default(),
            sessions: HashMap::new(),
            by_tag: HashMap::new(),
        }
    }

    /// Says that history has been replayed: every event applied from now on has arrived
    /// since the generation started, and is live. Arrival, not the clock, tells them apart: a
    /// clock stepped back an hour would otherwise make every new event look older than the
    /// generation; one stepped forward would make history look live. Only the engine calls
    /// it, when its source says so.
    pub(crate) fn caught_up(&mut self) {
        self.liveness = Liveness::CaughtUp;
    }

    /// A tracker that has caught up already (nothing to replay): what it applies is live.
    #[cfg(test)]
    pub(crate) fn live(mut self) -> Tracker {
        self.caught_up();
        self
    }

    /// Whether this tracker has caught up with history: a live generation, whose new events
    /// can make a session eligible for input. A tracker that only replayed history never is.
    pub fn is_live(&self) -> bool {
        self.liveness == Liveness::CaughtUp
    }

    /// Keeps the last `n` transitions of each session (for `explain`) instead of [`HISTORY`].
    pub fn with_history(mut self, n: usize) -> Tracker {
        self.history_len = n.max(1);
        self
    }

    /// Keeps every transition of the sessions [`Tracker::lookup`] could find by `query` (those
    /// whose session id or tag starts with it), and [`HISTORY`] (or [`Tracker::with_history`])
    /// of every other: `explain` replays the whole directory for one session, and the
    /// others' histories would grow with the directory instead of with the sessions. A tag is
    /// matched as the session carries it when each transition is recorded.
    pub fn with_full_history_of(mut self, query: &str) -> Tracker {
        let query = query.strip_suffix('…').unwrap_or(query);
        self.full_history_of = (!query.is_empty()).then(|| query.to_owned());
        self
    }

    /// Reads staleness from `windows` where they set one, instead of the profiles'
    /// `stale-after` (see [`StaleWindows`]).
    pub fn with_stale_windows(mut self, windows: StaleWindows) -> Tracker {
        self.stale = windows;
        self
    }

    /// Sets `windows` over the ones this tracker already has (see [`StaleWindows::extend`]):
    /// how a policy's `[stale]` reaches every tracker that reads it.
    pub fn with_stale_windows_over(mut self, windows: &StaleWindows) -> Tracker {
        self.stale.extend(windows);
        self
    }

    /// The staleness windows that replace the profiles' (empty by default).
    pub fn stale_windows(&self) -> &StaleWindows {
        &self.stale
    }

    /// This tracker's generation.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The profiles used for input-ready events and holes.
    pub fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// The key a session is stored under: the CLI and its session id, else the tag; after
    /// `<host>/` for another host's session, so that one host's events never reach another's
    /// session, whatever ids they carry.
    fn key_of(&self, event: &Event) -> Option<String> {
        let host = event.host.as_deref();
        let own = || SessionKey::text_of(host, &event.cli, event.session_id.as_deref(), None);
        match (&event.session_id, &event.tag) {
            (Some(_), _) => own(),
            (None, Some(tag)) => self
                .by_tag
                .get(&tag_name(tag, host))
                .cloned()
                .or_else(|| SessionKey::text_of(host, &event.cli, None, Some(tag))),
            (None, None) => None,
        }
    }

    /// The key of the session an event belongs to, across producers: a legacy event goes to
    /// the session a hookline relay reports under the same session id, when there is one; the
    /// first hookline event of a session only legacy directories reported takes it over.
    fn route(&mut self, event: &Event) -> Option<String> {
        let key = self.key_of(event)?;
        let Some(id) = event.session_id.as_deref() else { return Some(key) };
        let same_id = |s: &Session| {
            s.key.session_id.as_deref() == Some(id)
                && s.key.host.as_deref() == event.host.as_deref()
        };
        if event.source.legacy {
            let relayed = self
                .sessions
                .iter()
                .filter(|(_, s)| same_id(s) && !s.legacy_only)
                .max_by_key(|(_, s)| s.ts_ns)
                .map(|(k, _)| k.clone());
            return relayed.or(Some(key));
        }
        if self.sessions.contains_key(&key) {
            return Some(key);
        }
        let legacy =
            self.sessions.iter().find(|(_, s)| same_id(s) && s.legacy_only).map(|(k, _)| k.clone());
        if let Some(old) = legacy
            && let Some(mut taken) = self.sessions.remove(&old)
        {
            taken.key.cli.clone_from(&event.cli);
            taken.legacy_only = false;
            for value in self.by_tag.values_mut().filter(|v| **v == old) {
                value.clone_from(&key);
            }
            self.sessions.insert(key.clone(), taken);
        }
        Some(key)
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &Event) -> Applied {
        let Some(key) = self.route(event) else {
            return Applied {
                session: None,
                rule: "no-session-recorded-nowhere",
                changed: false,
                ignored: None,
            };
        };
        let generation = self.generation;
        let history_len = self.history_len;
        // A tag names the session that last changed state under it. An event that changes
        // nothing (a side thread's notification) does not take the tag from a session.
        if let Some(tag) = &event.tag {
            let name = tag_name(tag, event.host.as_deref());
            self.by_tag.entry(name).or_insert_with(|| key.clone());
        }
        let profile = self.profiles.get(&event.cli);
        let session =
            self.sessions.entry(key.clone()).or_insert_with(|| Session::new(event, generation));
        if event.tag.is_some() && session.key.tag != event.tag {
            session.key.tag.clone_from(&event.tag);
        }
        let history_len = match &self.full_history_of {
            Some(query)
                if [&session.key.session_id, &session.key.tag]
                    .into_iter()
                    .any(|name| name.as_deref().is_some_and(|n| n.starts_with(query.as_str()))) =>
            {
                usize::MAX
            }
            _ => history_len,
        };
        if event.is_subagent() {
            // Recorded as a step that changed nothing, so that `explain` shows it.
            let rule = Ignored::Subagent.rule();
            session.record(event, rule, None, history_len);
            let ignored = Some(Ignored::Subagent);
            return Applied { session: Some(key), rule, changed: false, ignored };
        }
        if let Some(original) = &event.echo_of {
            let (rule, changed) = session.echo(event, original, profile, history_len);
            let ignored = (!changed).then_some(Ignored::Echo);
            return Applied { session: Some(key), rule, changed, ignored };
        }
        if let Some(why) = session.rejects(event) {
            session.record(event, why.rule(), None, history_len);
            let ignored = Some(why);
            return Applied { session: Some(key), rule: why.rule(), changed: false, ignored };
        }
        if session.unhooked {
            // Its first event: from now on it is a hooked session like any other.
            session.unhooked = false;
            session.transcript = None;
            session.current.state = State::Unknown(UnknownReason::NoEventYet);
        }
        session.seq = session.seq.max(if event.source.legacy { 0 } else { event.source.seq });
        session.ts_ns = session.ts_ns.max(event.ts_ns);
        if event.cwd.is_some() {
            session.cwd.clone_from(&event.cwd);
        }
        if event.transcript_path.is_some() && session.transcript_path != event.transcript_path {
            session.transcript_path.clone_from(&event.transcript_path);
            // Another file (a `/clear`, a resumed session): what was read in the old one no
            // longer describes this session.
            session.transcript = None;
        }
        if let Some(change) = &event.todo {
            session.todos.apply(change);
        }
        let producer_changed = match (session.host_pid, event.host_pid) {
            (Some(old), Some(new)) if old != new => {
                session.retired_hosts.push(old);
                true
            }
            _ => false,
        };
        if event.host_pid.is_some() {
            session.host_pid = event.host_pid;
        }
        let (effect, rule) =
            rules::decide(profile, event, session.current.state.kind(), &mut session.turn);
        let live = self.liveness == Liveness::CaughtUp;
        if matches!(effect, Effect::NewEpoch)
            && !producer_changed
            && !session.epoch_has_events
            && session.epoch > 0
        {
            // A second start with nothing in between (claude-code#14937): same epoch.
            session.record(event, "duplicate-session-start-ignored", None, history_len);
            return Applied {
                session: Some(key),
                rule: "duplicate-session-start-ignored",
                changed: false,
                ignored: None,
            };
        }
        let before = session.current.state.kind();
        let starts_epoch = matches!(effect, Effect::NewEpoch);
        let enters = matches!(effect, Effect::Enter(_));
        let mut next = None;
        if producer_changed || matches!(effect, Effect::NewEpoch) || session.epoch == 0 {
            session.epoch += 1;
            session.epoch_has_events = false;
            if producer_changed || matches!(effect, Effect::NewEpoch) {
                next = Some(State::Unknown(if producer_changed {
                    UnknownReason::NewProducer
                } else {
                    UnknownReason::SessionStarted
                }));
            }
        }
        if let Effect::Enter(state) = effect {
            next = Some(state);
        }
        if !starts_epoch {
            session.epoch_has_events = true;
        }
        let rule = if producer_changed && !enters { "producer-changed-new-epoch" } else { rule };
        let changed = next.is_some();
        // A new slot comes with each entry into idle. An input-ready event while already idle
        // (idle_prompt after stop) is the same idle, unless something happened since the slot
        // was taken (e.g. the input was a /compact).
        let entering_idle = next == Some(State::Idle);
        if next.is_some()
            && (!entering_idle || before != StateKind::Idle || session.moved_since_slot)
        {
            session.slot_taken = false;
            session.moved_since_slot = false;
        } else if session.slot_taken && !entering_idle {
            session.moved_since_slot = true;
        }
        if let Some(state) = next {
            session.current =
                Current { state, since_ns: event.ts_ns, evidence: Evidence::of(event, rule), live };
        }
        session.record(event, rule, changed.then_some(session.current.state.kind()), history_len);
        if changed && let Some(tag) = &event.tag {
            self.by_tag.insert(tag_name(tag, event.host.as_deref()), key.clone());
        }
        Applied { session: Some(key), rule, changed, ignored: None }
    }

    /// Finds a session by session id, else by tag (the session whose state last changed under
    /// it). Another host's session is named `<id or tag>@<host>`, or by its id or tag alone
    /// when no other host has a session of that name: a name two hosts share finds nothing,
    /// never one of them.
    pub fn find(&self, id_or_tag: &str) -> Option<&Session> {
        self.find_on(id_or_tag, None).or_else(|| {
            let (name, host) = id_or_tag.rsplit_once('@')?;
            (!name.is_empty() && !host.is_empty()).then(|| self.find_on(name, Some(host)))?
        })
    }

    /// [`Tracker::find`] of a name on one host (`Some`), or on whichever single host has it.
    fn find_on(&self, name: &str, on: Option<&str>) -> Option<&Session> {
        let here = |s: &&Session| on.is_none_or(|h| s.key.host.as_deref() == Some(h));
        let by_id: Vec<&Session> = self
            .sessions
            .values()
            .filter(|s| s.key.session_id.as_deref() == Some(name))
            .filter(here)
            .collect();
        if !by_id.is_empty() {
            return one_host(by_id);
        }
        let by_tag: Vec<&Session> = self
            .by_tag
            .iter()
            .filter_map(|(slot, key)| Some((slot, self.sessions.get(key)?)))
            .filter(|(slot, s)| **slot == tag_name(name, s.key.host.as_deref()))
            .map(|(_, s)| s)
            .filter(here)
            .collect();
        one_host(by_tag)
    }

    /// Finds a session as a person names it: by its session id or tag exactly (as
    /// [`Tracker::find`]), else by an unambiguous prefix of either; a trailing `…` (the mark
    /// of an id clipped in the `status` table) is ignored. `Ok(None)` when nothing matches; an
    /// [`Error::AmbiguousSession`] listing the candidates when a prefix names more than one.
    ///
    /// Commands that take a SESSION argument resolve it here. A program (`hookline serve`,
    /// the library) names sessions exactly: a prefix could bind its question to another
    /// session (`task-1` before its first event, while `task-10` exists).
    pub fn lookup(&self, query: &str) -> Result<Option<Found<'_>>, Error> {
        let query = query.strip_suffix('…').unwrap_or(query);
        if query.is_empty() {
            return Ok(None);
        }
        let found = |key: &str, by: Match| {
            let (key, session) = self.sessions.get_key_value(key)?;
            Some(Found { key, session, by })
        };
        if let Some(key) = self.find_key(query) {
            return Ok(found(&key, Match::Exact));
        }
        let mut keys: BTreeSet<&String> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.key.session_id.as_deref().is_some_and(|id| match &s.key.host {
                    Some(host) => format!("{id}@{host}").starts_with(query),
                    None => id.starts_with(query),
                })
            })
            .map(|(key, _)| key)
            .collect();
        keys.extend(self.by_tag.iter().filter(|(tag, _)| tag.starts_with(query)).map(|(_, k)| k));
        match keys.len() {
            0 => Ok(None),
            1 => Ok(keys.pop_first().and_then(|key| found(key, Match::Prefix))),
            _ => Err(Error::AmbiguousSession {
                query: query.to_owned(),
                candidates: keys.iter().map(|k| self.sessions[*k].key.describe()).collect(),
            }),
        }
    }

    /// The key a session is stored under (its CLI and session id, else its tag), found by
    /// session id or tag as [`Tracker::find`] does. [`Applied::session`] carries the same key, so
    /// a consumer can keep its own per-session records beside the tracker's.
    pub fn session_key(&self, id_or_tag: &str) -> Option<String> {
        self.find_key(id_or_tag)
    }

    fn find_key(&self, id_or_tag: &str) -> Option<String> {
        let session = self.find(id_or_tag)?;
        self.sessions.iter().find(|(_, s)| std::ptr::eq(*s, session)).map(|(k, _)| k.clone())
    }

    /// The typed snapshot of a session at `now_ns`.
    pub fn snapshot(&self, id_or_tag: &str, now_ns: u64) -> Option<Snapshot> {
        self.find(id_or_tag).map(|s| Snapshot::of(s, self, now_ns))
    }

    /// The typed snapshot of a session at `now_ns` as its structured events alone say,
    /// without the state its transcript sets over theirs: what a decision compares with, so
    /// that the transcript only ever makes it more careful.
    pub fn structured_snapshot(&self, id_or_tag: &str, now_ns: u64) -> Option<Snapshot> {
        self.find(id_or_tag).map(|s| Snapshot::of_with(s, self, now_ns, false))
    }

    /// The typed snapshot at `now_ns` of a session this tracker holds (one [`Tracker::lookup`]
    /// found).
    pub fn snapshot_of(&self, session: &Session, now_ns: u64) -> Snapshot {
        Snapshot::of(session, self, now_ns)
    }

    /// Every session's snapshot at `now_ns`, most recently active first.
    pub fn snapshots(&self, now_ns: u64) -> Vec<Snapshot> {
        let mut sessions: Vec<&Session> = self.sessions.values().collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.ts_ns));
        sessions.into_iter().map(|s| Snapshot::of(s, self, now_ns)).collect()
    }

    /// The view of the session stored under `key` (as [`Applied::session`] carries it).
    pub fn view_by_key(&self, key: &str, now_ns: u64) -> Option<View> {
        self.sessions.get(key).map(|s| View::from(&Snapshot::of(s, self, now_ns)))
    }

    /// Replaces the profiles and the staleness windows (a reload), keeping every session.
    pub(crate) fn reload(&mut self, profiles: Profiles, windows: &StaleWindows) {
        self.profiles = profiles;
        self.stale = StaleWindows::default();
        self.stale.extend(windows);
    }

    /// The view (wire form) of a session at `now_ns`.
    pub fn view(&self, id_or_tag: &str, now_ns: u64) -> Option<View> {
        self.snapshot(id_or_tag, now_ns).as_ref().map(View::from)
    }

    /// Every session's view at `now_ns`, most recently active first.
    pub fn views(&self, now_ns: u64) -> Vec<View> {
        self.snapshots(now_ns).iter().map(View::from).collect()
    }

    /// Takes the input slot of a session: succeeds at most once per `idle`, and only for an
    /// explicit, fresh, authoritative `idle` of this generation. Fails closed otherwise. Only
    /// the decider takes it (journaled, its counters kept), as a lease.
    #[cfg(test)]
    pub(crate) fn take_input_slot(
        &mut self,
        id_or_tag: &str,
        now_ns: u64,
    ) -> Result<Slot, Refusal> {
        self.take_input_slot_expecting(id_or_tag, now_ns, Expect::default())
    }

    /// Whether a session's input slot could be taken now, and the slot it would be: what a
    /// peek answers, taking nothing.
    pub(crate) fn input_slot_now(
        &self,
        id_or_tag: &str,
        now_ns: u64,
        expect: Expect,
    ) -> Result<(String, Slot), Refusal> {
        let key = self
            .find_key(id_or_tag)
            .ok_or_else(|| Refusal::NoSuchSession { session: id_or_tag.to_owned() })?;
        let session = &self.sessions[&key];
        let view = Snapshot::of(session, self, now_ns);
        if let Some(generation) = expect.generation.filter(|g| *g != view.generation) {
            return Err(Refusal::OtherGeneration {
                expected: generation,
                current: view.generation,
            });
        }
        if let Some(epoch) = expect.epoch.filter(|e| *e != view.epoch) {
            return Err(Refusal::OtherEpoch { expected: epoch, current: view.epoch });
        }
        let live = self.is_live().then_some(self.generation.started_ns);
        view.slot_refusal(session.slot_taken, live)?;
        let slot = Slot {
            session_id: view.session_id.clone(),
            tag: view.tag.clone(),
            generation: view.generation,
            epoch: view.epoch,
            seq: view.seq,
            idle_since_ns: view.since_ns,
        };
        Ok((key, slot))
    }

    /// [`Tracker::take_input_slot`], also refusing when the caller's view of the session is
    /// from another generation or epoch than the tracker's.
    pub(crate) fn take_input_slot_expecting(
        &mut self,
        id_or_tag: &str,
        now_ns: u64,
        expect: Expect,
    ) -> Result<Slot, Refusal> {
        let (key, slot) = self.input_slot_now(id_or_tag, now_ns, expect)?;
        if let Some(session) = self.sessions.get_mut(&key) {
            session.slot_taken = true;
            session.moved_since_slot = false;
        }
        Ok(slot)
    }

    /// Gives back the input slot `slot` took, when the session it names (by `key`) is still at
    /// that idle: the same generation, epoch and idle, its slot still taken. Returns whether it
    /// was given back; `false` when the session has left that idle (its next idle brings a
    /// slot of its own).
    pub(crate) fn release_input_slot(&mut self, key: &str, slot: &Slot) -> bool {
        let generation = self.generation.id;
        let Some(session) = self.sessions.get_mut(key) else { return false };
        let same_idle = slot.generation == generation
            && session.epoch == slot.epoch
            && session.current.state == State::Idle
            && session.current.since_ns == slot.idle_since_ns;
        if !same_idle || !session.slot_taken {
            return false;
        }
        session.slot_taken = false;
        true
    }

    /// Whether the session stored under `key` is still at the idle `slot` was taken at.
    pub(crate) fn at_idle_of(&self, key: &str, slot: &Slot) -> bool {
        self.sessions.get(key).is_some_and(|session| {
            slot.generation == self.generation.id
                && session.epoch == slot.epoch
                && session.current.state == State::Idle
                && session.current.since_ns == slot.idle_since_ns
        })
    }

    /// Records what hookline read in a session's transcript (the session found by its
    /// session id or tag, or by the key [`Applied::session`] carries). It is rank-2 evidence:
    /// it can only make the session's state more careful (see `docs/transcripts.md`). Facts
    /// about another file than the session's `transcript_path` are refused. Returns whether
    /// the session was found and took them.
    pub fn observe_transcript(&mut self, id_or_key: &str, facts: TranscriptFacts) -> bool {
        let key = if self.sessions.contains_key(id_or_key) {
            Some(id_or_key.to_owned())
        } else {
            self.find_key(id_or_key)
        };
        let Some(session) = key.and_then(|k| self.sessions.get_mut(&k)) else {
            return false;
        };
        if session.transcript_path.as_deref().is_some_and(|p| p != facts.path) {
            return false;
        }
        session.transcript = Some(facts);
        true
    }

    /// Records what hookline read in the transcript of a session that no hook event reports
    /// (the fallback producer, `docs/transcripts.md`): the session `cli:session_id` is
    /// created `unknown` at `since_ns` (when hookline started reading the file) if the tracker
    /// does not know it, and only what the transcript writes after that counts. It can hold,
    /// pause or escalate, never authorize input and never end a session. A session that has
    /// events takes the facts only about its own transcript file. Returns whether they were
    /// taken.
    pub fn observe_unhooked_transcript(
        &mut self,
        cli: &str,
        session_id: &str,
        facts: TranscriptFacts,
        since_ns: u64,
    ) -> bool {
        let Some(key) = SessionKey::text_of(None, cli, Some(session_id), None) else {
            return false;
        };
        match self.sessions.get_mut(&key) {
            Some(session) if session.unhooked => {
                session.transcript = Some(facts);
                true
            }
            Some(_) => self.observe_transcript(&key, facts),
            None => {
                let session = Session::from_transcript(cli, session_id, facts, since_ns);
                self.sessions.insert(key, session);
                true
            }
        }
    }

    /// Every session's key and transcript path, for a follower of the transcripts.
    pub fn transcript_paths(&self) -> impl Iterator<Item = (&str, &Session, &str)> {
        self.sessions
            .iter()
            .filter_map(|(k, s)| Some((k.as_str(), s, s.transcript_path.as_deref()?)))
    }

    /// Forgets sessions that ended, or were last heard of, more than `age` before `now_ns`.
    pub fn forget_older_than(&mut self, age: Duration, now_ns: u64) {
        let cutoff = now_ns.saturating_sub(age.as_nanos() as u64);
        self.sessions.retain(|_, s| s.ts_ns >= cutoff);
        let sessions = &self.sessions;
        self.by_tag.retain(|_, key| sessions.contains_key(key));
    }

    /// The number of sessions tracked.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is tracked.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The entry of a tag in [`Tracker::by_tag`]: the tag, `<tag>@<host>` for another host's.
fn tag_name(tag: &str, host: Option<&str>) -> String {
    match host {
        Some(host) => format!("{tag}@{host}"),
        None => tag.to_owned(),
    }
}

/// The most recently active of `sessions` when they are all on one host; `None` when they are
/// on several (a name they share names none of them exactly) or there are none.
fn one_host(sessions: Vec<&Session>) -> Option<&Session> {
    let first = sessions.first()?;
    if sessions.iter().any(|s| s.key.host != first.key.host) {
        return None;
    }
    sessions.into_iter().max_by_key(|s| s.ts_ns)
}

impl Session {
    fn new(event: &Event, generation: Generation) -> Session {
        let evidence = Evidence::of(event, "new-session-starts-unknown");
        let state = State::Unknown(UnknownReason::NoEventYet);
        let mut session = Session::blank(
            event.session(),
            state,
            generation.started_ns.min(event.ts_ns),
            evidence,
        );
        session.cwd.clone_from(&event.cwd);
        session.host_pid = event.host_pid;
        session.transcript_path.clone_from(&event.transcript_path);
        session.ts_ns = 0;
        session.legacy_only = event.source.legacy;
        session
    }

    /// A session in `state` since `since_ns` by `evidence`, epoch 0, with nothing else known.
    fn blank(key: SessionKey, state: State, since_ns: u64, evidence: Evidence) -> Session {
        Session {
            key,
            cwd: None,
            host_pid: None,
            transcript_path: None,
            transcript: None,
            current: Current { state, since_ns, evidence: evidence.clone(), live: false },
            epoch: 0,
            seq: 0,
            ts_ns: since_ns,
            last_event: evidence,
            turn: Turn::default(),
            todos: TodoList::default(),
            retired_hosts: Vec::new(),
            slot_taken: false,
            moved_since_slot: false,
            history: VecDeque::new(),
            epoch_has_events: false,
            legacy_only: false,
            unhooked: false,
        }
    }

    /// A session no hook event has reported, known from its transcript alone: `unknown`,
    /// epoch 0, never authoritative; its first event starts its first epoch as usual.
    fn from_transcript(
        cli: &str,
        session_id: &str,
        facts: TranscriptFacts,
        since_ns: u64,
    ) -> Session {
        let evidence = Evidence {
            kind: "transcript".into(),
            native: None,
            seq: 0,
            file: facts.path.clone(),
            ts_ns: since_ns,
            rule: std::borrow::Cow::Borrowed("transcript-only-session-starts-unknown"),
            mapped_by: format!("transcript:{}", facts.format),
        };
        let key = SessionKey {
            cli: cli.to_owned(),
            session_id: Some(session_id.to_owned()),
            tag: None,
            host: None,
        };
        let state = State::Unknown(UnknownReason::TranscriptOnly);
        let mut session = Session::blank(key, state, since_ns, evidence);
        session.transcript_path = Some(facts.path.clone());
        session.transcript = Some(facts);
        session.unhooked = true;
        session
    }

    /// Whether no hook event has reported it: only its transcript is read.
    pub fn is_unhooked(&self) -> bool {
        self.unhooked
    }

    /// Records an echo; changes the state only to a more careful one (see the module docs).
    /// Returns the rule and whether the state changed.
    fn echo(
        &mut self,
        event: &Event,
        original: &SourceRef,
        profile: Option<&Profile>,
        keep: usize,
    ) -> (&'static str, bool) {
        let evidence = &self.current.evidence;
        let set_by_original = evidence.file == original.file && evidence.seq == original.seq;
        if set_by_original && self.current.state == State::Idle {
            let mut turn = self.turn.clone();
            if let (Effect::Enter(state), _) =
                rules::decide(profile, event, StateKind::Idle, &mut turn)
                && state != State::Idle
            {
                const RULE: &str = "echo-more-careful-than-its-first-copy";
                let entered = state.kind();
                self.turn = turn;
                self.slot_taken = false;
                self.moved_since_slot = false;
                // The echo repeats the first copy: it is as live as that one was.
                let live = self.current.live;
                self.current = Current {
                    state,
                    since_ns: event.ts_ns,
                    evidence: Evidence::of(event, RULE),
                    live,
                };
                self.record(event, RULE, Some(entered), keep);
                return (RULE, true);
            }
            if let Kind::Stop { pending_tasks, scheduled_wakes, .. } = &event.kind {
                let pending = &mut self.turn.pending;
                pending.tasks = pending.tasks.max(*pending_tasks);
                pending.wakes = pending.wakes.max(*scheduled_wakes);
            }
        }
        let rule = Ignored::Echo.rule();
        self.record(event, rule, None, keep);
        (rule, false)
    }

    /// Whether an event is older than the state: by seq for ordered events, by time for
    /// unordered and legacy ones, or from a producer the session has left.
    fn rejects(&self, event: &Event) -> Option<Ignored> {
        if event.host_pid.is_some_and(|pid| self.retired_hosts.contains(&pid)) {
            return Some(Ignored::OlderEpoch);
        }
        let ordered = !event.source.legacy
            && EventFileName::parse(&event.source.file).is_some_and(|name| name.is_ordered());
        if ordered && event.source.seq <= self.seq {
            return Some(Ignored::OlderSeq);
        }
        if !ordered && event.ts_ns < self.ts_ns {
            return Some(Ignored::Older);
        }
        None
    }

    /// Whether its last structured state is `ended`.
    pub fn ended(&self) -> bool {
        self.current.state.kind() == StateKind::Ended
    }

    /// What hookline read in its transcript, when it read it.
    pub fn transcript(&self) -> Option<&TranscriptFacts> {
        self.transcript.as_ref()
    }

    /// When its last applied structured event was written, in nanoseconds since the Unix
    /// epoch: transcript facts count only when they are newer.
    pub fn last_event_ns(&self) -> u64 {
        self.ts_ns
    }

    /// The last transitions, oldest first.
    pub fn history(&self) -> impl Iterator<Item = &Transition> {
        self.history.iter()
    }

    fn record(
        &mut self,
        event: &Event,
        rule: &'static str,
        entered: Option<StateKind>,
        keep: usize,
    ) {
        let evidence = Evidence::of(event, rule);
        self.last_event = evidence.clone();
        while self.history.len() >= keep {
            self.history.pop_front();
        }
        self.history.push_back(Transition { evidence, state: entered, epoch: self.epoch });
    }
}

#[cfg(test)]
mod echo_tests;
#[cfg(test)]
mod tests;
