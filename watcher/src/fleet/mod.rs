//! Many machines: canonical events from a fleet of agent hosts through NATS JetStream.
//!
//! Each host keeps its events directory (the relay never touches the network). A
//! [`forward::Forwarder`] follows that directory with a cursor of its own and publishes each
//! canonical event to a JetStream stream; a [`central::Central`] reads a durable consumer of
//! that stream into the same [`Sink`](crate::ingest::follow::Sink)s as the local directory
//! (`hookline watch`, the `hookline serve` hub, a tracker of your own). See `docs/fleet.md`.
//!
//! * Subjects: `<prefix>.<host>.<cli>.<session>` ([`subject`]); raw envelopes, when asked for,
//!   on `<prefix>_raw.<host>.<cli>.<session>`.
//! * Message ids: `<host>.<dir id>.<seq>` ([`message_id`]), where the directory id is a random
//!   word stored in the directory ([`dir_stable_id`]): a republish after a crash is dropped by
//!   the server within the stream's duplicate window, and by the central reader's own memory of
//!   recent ids after it.
//! * The forwarder saves its cursor only after the server acknowledged the publish; the central
//!   reader acknowledges a message only after its sink took the event.
//!
//! The client is the official `async-nats`, on a small tokio runtime owned by each end.

pub mod central;
pub mod forward;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::Error;
use crate::canonical::Event;
use crate::format::filename::EventFileName;

/// The stream's default name.
pub const DEFAULT_STREAM: &str = "HOOKLINE";
/// The default subject prefix.
pub const DEFAULT_PREFIX: &str = "hookline";
/// The file in an events directory that holds its stable id (hidden: the reader skips it).
pub const DIR_ID_FILE: &str = ".hookline-dir-id";
/// Header naming the host an event came from.
pub(crate) const HOST_HEADER: &str = "Hookline-Host";
/// Header carrying the events directory's stable id.
pub(crate) const DIR_HEADER: &str = "Hookline-Dir-Id";
/// Header marking a raw envelope (not a canonical event).
pub(crate) const RAW_HEADER: &str = "Hookline-Raw";

/// How to reach the NATS server: its URL and the credentials the client presents.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// `nats://host:port`, `tls://host:port`, or several separated by commas.
    pub url: String,
    /// A `.creds` file (a user JWT and its NKey seed).
    pub creds: Option<PathBuf>,
    /// A file holding an NKey seed (`SU…`).
    pub nkey: Option<PathBuf>,
    /// A PEM file of CA certificates to trust (TLS is then required).
    pub tls_ca: Option<PathBuf>,
    /// The prefix of the client's reply subjects (`_INBOX` when `None`). A forwarder uses
    /// `_INBOX.<host>`, so that the server can let it read its own acks and nobody else's
    /// replies (see `docs/fleet.md`).
    pub inbox_prefix: Option<String>,
}

/// The reply-subject prefix of a forwarder for `host`: `_INBOX.<host>`.
pub(crate) fn forwarder_inbox(host: &str) -> String {
    format!("_INBOX.{}", token(host))
}

/// Something the NATS side tells its operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetNotice {
    /// The client connected (or reconnected) to the server.
    Connected(String),
    /// The client lost the server; it reconnects by itself.
    Disconnected(String),
    /// Waiting for the server (or the stream) before going on.
    Waiting {
        /// What failed.
        what: String,
        /// The next try is in this long.
        retry_in: Duration,
    },
    /// The forwarder is this far behind its events directory.
    Lag {
        /// Events written but not yet acknowledged by the server.
        events: u64,
        /// Age of the event being published, in milliseconds.
        age_ms: u64,
    },
    /// The server dropped republished events it already had (a restart after a crash).
    DuplicatesDropped(u64),
    /// The central reader skipped messages it had applied already, or could not read.
    Skipped {
        /// How many.
        count: u64,
        /// Why.
        why: String,
    },
    /// The central reader refused a message that named another host than its subject's:
    /// one host never speaks for another. Acknowledged and dropped.
    Refused {
        /// The message id.
        id: String,
        /// The subject it arrived on.
        subject: String,
        /// Which host it named where.
        why: String,
        /// How many messages this reader refused so far.
        count: u64,
    },
    /// The central reader caught up with the messages that were in the stream when it started
    /// (history, which never authorizes input); what follows arrives live.
    CaughtUp {
        /// How many history messages it read.
        history: u64,
    },
    /// A notice of the follow loop reading the events directory.
    Follow(crate::ingest::follow::FollowNotice),
    /// Anything else worth a line on stderr.
    Other(String),
}

