//! The central end: a durable JetStream consumer read as an [`EventSource`], with the local
//! directory's guarantees.
//!
//! * Each message is acknowledged only after the sink took its event; a message the sink did
//!   not take is redelivered (to this consumer's next reader).
//! * Each event is handed out once per reader: a redelivery of a message already taken and a
//!   republish that got past the server's duplicate window both carry a message id (host,
//!   directory id and seq) seen among the last [`RECENT_IDS`]: they are acknowledged and
//!   skipped.
//! * The messages already in the stream when the reader starts are *history*: with
//!   [`CentralOptions::history_before_ns`] set to a tracker generation's start, their time is
//!   clamped below it, so that no host's clock running ahead can make history authorize input.
//!   Only messages published after the reader started can; a history message redelivered
//!   after the reader caught up (a dead reader's, once its ack wait is over) is skipped rather
//!   than handed to such a tracker as if it had just arrived.
//! * Two readers never split one consumer's messages: a reader answers on
//!   `_HOOKLINE.reader.<stream>.<consumer>` while it runs, and a second one is refused
//!   ([`Error::ConsumerInUse`]).
//!
//! * One host can never speak for another: a message's host is the one its subject names
//!   (`<prefix>.<host>.<cli>.<session>`), which the server's permissions confine each
//!   forwarder to (`docs/fleet.md`). A message whose `Hookline-Host` header, body `host` or
//!   message id names another host is refused: acknowledged, counted and reported
//!   ([`FleetNotice::Refused`], with its message id and subject), never handed out.
//!
//! Each event handed out carries its host ([`Event::host`], from the subject), so that its
//! session is that host's alone, and its origin names it too: `origin.dir` becomes
//! `<host>:<the directory on that host>`.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;

use super::forward::sleep_unless;
use super::{Connection, FleetNotice, HOST_HEADER, RAW_HEADER, backoff, nats_error, token};
use crate::Error;
use crate::canonical::Event;
use crate::ingest::follow::EventSource;

/// How many message ids the reader remembers to drop republishes the server let through.
pub const RECENT_IDS: usize = 100_000;
/// How often the reader says how many messages it skipped (when it skipped any).
pub(crate) const SKIPS_EVERY: Duration = Duration::from_secs(5);
/// How long the server waits for an ack before it redelivers.
pub(crate) const ACK_WAIT: Duration = Duration::from_secs(30);

/// What a central reader reads.
#[derive(Debug, Clone)]
pub struct CentralOptions {
    /// The server.
    pub connection: Connection,
    /// The stream.
    pub stream: String,
    /// The durable consumer (created when missing, delivering the whole stream).
    pub consumer: String,
    /// Only subjects matching this (e.g. `hookline.build-3.>`); all when `None`.
    pub filter: Option<String>,
    /// A tracker generation's start: history messages get their time clamped below it.
    pub history_before_ns: Option<u64>,
    /// Keep reading live messages after the history (`false`: stop once caught up).
    pub follow: bool,
}

/// A durable consumer being read.
pub struct Central {
    rt: tokio::runtime::Runtime,
    consumer: consumer::PullConsumer,
    messages: Option<consumer::pull::Stream>,
    options: CentralOptions,
    notice: Arc<dyn Fn(FleetNotice) + Send + Sync>,
    /// The stream's last sequence when the reader started: up to it, messages are history.
    history_until: u64,
    history_read: u64,
    caught_up: bool,
    recent: RecentIds,
    skipped: u64,
    /// Messages refused because they named another host than their subject's.
    refused: u64,
    last_skip_report: std::time::Instant,
    attempt: u32,
    /// Messages whose events were handed out, acknowledged at the next commit.
    unacked: Vec<jetstream::Message>,
    /// The last message of the history is among `unacked`: caught up once it is committed.
    catch_up_after_commit: bool,
}

impl std::fmt::Debug for Central {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Central")
            .field("stream", &self.options.stream)
            .field("consumer", &self.options.consumer)
            .field("history_until", &self.history_until)
            .finish_non_exhaustive()
    }
}

