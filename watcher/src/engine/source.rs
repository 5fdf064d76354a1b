//! Where an engine's events come from: an events directory (its history replayed, then
//! followed), a central consumer of many hosts' events (NATS JetStream), or events an embedder
//! pushes. Each one says when its history has been read ([`EventSource::caught_up`]): only
//! what arrives after that is live and can make a session eligible for input.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::Error;
use crate::canonical::Event;
use crate::ingest::follow::{EventSource, Prune};
use crate::ingest::reader::{ReaderConfig, Start};
use crate::ingest::watch::WatchOptions;

/// The source an engine reads.
#[allow(clippy::large_enum_variant)] // one per engine, moved once
pub enum Source {
    /// An events directory (and the legacy directories its reader names): what it holds is
    /// replayed as history (from a checkpoint when one fits), what arrives after is live.
    /// With a cursor ([`Start::Cursor`]), what the cursor covers is replayed and the rest is
    /// handed out as this consumer's news (see [`super::Step::news`]).
    Directory {
        /// The reader; its `start` says which consumer reads.
        reader: ReaderConfig,
        /// How the directory is watched.
        watch: WatchOptions,
        /// Pruning while following, when this consumer prunes.
        prune: Option<Prune>,
    },
    /// Any other source: it says itself when its history is read.
    Custom(Box<dyn EventSource + Send>),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Directory { reader, .. } => {
                f.debug_struct("Directory").field("events_dir", &reader.events_dir).finish()
            }
            Source::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Source {
    /// An events directory read from its beginning, watched with the default options.
    pub fn directory(reader: ReaderConfig) -> Source {
        let reader = ReaderConfig { start: Start::Beginning, ..reader };
        Source::Directory { reader, watch: WatchOptions::default(), prune: None }
    }
}

/// Events an embedder hands to an engine itself ([`pushed`]): everything pushed before
/// [`Pusher::history_done`] is history, shown but never authorizing; what is pushed after is
/// live. Forgetting to call it only ever makes the engine more careful.
#[derive(Debug)]
pub struct PushSource {
    events: Receiver<Pushed>,
    caught_up: bool,
    ended: bool,
}

/// The sending half of a [`PushSource`].
#[derive(Debug, Clone)]
pub struct Pusher {
    events: Sender<Pushed>,
}

#[derive(Debug)]
enum Pushed {
    Event(Box<Event>),
    HistoryDone,
}

/// A source fed by hand, and its sender.
pub fn pushed() -> (Pusher, PushSource) {
    let (tx, rx) = mpsc::channel();
    (Pusher { events: tx }, PushSource { events: rx, caught_up: false, ended: false })
}

impl Pusher {
    /// Hands one event to the engine. `false` when the engine is gone.
    pub fn push(&self, event: Event) -> bool {
        self.events.send(Pushed::Event(Box::new(event))).is_ok()
    }

    /// Says that every event pushed so far was history: what is pushed from now on has
    /// arrived since the engine started, and is live.
    pub fn history_done(&self) -> bool {
        self.events.send(Pushed::HistoryDone).is_ok()
    }
}

impl EventSource for PushSource {
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        if self.ended {
            std::thread::sleep(wait);
            return Ok(None);
        }
        let first = match self.events.recv_timeout(wait) {
            Ok(pushed) => pushed,
            Err(RecvTimeoutError::Timeout) => return Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                self.ended = true;
                return Ok(None);
            }
        };
        match first {
            Pushed::Event(event) => Ok(Some(*event)),
            Pushed::HistoryDone => {
                self.caught_up = true;
                Ok(None)
            }
        }
    }

    fn commit(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn caught_up(&self) -> bool {
        self.caught_up
    }

    fn exhausted(&self) -> bool {
        self.ended
    }
}
