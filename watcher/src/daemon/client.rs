//! A connection to the daemon of an events directory, with one typed call per request: the
//! requests and replies are the protocol's own types ([`crate::protocol`]), the ones the
//! server reads and writes.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::conn::NoSigPipe;
use super::socket_path;
use crate::decide::{Ask, Decision, Lease, LeaseId, Released};
use crate::errors::ClientError;
use crate::protocol::{
    ChangesAnswer, ChangesRequest, DecideAnswer, DecideRequest, DeliverAnswer, DeliverRequest,
    ExplainAnswer, Hello, LeaseRequest, LeasesAnswer, LookupAnswer, NextAnswer, NextRequest,
    NoFields, PROTOCOL_VERSION, ReleaseAnswer, ReloadAnswer, Request, SessionRequest,
    SessionsAnswer, SlotAnswer, SlotRequest, StateAnswer, TmuxPane,
};
use crate::state::{Expect, Refusal, View};

/// How long a reply may take, beyond the wait a `next_event` asked for.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// What the daemon said about itself when the connection opened (`hello`).
pub type DaemonInfo = Hello;

/// `next_event`'s answer.
pub type NextEvent = NextAnswer;

/// One connection to a daemon. Requests go one at a time, each waiting for its reply; open
/// one client per thread that asks. Dropping it closes the connection: a delivery it asked
/// for that has not started typing then types nothing.
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
        let info: DaemonInfo = channel.typed(&Request::Hello(NoFields {}), REPLY_TIMEOUT)?;
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

    /// A decision from the daemon's live generation, with the pane `tmux` names read by the
    /// daemon first: an allowed `input` or `nudge` holds a lease ([`Decision::lease`]) for
    /// this caller alone, unless the ask is a peek.
    pub fn decide(&mut self, ask: &Ask, tmux: Option<TmuxPane>) -> Result<Decision, ClientError> {
        let request = Request::Decide(DecideRequest::new(ask, tmux));
        // A classifier consult runs inside the request, bounded by its own timeout.
        let timeout = REPLY_TIMEOUT + self.info.consult_allowance();
        let reply: DecideAnswer = self.channel.typed(&request, timeout)?;
        Ok(*reply.decision)
    }

    /// Takes a session's input slot directly, as a lease: the lease, or why not.
    pub fn take_input_slot(
        &mut self,
        session: &str,
        expect: Expect,
    ) -> Result<Result<SlotAnswer, Refusal>, ClientError> {
        let request = Request::TakeInputSlot(SlotRequest { session: session.to_owned(), expect });
        let reply: SlotAnswer = self.channel.typed(&request, REPLY_TIMEOUT)?;
        match (reply.granted, &reply.refusal) {
            (true, _) if reply.lease.is_some() => Ok(Ok(reply)),
            (false, Some(refusal)) => Ok(Err(refusal.clone())),
            _ => Err(self
                .channel
                .protocol("a take_input_slot reply with neither lease nor refusal".into())),
        }
    }

    /// Gives a lease back: the slot is free again ([`Released::Freed`]), or the session had
    /// left that idle ([`Released::Void`]). An unknown or spent lease is refused by the daemon.
    pub fn release(&mut self, lease: &LeaseId) -> Result<Released, ClientError> {
        let request = Request::Release(LeaseRequest { lease: lease.clone() });
        let reply: ReleaseAnswer = self.channel.typed(&request, REPLY_TIMEOUT)?;
        Ok(reply.released)
    }

    /// The leases held.
    pub fn leases(&mut self) -> Result<Vec<Lease>, ClientError> {
        let reply: LeasesAnswer =
            self.channel.typed(&Request::Leases(NoFields {}), REPLY_TIMEOUT)?;
        Ok(reply.leases)
    }

    /// A session's view, named exactly; `None` when the daemon has seen no event for it.
    pub fn state(&mut self, session: &str) -> Result<Option<View>, ClientError> {
        let request = Request::State(SessionRequest { session: session.to_owned() });
        let reply: StateAnswer = self.channel.typed(&request, REPLY_TIMEOUT)?;
        Ok(reply.view.map(|v| *v))
    }

    /// Every session's view, most recent first.
    pub fn sessions(&mut self) -> Result<Vec<View>, ClientError> {
        let reply: SessionsAnswer =
            self.channel.typed(&Request::Sessions(NoFields {}), REPLY_TIMEOUT)?;
        Ok(reply.sessions)
    }

    /// What a name a person typed names (exactly, by prefix, several, none and the names it
    /// resembles).
    pub fn lookup(&mut self, query: &str) -> Result<LookupAnswer, ClientError> {
        let request = Request::Lookup(SessionRequest { session: query.to_owned() });
        self.channel.typed(&request, REPLY_TIMEOUT)
    }

    /// The next live event of a session, waiting up to `wait` for one; with `after_ns`, those
    /// written before it are passed over.
    pub fn next_event(
        &mut self,
        session: &str,
        wait: Duration,
        after_ns: Option<u64>,
    ) -> Result<NextEvent, ClientError> {
        let timeout_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let request =
            Request::NextEvent(NextRequest { session: session.to_owned(), timeout_ms, after_ns });
        self.channel.typed(&request, wait + REPLY_TIMEOUT)
    }

    /// Delivers a text into a session's pane (the `deliver` op): the daemon asks the `input`
    /// (or `nudge`) decision with the pane's evidence, waiting up to `wait_ms` for an allow,
    /// types under the request's lease (or one of its own), and waits for the `turn_start`
    /// that confirms it. The reply may take the wait, the confirmation timeout and the
    /// self-heal delay, and some more.
    pub fn deliver(&mut self, request: &DeliverRequest) -> Result<DeliverAnswer, ClientError> {
        let ms = request.wait_ms
            + request.confirm_timeout_ms.unwrap_or(15_000)
            + request.heal_after_ms.unwrap_or(1_500);
        let timeout = Duration::from_millis(ms) + 3 * REPLY_TIMEOUT;
        self.channel.typed(&Request::Deliver(request.clone()), timeout)
    }

    /// What changed after change `after` (nothing without it: the answer's `last` says where
    /// the feed is), waiting up to `wait` for the first; with every session's view when
    /// `sessions`. Display only: it takes nothing.
    pub fn changes(
        &mut self,
        after: Option<u64>,
        wait: Duration,
        sessions: bool,
    ) -> Result<ChangesAnswer, ClientError> {
        let timeout_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let request = Request::Changes(ChangesRequest { after, timeout_ms, sessions });
        self.channel.typed(&request, wait + REPLY_TIMEOUT)
    }

    /// A session's view (named exactly) and its last transitions.
    pub fn explain(&mut self, session: &str) -> Result<ExplainAnswer, ClientError> {
        let request = Request::Explain(SessionRequest { session: session.to_owned() });
        self.channel.typed(&request, REPLY_TIMEOUT)
    }

    /// Asks the daemon to read its policy and profiles again, keeping its live generation.
    pub fn reload(&mut self) -> Result<ReloadAnswer, ClientError> {
        self.channel.typed(&Request::Reload(NoFields {}), REPLY_TIMEOUT)
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
                .map_err(|e| self.protocol_json("a reply that is not JSON".into(), e))?;
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
        request: &Request,
        timeout: Duration,
    ) -> Result<T, ClientError> {
        let op = request.op().as_str();
        let value = serde_json::to_value(request)
            .map_err(|e| self.protocol_json(format!("a {op} request it cannot encode"), e))?;
        let reply = self.request(value, timeout)?;
        serde_json::from_value(reply)
            .map_err(|e| self.protocol_json(format!("a {op} reply this hookline cannot read"), e))
    }

    fn protocol(&self, problem: String) -> ClientError {
        ClientError::Protocol { socket: self.socket.clone(), problem, source: None }
    }

    fn protocol_json(&self, problem: String, source: serde_json::Error) -> ClientError {
        ClientError::Protocol { socket: self.socket.clone(), problem, source: Some(source) }
    }
}