impl Central {
    /// Connects, waits for the stream (with backoff, while the server cannot be reached or no
    /// forwarder has created it yet), claims the consumer and creates it when missing. `None`
    /// when `stop` said so meanwhile.
    pub fn open(
        options: CentralOptions,
        notice: Arc<dyn Fn(FleetNotice) + Send + Sync>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Central>, Error> {
        let rt = super::runtime()?;
        let client = rt.block_on(super::connect(&options.connection, notice.clone()))?;
        // The context spawns its acker on the runtime.
        let js = {
            let _in_runtime = rt.enter();
            jetstream::new(client.clone())
        };
        let (name, stream_name) = (options.consumer.clone(), options.stream.clone());
        let mut attempt = 0;
        let mut stream = loop {
            match rt.block_on(js.get_stream(&stream_name)) {
                Ok(stream) => break stream,
                Err(e) => {
                    let retry_in = backoff(attempt);
                    let what = format!("cannot read stream {stream_name}: {e}");
                    notice(FleetNotice::Waiting { what, retry_in });
                    if sleep_unless(stop, retry_in) {
                        return Ok(None);
                    }
                    attempt += 1;
                }
            }
        };
        rt.block_on(claim(&client, &stream_name, &name))?;
        let config = consumer::pull::Config {
            durable_name: Some(name.clone()),
            filter_subject: options.filter.clone().unwrap_or_default(),
            ack_policy: consumer::AckPolicy::Explicit,
            deliver_policy: consumer::DeliverPolicy::All,
            ack_wait: ACK_WAIT,
            ..Default::default()
        };
        // A cluster electing a leader times requests out for a while: retried like a server
        // that cannot be reached.
        let mut attempt = 0;
        let (history_until, consumer, pending) = loop {
            let opened = rt.block_on(async {
                let history_until = stream
                    .info()
                    .await
                    .map_err(|e| nats_error("read the state of stream", &stream_name, e))?
                    .state
                    .last_sequence;
                let mut consumer: consumer::PullConsumer = stream
                    .get_or_create_consumer(&name, config.clone())
                    .await
                    .map_err(|e| nats_error("create consumer", &name, e))?;
                let info =
                    consumer.info().await.map_err(|e| nats_error("read consumer", &name, e))?;
                let pending = info.num_pending + info.num_ack_pending as u64;
                Ok::<_, Error>((history_until, consumer, pending))
            });
            match opened {
                Ok(opened) => break opened,
                Err(e) => {
                    let retry_in = backoff(attempt);
                    notice(FleetNotice::Waiting { what: e.to_string(), retry_in });
                    if sleep_unless(stop, retry_in) {
                        return Ok(None);
                    }
                    attempt += 1;
                }
            }
        };
        let mut central = Central {
            rt,
            consumer,
            messages: None,
            options,
            notice,
            history_until,
            history_read: 0,
            caught_up: false,
            recent: RecentIds::default(),
            skipped: 0,
            refused: 0,
            last_skip_report: std::time::Instant::now(),
            attempt: 0,
            unacked: Vec::new(),
            catch_up_after_commit: false,
        };
        if pending == 0 {
            central.catch_up();
        }
        Ok(Some(central))
    }

    /// Whether every message that was in the stream when the reader started has been read.
    pub fn caught_up(&self) -> bool {
        self.caught_up
    }

    /// How many messages were refused so far because they named another host than the one
    /// their subject names.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    fn catch_up(&mut self) {
        if !self.caught_up {
            self.caught_up = true;
            (self.notice)(FleetNotice::CaughtUp { history: self.history_read });
        }
    }

