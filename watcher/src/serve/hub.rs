//! The hub behind `hookline serve`: the decider and the per-session queues `next_event` hands
//! out from, behind one lock, with the condition variable that wakes its waiters. One thread
//! applies events ([`Shared::apply`]); any thread may answer requests ([`Shared::handle`]).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::canonical::Event;
use crate::decide::{Ask, Decider, Decision, DeliveryNote, DeliveryStep, Question};
use crate::deliver::{self, Confirmations, Delivery, Outcome, SessionRef, TurnStarted};
use crate::error::Error;
use crate::pane::{self, PaneReading};
use crate::profile::{PanePatterns, Profile, Profiles};
use crate::state::StateKind;
use crate::transcript::{Followers, Unhooked};

use super::protocol::{
    Answer, DecisionBrief, DeliverAnswer, DeliverOutcome, DeliverRequest, Hello, MAX_WAIT,
    NextAnswer, PROTOCOL_VERSION, QUEUE_PER_SESSION, RefusedBy, Reply, Request, parse,
};

/// How many looks at a pane make the reading a decision or a delivery takes.
pub const PANE_SAMPLES: usize = 3;
/// The pause between those looks.
pub const PANE_GAP: Duration = Duration::from_millis(80);
/// While a `deliver` waits for an allow and the session is not idle, how often it looks at the
/// session even when no event arrives.
const WAIT_STEP: Duration = Duration::from_secs(1);
/// While it waits at an idle its screen withholds, how soon it reads the pane again.
const PANE_STEP: Duration = Duration::from_millis(100);

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
    /// The live sessions' transcripts, read before each answer.
    transcripts: Followers,
    /// The fallback producers: transcripts of sessions without hooks.
    unhooked: Vec<Unhooked>,
    queues: HashMap<String, Queue>,
    info: ServeInfo,
    failure: Option<String>,
}

impl Hub {
    /// A hub around a decider that has already caught up with history.
    pub fn new(decider: Decider, info: ServeInfo) -> Hub {
        Hub {
            decider,
            transcripts: Followers::default(),
            unhooked: Vec::new(),
            queues: HashMap::new(),
            info,
            failure: None,
        }
    }

