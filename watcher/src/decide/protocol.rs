//! The `hookline serve` protocol: one JSON object per line on stdin, one JSON object per line
//! on stdout, in order, each answering one request.
//!
//! Every request is an object with an `op` and an optional `id` (any JSON value, echoed in the
//! reply). Every reply carries `id`, `op` and `ok`; a request that cannot be read or answered
//! gets `{"id": …, "ok": false, "error": "why"}`. Unknown fields are errors, so a misspelt
//! evidence flag is never silently dropped.
//!
//! | op | request fields | reply fields |
//! |---|---|---|
//! | `hello` | — | `protocol`, `version`, `generation`, `started_ns`, `events_dir`, `journal`, `policy`, `watching` |
//! | `decide` | `session`, `question`, optional `pane`, `transcript`, `window_dead`, `expect` | `decision` (see [`Decision`](super::Decision)) |
//! | `take_input_slot` | `session`, optional `expect` `{generation, epoch}` | `granted`, then `slot`, or `refusal` and `reason` |
//! | `state` | `session` | `view` (or `null` when no event was seen for it) |
//! | `sessions` | — | `sessions`: every view, most recent first |
//! | `next_event` | `session`, optional `timeout_ms` (default 0, at most 600000) | `event` (or `null`), `timed_out`, `dropped`, `view` |
//!
//! `next_event` hands out, oldest first and once each, the canonical events of that session
//! that arrived since `serve` started (up to [`QUEUE_PER_SESSION`] per session are kept;
//! `dropped` counts the ones lost before they were asked for). It waits at most `timeout_ms`
//! for one; meanwhile events of every session keep flowing into the tracker. Requests are
//! answered one at a time, so a long wait delays the next request.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::canonical::Event;
use crate::state::Expect;

use super::decider::{Ask, Decider};

/// The protocol's version, in `hello`'s reply.
pub const PROTOCOL_VERSION: u32 = 1;
/// Events kept per session for `next_event`.
pub const QUEUE_PER_SESSION: usize = 256;
/// The longest `next_event` wait.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// The longest request line.
pub const MAX_LINE: usize = 1 << 20;

/// A request, without its `id`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Who is serving.
    Hello(NoFields),
    /// A decision.
    Decide(Ask),
    /// Take a session's input slot directly.
    TakeInputSlot(SlotRequest),
    /// A session's view.
    State(SessionRequest),
    /// Every session's view.
    Sessions(NoFields),
    /// The next canonical event of a session.
    NextEvent(NextRequest),
}

/// No fields beyond `op` and `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// `state`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    /// A session id or tag.
    pub session: String,
}

/// `take_input_slot`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotRequest {
    /// A session id or tag.
    pub session: String,
    /// The generation and epoch the caller saw.
    #[serde(default)]
    pub expect: Expect,
}

/// `next_event`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextRequest {
    /// A session id or tag (it need not have any event yet).
    pub session: String,
    /// How long to wait, in milliseconds.
    #[serde(default)]
    pub timeout_ms: u64,
}

impl Request {
    fn op(&self) -> &'static str {
        match self {
            Request::Hello(_) => "hello",
            Request::Decide(_) => "decide",
            Request::TakeInputSlot(_) => "take_input_slot",
            Request::State(_) => "state",
            Request::Sessions(_) => "sessions",
            Request::NextEvent(_) => "next_event",
        }
    }
}