    /// Reads the next message within `wait`: its event, with the message kept to be
    /// acknowledged at the next [`EventSource::commit`]; messages skipped on the way
    /// (already taken, raw, history arriving late, unreadable) are acknowledged at once.
    fn next_message(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if self.skipped > 0 && self.last_skip_report.elapsed() >= SKIPS_EVERY {
                self.report_skips();
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || self.caught_up && !self.options.follow {
                return Ok(None);
            }
            let Some(messages) = self.messages.as_mut() else {
                match self.rt.block_on(self.consumer.messages()) {
                    Ok(messages) => {
                        self.messages = Some(messages);
                        self.attempt = 0;
                    }
                    Err(e) => {
                        let retry_in = backoff(self.attempt);
                        let what = format!("cannot read consumer {}: {e}", self.options.consumer);
                        (self.notice)(FleetNotice::Waiting { what, retry_in });
                        std::thread::sleep(retry_in.min(left));
                        self.attempt += 1;
                    }
                }
                continue;
            };
            let next =
                self.rt.block_on(async { tokio::time::timeout(left, messages.next()).await });
            let message = match next {
                Err(_) => return Ok(None),
                Ok(None) => {
                    self.messages = None;
                    continue;
                }
                Ok(Some(Err(e))) => {
                    // Missed heartbeats while the server is away, mostly: the stream goes on
                    // by itself once it is back.
                    let consumer = &self.options.consumer;
                    (self.notice)(FleetNotice::Other(format!("consumer {consumer}: {e}")));
                    std::thread::sleep(backoff(0).min(left));
                    continue;
                }
                Ok(Some(Ok(message))) => message,
            };
            if let Some(event) = self.take(message) {
                return Ok(Some(event));
            }
        }
    }

    fn report_skips(&mut self) {
        self.last_skip_report = std::time::Instant::now();
        let why = "already taken, raw, history arriving late, or unreadable".to_owned();
        let count = std::mem::take(&mut self.skipped);
        (self.notice)(FleetNotice::Skipped { count, why });
    }

    /// One message: its event, to acknowledge once the sink took it; or skipped (and
    /// acknowledged now).
    fn take(&mut self, message: jetstream::Message) -> Option<Event> {
        let (stream_seq, pending) = match message.info() {
            Ok(info) => (info.stream_sequence, info.pending),
            Err(_) => (0, u64::MAX),
        };
        let history = stream_seq <= self.history_until;
        let header = |name: &str| {
            message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_owned())
        };
        // A redelivery and a republish both carry the message id of the event's origin.
        let id = header("Nats-Msg-Id").unwrap_or_else(|| format!("stream.{stream_seq}"));
        let raw = header(RAW_HEADER).is_some();
        let duplicate = self.recent.contains(&id);
        // History redelivered after the reader caught up (a dead reader's unacknowledged
        // messages, after their ack wait) would reach a tracker as if it had just arrived:
        // a tracker fed for decisions does not get it.
        let late_history = history && self.caught_up && self.options.history_before_ns.is_some();
        let subject = message.subject.to_string();
        let mut refusal = None;
        let event = (!raw && !duplicate && !late_history)
            .then(|| serde_json::from_slice::<Event>(&message.payload).ok())
            .flatten()
            .and_then(|mut event| {
                // The host is the subject's: what the server let this publisher publish on.
                let claims =
                    Claims { header: header(HOST_HEADER), body: event.host.take(), id: &id };
                let host = match host_of(&subject, &claims) {
                    Ok(host) => host,
                    Err(why) => {
                        refusal = Some(why);
                        return None;
                    }
                };
                event.source.dir = format!("{host}:{}", event.source.dir.display()).into();
                event.host = Some(host);
                if let Some(generation_ns) = self.options.history_before_ns.filter(|_| history) {
                    event.ts_ns = event.ts_ns.min(generation_ns.saturating_sub(1));
                }
                Some(event)
            });
        if let Some(why) = refusal {
            self.refused += 1;
            let (id, count) = (id.clone(), self.refused);
            (self.notice)(FleetNotice::Refused { id, subject, why, count });
        }
        self.recent.insert(id);
        if history {
            self.history_read += 1;
        }
        let catching_up = !self.caught_up && (pending == 0 || stream_seq >= self.history_until);
        match event {
            Some(event) => {
                self.unacked.push(message);
                // Caught up once this last message of the history is taken.
                self.catch_up_after_commit |= catching_up;
                Some(event)
            }
            None => {
                self.skipped += 1;
                self.ack(&message);
                if catching_up {
                    self.catch_up();
                }
                None
            }
        }
    }

    fn ack(&self, message: &jetstream::Message) {
        if let Err(e) = self.rt.block_on(message.ack()) {
            let consumer = &self.options.consumer;
            (self.notice)(FleetNotice::Other(format!("consumer {consumer}: ack: {e}")));
        }
    }
}

