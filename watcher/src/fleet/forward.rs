//! The forwarding end: a [`Sink`] that publishes each canonical event to JetStream and says
//! "delivered" only once the server acknowledged it, so the cursor is saved after the ack and
//! never before ([`Forwarder::follow`] saves it in small batches; any follow loop can drive
//! the sink one event at a time).
//!
//! While the server is down, [`Forwarder::deliver`](Sink::deliver) keeps retrying the same
//! event (same message id, so a copy that did reach the server is dropped) with backoff: the
//! follow loop reads nothing more meanwhile, so memory stays bounded by one event whatever the
//! length of the outage.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::{self, stream};

use super::{
    Connection, DIR_HEADER, FleetNotice, HOST_HEADER, RAW_HEADER, backoff, dir_stable_id,
    message_id, raw_subject, subject,
};
use crate::Error;
use crate::canonical::Event;
use crate::format::store::EventsDir;
use crate::ingest::follow::{
    Commit, Delivery, Ended, FollowNotice, Prune, Sink, SinkError, follow_with,
};
use crate::ingest::reader::Notice;
use crate::ingest::watch::Watcher;

/// [`Forwarder::follow`] saves its cursor after at most this many acknowledged events...
pub const COMMIT_EVERY: u64 = 64;
/// ...or this long after the first of them, and whenever the directory has nothing new.
pub const COMMIT_AFTER: Duration = Duration::from_millis(100);

/// How often the forwarder says how far behind it is, when it is behind at all (and at each
/// retry while the server does not acknowledge).
pub(crate) const LAG_EVERY: Duration = Duration::from_secs(5);
/// How long one publish waits for the server's ack before it is retried.
pub(crate) const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// What the stream keeps, when the forwarder creates it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Retention {
    /// Until the stream's limits (age) are reached: every consumer sees everything.
    #[default]
    Limits,
    /// Until every consumer has acknowledged.
    Interest,
    /// Until one consumer has acknowledged.
    WorkQueue,
}

/// How a forwarder publishes, and the stream it creates when missing.
#[derive(Debug, Clone)]
pub struct ForwardOptions {
    /// The server.
    pub connection: Connection,
    /// The events directory (its stable id is part of each message id).
    pub events_dir: PathBuf,
    /// The stream's name.
    pub stream: String,
    /// The subject prefix.
    pub prefix: String,
    /// This host's name: in each subject, message id and central origin.
    pub host: String,
    /// Also publish each raw envelope on `<prefix>_raw.…`.
    pub raw: bool,
    /// The stream's retention, when it is created.
    pub retention: Retention,
    /// The stream's replicas, when it is created.
    pub replicas: usize,
    /// The oldest message the stream keeps, when it is created (zero: no limit).
    pub max_age: Duration,
}

/// Publishes canonical events to JetStream; a [`Sink`] for [`follow`](crate::ingest::follow).
pub struct Forwarder {
    rt: tokio::runtime::Runtime,
    js: jetstream::Context,
    options: ForwardOptions,
    dir_id: String,
    notice: Arc<dyn Fn(FleetNotice) + Send + Sync>,
    stop: Box<dyn Fn() -> bool + Send>,
    last_lag: Instant,
    duplicates: u64,
    published: u64,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("stream", &self.options.stream)
            .field("host", &self.options.host)
            .field("dir_id", &self.dir_id)
            .field("published", &self.published)
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    /// Connects and makes sure the stream exists (creating it when missing), waiting with
    /// backoff while the server cannot be reached. `None` when `stop` said so meanwhile.
    pub fn connect(
        options: ForwardOptions,
        notice: Arc<dyn Fn(FleetNotice) + Send + Sync>,
        stop: Box<dyn Fn() -> bool + Send>,
    ) -> Result<Option<Forwarder>, Error> {
        let rt = super::runtime()?;
        let dir_id = dir_stable_id(&options.events_dir)?;
        let mut connection = options.connection.clone();
        connection.inbox_prefix.get_or_insert_with(|| super::forwarder_inbox(&options.host));
        let client = rt.block_on(super::connect(&connection, notice.clone()))?;
        let mut js = {
            let _in_runtime = rt.enter();
            jetstream::new(client)
        };
        js.set_timeout(ACK_TIMEOUT);
        let mut subjects = vec![format!("{}.>", options.prefix)];
        if options.raw {
            subjects.push(format!("{}_raw.>", options.prefix));
        }
        let config = stream::Config {
            name: options.stream.clone(),
            subjects,
            retention: match options.retention {
                Retention::Limits => stream::RetentionPolicy::Limits,
                Retention::Interest => stream::RetentionPolicy::Interest,
                Retention::WorkQueue => stream::RetentionPolicy::WorkQueue,
            },
            num_replicas: options.replicas.max(1),
            max_age: options.max_age,
            storage: stream::StorageType::File,
            ..Default::default()
        };
        let mut attempt = 0;
        loop {
            match rt.block_on(js.get_or_create_stream(config.clone())) {
                Ok(_) => break,
                Err(e) => {
                    let retry_in = backoff(attempt);
                    let what = format!("cannot reach stream {}: {e}", options.stream);
                    notice(FleetNotice::Waiting { what, retry_in });
                    if sleep_unless(&*stop, retry_in) {
                        return Ok(None);
                    }
                    attempt += 1;
                }
            }
        }
        let forwarder = Forwarder {
            rt,
            js,
            options,
            dir_id,
            notice,
            stop,
            last_lag: Instant::now(),
            duplicates: 0,
            published: 0,
        };
        Ok(Some(forwarder))
    }

