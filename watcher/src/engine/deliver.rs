//! The delivery use case: wait for an allow, type under a lease, confirm, journal — carried
//! out by a running engine, for any transport (`hookline serve`, the daemon's socket, an
//! embedder).
//!
//! What it guarantees, step by step:
//!
//! 1. the session is named exactly, and known; the text (or, for a nudge given none, the
//!    `nudge_text` of its allowed `nudge`) can be typed;
//! 2. the pane is resolved once, to its id on the tmux server the request names; every later
//!    command goes to that id, and before each key the pane must still be the one resolved
//!    (same id, same program): tmux renumbering panes cannot move an Enter elsewhere;
//! 3. it waits (up to the order's `wait`) for the `input` (or `nudge`) decision to allow, with
//!    the pane's evidence, under the caller's lease or a lease of its own;
//! 4. a requester gone before typing starts ([`Cancel`]) gets nothing typed, ever, and a lease
//!    the delivery took is given back; once the paste is sent, the delivery finishes (Enter,
//!    confirmation, journal) rather than leave a half-typed composer;
//! 5. the lease is consumed the instant before the paste: a session that left the idle in
//!    between gets nothing;
//! 6. only a structured `turn_start` whose prompt is the text (where the CLI reports one)
//!    confirms it ([`crate::deliver`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::Running;
use super::sensors::{PANE_GAP, PANE_SAMPLES, PaneSensing};
use crate::Error;
use crate::decide::{Ask, Decision, DeliveryNote, DeliveryStep, LeaseId, Question};
use crate::deliver::{
    self, Confirmations, Delivery, Key, Outcome, Rule, SessionRef, TurnStarted, check_text,
};
use crate::engine::errors::{AnswerError, DeliverError};
use crate::format::clock::now_ns;
use crate::pane::{PaneReading, Resolved, TmuxPane};
use crate::profile::Profiles;
use crate::protocol::{
    DecisionBrief, DeliverAnswer, DeliverOutcome, DeliverRequest, MAX_WAIT, RefusedBy,
};
use crate::state::StateKind;

/// While it waits for an allow and the session is not idle, how often it looks at the session
/// even when no event arrives (and at whether its requester is still there).
const WAIT_STEP: Duration = Duration::from_millis(250);
/// While it waits at an idle its screen withholds, how soon it reads the pane again.
const PANE_STEP: Duration = Duration::from_millis(100);
/// How long one look for a confirmation waits for it.
const CONFIRM_LOOK: Duration = Duration::from_millis(40);

/// A delivery to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Order {
    /// The session, named exactly (its id or tag).
    pub session: String,
    /// Its pane, on the requester's tmux server.
    pub tmux: TmuxPane,
    /// The text; `None` for a nudge: the allowed nudge's `nudge_text` is typed.
    pub text: Option<String>,
    /// `input` or `nudge`: the decision whose allow it needs.
    pub question: Question,
    /// A lease the requester holds on the session's slot; without one the delivery takes its
    /// own.
    pub lease: Option<LeaseId>,
    /// How long to wait for an allow.
    pub wait: Duration,
    /// How long to wait for the confirming `turn_start` (the default when `None`).
    pub confirm_timeout: Option<Duration>,
    /// When the self-heal may press Enter once more (the default when `None`).
    pub heal_after: Option<Duration>,
}

impl Order {
    /// An input delivery of `text` into `tmux` for `session`, asking once.
    pub fn new(session: impl Into<String>, tmux: TmuxPane, text: impl Into<String>) -> Order {
        Order {
            session: session.into(),
            tmux,
            text: Some(text.into()),
            question: Question::Input,
            lease: None,
            wait: Duration::ZERO,
            confirm_timeout: None,
            heal_after: None,
        }
    }
}

impl From<&DeliverRequest> for Order {
    fn from(r: &DeliverRequest) -> Order {
        let ms = |ms: u64| Duration::from_millis(ms).min(MAX_WAIT);
        Order {
            session: r.session.clone(),
            tmux: r.tmux.clone(),
            text: r.text.clone(),
            question: r.question,
            lease: r.lease.clone(),
            wait: ms(r.wait_ms),
            confirm_timeout: r.confirm_timeout_ms.map(ms),
            heal_after: r.heal_after_ms.map(ms),
        }
    }
}

