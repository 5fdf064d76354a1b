//! A connection to the daemon of an events directory, with one typed call per request.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::conn::NoSigPipe;
use super::socket_path;
use crate::canonical::Event;
use crate::decide::{Ask, Decision};
use crate::error::ClientError;
use crate::serve::protocol::{DeliverAnswer, DeliverRequest, PROTOCOL_VERSION};
use crate::state::{Expect, Refusal, Slot, View};

/// How long a reply may take, beyond the wait a `next_event` asked for.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// What the daemon said about itself when the connection opened (`hello`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DaemonInfo {
    /// Its protocol version.
    pub protocol: u32,
    /// Its hookline version.
    pub version: String,
    /// Its tracker's generation.
    pub generation: u64,
    /// When the generation started, in nanoseconds since the Unix epoch.
    pub started_ns: u64,
    /// The events directory it follows.
    pub events_dir: PathBuf,
    /// Its journal, when it keeps one.
    pub journal: Option<PathBuf>,
    /// Whether events still arrive.
    pub watching: bool,
    /// The policy in force, key by key as `hello` writes it (read for `classifier.timeout`).
    #[serde(default)]
    pub policy: serde_json::Map<String, Value>,
}

impl DaemonInfo {
    /// How long a `decide` may take beyond the client's reply timeout: the classifier consult's
    /// `classifier.timeout` when the daemon's policy names a classifier.
    pub fn consult_allowance(&self) -> Duration {
        let configured = self.policy.get("classifier.command").is_some_and(|c| !c.is_null());
        match self.policy.get("classifier.timeout").and_then(Value::as_str) {
            Some(text) if configured => crate::units::parse_duration(text).unwrap_or_default(),
            _ => Duration::ZERO,
        }
    }
}

/// `next_event`'s answer.
#[derive(Debug, Clone, Deserialize)]
pub struct NextEvent {
    /// The session's oldest event not handed out yet; `None` when the wait timed out.
    pub event: Option<Event>,
    /// Whether the wait ended without an event.
    pub timed_out: bool,
    /// Events of the session lost before they were asked for.
    pub dropped: u64,
    /// The session's view.
    pub view: Option<View>,
}

#[derive(Deserialize)]
struct WireSlot {
    granted: bool,
    slot: Option<Slot>,
    refusal: Option<Refusal>,
}

#[derive(Deserialize)]
struct WireState {
    view: Option<View>,
}

#[derive(Deserialize)]
struct WireSessions {
    sessions: Vec<View>,
}

#[derive(Deserialize)]
struct WireDecide {
    decision: Decision,
}

/// One connection to a daemon. Requests go one at a time, each waiting for its reply; open
/// one client per thread that asks.
#[derive(Debug)]
pub struct Client {
    channel: Channel,
    info: DaemonInfo,
}

/// The connection: request lines out, reply lines in.
#[derive(Debug)]
struct Channel {
    socket: PathBuf,
    reader: BufReader<UnixStream>,
    writer: NoSigPipe,
    next_id: u64,
}

impl Client {
    /// Connects to the daemon of `events_dir` (its socket, [`super::SOCKET`]) and says hello.
    /// [`ClientError::NotRunning`] when no daemon listens there.
    pub fn connect(events_dir: &Path) -> Result<Client, ClientError> {
        Client::connect_socket(&socket_path(events_dir))
    }