impl FleetNotice {
    /// Whether it is a warning (something works less well than it should) rather than news.
    pub fn is_warning(&self) -> bool {
        match self {
            FleetNotice::Disconnected(_)
            | FleetNotice::Waiting { .. }
            | FleetNotice::Refused { .. } => true,
            FleetNotice::Follow(notice) => notice.is_warning(),
            _ => false,
        }
    }
}

impl std::fmt::Display for FleetNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FleetNotice::Connected(url) => write!(f, "connected to {url}"),
            FleetNotice::Disconnected(url) => write!(f, "lost {url}; reconnecting"),
            FleetNotice::Waiting { what, retry_in } => {
                write!(f, "{what}; retrying in {} ms", retry_in.as_millis())
            }
            FleetNotice::Lag { events, age_ms } => {
                write!(f, "{events} events behind (the one being sent is {age_ms} ms old)")
            }
            FleetNotice::DuplicatesDropped(n) => {
                write!(f, "the server dropped {n} republished events it already had")
            }
            FleetNotice::Skipped { count, why } => write!(f, "skipped {count} messages: {why}"),
            FleetNotice::Refused { id, subject, why, count } => write!(
                f,
                "refused message {id} on {subject}: {why} (one host never speaks for another; \
                 {count} refused so far)"
            ),
            FleetNotice::CaughtUp { history } => write!(
                f,
                "read the {history} messages already in the stream (history); following live"
            ),
            FleetNotice::Follow(notice) => write!(f, "{notice}"),
            FleetNotice::Other(text) => write!(f, "{text}"),
        }
    }
}

/// The subject an event goes to: `<prefix>.<host>.<cli>.<session>`, each part a single token
/// (characters other than letters, digits, `-` and `_` become `_`; an event without a session
/// id goes to `_`).
pub fn subject(prefix: &str, host: &str, event: &Event) -> String {
    let session = event.session_id.as_deref().unwrap_or("");
    format!("{prefix}.{}.{}.{}", token(host), token(&event.cli), token(session))
}

/// The subject of an event's raw envelope: [`subject`] under `<prefix>_raw`.
pub(crate) fn raw_subject(prefix: &str, host: &str, event: &Event) -> String {
    subject(&format!("{prefix}_raw"), host, event)
}

/// A word usable as one subject token.
pub fn token(word: &str) -> String {
    let cleaned: String = word
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if cleaned.is_empty() { "_".into() } else { cleaned }
}

/// The message id of an event: `<host>.<dir id>.<seq>`, or `<host>.<dir id>.u.<file>` for the
/// rare unordered event (written when the counter lock timed out), whose seq is not unique.
pub fn message_id(host: &str, dir_id: &str, event: &Event) -> String {
    let ordered = EventFileName::parse(&event.source.file).is_some_and(|n| n.is_ordered());
    if ordered && !event.source.legacy {
        format!("{}.{dir_id}.{}", token(host), event.source.seq)
    } else {
        format!("{}.{dir_id}.u.{}", token(host), event.source.file)
    }
}

/// The stable id of an events directory: a random word kept in [`DIR_ID_FILE`], created
/// (atomically) the first time. A directory deleted and recreated starts its seqs again and
/// gets a new id, so its events are never taken for the old one's.
pub fn dir_stable_id(dir: &Path) -> Result<String, Error> {
    let path = dir.join(DIR_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("read", &path, e)),
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create dir", dir, e))?;
    let mut hash = Sha256::new();
    hash.update(crate::format::clock::now_ns().to_le_bytes());
    hash.update(std::process::id().to_le_bytes());
    hash.update(dir.as_os_str().as_encoded_bytes());
    if let Ok(mut random) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let mut bytes = [0u8; 16];
        if random.read_exact(&mut bytes).is_ok() {
            hash.update(bytes);
        }
    }
    let id: String = hash.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect();
    // Two forwarders creating it at once: the first rename wins, both read it back.
    let temp = dir.join(format!("{DIR_ID_FILE}.{}", std::process::id()));
    std::fs::write(&temp, format!("{id}\n")).map_err(|e| Error::io("write", &temp, e))?;
    if let Err(e) = std::fs::hard_link(&temp, &path)
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::io("create", &path, e));
    }
    let _ = std::fs::remove_file(&temp);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
    Ok(text.trim().to_owned())
}