/// Raised when the requester of a delivery is gone (its connection closed, its process
/// interrupted): a delivery that has not started typing then types nothing.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Not cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// The requester is gone.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the requester is gone.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The lease a delivery types under: the requester's, or its own (given back if it types
/// nothing).
struct Held {
    id: LeaseId,
    own: bool,
}

impl Running {
    /// Carries out a delivery: see the module documentation. `Err` only when it could not
    /// run at all (nothing typed); every other end is an answer: confirmed, refused (nothing
    /// typed), or unconfirmed (typed, not proven).
    pub fn deliver(&self, order: &Order, cancel: &Cancel) -> Result<DeliverAnswer, DeliverError> {
        let started = Instant::now();
        if order.question != Question::Input && order.question != Question::Nudge {
            return Err(DeliverError::Text(deliver::TextProblem::Empty));
        }
        match &order.text {
            Some(text) => check_text(text).map_err(DeliverError::Text)?,
            None if order.question == Question::Nudge => {}
            None => return Err(DeliverError::Text(deliver::TextProblem::Empty)),
        }
        let stale = |e: AnswerError| DeliverError::Stale { why: e.why() };
        let pane_error = |source: Error| DeliverError::Pane {
            target: order.tmux.target.clone(),
            source: Box::new(source),
        };
        // Named exactly, and known: an act never binds to another session.
        let known =
            self.read_live(|d| d.tracker().session_key(&order.session).is_some()).map_err(stale)?;
        if !known {
            return Ok(self.no_such_session(order, started));
        }
        let resolved = order.tmux.pane().resolve().map_err(pane_error)?;
        if resolved.dead {
            let reason = format!("the program in pane {:?} has exited", order.tmux.target);
            let decision = self.peek(order).map_err(stale)?;
            return Ok(refused(
                &decision,
                RefusedBy::Pane,
                Rule::PaneDead.as_str(),
                &reason,
                started,
                None,
            ));
        }
        let waited = self.wait_for_allow(order, &resolved, cancel, started).map_err(stale)?;
        let (decision, held, reading) = match waited {
            Waited::Allowed { decision, held, reading } => (*decision, held, reading),
            Waited::Refused(answer) => return Ok(*answer),
        };
        let allowed_after_ms = elapsed_ms(started);
        let note = |step, sent: deliver::Sent, confirmed_by| DeliveryNote {
            step,
            tmux: order.tmux.target.clone(),
            bytes: order.text.as_deref().or(decision.nudge_text.as_deref()).map_or(0, str::len),
            delivered: sent.paste,
            enter_resent: sent.enter > 1,
            elapsed_ms: elapsed_ms(started),
            confirmed_by,
            pane_id: Some(resolved.pane.target.clone()),
            lease: Some(held.id.clone()),
        };
        // Whatever ends it before the paste gives back a lease the delivery took itself.
        let give_back = |rule: &str, why: &str| {
            self.act(|d| {
                if held.own {
                    let _ = d.release(&held.id, now_ns());
                }
                d.journal_delivery(
                    &decision,
                    rule,
                    why,
                    note(DeliveryStep::Refused, Default::default(), None),
                );
            });
        };
        let text = match order.text.clone().or_else(|| decision.nudge_text.clone()) {
            Some(text) => text,
            None => {
                give_back("nothing-to-quote", "a nudge with no text and nothing to quote");
                return Err(DeliverError::NothingToQuote { session: order.session.clone() });
            }
        };
        let (profile, session, host_pid) = match self.read_live(|d| {
            let view = d.view(&order.session, now_ns());
            let profile = view.as_ref().and_then(|v| d.tracker().profiles().get(&v.cli).cloned());
            let session = match &view {
                Some(v) if v.tag.as_deref() == Some(order.session.as_str()) => {
                    SessionRef::Tag(order.session.clone())
                }
                Some(v) => SessionRef::Id(v.session_id.clone().unwrap_or(order.session.clone())),
                None => SessionRef::Id(order.session.clone()),
            };
            (profile, session, view.as_ref().map(|v| v.cli.clone()), view.and_then(|v| v.host_pid))
        }) {
            Ok((Some(profile), session, _, host)) => (profile, session, host),
            Ok((None, _, cli, _)) => {
                give_back("no-profile", "the session's CLI has no profile");
                return Err(DeliverError::NoProfile { cli: cli.unwrap_or_default() });
            }
            Err(e) => {
                give_back("events-stopped", "events stopped arriving");
                return Err(stale(e));
            }
        };
        let mut delivery = Delivery::new(resolved.pane.clone(), &profile, session, text.clone());
        delivery.host_pid = host_pid;
        if let Some(timeout) = order.confirm_timeout {
            delivery.options.confirm_timeout = timeout;
        }
        if let Some(heal) = order.heal_after {
            delivery.options.heal_after = heal;
        }
        delivery.options.poll = Duration::from_millis(10);
        let profiles = self.with_decider(|d| d.tracker().profiles().clone());
        let mut confirmations = RunningConfirmations {
            running: self,
            session: order.session.clone(),
            profiles,
            seen: Vec::new(),
        };
        let consumed = AtomicBool::new(false);
        let guard = |key: Key| -> Result<(), (Rule, String)> {
            if key == Key::Paste {
                if cancel.is_cancelled() {
                    return Err((
                        Rule::Cancelled,
                        "the requester went away before typing started".into(),
                    ));
                }
                resolved.still_there().map_err(|why| (Rule::PaneChanged, why))?;
                return match self.act(|d| d.consume(&held.id, now_ns())) {
                    Ok(_) => {
                        consumed.store(true, Ordering::SeqCst);
                        Ok(())
                    }
                    Err(problem) => Err((Rule::LeaseLost, problem.to_string())),
                };
            }
            resolved.still_there().map_err(|why| (Rule::PaneChanged, why))?;
            // The text is in the composer; the CLI may have left its idle prompt by itself
            // since (a background task's end, a wake: a turn, perhaps a dialog). An Enter now
            // could answer that dialog: none is pressed unless the session still reads idle.
            let state = self
                .read_live(|d| d.view(&order.session, now_ns()).map(|v| v.state))
                .map_err(|e| (Rule::LeaseLost, format!("events stopped arriving: {}", e.why())))?;
            if state != Some(StateKind::Idle) {
                let said = state.map_or("no session", |s| s.as_str());
                let why = format!("the session left its idle prompt after the paste (now {said})");
                return Err((Rule::LeaseLost, why));
            }
            if let Some(host) = host_pid
                && !crate::host::in_process_tree(host, resolved.pid)
            {
                let why =
                    format!("the session's host pid {host} has left pane {}", resolved.pane.target);
                return Err((Rule::PaneChanged, why));
            }
            Ok(())
        };
        let report = match deliver::deliver_guarded(&delivery, &mut confirmations, &guard) {
            Ok(report) => report,
            Err(e) => {
                // Nothing was typed: say so in the journal, give the lease back.
                give_back(
                    "pane-unreadable",
                    &format!("nothing typed: {}", crate::errors::chain(&e)),
                );
                return Err(DeliverError::Pane {
                    target: order.tmux.target.clone(),
                    source: Box::new(e),
                });
            }
        };
        let (outcome, refused_rule, event) = match &report.outcome {
            Outcome::Confirmed { event } => (DeliverOutcome::Confirmed, None, Some(event.clone())),
            Outcome::Refused { rule, reason } => {
                (DeliverOutcome::Refused, Some((*rule, reason.clone())), None)
            }
            Outcome::Unconfirmed { reason } => {
                (DeliverOutcome::Unconfirmed, Some((Rule::Text, reason.clone())), None)
            }
        };
        let (rule, reason) = match (&report.outcome, &refused_rule, &event) {
            (Outcome::Unconfirmed { reason }, _, _) => ("unconfirmed".to_owned(), reason.clone()),
            (_, Some((rule, reason)), _) => (rule.as_str().to_owned(), reason.clone()),
            (_, None, Some(e)) => (
                "confirmed".to_owned(),
                format!("turn_start seq {} ({}) confirmed it", e.seq, e.file),
            ),
            _ => (decision.rule.as_str().to_owned(), decision.reason.clone()),
        };
        self.act(|d| {
            if report.enter_resent {
                let why = "the text sat unsubmitted in the composer: Enter pressed once more";
                d.journal_delivery(
                    &decision,
                    "self-heal",
                    why,
                    note(DeliveryStep::SelfHeal, report.sent, None),
                );
            }
            let step = match outcome {
                DeliverOutcome::Confirmed => DeliveryStep::Confirmed,
                DeliverOutcome::Refused => DeliveryStep::Refused,
                DeliverOutcome::Unconfirmed => DeliveryStep::Unconfirmed,
            };
            if outcome == DeliverOutcome::Refused && held.own && !consumed.load(Ordering::SeqCst) {
                let _ = d.release(&held.id, now_ns());
            }
            let seq = event.as_ref().map(|e| e.seq);
            d.journal_delivery(&decision, &rule, &reason, note(step, report.sent, seq));
        });
        let by = match refused_rule {
            Some((Rule::Cancelled, _)) => Some(RefusedBy::Cancelled),
            Some(_) if outcome == DeliverOutcome::Refused => Some(RefusedBy::Pane),
            _ => None,
        };
        let shown = (outcome != DeliverOutcome::Confirmed).then(|| (rule.clone(), reason.clone()));
        let mut a = answer(
            &decision,
            outcome,
            by,
            shown,
            started,
            report.pane.as_ref().or(reading.as_ref()),
        );
        a.delivered = report.delivered;
        a.enter_resent = report.enter_resent;
        a.sent = report.sent;
        a.event = event;
        a.allowed_after_ms = Some(allowed_after_ms);
        a.pane_id = Some(resolved.pane.target.clone());
        a.text = (order.text.is_none()).then_some(text);
        a.lease = Some(held.id.clone());
        Ok(a)
    }

