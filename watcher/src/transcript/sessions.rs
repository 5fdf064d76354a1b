//! The transcripts of every session a tracker knows: one [`Follower`] per session whose
//! events named a transcript and whose CLI's profile says how to read it.

use std::collections::HashMap;

use crate::state::{Tracker, TranscriptFacts};

use super::follower::Follower;
use super::tail::TailLimits;

/// Followers of the sessions' transcripts, kept between polls (`serve`, the daemon) or used
/// once (`status`, `explain`, one-shot `decide`).
#[derive(Debug, Default)]
pub struct Followers {
    limits: TailLimits,
    by_session: HashMap<String, Follower>,
}

impl Followers {
    /// Followers reading within `limits`.
    pub fn new(limits: TailLimits) -> Followers {
        Followers { limits, by_session: HashMap::new() }
    }

    /// How many transcripts are followed.
    pub fn len(&self) -> usize {
        self.by_session.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_session.is_empty()
    }

    /// Reads what each live session's transcript gained since the last poll and returns, per
    /// session key, the facts to hand to [`Tracker::observe_transcript`] (or
    /// [`Decider::observe_transcript`](crate::decide::Decider::observe_transcript)). A
    /// session that ended, or whose transcript changed path, drops its follower; a new
    /// follower reads its file's tail as history. A transcript that cannot be read is skipped
    /// (it can only ever have made an answer more careful), with the error returned beside.
    pub fn poll(
        &mut self,
        tracker: &Tracker,
        now_ns: u64,
    ) -> (Vec<(String, TranscriptFacts)>, Vec<crate::Error>) {
        let mut facts = Vec::new();
        let mut errors = Vec::new();
        let mut wanted = HashMap::new();
        for (key, session, path) in tracker.transcript_paths() {
            let Some(spec) =
                tracker.profiles().get(&session.key.cli).and_then(|p| p.transcript.as_ref())
            else {
                continue;
            };
            if session.ended() {
                continue;
            }
            wanted.insert(
                key.to_owned(),
                (path.to_owned(), spec.format, session.key.session_id.clone()),
            );
        }
        self.by_session.retain(|key, f| {
            wanted.get(key).is_some_and(|(path, _, _)| f.path().as_os_str() == path.as_str())
        });
        for (key, (path, format, session_id)) in wanted {
            let follower = self
                .by_session
                .entry(key.clone())
                .or_insert_with(|| Follower::new(&path, format, session_id, self.limits, now_ns));
            match follower.poll(now_ns) {
                Ok(_) if !follower.bound() => {}
                Ok(_) => facts.push((
                    key,
                    TranscriptFacts {
                        path,
                        format,
                        reading: follower.reading().clone(),
                        grew_ns: follower.grew_ns(),
                    },
                )),
                Err(e) => errors.push(e),
            }
        }
        (facts, errors)
    }
}
