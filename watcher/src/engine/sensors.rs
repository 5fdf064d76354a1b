//! Evidence an engine gathers beside the events: what the sessions' transcripts add (read off
//! its lock), and what a session's tmux pane shows when a question names it. Both can only
//! make an answer more careful.

use std::time::Duration;

use super::core::Core;
use crate::Error;
use crate::decide::{Ask, Question};
use crate::pane::{self, TmuxPane};
use crate::profile::PanePatterns;
use crate::state::Tracker;
use crate::transcript::{Followers, TranscriptFacts, Unhooked, Wanted};

/// How many looks at a pane make the reading a decision or a delivery takes.
pub const PANE_SAMPLES: usize = 3;
/// The pause between those looks.
pub const PANE_GAP: Duration = Duration::from_millis(80);

/// The transcripts an engine follows.
#[derive(Debug)]
pub(crate) struct Sensors {
    enabled: bool,
    followers: Followers,
    unhooked: Vec<Unhooked>,
}

/// What the transcripts gained since the last read, to hand to the core.
pub(crate) struct Gained {
    pub(crate) facts: Vec<(String, TranscriptFacts)>,
    pub(crate) unhooked: Vec<(String, String, TranscriptFacts, u64)>,
}

impl Sensors {
    pub(crate) fn new(enabled: bool, unhooked: Vec<Unhooked>) -> Sensors {
        Sensors { enabled, followers: Followers::default(), unhooked }
    }

    /// What to read: taken under the core's lock, quickly.
    pub(crate) fn wanted(&self, tracker: &Tracker) -> Vec<Wanted> {
        if self.enabled { tracker.transcripts_wanted() } else { Vec::new() }
    }

    /// Reads the transcripts `wanted` names and the fallback producers' directories: file
    /// reads, done holding no lock.
    pub(crate) fn read(&mut self, wanted: Vec<Wanted>, now_ns: u64) -> Gained {
        let (facts, _unreadable) = self.followers.poll_wanted(wanted, now_ns);
        let mut unhooked = Vec::new();
        for producer in &mut self.unhooked {
            let (found, _unreadable) = producer.read(now_ns);
            let cli = producer.cli().to_owned();
            unhooked.extend(
                found.into_iter().map(|(id, facts, since)| (cli.clone(), id, facts, since)),
            );
        }
        Gained { facts, unhooked }
    }

    /// Reads and applies at once: an engine no other thread shares.
    pub(crate) fn poll_once(&mut self, core: &mut Core, now_ns: u64) -> bool {
        let wanted = self.wanted(core.decider.tracker());
        let gained = self.read(wanted, now_ns);
        core.observe_transcripts(gained.facts, gained.unhooked, now_ns)
    }

    /// Whether there is anything to read at all.
    pub(crate) fn active(&self) -> bool {
        self.enabled || !self.unhooked.is_empty()
    }
}

/// A session's tmux pane to read before answering: what it shows is added to the caller's
/// pane evidence, read with the `[pane]` patterns of the session's CLI (every profile's
/// together when the session has no events yet).
#[derive(Debug, Clone)]
pub struct PaneSensing {
    /// The pane.
    pub tmux: TmuxPane,
}

impl PaneSensing {
    /// Reads the pane for `ask`.
    pub fn new(tmux: TmuxPane) -> PaneSensing {
        PaneSensing { tmux }
    }

    /// The patterns to read the pane of `session` with.
    pub(crate) fn patterns(tracker: &Tracker, session: &str) -> PanePatterns {
        let profiles = tracker.profiles();
        let now = crate::format::clock::now_ns();
        match tracker.view(session, now).and_then(|v| profiles.get(&v.cli)) {
            Some(profile) => profile.pane.clone(),
            None => pane::union(profiles.iter().map(|p| &p.pane)),
        }
    }

    /// Reads the pane with `patterns` and adds what it shows to `ask`'s pane evidence; with
    /// `screen`, the last screenful too (for the classifier's `crashed` consult).
    pub(crate) fn read_with(
        &self,
        mut ask: Ask,
        patterns: &PanePatterns,
        screen: bool,
    ) -> Result<Ask, Error> {
        let pane = self.tmux.pane();
        let reading = pane.sense_settled(patterns, PANE_SAMPLES, PANE_GAP)?;
        // A pane whose program has exited (a CLI killed at its prompt fires nothing) has
        // nothing to type into: input and a nudge are withheld (`window-dead`). Only for the
        // questions that type: for `crashed` a dead pane would be a permissive answer, which
        // pane evidence may never give.
        if matches!(ask.question, Question::Input | Question::Nudge) && pane.is_dead()? {
            ask.window_dead = Some(true);
        }
        let mut evidence = reading.evidence;
        if screen && ask.question == Question::Crashed {
            evidence.screen = Some(pane::strip_escapes(&pane.capture()?));
        }
        ask.pane = Some(evidence.or(ask.pane));
        Ok(ask)
    }

    /// Reads the pane with the patterns of the session's CLI in `tracker` (with the last
    /// screenful, for a `crashed` consult, when `classifier` says one is configured) and adds
    /// what it shows to `ask`'s pane evidence.
    pub fn read_into(&self, ask: Ask, tracker: &Tracker, classifier: bool) -> Result<Ask, Error> {
        let patterns = PaneSensing::patterns(tracker, &ask.session);
        self.read_with(ask, &patterns, classifier)
    }
}