    /// Follows `watcher` into the stream until `stop` says so, like
    /// [`follow`](crate::ingest::follow::follow) but saving the cursor after every
    /// [`COMMIT_EVERY`] acknowledged events, [`COMMIT_AFTER`], or when the directory has
    /// nothing new, rather than after each one: a durable save costs two `fsync`s, and a
    /// republish after a crash is harmless (the server drops it by its message id). The cursor
    /// never gets ahead of the server's acks; it may lag behind them by up to
    /// [`COMMIT_EVERY`] events, which a crash hands out again.
    pub fn follow(
        &mut self,
        watcher: &mut Watcher,
        prune: Option<&Prune>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Ended, Error> {
        let commit = Commit::Batched { every: COMMIT_EVERY, after: COMMIT_AFTER };
        follow_with(watcher, self, commit, prune, stop)
    }

    /// Events the server acknowledged so far (duplicates included).
    pub fn published(&self) -> u64 {
        self.published
    }

    /// Says what is still to be said (the duplicates dropped since the last report).
    pub fn finish(&mut self) {
        if self.duplicates > 0 {
            (self.notice)(FleetNotice::DuplicatesDropped(std::mem::take(&mut self.duplicates)));
        }
    }

    /// Publishes one message until the server acknowledges it; `false` when stopped first.
    fn publish(
        &mut self,
        event: &Event,
        subject: String,
        id: String,
        raw: bool,
        payload: Vec<u8>,
    ) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", id.as_str());
        headers.insert(HOST_HEADER, self.options.host.as_str());
        headers.insert(DIR_HEADER, self.dir_id.as_str());
        if raw {
            headers.insert(RAW_HEADER, "1");
        }
        let mut attempt = 0;
        loop {
            if (self.stop)() {
                return false;
            }
            let (js, subject, headers) = (&self.js, subject.clone(), headers.clone());
            let payload = payload.clone().into();
            let result = self.rt.block_on(async {
                js.publish_with_headers(subject, headers, payload).await?.await
            });
            match result {
                Ok(ack) => {
                    self.duplicates += u64::from(ack.duplicate);
                    return true;
                }
                Err(e) => {
                    let retry_in = backoff(attempt);
                    let what = format!("publish {id} to {}: {e}", self.options.stream);
                    (self.notice)(FleetNotice::Waiting { what, retry_in });
                    self.report_lag(event, false);
                    if sleep_unless(&*self.stop, retry_in) {
                        return false;
                    }
                    attempt += 1;
                }
            }
        }
    }

    /// Says how many events of the directory are not yet in the stream, counting `event`
    /// unless it was `acked`.
    fn report_lag(&mut self, event: &Event, acked: bool) {
        self.last_lag = Instant::now();
        self.finish();
        let max = EventsDir::open(&self.options.events_dir).and_then(|d| d.max_seq());
        let behind = max.map_or(0, |max| max.saturating_sub(event.source.seq) + u64::from(!acked));
        if behind > 0 {
            let age_ms = crate::format::clock::now_ns().saturating_sub(event.ts_ns) / 1_000_000;
            (self.notice)(FleetNotice::Lag { events: behind, age_ms });
        }
    }
}

impl Sink for Forwarder {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        let (host, prefix) = (self.options.host.clone(), self.options.prefix.clone());
        let id = message_id(&host, &self.dir_id, &event);
        if self.options.raw {
            let file = crate::ingest::source::event_path(&event.source);
            // A file pruned meanwhile has no raw envelope left to send; its event still goes.
            if let Ok((bytes, _)) = crate::ingest::source::read_file(&file) {
                let subject = raw_subject(&prefix, &host, &event);
                if !self.publish(&event, subject, format!("raw.{id}"), true, bytes) {
                    return Ok(Delivery::Closed);
                }
            }
        }
        let subject = subject(&prefix, &host, &event);
        let payload = serde_json::to_vec(&event)?;
        if !self.publish(&event, subject, id, false, payload) {
            return Ok(Delivery::Closed);
        }
        self.published += 1;
        if self.last_lag.elapsed() >= LAG_EVERY {
            self.report_lag(&event, true);
        }
        Ok(Delivery::Delivered)
    }

    fn notice(&mut self, notice: FollowNotice) {
        if let FollowNotice::Reader(Notice::DirRecreated(_)) = &notice {
            // A new directory starts its seqs again: it needs a new id, or its events would be
            // dropped as the old one's.
            match dir_stable_id(&self.options.events_dir) {
                Ok(id) => self.dir_id = id,
                Err(e) => (self.notice)(FleetNotice::Other(format!("{e}"))),
            }
        }
        (self.notice)(FleetNotice::Follow(notice));
    }
}

/// Sleeps `total` in short steps; `true` when `stop` said so first.
pub(crate) fn sleep_unless(stop: &dyn Fn() -> bool, total: Duration) -> bool {
    let until = Instant::now() + total;
    loop {
        if stop() {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