impl EventSource for Central {
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        if self.catch_up_after_commit && self.unacked.is_empty() {
            self.catch_up_after_commit = false;
            self.catch_up();
        }
        self.next_message(wait)
    }

    /// Acknowledges the messages whose events were handed out: only now, so that a crash
    /// before has them redelivered.
    fn commit(&mut self) -> Result<(), Error> {
        for message in std::mem::take(&mut self.unacked) {
            self.ack(&message);
        }
        if self.catch_up_after_commit {
            self.catch_up_after_commit = false;
            self.catch_up();
        }
        Ok(())
    }

    fn caught_up(&self) -> bool {
        self.caught_up
    }

    fn exhausted(&self) -> bool {
        self.caught_up && !self.options.follow && self.unacked.is_empty()
    }
}

impl Drop for Central {
    fn drop(&mut self) {
        if self.skipped > 0 {
            self.report_skips();
        }
    }
}

/// A central consumer as an engine's source: it connects (waiting with backoff for the
/// server and the stream) on its first read, then reads like [`Central`].
pub struct CentralSource {
    options: CentralOptions,
    notice: Arc<dyn Fn(FleetNotice) + Send + Sync>,
    central: Option<Central>,
    halt: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for CentralSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CentralSource").field("central", &self.central).finish_non_exhaustive()
    }
}

impl CentralSource {
    /// A source that will read `options`' consumer.
    pub fn new(options: CentralOptions, notice: Arc<dyn Fn(FleetNotice) + Send + Sync>) -> Self {
        CentralSource { options, notice, central: None, halt: Arc::default() }
    }
}

impl EventSource for CentralSource {
    fn next_event(&mut self, wait: Duration) -> Result<Option<Event>, Error> {
        if self.central.is_none() {
            let halt = Arc::clone(&self.halt);
            let stop = move || halt.load(std::sync::atomic::Ordering::Relaxed);
            self.central = Central::open(self.options.clone(), self.notice.clone(), &stop)?;
            if self.central.is_none() {
                return Ok(None);
            }
        }
        match &mut self.central {
            Some(central) => central.next_event(wait),
            None => Ok(None),
        }
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.central.as_mut().map_or(Ok(()), EventSource::commit)
    }

    fn caught_up(&self) -> bool {
        self.central.as_ref().is_some_and(|c| c.caught_up)
    }

    fn exhausted(&self) -> bool {
        self.central.as_ref().is_some_and(EventSource::exhausted)
    }

    fn halt_handle(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        Some(Arc::clone(&self.halt))
    }
}

/// What a message says about the host it comes from, besides its subject.
struct Claims<'a> {
    /// The `Hookline-Host` header.
    header: Option<String>,
    /// The event's own `host`.
    body: Option<String>,
    /// The message id (`<host>.<dir id>.<seq>` as a forwarder writes it).
    id: &'a str,
}

/// The host a message comes from: the one its subject names (`<prefix>.<host>.<cli>.<session>`,
/// the third token from the end); an error saying why when the subject has no host, or when
/// the header, the body or the message id names another.
fn host_of(subject: &str, claims: &Claims<'_>) -> Result<String, String> {
    let tokens: Vec<&str> = subject.split('.').collect();
    let host = match tokens.len() {
        n if n >= 4 => tokens[n - 3],
        _ => return Err(format!("subject {subject} names no host")),
    };
    let names = |claimed: &str| token(claimed) == host;
    if let Some(header) = claims.header.as_deref().filter(|h| !names(h)) {
        return Err(format!(
            "its {HOST_HEADER} header names host {header:?}, its subject {host:?}"
        ));
    }
    if let Some(body) = claims.body.as_deref().filter(|b| !names(b)) {
        return Err(format!("its event names host {body:?}, its subject {host:?}"));
    }
    let id_host = claims.id.split('.').next().unwrap_or_default();
    if !claims.id.starts_with("stream.") && id_host != host {
        return Err(format!("its message id names host {id_host:?}, its subject {host:?}"));
    }
    Ok(host.to_owned())
}

