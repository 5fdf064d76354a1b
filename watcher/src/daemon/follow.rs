//! Following a daemon's sessions from another process: a display (`top`, `tmux`, `notify`,
//! `web`) shows the daemon's live generation through `changes`, never a tracker of its own.
//! Nothing it asks takes a slot or counts toward anything.

use std::time::Duration;

use super::Client;
use crate::errors::ClientError;
use crate::protocol::Change;
use crate::state::View;

/// A daemon followed: where its feed was last read.
#[derive(Debug)]
pub struct Follower {
    client: Client,
    generation: u64,
    last: u64,
}

/// What a [`Follower`] read.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Update {
    /// The changes since the last read, oldest first.
    pub changes: Vec<Change>,
    /// Every session's view now, most recent first.
    pub sessions: Vec<View>,
    /// Changes lost since the last read: the follower fell too far behind.
    pub missed: u64,
    /// The daemon is another generation than at the last read (it restarted): the changes
    /// before are not its.
    pub restarted: bool,
}

impl Follower {
    /// Follows the daemon `client` talks to, from now: the first [`Follower::next`] hands out
    /// what changes after this call. Returns the sessions now.
    pub fn new(client: Client) -> Result<(Follower, Vec<View>), ClientError> {
        Follower::resume(client, None).map(|(follower, sessions, _)| (follower, sessions))
    }

    /// Follows from `position` (a [`Follower::position`] saved before) when it is this
    /// daemon generation's, else from now; says whether it resumed.
    pub fn resume(
        mut client: Client,
        position: Option<(u64, u64)>,
    ) -> Result<(Follower, Vec<View>, bool), ClientError> {
        let now = client.changes(None, Duration::ZERO, true)?;
        let resumed = position
            .filter(|(generation, last)| *generation == now.generation && *last <= now.last);
        let last = resumed.map_or(now.last, |(_, last)| last);
        let follower = Follower { client, generation: now.generation, last };
        Ok((follower, now.sessions.unwrap_or_default(), resumed.is_some()))
    }

    /// The changes after the last read, waiting up to `wait` for the first, with every
    /// session's view.
    pub fn next(&mut self, wait: Duration) -> Result<Update, ClientError> {
        let answer = self.client.changes(Some(self.last), wait, true)?;
        let restarted = answer.generation != self.generation;
        self.generation = answer.generation;
        self.last = answer.last;
        let changes = if restarted { Vec::new() } else { answer.changes };
        let sessions = answer.sessions.unwrap_or_default();
        Ok(Update { changes, sessions, missed: answer.missed, restarted })
    }

    /// The daemon's generation and the last change read: what [`Follower::resume`] takes.
    pub fn position(&self) -> (u64, u64) {
        (self.generation, self.last)
    }

    /// The connection, for other requests (`explain`).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}
