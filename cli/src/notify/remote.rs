//! `hookline notify` over a daemon (a `daemon --nats` central's too): the daemon's sessions,
//! followed through `changes` ([`hookline::daemon::follow`]), fire the rules here; the daemon
//! runs none itself, so nothing fires twice.
//!
//! Once per transition, across restarts: where the notifier got to in the daemon's feed (the
//! daemon's generation and the last change) and in the decision journal is saved, atomically,
//! in [`Position::default_path`] after each batch. A restarted notifier goes on from there
//! when the daemon is the same generation and still holds those changes; else it learns the
//! states as they are, firing nothing, like a new cursor. A transition (the rule, the session,
//! when the state began) that the notify journal says fired already never fires again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::deliveries::Deliveries;
use super::{Mode, Notifier, Seen};
use hookline::Error;
use hookline::daemon::Client;
use hookline::daemon::follow::Follower;
use hookline::format::clock::now_ns;

/// How long one read of the daemon's feed waits for a change.
pub const WAIT: Duration = super::live::TICK;

/// Where a notifier got to, saved between runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The daemon's generation and the last change handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<(u64, u64)>,
    /// The newest delivery handled (nanoseconds since the Unix epoch).
    #[serde(default)]
    pub deliveries_ns: u64,
}

impl Position {
    /// The file beside an events directory: `<events dir>.notify.position.json`.
    pub fn default_path(events_dir: &Path) -> PathBuf {
        let mut name = events_dir.file_name().unwrap_or("events".as_ref()).to_os_string();
        name.push(".notify.position.json");
        events_dir.with_file_name(name)
    }

    /// The position saved at `path`; `None` when there is none (or it cannot be read).
    pub fn load(path: &Path) -> Option<Position> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Saves it at `path`, atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let bytes = serde_json::to_vec(self).map_err(|e| Error::Io {
            op: "encode",
            path: path.to_owned(),
            source: e.into(),
        })?;
        hookline::fsutil::write_atomic(path, &bytes, 0o600)
    }
}

/// Follows the daemon `client` talks to until `stop` says so, firing `notifier`'s rules on its
/// sessions' transitions and on the unconfirmed deliveries of `journal` (the daemon's decision
/// journal); `position` is where the notifier's position is kept. `note` hears what the
/// operator should know.
pub fn run(
    client: Client,
    mut notifier: Notifier,
    journal: Option<PathBuf>,
    position: &Path,
    stop: &dyn Fn() -> bool,
    note: &dyn Fn(String),
) -> Result<(), Error> {
    let saved = Position::load(position);
    let socket = client.socket().to_owned();
    let lost = |e: hookline::ClientError| Error::EventsStopped { why: crate::error_chain(&e) };
    let (mut follower, now, resumed) =
        Follower::resume(client, saved.and_then(|p| p.daemon)).map_err(lost)?;
    if !resumed {
        // A new notifier, or a daemon restarted: the states as they are, firing nothing.
        let seen: Vec<Seen> = now.iter().map(Seen::from).collect();
        notifier.tick_seen(&seen, now_ns(), Mode::Prime);
    }
    let deliveries_ns = saved.map_or_else(now_ns, |p| p.deliveries_ns);
    let mut deliveries = journal.map(|path| Deliveries::new(path, deliveries_ns));
    let mut at = Position { daemon: Some(follower.position()), deliveries_ns };
    note(format!(
        "following the daemon at {}{}",
        socket.display(),
        if resumed { " from where the last notifier stopped" } else { "" }
    ));
    while !stop() {
        let update = match follower.next(WAIT) {
            Ok(update) => update,
            Err(e) => return Err(lost(e)),
        };
        if update.restarted {
            note("the daemon restarted: learning its states, firing nothing".into());
            let seen: Vec<Seen> = update.sessions.iter().map(Seen::from).collect();
            notifier.tick_seen(&seen, now_ns(), Mode::Prime);
        }
        if update.missed > 0 {
            note(format!("{} changes were lost while this notifier lagged", update.missed));
        }
        let now = now_ns();
        for change in &update.changes {
            if let Some(view) = &change.view {
                notifier.observe_seen(
                    &Seen::from(&**view),
                    change.event.as_deref(),
                    now,
                    Mode::Fire,
                );
            }
        }
        let seen: Vec<Seen> = update.sessions.iter().map(Seen::from).collect();
        notifier.tick_seen(&seen, now, Mode::Fire);
        if let Some(deliveries) = &mut deliveries {
            for record in deliveries.unconfirmed() {
                let session = seen
                    .iter()
                    .find(|s| {
                        let names = [s.session_id.as_deref(), s.tag.as_deref()];
                        names.contains(&Some(record.session.as_str()))
                            || record.session.rsplit_once('@').is_some_and(|(name, host)| {
                                s.host.as_deref() == Some(host)
                                    && [s.session_id.as_deref(), s.tag.as_deref()]
                                        .contains(&Some(name))
                            })
                    })
                    .cloned()
                    .unwrap_or_else(|| super::live::unknown(&record.session));
                notifier.delivery_unconfirmed_seen(&session, record.ts_ns, &record.reason, now);
            }
        }
        let next = Position {
            daemon: Some(follower.position()),
            deliveries_ns: deliveries.as_ref().map_or(at.deliveries_ns, Deliveries::after_ns),
        };
        if next != at {
            if let Err(e) = next.save(position) {
                note(format!(
                    "the notifier's position was not saved ({e}): a restart may fire again"
                ));
            }
            at = next;
        }
    }
    Ok(())
}