    /// Connects to the daemon listening on `socket` and says hello.
    pub fn connect_socket(socket: &Path) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(socket).map_err(|source| {
            let absent =
                matches!(source.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused);
            let socket = socket.to_owned();
            if absent {
                ClientError::NotRunning { socket, source }
            } else {
                ClientError::Io { socket, source }
            }
        })?;
        let io_error = |source| ClientError::Io { socket: socket.to_owned(), source };
        stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(io_error)?;
        let reader = BufReader::new(stream.try_clone().map_err(io_error)?);
        let mut channel =
            Channel { socket: socket.to_owned(), reader, writer: NoSigPipe(stream), next_id: 1 };
        let info: DaemonInfo = channel.typed(json!({"op": "hello"}), REPLY_TIMEOUT)?;
        if info.protocol != PROTOCOL_VERSION {
            return Err(channel.protocol(format!(
                "it speaks protocol {}, this hookline speaks {PROTOCOL_VERSION}: run one version",
                info.protocol
            )));
        }
        Ok(Client { channel, info })
    }

    /// What the daemon said about itself when the connection opened.
    pub fn info(&self) -> &DaemonInfo {
        &self.info
    }

    /// The socket.
    pub fn socket(&self) -> &Path {
        &self.channel.socket
    }

    /// A decision from the daemon's live generation: an allowed `input` or `nudge` took the
    /// idle's slot ([`Decision::slot`]) for this caller alone.
    pub fn decide(&mut self, ask: &Ask) -> Result<Decision, ClientError> {
        let mut request =
            serde_json::to_value(ask).map_err(|e| self.channel.protocol(e.to_string()))?;
        request["op"] = "decide".into();
        // A classifier consult runs inside the request, bounded by its own timeout.
        let timeout = REPLY_TIMEOUT + self.info.consult_allowance();
        let reply: WireDecide = self.channel.typed(request, timeout)?;
        Ok(reply.decision)
    }

    /// Takes a session's input slot directly: the slot, or why not.
    pub fn take_input_slot(
        &mut self,
        session: &str,
        expect: Expect,
    ) -> Result<Result<Slot, Refusal>, ClientError> {
        let request = json!({"op": "take_input_slot", "session": session, "expect": expect});
        let reply: WireSlot = self.channel.typed(request, REPLY_TIMEOUT)?;
        match (reply.granted, reply.slot, reply.refusal) {
            (true, Some(slot), _) => Ok(Ok(slot)),
            (false, _, Some(refusal)) => Ok(Err(refusal)),
            _ => Err(self
                .channel
                .protocol("a take_input_slot reply with neither slot nor refusal".into())),
        }
    }

    /// A session's view; `None` when the daemon has seen no event for it.
    pub fn state(&mut self, session: &str) -> Result<Option<View>, ClientError> {
        let reply: WireState =
            self.channel.typed(json!({"op": "state", "session": session}), REPLY_TIMEOUT)?;
        Ok(reply.view)
    }

    /// Every session's view, most recent first.
    pub fn sessions(&mut self) -> Result<Vec<View>, ClientError> {
        let reply: WireSessions = self.channel.typed(json!({"op": "sessions"}), REPLY_TIMEOUT)?;
        Ok(reply.sessions)
    }

    /// The next live event of a session, waiting up to `wait` for one.
    pub fn next_event(&mut self, session: &str, wait: Duration) -> Result<NextEvent, ClientError> {
        let timeout_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let request = json!({"op": "next_event", "session": session, "timeout_ms": timeout_ms});
        self.channel.typed(request, wait + REPLY_TIMEOUT)
    }

    /// Delivers a text into a session's pane (the `deliver` op): the daemon asks the `input`
    /// decision with the pane's evidence, waiting up to `wait_ms` for an allow, types the text
    /// with the slot, and waits for the `turn_start` that confirms it. The reply may take the
    /// wait, the confirmation timeout and the self-heal delay, and some more.
    pub fn deliver(&mut self, request: &DeliverRequest) -> Result<DeliverAnswer, ClientError> {
        let mut value =
            serde_json::to_value(request).map_err(|e| self.channel.protocol(e.to_string()))?;
        value["op"] = "deliver".into();
        let ms = request.wait_ms
            + request.confirm_timeout_ms.unwrap_or(15_000)
            + request.heal_after_ms.unwrap_or(1_500);
        self.channel.typed(value, Duration::from_millis(ms) + 3 * REPLY_TIMEOUT)
    }

    /// Sends any request object (its `op` and fields; the `id` is the client's) and returns
    /// the whole reply object, for requests this client has no typed call for. `timeout` is
    /// how long the reply may take.
    pub fn request(&mut self, request: Value, timeout: Duration) -> Result<Value, ClientError> {
        self.channel.request(request, timeout)
    }
}

impl Channel {
    fn request(&mut self, mut request: Value, timeout: Duration) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let Some(object) = request.as_object_mut() else {
            return Err(self.protocol("a request must be a JSON object".into()));
        };
        object.insert("id".into(), id.into());
        let io_error =
            |socket: &Path, source| ClientError::Io { socket: socket.to_owned(), source };
        let mut line = request.to_string();
        line.push('\n');
        if let Err(e) = self.writer.write_all(line.as_bytes()) {
            // A daemon that refused the connection wrote why before closing it.
            let mut said = String::new();
            if self.reader.read_line(&mut said).is_ok()
                && let Ok(reply) = serde_json::from_str::<Value>(&said)
                && let Some(error) = reply["error"].as_str()
            {
                return Err(ClientError::Refused {
                    socket: self.socket.clone(),
                    error: error.into(),
                });
            }
            return Err(io_error(&self.socket, e));
        }
        self.reader
            .get_ref()
            .set_read_timeout(Some(timeout))
            .map_err(|e| io_error(&self.socket, e))?;
        loop {
            let mut reply = String::new();
            let read = self.reader.read_line(&mut reply).map_err(|e| io_error(&self.socket, e))?;
            if read == 0 {
                return Err(self.protocol("it closed the connection before replying".into()));
            }
            let reply: Value = serde_json::from_str(&reply)
                .map_err(|e| self.protocol(format!("a reply that is not JSON ({e})")))?;
            // Not ours: a reply to a request of an earlier call that gave up waiting; or an
            // error about the connection itself (id null), which is ours too.
            if reply["id"] != id && !reply["id"].is_null() {
                continue;
            }
            if reply["ok"] != Value::Bool(true) {
                let error = reply["error"].as_str().unwrap_or("no reason given").to_owned();
                return Err(ClientError::Refused { socket: self.socket.clone(), error });
            }
            return Ok(reply);
        }
    }

    fn typed<T: DeserializeOwned>(
        &mut self,
        request: Value,
        timeout: Duration,
    ) -> Result<T, ClientError> {
        let op = request["op"].as_str().unwrap_or_default().to_owned();
        let reply = self.request(request, timeout)?;
        serde_json::from_value(reply)
            .map_err(|e| self.protocol(format!("a {op} reply this hookline cannot read ({e})")))
    }

    fn protocol(&self, problem: String) -> ClientError {
        ClientError::Protocol { socket: self.socket.clone(), problem }
    }
}
