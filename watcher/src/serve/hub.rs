//! The hub behind `hookline serve`: the decider and the per-session queues `next_event` hands
//! out from, behind one lock, with the condition variable that wakes its waiters. One thread
//! applies events ([`Shared::apply`]); any thread may answer requests ([`Shared::handle`]).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::canonical::Event;
use crate::decide::Decider;

use super::protocol::{
    Answer, Hello, MAX_WAIT, NextAnswer, PROTOCOL_VERSION, QUEUE_PER_SESSION, Reply, Request, parse,
};

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
    /// The last [`RECENT_PER_SESSION`] live events, whether handed out or not: what
    /// [`Shared::wait_for`] looks at.
    recent: VecDeque<Event>,
}

/// Live events kept per session for [`Shared::wait_for`], besides the `next_event` queue.
pub const RECENT_PER_SESSION: usize = 32;

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
            if queue.recent.len() >= RECENT_PER_SESSION {
                queue.recent.pop_front();
            }
            queue.recent.push_back(event.clone());
        }
        drop(hub);
        self.arrived.notify_all();
    }

    /// Says that the history has been applied: every event applied from now on is live (see
    /// [`Tracker::live_by_arrival`](crate::state::Tracker::live_by_arrival)); for a feed that
    /// learns it only as it goes, such as a JetStream consumer.
    pub fn caught_up(&self) {
        self.lock().decider.caught_up();
    }

    /// Records that events stopped arriving: from now on every request that depends on fresh
    /// state is refused, since its answer could be stale.
    pub fn fail(&self, why: String) {
        self.lock().failure = Some(why);
        self.arrived.notify_all();
    }

    /// Waits until a live event of `session` (an id or a tag; it need not have any event yet)
    /// satisfies `matches`, or until `deadline`: for an operation that acts, then waits for the
    /// structured event that proves it took effect (a delivery's `turn_start` after the paste,
    /// whose prompt matches). It looks at the session's last [`RECENT_PER_SESSION`] live
    /// events, so one that arrived before the call is found too, and leaves the `next_event`
    /// queues alone. The newest match wins. `Err` when events stopped arriving: no event can
    /// prove anything any more.
    pub fn wait_for(
        &self,
        session: &str,
        deadline: Instant,
        matches: impl Fn(&Event) -> bool,
    ) -> Result<Option<Event>, String> {
        let mut hub = self.lock();
        loop {
            if let Some(why) = &hub.failure {
                return Err(format!("events stopped arriving ({why})"));
            }
            let key = hub.decider.tracker().session_key(session);
            let found = key
                .and_then(|k| hub.queues.get(&k))
                .and_then(|queue| queue.recent.iter().rev().find(|e| matches(e)).cloned());
            let left = deadline.saturating_duration_since(Instant::now());
            if found.is_some() || left.is_zero() {
                return Ok(found);
            }
            hub = self
                .arrived
                .wait_timeout(hub, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// Journal write failures since the last call.
    pub fn take_journal_errors(&self) -> Vec<String> {
        self.lock().decider.take_journal_errors()
    }

    /// Answers one request line with one reply line (no newline). `now` is the clock.
    pub fn handle(&self, line: &str, now: &dyn Fn() -> u64) -> String {
        match parse(line) {
            Ok((id, request)) => self.reply(id, request, now),
            Err(refused) => refused,
        }
        .to_line()
    }

    /// Answers a request [`parse`] read. `now` is the clock.
    pub fn reply(&self, id: Value, request: Request, now: &dyn Fn() -> u64) -> Reply {
        let op = request.op();
        match self.answer(request, now) {
            Ok(answer) => Reply::answer(id, op, answer),
            Err(error) => Reply::error(id, Some(op), error),
        }
    }

    fn answer(&self, request: Request, now: &dyn Fn() -> u64) -> Result<Answer, String> {
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
                Ok(Answer::Hello(Box::new(Hello {
                    protocol: PROTOCOL_VERSION,
                    version: env!("CARGO_PKG_VERSION"),
                    generation: generation.id,
                    started_ns: generation.started_ns,
                    events_dir: hub.info.events_dir.clone(),
                    journal: hub.info.journal.clone(),
                    policy: hub.decider.policy().clone(),
                    watching: hub.failure.is_none(),
                })))
            }
            Request::Decide(ask) => {
                stale(&hub)?;
                let decision = hub.decider.decide(&ask, now());
                Ok(Answer::Decide { decision: Box::new(decision) })
            }
            Request::TakeInputSlot(r) => {
                stale(&hub)?;
                let result = hub.decider.take_input_slot(&r.session, now(), r.expect);
                Ok(Answer::TakeInputSlot(Box::new(result.into())))
            }
            Request::State(r) => {
                stale(&hub)?;
                Ok(Answer::State { view: hub.decider.view(&r.session, now()).map(Box::new) })
            }
            Request::Sessions(_) => {
                stale(&hub)?;
                Ok(Answer::Sessions { sessions: hub.decider.tracker().views(now()) })
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
                    let left = deadline.saturating_duration_since(Instant::now());
                    if popped.is_some() || left.is_zero() {
                        let (event, dropped) = popped.unzip();
                        let view = hub.decider.view(&r.session, now()).map(Box::new);
                        return Ok(Answer::NextEvent(NextAnswer {
                            timed_out: event.is_none(),
                            event: event.map(Box::new),
                            dropped: dropped.unwrap_or(0),
                            view,
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::decide::{Decider, Policy};
    use crate::profile::Profiles;
    use crate::state::Tracker;
    use crate::testing::{HookCall, T0};

    const C: &str = "claude-code/2.1.332/";

    fn shared(start: u64) -> Shared {
        let profiles = Profiles::shipped().unwrap();
        let decider = Decider::new(Tracker::new(profiles, start), Policy::default());
        Shared::new(Hub::new(decider, ServeInfo { events_dir: "/ev".into(), journal: None }))
    }

    fn event(seq: u64, at_s: u64, fixture: &str) -> Event {
        let empty = BTreeMap::new();
        let fixture = format!("{C}{fixture}");
        let call = HookCall {
            cli: "claude",
            session: "s1",
            native: None,
            fixture: Some(&fixture),
            payload: &empty,
            tag: Some("task-1"),
            host_pid: None,
            unordered: false,
        };
        call.event(&Profiles::shipped().unwrap(), seq, T0 + at_s * 1_000_000_000).unwrap()
    }

    fn ask(shared: &Shared, line: &str, now_s: u64) -> Value {
        let now = move || T0 + now_s * 1_000_000_000;
        serde_json::from_str(&shared.handle(line, &now)).unwrap()
    }

    #[test]
    fn malformed_requests_get_an_error_reply_with_the_reason() {
        let s = shared(T0);
        for (line, id, says) in [
            ("not json", Value::Null, "not JSON"),
            ("[1, 2]", Value::Null, "JSON object"),
            (r#"{"id": 7}"#, json!(7), "missing \"op\""),
            (r#"{"id": "a", "op": "fly"}"#, json!("a"), "unknown variant `fly`"),
            (r#"{"id": 1, "op": "decide", "session": "s1"}"#, json!(1), "missing field `question`"),
            (
                r#"{"id": 2, "op": "decide", "session": "s1", "question": "idle"}"#,
                json!(2),
                "unknown variant `idle`",
            ),
            (
                r#"{"id": 3, "op": "decide", "session": "s1", "question": "nudge", "pane": {"spiner": true}}"#,
                json!(3),
                "unknown field `spiner`",
            ),
            (r#"{"id": 4, "op": "sessions", "extra": 1}"#, json!(4), "unknown field `extra`"),
            (r#"{"id": 5, "op": "state"}"#, json!(5), "missing field `session`"),
        ] {
            let reply = ask(&s, line, 1);
            assert_eq!(reply["ok"], false, "{line}: {reply}");
            assert_eq!(reply["id"], id, "{line}");
            let error = reply["error"].as_str().unwrap();
            assert!(error.contains(says), "{line}: {error}");
        }
    }

    #[test]
    fn live_events_authorize_input_once_and_history_never() {
        let s = shared(T0 + 10_000_000_000);
        // History: a whole turn before the generation started.
        s.apply(&event(1, 0, "UserPromptSubmit.json"));
        s.apply(&event(2, 5, "Stop.json"));
        let reply =
            ask(&s, r#"{"id": 1, "op": "decide", "session": "task-1", "question": "input"}"#, 60);
        assert_eq!(reply["ok"], true);
        assert_eq!(reply["op"], "decide");
        assert_eq!(reply["decision"]["verdict"], "withhold", "{reply}");
        assert_eq!(reply["decision"]["rule"], "input-slot-refused");
        // Live: a new turn ends after the generation started.
        s.apply(&event(3, 70, "UserPromptSubmit.json"));
        s.apply(&event(4, 80, "Stop.json"));
        let reply = ask(&s, r#"{"op": "decide", "session": "s1", "question": "input"}"#, 90);
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["decision"]["verdict"], "allow", "{reply}");
        assert_eq!(reply["decision"]["slot"]["epoch"], 1);
        let reply = ask(&s, r#"{"id": 2, "op": "take_input_slot", "session": "s1"}"#, 91);
        assert_eq!(reply["granted"], false);
        assert_eq!(reply["refusal"]["refusal"], "already_taken");
        let state = ask(&s, r#"{"id": 3, "op": "state", "session": "s1"}"#, 92);
        assert_eq!(state["view"]["state"], "idle");
        assert_eq!(ask(&s, r#"{"op": "state", "session": "nope"}"#, 92)["view"], Value::Null);
        let sessions = ask(&s, r#"{"op": "sessions"}"#, 92);
        assert_eq!(sessions["sessions"].as_array().unwrap().len(), 1);
        let hello = ask(&s, r#"{"op": "hello"}"#, 92);
        assert_eq!(hello["protocol"], PROTOCOL_VERSION);
        assert_eq!(hello["policy"]["nudge.min-idle"], "30s");
        assert_eq!(hello["watching"], true);
    }

    #[test]
    fn next_event_hands_out_each_live_event_once_and_waits_for_the_next() {
        let s = Arc::new(shared(T0));
        let reply = ask(&s, r#"{"op": "next_event", "session": "task-1"}"#, 1);
        assert_eq!(
            (reply["timed_out"].clone(), reply["event"].clone()),
            (json!(true), Value::Null)
        );
        s.apply(&event(1, 1, "UserPromptSubmit.json"));
        s.apply(&event(2, 2, "PreToolUse.json"));
        let first = ask(&s, r#"{"op": "next_event", "session": "task-1", "timeout_ms": 10}"#, 3);
        assert_eq!(first["event"]["kind"], "turn_start", "{first}");
        let second = ask(&s, r#"{"op": "next_event", "session": "s1", "timeout_ms": 10}"#, 3);
        assert_eq!(second["event"]["kind"], "tool_start");
        assert_eq!(second["view"]["state"], "child_command");
        // A waiter wakes when the event arrives from another thread.
        let feeder = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                s.apply(&event(3, 4, "PermissionRequest.json"));
            })
        };
        let third = ask(&s, r#"{"op": "next_event", "session": "s1", "timeout_ms": 5000}"#, 5);
        feeder.join().unwrap();
        assert_eq!(third["event"]["kind"], "permission_request", "{third}");
        assert_eq!(third["timed_out"], false);
    }

    #[test]
    fn wait_for_finds_a_live_event_after_an_instant_whether_it_came_before_or_during_the_wait() {
        let s = Arc::new(shared(T0));
        let after = |at_s: u64| move |e: &Event| e.ts_ns > T0 + at_s * 1_000_000_000;
        let soon = || Instant::now() + Duration::from_millis(20);
        assert_eq!(s.wait_for("task-1", soon(), after(0)), Ok(None), "no session yet");
        s.apply(&event(1, 1, "UserPromptSubmit.json"));
        // Already there, and still there for next_event afterwards.
        let found = s.wait_for("task-1", soon(), after(0)).unwrap().expect("the prompt");
        assert_eq!(found.source.seq, 1);
        assert_eq!(s.wait_for("s1", soon(), after(1)), Ok(None), "nothing after 1 s yet");
        let next = ask(&s, r#"{"op": "next_event", "session": "s1"}"#, 2);
        assert_eq!(next["event"]["kind"], "turn_start", "{next}");
        // Arriving from another thread while it waits.
        let feeder = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                s.apply(&event(2, 3, "Stop.json"));
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let found = s.wait_for("s1", deadline, after(1)).unwrap().expect("the stop");
        feeder.join().unwrap();
        assert_eq!(found.source.seq, 2);
        s.fail("gone".into());
        assert!(s.wait_for("s1", soon(), after(0)).unwrap_err().contains("gone"));
    }

    #[test]
    fn a_stopped_watcher_refuses_answers_that_would_be_stale() {
        let s = shared(T0);
        s.fail("the events directory vanished".into());
        let reply =
            ask(&s, r#"{"id": 9, "op": "decide", "session": "s1", "question": "input"}"#, 1);
        assert_eq!(reply["ok"], false);
        assert!(reply["error"].as_str().unwrap().contains("restart hookline serve"));
        assert_eq!(ask(&s, r#"{"op": "hello"}"#, 1)["watching"], false);
    }
}
