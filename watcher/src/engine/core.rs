//! What an engine holds between its source and its callers: the decider (one tracker
//! generation, the policy, the journal, the leases), the per-session queues `next_event` hands
//! out from, and whether events still arrive. Applying events is the engine's alone.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use crate::canonical::Event;
use crate::decide::{Decider, Policy};
use crate::format::clock::now_ns;
use crate::profile::Profiles;
use crate::protocol::{Change, FEED_LEN, QUEUE_PER_SESSION};
use crate::state::{Applied, View};
use crate::transcript::TranscriptFacts;

/// Live events kept per session for [`super::Running::wait_for`], besides the `next_event`
/// queue.
pub const RECENT_PER_SESSION: usize = 32;

/// What `next_event` hands out: an event, or a transition no event caused (the session's
/// transcript made its state more careful).
#[derive(Debug, Clone)]
pub(crate) enum Queued {
    Event(Box<Event>),
    Transcript(Box<View>),
}

#[derive(Debug, Default)]
pub(crate) struct Queue {
    pub(crate) items: VecDeque<Queued>,
    pub(crate) dropped: u64,
    /// The last [`RECENT_PER_SESSION`] live events, whether handed out or not.
    pub(crate) recent: VecDeque<Event>,
}

impl Queue {
    fn push(&mut self, item: Queued) {
        if self.items.len() >= QUEUE_PER_SESSION {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(item);
    }
}

/// Where an engine's state comes from, for `hello` and a reload.
#[derive(Debug, Clone, Default)]
pub struct EngineInfo {
    /// The events directory (for a central, the local one its daemon socket lives in).
    pub events_dir: PathBuf,
    /// The journal, when there is one.
    pub journal: Option<PathBuf>,
}

/// The changes `changes` hands out: the last [`FEED_LEN`], numbered from 1.
#[derive(Debug, Default)]
pub(crate) struct Feed {
    pub(crate) changes: VecDeque<Change>,
    /// The number of the last change.
    pub(crate) last: u64,
}

impl Feed {
    fn push(&mut self, event: Option<Event>, view: Option<View>) {
        self.last += 1;
        if self.changes.len() >= FEED_LEN {
            self.changes.pop_front();
        }
        let (event, view) = (event.map(Box::new), view.map(Box::new));
        self.changes.push_back(Change { seq: self.last, event, view });
    }

    /// The changes after `after`, and how many of them are no longer kept.
    pub(crate) fn after(&self, after: u64) -> (Vec<Change>, u64) {
        let first = self.changes.front().map_or(self.last + 1, |c| c.seq);
        let missed = first.saturating_sub(after + 1);
        let changes = self.changes.iter().filter(|c| c.seq > after).cloned().collect();
        (changes, missed)
    }
}

/// The decider and what it serves, behind the engine.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) decider: Decider,
    pub(crate) queues: HashMap<String, Queue>,
    /// What `changes` hands out.
    pub(crate) feed: Feed,
    pub(crate) info: EngineInfo,
    /// Why events stopped arriving, once they did: every answer that depends on fresh state
    /// is refused from then on.
    pub(crate) failure: Option<String>,
}

impl Core {
    pub(crate) fn new(decider: Decider, info: EngineInfo) -> Core {
        Core { decider, queues: HashMap::new(), feed: Feed::default(), info, failure: None }
    }

    /// Applies one event; a live one (applied after the source caught up) also goes to its
    /// session's `next_event` queue.
    pub(crate) fn apply(&mut self, event: &Event) -> Applied {
        let applied = self.decider.apply(event);
        if self.decider.is_live()
            && let Some(key) = &applied.session
        {
            let queue = self.queues.entry(key.clone()).or_default();
            queue.push(Queued::Event(Box::new(event.clone())));
            if queue.recent.len() >= RECENT_PER_SESSION {
                queue.recent.pop_front();
            }
            queue.recent.push_back(event.clone());
            let view = self.decider.tracker().view_by_key(key, now_ns());
            self.feed.push(Some(event.clone()), view);
        }
        applied
    }

    /// Says the source's history has been read: what is applied from now on is live.
    pub(crate) fn catch_up(&mut self) {
        self.decider.caught_up();
    }

    /// Records what the sessions' transcripts gained; a session whose state it changed gets
    /// the transition in its `next_event` queue. Returns whether any did.
    pub(crate) fn observe_transcripts(
        &mut self,
        facts: Vec<(String, TranscriptFacts)>,
        unhooked: Vec<(String, String, TranscriptFacts, u64)>,
        now_ns: u64,
    ) -> bool {
        let mut changed = false;
        let tracker_view = |core: &Core, key: &str| core.decider.tracker().view_by_key(key, now_ns);
        for (key, facts) in facts {
            let before = tracker_view(self, &key).map(|v| shape(&v));
            self.decider.observe_transcript(&key, facts);
            let after = tracker_view(self, &key);
            if let Some(view) = after.filter(|v| Some(shape(v)) != before) {
                changed = true;
                if self.decider.is_live() {
                    self.feed.push(None, Some(view.clone()));
                    let queue = self.queues.entry(key).or_default();
                    queue.push(Queued::Transcript(Box::new(view)));
                }
            }
        }
        for (cli, id, facts, since) in unhooked {
            self.decider.observe_unhooked_transcript(&cli, &id, facts, since);
        }
        changed
    }

    /// Takes the policy and the profiles of a reload, keeping the generation, its sessions and
    /// its leases.
    pub(crate) fn reload(
        &mut self,
        policy: Policy,
        profiles: Profiles,
        journal: Option<crate::decide::Journal>,
    ) {
        self.info.journal = journal.as_ref().map(|j| j.path().to_owned());
        self.decider.reload(policy, profiles, journal);
    }
}

/// What a waiter would see change: the state, its detail and what set it.
fn shape(view: &View) -> (crate::state::StateKind, Option<String>, String, u64) {
    (view.state, view.detail.clone(), view.evidence.kind.clone(), view.evidence.ts_ns)
}