    /// Reads what the sessions' transcripts gained and hands it to the decider: rank-2
    /// evidence, which can only make the answers more careful.
    fn read_transcripts(&mut self, now_ns: u64) {
        let (facts, _unreadable) = self.transcripts.poll(self.decider.tracker(), now_ns);
        for (key, facts) in facts {
            self.decider.observe_transcript(&key, facts);
        }
        for producer in &mut self.unhooked {
            let (found, _unreadable) = producer.read(now_ns);
            for (id, facts, since) in found {
                self.decider.observe_unhooked_transcript(producer.cli(), &id, facts, since);
            }
        }
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

    /// Follows a fallback producer too: the transcripts of sessions without hooks, read
    /// before each answer from now on (what they hold now is history).
    pub fn follow_unhooked(&self, mut producer: Unhooked, now_ns: u64) {
        let mut hub = self.lock();
        let (found, _unreadable) = producer.read(now_ns);
        for (id, facts, since) in found {
            hub.decider.observe_unhooked_transcript(producer.cli(), &id, facts, since);
        }
        hub.unhooked.push(producer);
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

    /// The CLI's `[pane]` patterns and profile for a session, by the CLI of its events; every
    /// profile's patterns together ([`pane::union`]) when it has none yet.
    fn patterns_for(
        &self,
        session: &str,
        now: &dyn Fn() -> u64,
    ) -> (PanePatterns, Option<Profile>) {
        let hub = self.lock();
        let profiles: &Profiles = hub.decider.tracker().profiles();
        let profile = hub.decider.view(session, now()).and_then(|v| profiles.get(&v.cli).cloned());
        match profile {
            Some(p) => (p.pane.clone(), Some(p)),
            None => (pane::union(profiles.iter().map(|p| &p.pane)), None),
        }
    }

    /// Reads the `tmux` pane of a `decide` and adds what it shows to the caller's evidence.
    fn with_pane(&self, mut ask: Ask, now: &dyn Fn() -> u64) -> Result<Ask, String> {
        let Some(tmux) = ask.tmux.clone() else { return Ok(ask) };
        let (patterns, _) = self.patterns_for(&ask.session, now);
        let reading = tmux
            .pane()
            .sense_settled(&patterns, PANE_SAMPLES, PANE_GAP)
            .map_err(|e| e.to_string())?;
        let mut evidence = reading.evidence;
        // The classifier's `crashed` consult reads the last screenful.
        if ask.question == Question::Crashed
            && self.lock().decider.policy().classifier.command.is_some()
        {
            let screen = tmux.pane().capture().map_err(|e| e.to_string())?;
            evidence.screen = Some(pane::strip_escapes(&screen));
        }
        ask.pane = Some(evidence.or(ask.pane));
        Ok(ask)
    }

    /// `deliver`: asks the `input` decision with the pane's evidence (waiting up to `wait_ms`
    /// for an allow), and with the slot types the text, holding no lock, and waits for the
    /// `turn_start` that confirms it. Every step is journaled. `Err` (nothing typed) for a
    /// bad text, a pane that cannot be read, or a stopped watcher.
    fn deliver(&self, r: DeliverRequest, now: &dyn Fn() -> u64) -> Result<DeliverAnswer, String> {
        let started = Instant::now();
        deliver::check_text(&r.text).map_err(|p| p.to_string())?;
        let target = r.tmux.pane();
        let deadline = started + Duration::from_millis(r.wait_ms).min(MAX_WAIT);
        // What the last decision was asked on: while waiting, the same idle and the same screen
        // are not asked about again (each withheld decision is journaled).
        let mut asked: Option<(u64, crate::decide::PaneEvidence)> = None;
        let mut first = true;
        let (decision, profile, session, host_pid) = loop {
            // While the session is not idle, no screen can earn an allow: wait for its events
            // without reading the pane (the first look always reads it: a missing pane is an
            // error at once).
            if !std::mem::take(&mut first) && Instant::now() < deadline {
                let hub = self.lock();
                let idle =
                    hub.decider.view(&r.session, now()).is_some_and(|v| v.state == StateKind::Idle);
                if !idle && hub.failure.is_none() {
                    let left = deadline.saturating_duration_since(Instant::now()).min(WAIT_STEP);
                    drop(self.arrived.wait_timeout(hub, left).unwrap_or_else(|p| p.into_inner()).0);
                    continue;
                }
            }
            let (patterns, profile) = self.patterns_for(&r.session, now);
            let reading = target
                .sense_settled(&patterns, PANE_SAMPLES, PANE_GAP)
                .map_err(|e| e.to_string())?;
            let mut hub = self.lock();
            if let Some(why) = &hub.failure {
                return Err(format!("events stopped arriving ({why}): nothing may be typed"));
            }
            let view = hub.decider.view(&r.session, now());
            let last = Instant::now() >= deadline;
            // While waiting, only an idle not asked about yet, or a changed screen, is worth a
            // decision.
            let idle = view.as_ref().filter(|v| v.state == StateKind::Idle);
            let fresh = idle
                .is_some_and(|v| asked.as_ref() != Some(&(v.since_ns, reading.evidence.clone())));
            if last || fresh {
                asked = idle.map(|v| (v.since_ns, reading.evidence.clone()));
                let ask = Ask::new(&r.session, Question::Input).pane(reading.evidence.clone());
                let decision = hub.decider.decide(&ask, now());
                if decision.allowed() {
                    let session = match &view {
                        Some(v) if v.tag.as_deref() == Some(r.session.as_str()) => {
                            SessionRef::Tag(r.session.clone())
                        }
                        Some(v) => {
                            SessionRef::Id(v.session_id.clone().unwrap_or(r.session.clone()))
                        }
                        None => SessionRef::Id(r.session.clone()),
                    };
                    break (decision, profile, session, view.and_then(|v| v.host_pid));
                }
                if last {
                    let note = self.note(&r, DeliveryStep::Refused, false, false, started, None);
                    let (rule, reason) = (decision.rule.clone(), decision.reason.clone());
                    hub.decider.journal_delivery(&decision, &rule, &reason, note);
                    return Ok(answer(
                        &decision,
                        DeliverOutcome::Refused,
                        Some(RefusedBy::Decision),
                        Some((rule, reason)),
                        started,
                        Some(&reading),
                    ));
                }
            }
            // An idle withheld by its screen (a spinner still fading after the turn's end) may
            // change without an event: look again soon.
            let step = if idle.is_some() { PANE_STEP } else { WAIT_STEP };
            let left = deadline.saturating_duration_since(Instant::now()).min(step);
            drop(self.arrived.wait_timeout(hub, left).unwrap_or_else(|p| p.into_inner()).0);
        };
        let allowed_after_ms = elapsed_ms(started);
        // The slot is ours alone: type without the lock, so events keep arriving meanwhile.
        let Some(profile) = profile else {
            return Err("the session's CLI has no profile: nothing typed".into());
        };
        let mut delivery = Delivery::new(target, &profile, session, r.text.clone());
        delivery.host_pid = host_pid;
        if let Some(ms) = r.confirm_timeout_ms {
            delivery.options.confirm_timeout = Duration::from_millis(ms).min(MAX_WAIT);
        }
        if let Some(ms) = r.heal_after_ms {
            delivery.options.heal_after = Duration::from_millis(ms).min(MAX_WAIT);
        }
        delivery.options.poll = Duration::from_millis(10);
        let profiles = self.lock().decider.tracker().profiles().clone();
        let mut confirmations = HubConfirmations {
            shared: self,
            session: r.session.clone(),
            profiles,
            seen: Vec::new(),
        };
        let report = match deliver::deliver(&delivery, &mut confirmations) {
            Ok(report) => report,
            Err(e) => {
                // Nothing was typed: say so in the journal, then answer with the error.
                let note = self.note(&r, DeliveryStep::Refused, false, false, started, None);
                let why = format!("nothing typed: {e}");
                self.lock().decider.journal_delivery(&decision, "pane-unreadable", &why, note);
                return Err(why);
            }
        };
        let (outcome, refused, event) = match &report.outcome {
            Outcome::Confirmed { event } => (DeliverOutcome::Confirmed, None, Some(event.clone())),
            Outcome::Refused { rule, reason } => {
                (DeliverOutcome::Refused, Some((rule.as_str().to_owned(), reason.clone())), None)
            }
            Outcome::Unconfirmed { reason } => (
                DeliverOutcome::Unconfirmed,
                Some(("unconfirmed".to_owned(), reason.clone())),
                None,
            ),
        };
        {
            let mut hub = self.lock();
            if report.enter_resent {
                let note = self.note(&r, DeliveryStep::SelfHeal, true, true, started, None);
                let why = "the text sat unsubmitted in the composer: Enter pressed once more";
                hub.decider.journal_delivery(&decision, "self-heal", why, note);
            }
            let step = match outcome {
                DeliverOutcome::Confirmed => DeliveryStep::Confirmed,
                DeliverOutcome::Refused => DeliveryStep::Refused,
                DeliverOutcome::Unconfirmed => DeliveryStep::Unconfirmed,
            };
            let seq = event.as_ref().map(|e| e.seq);
            let note = self.note(&r, step, report.delivered, report.enter_resent, started, seq);
            let (rule, reason) = match (&refused, &event) {
                (Some((rule, reason)), _) => (rule.clone(), reason.clone()),
                (None, Some(e)) => (
                    "confirmed".to_owned(),
                    format!("turn_start seq {} ({}) confirmed it", e.seq, e.file),
                ),
                (None, None) => (decision.rule.clone(), decision.reason.clone()),
            };
            hub.decider.journal_delivery(&decision, &rule, &reason, note);
        }
        let by = matches!(outcome, DeliverOutcome::Refused).then_some(RefusedBy::Pane);
        let mut a = answer(&decision, outcome, by, refused, started, report.pane.as_ref());
        a.delivered = report.delivered;
        a.enter_resent = report.enter_resent;
        a.event = event;
        a.allowed_after_ms = Some(allowed_after_ms);
        Ok(a)
    }

    fn note(
        &self,
        r: &DeliverRequest,
        step: DeliveryStep,
        delivered: bool,
        enter_resent: bool,
        started: Instant,
        confirmed_by: Option<u64>,
    ) -> DeliveryNote {
        DeliveryNote {
            step,
            tmux: r.tmux.target.clone(),
            bytes: r.text.len(),
            delivered,
            enter_resent,
            elapsed_ms: elapsed_ms(started),
            confirmed_by,
        }
    }

    /// Answers one request line with one reply line (no newline). `now` is the clock.
    pub fn handle(&self, line: &str, now: &dyn Fn() -> u64) -> String {
        match parse(line) {
            Ok((id, request)) => self.reply(id, request, now),
            Err(refused) => refused,
        }
        .to_line()
    }

    /// Answers a request [`parse`] read. `now` is the clock. A `deliver` or a `decide` with
    /// a `tmux` pane reads the pane first, holding no lock.
    pub fn reply(&self, id: Value, request: Request, now: &dyn Fn() -> u64) -> Reply {
        let op = request.op();
        let answer = match request {
            Request::Deliver(r) => self.deliver(r, now).map(|a| Answer::Deliver(Box::new(a))),
            Request::Decide(ask) => self.with_pane(ask, now).and_then(|ask| {
                // A classifier consult runs holding no lock, bounded by its timeout.
                let planned = self.lock().decider.consult_for(&ask, now());
                let note = planned.map(crate::decide::Planned::run);
                self.answer(Request::Decide(ask), note, now)
            }),
            request => self.answer(request, None, now),
        };
        match answer {
            Ok(answer) => Reply::answer(id, op, answer),
            Err(error) => Reply::error(id, Some(op), error),
        }
    }

    /// Answers a request; a `decide` with the note of the classifier consult run for it.
    fn answer(
        &self,
        request: Request,
        note: Option<crate::decide::classifier::ConsultNote>,
        now: &dyn Fn() -> u64,
    ) -> Result<Answer, String> {
        let mut hub = self.lock();
        hub.read_transcripts(now());
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
                let decision = hub.decider.decide_consulted(&ask, now(), note);
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
            Request::Deliver(_) => Err("a deliver is answered by Shared::reply".into()),
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

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A `deliver` answer with nothing typed yet (the caller fills in the rest).
fn answer(
    decision: &Decision,
    outcome: DeliverOutcome,
    refused_by: Option<RefusedBy>,
    refused: Option<(String, String)>,
    started: Instant,
    pane: Option<&PaneReading>,
) -> DeliverAnswer {
    let (rule, reason) = refused.unzip();
    DeliverAnswer {
        outcome,
        delivered: false,
        confirmed: outcome == DeliverOutcome::Confirmed,
        enter_resent: false,
        decision: DecisionBrief::from(decision),
        refused_by,
        rule,
        reason,
        elapsed_ms: elapsed_ms(started),
        allowed_after_ms: None,
        event: None,
        pane: pane.map(|p| p.evidence.clone()),
        composer: pane.and_then(|p| p.composer.clone()),
    }
}

/// Confirmations from the hub's live events: a `turn_start` of the session after the paste
/// ([`deliver::turn_started`]), each handed out once; a call waits briefly for one, so a
/// confirmation is seen the moment it is applied.
struct HubConfirmations<'a> {
    shared: &'a Shared,
    session: String,
    profiles: Profiles,
    seen: Vec<(String, u64)>,
}

/// How long one look for a confirmation waits for it.
const CONFIRM_LOOK: Duration = Duration::from_millis(40);

impl Confirmations for HubConfirmations<'_> {
    fn turn_starts(
        &mut self,
        session: &SessionRef,
        since_ns: u64,
    ) -> Result<Vec<TurnStarted>, Error> {
        let (profiles, seen) = (&self.profiles, &self.seen);
        let found = self
            .shared
            .wait_for(&self.session, Instant::now() + CONFIRM_LOOK, |e| {
                deliver::turn_started(e, profiles, session, since_ns)
                    .is_some_and(|t| !seen.contains(&(t.file, t.seq)))
            })
            .map_err(|why| Error::EventsStopped { why })?;
        let turn = found.and_then(|e| deliver::turn_started(&e, profiles, session, since_ns));
        if let Some(t) = &turn {
            self.seen.push((t.file.clone(), t.seq));
        }
        Ok(turn.into_iter().collect())
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
    fn a_deliver_that_cannot_type_takes_no_slot() {
        let s = shared(T0);
        s.apply(&event(1, 1, "UserPromptSubmit.json"));
        s.apply(&event(2, 2, "Stop.json"));
        let deliver = |text: &str| {
            let request = json!({
                "id": 1, "op": "deliver", "session": "task-1", "text": text,
                "tmux": {"target": "nowhere:9", "socket": "/nonexistent/hookline-test.sock"},
            });
            ask(&s, &request.to_string(), 3)
        };
        let reply = deliver("rm -rf /\u{1b}[201~");
        assert_eq!((reply["ok"].clone(), reply["op"].clone()), (json!(false), json!("deliver")));
        assert!(reply["error"].as_str().unwrap().contains("U+001B"), "{reply}");
        let reply = deliver("hello");
        assert_eq!(reply["ok"], false, "{reply}");
        assert!(reply["error"].as_str().unwrap().contains("nowhere:9"), "{reply}");
        // Neither took the idle's slot: a caller that can type still gets it.
        let reply = ask(&s, r#"{"op": "take_input_slot", "session": "task-1"}"#, 4);
        assert_eq!(reply["granted"], true, "{reply}");
        let reply = ask(&s, r#"{"op": "deliver", "session": "task-1", "text": "x"}"#, 4);
        assert!(reply["error"].as_str().unwrap().contains("missing field `tmux`"), "{reply}");
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