/// This machine's host name (`--host`'s default), or `localhost` when it cannot be read.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let len = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..len]) {
        Ok(name) if ok && !name.is_empty() => name.to_owned(),
        _ => "localhost".into(),
    }
}

/// A small runtime for the client: one worker thread keeps the connection alive (pings,
/// reconnects) while the caller blocks on its own work.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("hookline-nats")
        .enable_all()
        .build()
        .map_err(|e| Error::io("start the NATS client runtime", PathBuf::from("-"), e))
}

/// The delay before retry number `attempt` (from 0): 100 ms doubling up to 5 s.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1 << attempt.min(6)).min(5_000))
}

pub(crate) fn nats_error(
    op: &'static str,
    target: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::Nats { op, target: target.to_owned(), source: Box::new(e) }
}

/// Connects (in the background: a server that is down is waited for, by the client's own
/// reconnection with backoff). `notice` hears connections and disconnections.
pub(crate) async fn connect(
    connection: &Connection,
    notice: std::sync::Arc<dyn Fn(FleetNotice) + Send + Sync>,
) -> Result<async_nats::Client, Error> {
    let url = connection.url.clone();
    let mut options = async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .connection_timeout(Duration::from_secs(2))
        .reconnect_delay_callback(|attempts| backoff(attempts as u32));
    if let Some(creds) = &connection.creds {
        options = options.credentials_file(creds).await.map_err(|e| Error::io("read", creds, e))?;
    }
    if let Some(path) = &connection.nkey {
        let seed = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        options = options.nkey(seed.trim().to_owned());
    }
    if let Some(prefix) = &connection.inbox_prefix {
        options = options.custom_inbox_prefix(prefix);
    }
    if let Some(ca) = &connection.tls_ca {
        options = options.add_root_certificates(ca.clone()).require_tls(true);
    }
    let events_url = url.clone();
    options = options.event_callback(move |event| {
        let (notice, url) = (notice.clone(), events_url.clone());
        async move {
            match event {
                async_nats::Event::Connected => notice(FleetNotice::Connected(url)),
                async_nats::Event::Disconnected => notice(FleetNotice::Disconnected(url)),
                other => notice(FleetNotice::Other(format!("{url}: {other}"))),
            }
        }
    });
    let servers: Vec<&str> = url.split(',').map(str::trim).filter(|u| !u.is_empty()).collect();
    options.connect(servers).await.map_err(|e| nats_error("connect to", &url, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{Kind, SourceRef};

    fn event(session: Option<&str>, file: &str, seq: u64) -> Event {
        let mut event = crate::testing::event(Kind::TurnStart);
        event.session_id = session.map(Into::into);
        event.source = SourceRef { dir: "/e".into(), seq, file: file.into(), legacy: false };
        event
    }

    #[test]
    fn subjects_are_four_tokens_whatever_the_names_hold() {
        let e = event(Some("a.b*c >d"), "00000000000000000007-1.json", 7);
        assert_eq!(subject("hookline", "build.3", &e), "hookline.build_3.claude.a_b_c__d");
        assert_eq!(subject("p", "h", &event(None, "x", 1)), "p.h.claude._");
        assert_eq!(raw_subject("p", "h", &e), "p_raw.h.claude.a_b_c__d");
    }

    #[test]
    fn message_ids_name_host_directory_and_seq() {
        let name = EventFileName::ordered(7, 1).to_string();
        assert_eq!(message_id("h", "d", &event(Some("s"), &name, 7)), "h.d.7");
        let unordered = EventFileName::unordered(7, 9, 1).to_string();
        assert_eq!(
            message_id("h", "d", &event(Some("s"), &unordered, 7)),
            format!("h.d.u.{unordered}")
        );
    }

    #[test]
    fn a_directory_keeps_its_id_and_a_recreated_one_gets_another() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("events");
        let first = dir_stable_id(&dir).unwrap();
        assert_eq!(first.len(), 16);
        assert_eq!(dir_stable_id(&dir).unwrap(), first);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_ne!(dir_stable_id(&dir).unwrap(), first);
    }

    #[test]
    fn backoff_doubles_up_to_five_seconds() {
        let delays: Vec<u64> = (0..9).map(|a| backoff(a).as_millis() as u64).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    }
}