    /// The decision the order asks, as a peek: taking nothing.
    fn peek(&self, order: &Order) -> Result<Decision, AnswerError> {
        let ask = Ask::new(&order.session, order.question).peek();
        self.read_live(|_| ())?;
        Ok(self.act(|d| d.decide_consulted(&ask, now_ns(), None)))
    }

    /// The answer for a name no session has: a refusal (nothing typed), with the names it
    /// resembles.
    fn no_such_session(&self, order: &Order, started: Instant) -> DeliverAnswer {
        let lookup = self.lookup(&order.session);
        let mut reason = format!("no session is named {:?} (yet)", order.session);
        if !lookup.candidates.is_empty() {
            reason.push_str(&format!(
                "; it is the start of {} (acts name sessions exactly)",
                lookup.candidates.join(", ")
            ));
        } else if !lookup.similar.is_empty() {
            reason
                .push_str(&format!("; known sessions it resembles: {}", lookup.similar.join(", ")));
        }
        let ask = Ask::new(&order.session, order.question).peek();
        let decision = self.act(|d| d.decide_consulted(&ask, now_ns(), None));
        refused(&decision, RefusedBy::Decision, "no-such-session", &reason, started, None)
    }

    /// Waits (up to the order's `wait`) for the decision to allow, reading the pane whenever
    /// the session is idle: while it is not, no screen can earn an allow.
    fn wait_for_allow(
        &self,
        order: &Order,
        resolved: &Resolved,
        cancel: &Cancel,
        started: Instant,
    ) -> Result<Waited, AnswerError> {
        let deadline = started + order.wait;
        // What the last decision was asked on: while waiting, the same idle and the same
        // screen are not asked about again (each withheld decision is journaled).
        let mut asked: Option<(u64, crate::decide::PaneEvidence)> = None;
        // When the last withheld decision said asking again could change it (nudge.min-idle,
        // a backoff): then it is asked again on the same idle and screen.
        let mut retry_at: Option<Instant> = None;
        let mut first = true;
        loop {
            if cancel.is_cancelled() {
                let decision = self.peek(order)?;
                let why = "the requester went away before typing started";
                self.journal_refusal(&decision, order, resolved, "requester-gone", why, started);
                return Ok(Waited::Refused(Box::new(refused(
                    &decision,
                    RefusedBy::Cancelled,
                    Rule::Cancelled.as_str(),
                    why,
                    started,
                    None,
                ))));
            }
            let view = self.view(&order.session)?;
            let idle = view.as_ref().is_some_and(|v| v.state == StateKind::Idle);
            let last = Instant::now() >= deadline;
            if !std::mem::take(&mut first) && !idle && !last {
                self.wait_change(deadline.saturating_duration_since(Instant::now()).min(WAIT_STEP));
                continue;
            }
            let patterns =
                self.with_decider(|d| PaneSensing::patterns(d.tracker(), &order.session));
            let reading = resolved.pane.sense_settled(&patterns, PANE_SAMPLES, PANE_GAP).map_err(
                |source| AnswerError::Pane {
                    target: order.tmux.target.clone(),
                    source: Box::new(source),
                },
            )?;
            let view = self.view(&order.session)?;
            let idle = view.as_ref().filter(|v| v.state == StateKind::Idle);
            let fresh = idle
                .is_some_and(|v| asked.as_ref() != Some(&(v.since_ns, reading.evidence.clone())));
            let due = idle.is_some() && retry_at.is_some_and(|at| Instant::now() >= at);
            if last || fresh || due {
                asked = idle.map(|v| (v.since_ns, reading.evidence.clone()));
                let ask = Ask::new(&order.session, order.question).pane(reading.evidence.clone());
                self.read_live(|_| ())?;
                let decision = self.act(|d| match &order.lease {
                    Some(lease) => d.decide_under_lease(&ask, lease, now_ns()),
                    None => d.decide_consulted(&ask, now_ns(), None),
                });
                if decision.allowed()
                    && let Some(id) = decision.lease.clone()
                {
                    let own = order.lease.is_none();
                    return Ok(Waited::Allowed {
                        decision: Box::new(decision),
                        held: Held { id, own },
                        reading: Some(reading),
                    });
                }
                retry_at =
                    decision.retry_after_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
                if last {
                    let (rule, reason) = (decision.rule.as_str(), decision.reason.clone());
                    self.journal_refusal(&decision, order, resolved, rule, &reason, started);
                    return Ok(Waited::Refused(Box::new(refused(
                        &decision,
                        RefusedBy::Decision,
                        rule,
                        &reason,
                        started,
                        Some(&reading),
                    ))));
                }
            }
            // An idle withheld by its screen (a spinner still fading after the turn's end) may
            // change without an event: look again soon.
            let step = if idle.is_some() { PANE_STEP } else { WAIT_STEP };
            let until = retry_at.map_or(deadline, |at| at.min(deadline));
            self.wait_change(until.saturating_duration_since(Instant::now()).min(step));
        }
    }