/// Reads one request line: its `id` (or `null`) and the request, or the `id` and why not.
pub fn parse(line: &str) -> Result<(Value, Request), (Value, String)> {
    let mut value: Value =
        serde_json::from_str(line).map_err(|e| (Value::Null, format!("not JSON: {e}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err((Value::Null, "a request must be a JSON object with an \"op\"".into()));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let op = object.get("op").cloned();
    let request = serde_json::from_value::<Request>(value).map_err(|e| {
        let why = match op {
            None => "missing \"op\": one of hello, decide, take_input_slot, state, sessions, \
                     next_event"
                .to_owned(),
            Some(op) => format!("bad {op} request: {e}"),
        };
        (id.clone(), why)
    })?;
    Ok((id, request))
}

/// What `hello` reports about the server.
#[derive(Debug, Clone)]
pub struct ServeInfo {
    /// The events directory.
    pub events_dir: PathBuf,
    /// The journal, when there is one.
    pub journal: Option<PathBuf>,
}

#[derive(Debug, Default)]
struct Queue {
    events: VecDeque<Event>,
    dropped: u64,
}

/// The decider and the events waiting for `next_event`, behind one lock.
#[derive(Debug)]
pub struct Hub {
    decider: Decider,
    queues: HashMap<String, Queue>,
    info: ServeInfo,
    failure: Option<String>,
}

impl Hub {
    /// A hub around a decider that has already caught up with history.
    pub fn new(decider: Decider, info: ServeInfo) -> Hub {
        Hub { decider, queues: HashMap::new(), info, failure: None }
    }
}

/// A hub shared between the thread that applies events and the one that answers requests.
#[derive(Debug)]
pub struct Shared {
    hub: Mutex<Hub>,
    arrived: Condvar,
}

impl Shared {
    /// Shares a hub.
    pub fn new(hub: Hub) -> Shared {
        Shared { hub: Mutex::new(hub), arrived: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Applies a live event and wakes `next_event` waiters.
    pub fn apply(&self, event: &Event) {
        let mut hub = self.lock();
        let applied = hub.decider.apply(event);
        if let Some(key) = applied.session {
            let queue = hub.queues.entry(key).or_default();
            if queue.events.len() >= QUEUE_PER_SESSION {
                queue.events.pop_front();
                queue.dropped += 1;
            }
            queue.events.push_back(event.clone());
        }
        drop(hub);
        self.arrived.notify_all();
    }

    /// Records that events stopped arriving: from now on every request that depends on fresh
    /// state is refused, since its answer could be stale.
    pub fn fail(&self, why: String) {
        self.lock().failure = Some(why);
        self.arrived.notify_all();
    }

    /// Journal write failures since the last call.
    pub fn take_journal_errors(&self) -> Vec<String> {
        self.lock().decider.take_journal_errors()
    }

    /// Answers one request line with one reply line (no newline). `now` is the clock.
    pub fn handle(&self, line: &str, now: &dyn Fn() -> u64) -> String {
        let reply = match parse(line) {
            Err((id, error)) => json!({ "id": id, "ok": false, "error": error }),
            Ok((id, request)) => {
                let op = request.op();
                match self.answer(request, now) {
                    Ok(Value::Object(fields)) => {
                        let mut reply = serde_json::Map::new();
                        reply.insert("id".into(), id);
                        reply.insert("op".into(), op.into());
                        reply.insert("ok".into(), true.into());
                        reply.extend(fields);
                        Value::Object(reply)
                    }
                    Ok(other) => json!({ "id": id, "op": op, "ok": true, "value": other }),
                    Err(error) => json!({ "id": id, "op": op, "ok": false, "error": error }),
                }
            }
        };
        serde_json::to_string(&reply).unwrap_or_else(|e| {
            format!(r#"{{"id":null,"ok":false,"error":"cannot encode the reply: {e}"}}"#)
        })
    }

    fn answer(&self, request: Request, now: &dyn Fn() -> u64) -> Result<Value, String> {
        let mut hub = self.lock();
        let stale = |hub: &Hub| match &hub.failure {
            Some(why) => Err(format!(
                "events stopped arriving ({why}): answers would be stale; restart hookline serve"
            )),
            None => Ok(()),
        };
        match request {
            Request::Hello(_) => {
                let generation = hub.decider.tracker().generation();
                Ok(json!({
                    "protocol": PROTOCOL_VERSION,
                    "version": env!("CARGO_PKG_VERSION"),
                    "generation": generation.id,
                    "started_ns": generation.started_ns,
                    "events_dir": hub.info.events_dir,
                    "journal": hub.info.journal,
                    "policy": hub.decider.policy(),
                    "watching": hub.failure.is_none(),
                }))
            }
            Request::Decide(ask) => {
                stale(&hub)?;
                let decision = hub.decider.decide(&ask, now());
                Ok(json!({ "decision": to_json(&decision)? }))
            }
            Request::TakeInputSlot(r) => {
                stale(&hub)?;
                Ok(match hub.decider.take_input_slot(&r.session, now(), r.expect) {
                    Ok(slot) => json!({ "granted": true, "slot": slot }),
                    Err(refusal) => json!({
                        "granted": false,
                        "reason": refusal.to_string(),
                        "refusal": to_json(&refusal)?,
                    }),
                })
            }
            Request::State(r) => {
                stale(&hub)?;
                let view = hub.decider.view(&r.session, now());
                Ok(json!({ "view": to_json(&view)? }))
            }
            Request::Sessions(_) => {
                stale(&hub)?;
                let views = hub.decider.tracker().views(now());
                Ok(json!({ "sessions": to_json(&views)? }))
            }
            Request::NextEvent(r) => {
                let wait = Duration::from_millis(r.timeout_ms).min(MAX_WAIT);
                let deadline = Instant::now() + wait;
                loop {
                    stale(&hub)?;
                    let key = hub.decider.tracker().session_key(&r.session);
                    let popped = key.as_ref().and_then(|k| {
                        let queue = hub.queues.get_mut(k)?;
                        let event = queue.events.pop_front()?;
                        Some((event, std::mem::take(&mut queue.dropped)))
                    });
                    if let Some((event, dropped)) = popped {
                        let view = hub.decider.view(&r.session, now());
                        return Ok(json!({
                            "event": to_json(&event)?,
                            "timed_out": false,
                            "dropped": dropped,
                            "view": to_json(&view)?,
                        }));
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        let view = hub.decider.view(&r.session, now());
                        return Ok(json!({
                            "event": null,
                            "timed_out": true,
                            "dropped": 0,
                            "view": to_json(&view)?,
                        }));
                    }
                    hub = self
                        .arrived
                        .wait_timeout(hub, left)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0;
                }
            }
        }
    }
}

/// A value as JSON, with the error as a string.
fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| format!("cannot encode the reply: {e}"))
}