/// Claims a consumer for this process: refused when another reader answers on its subject;
/// then answers there itself for as long as the client lives.
async fn claim(client: &async_nats::Client, stream: &str, consumer: &str) -> Result<(), Error> {
    let subject = format!("_HOOKLINE.reader.{}.{}", token(stream), token(consumer));
    let me = format!("pid {} on {}", std::process::id(), super::hostname());
    let ask = client.request(subject.clone(), me.clone().into_bytes().into());
    // No responders (nobody reads it) is the common case; a reader too busy to answer
    // within the timeout is taken as gone.
    if let Ok(Ok(reply)) = tokio::time::timeout(Duration::from_secs(2), ask).await {
        let holder = String::from_utf8_lossy(&reply.payload).into_owned();
        return Err(Error::ConsumerInUse { name: consumer.to_owned(), holder });
    }
    let mut requests = client
        .subscribe(subject.clone())
        .await
        .map_err(|e| nats_error("subscribe to", &subject, e))?;
    let client = client.clone();
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            if let Some(reply) = request.reply {
                let _ = client.publish(reply, me.clone().into_bytes().into()).await;
            }
        }
    });
    Ok(())
}

/// The last [`RECENT_IDS`] message ids seen.
#[derive(Debug, Default)]
struct RecentIds {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl RecentIds {
    fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    fn insert(&mut self, id: String) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
            if self.order.len() > RECENT_IDS
                && let Some(old) = self.order.pop_front()
            {
                self.set.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims<'a>(header: Option<&str>, body: Option<&str>, id: &'a str) -> Claims<'a> {
        Claims { header: header.map(Into::into), body: body.map(Into::into), id }
    }

    #[test]
    fn the_host_is_the_subjects_and_a_message_naming_another_is_refused() {
        let subject = "hookline.ci-runner-7.claude.x";
        let own = claims(Some("ci-runner-7"), None, "ci-runner-7.d.1");
        assert_eq!(host_of(subject, &own).unwrap(), "ci-runner-7");
        assert!(host_of("a.b.hookline.h.claude.s", &own).unwrap_err().contains("header"));
        // A host name with a dot is a token with `_` in the subject.
        let dotted = claims(Some("build.3"), Some("build.3"), "build_3.d.1");
        assert_eq!(host_of("hookline.build_3.claude.s", &dotted).unwrap(), "build_3");
        let forged = [
            claims(Some("build-2"), None, "ci-runner-7.d.1"),
            claims(None, Some("build-2"), "ci-runner-7.d.1"),
            claims(Some("ci-runner-7"), Some("build-2"), "ci-runner-7.d.1"),
            claims(None, None, "build-2.d.1"),
        ];
        for (i, claims) in forged.iter().enumerate() {
            let why = host_of(subject, claims).unwrap_err();
            assert!(why.contains("build-2") && why.contains("ci-runner-7"), "{i}: {why}");
        }
        assert!(host_of("hookline.x", &own).is_err(), "a subject without a host");
        // No header, no body host, no message id of the forwarder's form: the subject's.
        assert_eq!(host_of(subject, &claims(None, None, "stream.9")).unwrap(), "ci-runner-7");
    }

    #[test]
    fn recent_ids_forget_the_oldest_beyond_their_bound() {
        let mut recent = RecentIds::default();
        for i in 0..=RECENT_IDS {
            recent.insert(format!("h.d.{i}"));
        }
        assert!(!recent.contains("h.d.0"));
        assert!(recent.contains("h.d.1"));
        assert!(recent.contains(&format!("h.d.{RECENT_IDS}")));
        assert_eq!(recent.order.len(), RECENT_IDS);
    }
}