    fn journal_refusal(
        &self,
        decision: &Decision,
        order: &Order,
        resolved: &Resolved,
        rule: &str,
        reason: &str,
        started: Instant,
    ) {
        let note = DeliveryNote {
            step: DeliveryStep::Refused,
            tmux: order.tmux.target.clone(),
            bytes: order.text.as_deref().map_or(0, str::len),
            delivered: false,
            enter_resent: false,
            elapsed_ms: elapsed_ms(started),
            confirmed_by: None,
            pane_id: Some(resolved.pane.target.clone()),
            lease: order.lease.clone(),
        };
        self.act(|d| d.journal_delivery(decision, rule, reason, note));
    }
}

/// How waiting for an allow ended.
enum Waited {
    Allowed { decision: Box<Decision>, held: Held, reading: Option<PaneReading> },
    Refused(Box<DeliverAnswer>),
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A `deliver` answer with nothing typed.
fn refused(
    decision: &Decision,
    by: RefusedBy,
    rule: &str,
    reason: &str,
    started: Instant,
    pane: Option<&PaneReading>,
) -> DeliverAnswer {
    let shown = Some((rule.to_owned(), reason.to_owned()));
    answer(decision, DeliverOutcome::Refused, Some(by), shown, started, pane)
}

/// A `deliver` answer (the caller fills in what was typed).
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
        sent: Default::default(),
        pane_id: None,
        text: None,
        lease: None,
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

/// Confirmations from the running engine's live events: a `turn_start` of the session after
/// the paste ([`deliver::turn_started`]), each handed out once; a call waits briefly for one,
/// so a confirmation is seen the moment it is applied.
struct RunningConfirmations<'a> {
    running: &'a Running,
    session: String,
    profiles: Profiles,
    seen: Vec<(String, u64)>,
}

impl Confirmations for RunningConfirmations<'_> {
    fn turn_starts(
        &mut self,
        session: &SessionRef,
        since_ns: u64,
    ) -> Result<Vec<TurnStarted>, Error> {
        let (profiles, seen) = (&self.profiles, &self.seen);
        let found = self
            .running
            .wait_for(&self.session, Instant::now() + CONFIRM_LOOK, |e| {
                deliver::turn_started(e, profiles, session, since_ns)
                    .is_some_and(|t| !seen.contains(&(t.file, t.seq)))
            })
            .map_err(|e| Error::EventsStopped { why: e.why() })?;
        let turn = found.and_then(|e| deliver::turn_started(&e, profiles, session, since_ns));
        if let Some(t) = &turn {
            self.seen.push((t.file.clone(), t.seq));
        }
        Ok(turn.into_iter().collect())
    }
}
