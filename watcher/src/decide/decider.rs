//! The [`Decider`]: one tracker generation, the policy, the journal, and what the decisions
//! remember per session (withheld streaks, nudges, quota notifications, when a host pid was
//! first seen).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::canonical::{Event, Kind};
use crate::state::{Applied, Expect, InputSlot, Refusal, Snapshot, StateKind, Tracker, View};
use crate::vocab::RuleId;

use super::classifier::{
    self, ClassifierVerdict, Consult, ConsultInput, ConsultNote, ConsultOutcome, CrashedVerdict,
    GateFacts,
};
use super::journal::{Journal, Record};
use super::lease::{Lease, LeaseId, LeaseProblem, Leases, Released, Spent};
use super::policy::Policy;
use super::precedence;
use super::rules::{self, Facts};
use super::verdict::{
    Action, Counters, Decision, DecisionEvidence, Finding, HoleNote, HostCheck, Question,
    QuotaNotice, Ruling, Signal, Verdict,
};
use crate::evidence::{
    CallerEvidence, HostProbe, HostStatus, KillProbe, PaneEvidence, TranscriptEvidence,
};

/// One question about one session, with the caller's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Ask {
    /// A session id or a tag.
    pub session: String,
    /// The question.
    pub question: Question,
    /// What the caller's pane heuristics see (can only make the answer more careful).
    #[serde(default)]
    pub pane: Option<PaneEvidence>,
    /// What the caller reads in the transcript (can only make the answer more careful).
    #[serde(default)]
    pub transcript: Option<TranscriptEvidence>,
    /// The caller reports the session's window dead: a completion signal for `crashed`.
    #[serde(default)]
    pub window_dead: Option<bool>,
    /// The generation and epoch the caller last saw; the input slot is refused if they moved.
    #[serde(default)]
    pub expect: Expect,
    /// Answer without taking anything: no input slot, no lease, no consult, and nothing
    /// counted toward a cap, a streak or a counter.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub peek: bool,
}

impl Ask {
    /// A question with no caller evidence.
    pub fn new(session: impl Into<String>, question: Question) -> Ask {
        Ask {
            session: session.into(),
            question,
            pane: None,
            transcript: None,
            window_dead: None,
            expect: Expect::default(),
            peek: false,
        }
    }

    /// Adds the caller's evidence (pane, transcript, window), each part that it holds.
    pub fn with(mut self, caller: CallerEvidence) -> Ask {
        self.pane = caller.pane.or(self.pane);
        self.transcript = caller.transcript.or(self.transcript);
        self.window_dead = caller.window_dead.or(self.window_dead);
        self
    }

    /// Asks without taking anything (see [`Ask::peek`]).
    pub fn peek(mut self) -> Ask {
        self.peek = true;
        self
    }

    /// Adds pane evidence.
    pub fn pane(mut self, pane: PaneEvidence) -> Ask {
        self.pane = Some(pane);
        self
    }

    /// Adds transcript evidence.
    pub fn transcript(mut self, transcript: TranscriptEvidence) -> Ask {
        self.transcript = Some(transcript);
        self
    }

    /// Reports the window dead or alive.
    pub fn window_dead(mut self, dead: bool) -> Ask {
        self.window_dead = Some(dead);
        self
    }

    /// Refuses the input slot unless the session is still in this generation and epoch.
    pub fn expect(mut self, expect: Expect) -> Ask {
        self.expect = expect;
        self
    }

    fn caller(&self) -> CallerEvidence {
        CallerEvidence {
            pane: self.pane.clone(),
            transcript: self.transcript,
            window_dead: self.window_dead,
        }
    }
}

/// What a decision's deterministic part found.
struct Deterministic {
    key: Option<String>,
    snapshot: Option<Snapshot>,
    counters: Counters,
    quota: Option<QuotaNotice>,
    host: Option<(u32, HostStatus)>,
    structured: Ruling,
    holes: Vec<HoleNote>,
    /// The structured ruling with the caller's evidence applied.
    ruling: Ruling,
    caller: Vec<Finding>,
}

/// A consult that ran, as the caps and `classifier.waiting-in-a-row` count it.
#[derive(Debug, Clone)]
struct Mark {
    ts_ns: u64,
    session: String,
    key: Option<String>,
    question: Question,
    verdict: ClassifierVerdict,
}

impl Mark {
    fn concerns(&self, session: &str, key: Option<&str>) -> bool {
        self.session == session || (key.is_some() && self.key.as_deref() == key)
    }
}

/// A classifier consult [`Decider::consult_for`] plans.
#[derive(Debug, Clone)]
pub enum Planned {
    /// Run it ([`Consult::run`]).
    Run(Consult),
    /// Do not: a cap is reached; the note says which.
    Skip(ConsultNote),
}

impl Planned {
    /// The note of the consult: run now (for at most its timeout), or the skipped one.
    pub fn run(self) -> ConsultNote {
        match self {
            Planned::Run(consult) => consult.run(),
            Planned::Skip(note) => note,
        }
    }
}

/// Withheld `nudge`/`crashed` verdicts in a row for one state of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Streak {
    state: StateKind,
    since_ns: u64,
    count: u32,
}

#[derive(Debug, Clone, Default)]
struct Memory {
    /// The host pid and when an event first carried it.
    host_first_seen: Option<(u32, u64)>,
    quota: Option<QuotaNotice>,
    streak: Option<Streak>,
    /// Nudges allowed since the last allowed input, and the epoch they count in.
    nudges: u32,
    nudge_epoch: u64,
}

/// Decides what an orchestrator may safely do, from one tracker generation.
///
/// Feed it every canonical event with [`Decider::apply`] (instead of applying them to the
/// tracker directly) and ask with [`Decider::decide`]. A `Decider` built on a replayed
/// history (one the engine replayed, or one built outside an engine) never authorizes input.
pub struct Decider {
    tracker: Tracker,
    policy: Policy,
    journal: Option<Journal>,
    probe: Box<dyn HostProbe>,
    memory: HashMap<String, Memory>,
    one_shot: bool,
    /// Whether its withheld verdicts count toward `escalate.withheld-in-a-row`.
    counts: bool,
    journal_errors: Vec<String>,
    /// The consults this decider ran, for the caps when it has no journal.
    consults: Vec<Mark>,
    /// Consults planned and not yet decided on ([`Decider::consult_for`]): counted toward the
    /// caps from the moment they are planned, so that concurrent requests cannot both pass.
    reserved: Vec<(u64, Mark)>,
    next_reservation: u64,
    /// The leases on input slots this generation handed out.
    leases: Leases,
}

impl std::fmt::Debug for Decider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decider")
            .field("generation", &self.tracker.generation())
            .field("policy", &self.policy)
            .field("journal", &self.journal)
            .field("one_shot", &self.one_shot)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Decider {
    /// A decider over `tracker` (one generation), with no journal and the real host probe.
    /// The policy's `[stale]` windows are set on the tracker, over any it already has (check
    /// them first with [`Policy::check_profiles`]).
    pub fn new(tracker: Tracker, policy: Policy) -> Decider {
        let tracker = tracker.with_stale_windows_over(&policy.stale);
        Decider {
            tracker,
            policy,
            journal: None,
            probe: Box::new(KillProbe),
            memory: HashMap::new(),
            one_shot: false,
            counts: true,
            journal_errors: Vec::new(),
            consults: Vec::new(),
            reserved: Vec::new(),
            next_reservation: 0,
            leases: Leases::default(),
        }
    }

    /// Marks this decider as a one-shot reader of history: it answers every question but
    /// never authorizes input or a nudge, even for an event that arrived while it read; and
    /// its withheld verdicts do not count toward `escalate.withheld-in-a-row` (its `nudge` is
    /// withheld by design), unless [`Decider::counting`] says otherwise.
    pub(crate) fn one_shot(mut self) -> Decider {
        self.one_shot = true;
        self.counts = false;
        self
    }

    /// Counts this decider's withheld `nudge` and `crashed` verdicts toward
    /// `escalate.withheld-in-a-row` even though it is a one-shot: for a caller whose own
    /// polling is the stall timer (`hookline decide --count`).
    pub(crate) fn counting(mut self) -> Decider {
        self.counts = true;
        self
    }

    /// Appends withheld verdicts to `journal`, and takes the `withheld-in-a-row` streaks it
    /// already holds into account: those of live generations and of one-shots asked to count
    /// (see [`Record::counted`]).
    pub fn with_journal(mut self, journal: Journal) -> Decider {
        for record in journal.read() {
            self.count_record(&record);
        }
        self.journal = Some(journal);
        self
    }

    /// Says that history has been replayed: every event applied from now on is live. Only
    /// the engine, which owns the events' source, says so.
    pub(crate) fn caught_up(&mut self) {
        self.tracker.caught_up();
    }

    /// Whether this decider holds a live generation (caught up with history): the only kind
    /// whose allows can authorize input.
    pub fn is_live(&self) -> bool {
        self.tracker.is_live() && !self.one_shot
    }

    /// Replaces the host process probe (tests inject one).
    pub fn with_probe(mut self, probe: impl HostProbe + 'static) -> Decider {
        self.probe = Box::new(probe);
        self
    }

    /// [`Decider::with_probe`], boxed.
    pub(crate) fn with_boxed_probe(mut self, probe: Box<dyn HostProbe>) -> Decider {
        self.probe = probe;
        self
    }

    /// The tracker.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// The tracker, to restore a checkpoint into before any event is applied.
    pub(crate) fn tracker_mut(&mut self) -> &mut Tracker {
        &mut self.tracker
    }

    /// What the decider remembers of each session from its events (not from its decisions:
    /// streaks and nudges come from the journal), as a checkpoint writes it.
    pub(crate) fn memory_to_wire(&self) -> std::collections::BTreeMap<String, super::wire::Memory> {
        self.memory
            .iter()
            .map(|(key, m)| {
                let saved = super::wire::Memory {
                    host_first_seen: m.host_first_seen,
                    quota: m.quota.clone(),
                };
                (key.clone(), saved)
            })
            .collect()
    }

    /// Takes back what [`Decider::memory_to_wire`] wrote, beside what the journal said.
    pub(crate) fn restore_memory(
        &mut self,
        saved: std::collections::BTreeMap<String, super::wire::Memory>,
    ) {
        for (key, m) in saved {
            let memory = self.memory.entry(key).or_default();
            memory.host_first_seen = m.host_first_seen;
            memory.quota = m.quota;
        }
    }

    /// Takes a new policy, profiles and journal (a reload), keeping the generation, its
    /// sessions, what the decisions remember and the leases.
    pub(crate) fn reload(
        &mut self,
        policy: Policy,
        profiles: crate::profile::Profiles,
        journal: Option<Journal>,
    ) {
        self.tracker.reload(profiles, &policy.stale);
        self.policy = policy;
        self.journal = journal;
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The journal, when there is one.
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// Journal write failures since the last call (the decisions themselves stand).
    pub fn take_journal_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.journal_errors)
    }

    /// Applies one canonical event to the tracker and to what the decisions remember.
    pub fn apply(&mut self, event: &Event) -> Applied {
        let applied = self.tracker.apply(event);
        let Some(key) = applied.session.clone().filter(|_| applied.ignored.is_none()) else {
            return applied;
        };
        let memory = self.memory.entry(key).or_default();
        if let Some(pid) = event.host_pid
            && memory.host_first_seen.is_none_or(|(known, _)| known != pid)
        {
            memory.host_first_seen = Some((pid, event.ts_ns));
        }
        if let Kind::Notification { notification_type, message } = &event.kind {
            let has = |text: &Option<String>, words: &[String]| {
                text.as_deref().is_some_and(|t| {
                    let t = t.to_lowercase();
                    words.iter().any(|w| !w.is_empty() && t.contains(&w.to_lowercase()))
                })
            };
            if has(notification_type, &self.policy.quota_notification_types)
                || has(message, &self.policy.quota_messages)
            {
                memory.quota = Some(QuotaNotice {
                    ts_ns: event.ts_ns,
                    notification_type: notification_type.clone(),
                    message: message.clone(),
                    file: event.source.file.clone(),
                });
            }
        }
        applied
    }

    /// Records what hookline read in a session's transcript (see
    /// [`Tracker::observe_transcript`]): rank-2 evidence, which every later answer about the
    /// session takes into account and which can only make it more careful.
    pub fn observe_transcript(
        &mut self,
        id_or_key: &str,
        facts: crate::transcript::TranscriptFacts,
    ) -> bool {
        self.tracker.observe_transcript(id_or_key, facts)
    }

    /// Records what hookline read in the transcript of a session no hook event reports (see
    /// [`Tracker::observe_unhooked_transcript`]).
    pub fn observe_unhooked_transcript(
        &mut self,
        cli: &str,
        session_id: &str,
        facts: crate::transcript::TranscriptFacts,
        since_ns: u64,
    ) -> bool {
        self.tracker.observe_unhooked_transcript(cli, session_id, facts, since_ns)
    }

    /// The caller's evidence with what hookline read in the session's transcript added: its
    /// facts newer than the session's last event, and the zero-token floor. Adding can only
    /// make the answer more careful.
    fn caller_evidence(
        &self,
        ask: &Ask,
        snapshot: Option<&Snapshot>,
        now_ns: u64,
    ) -> CallerEvidence {
        let mut evidence = ask.caller();
        let Some(snapshot) = snapshot else { return evidence };
        let Some(seen) = &snapshot.transcript else { return evidence };
        let mut own = seen.evidence;
        let turn = matches!(snapshot.state.kind(), StateKind::Active | StateKind::ChildCommand);
        own.zero_tokens =
            turn && seen.zero_tokens_for(self.policy.zero_tokens_after, snapshot.since_ns, now_ns);
        if own.any() {
            evidence.transcript = Some(own.or(evidence.transcript));
        }
        evidence
    }

    /// The view of a session at `now_ns`.
    pub fn view(&self, id_or_tag: &str, now_ns: u64) -> Option<View> {
        self.tracker.view(id_or_tag, now_ns)
    }

    /// Answers one question at `now_ns`. An allowed `input` or `nudge` has taken the session's
    /// input slot (see [`Decision::slot`]); a withheld verdict is journaled. At a consult
    /// point with `[classifier]` configured, the classifier is run first, here, for at most
    /// `classifier.timeout` (see [`super::classifier`]; [`Decider::consult_for`] and
    /// [`Decider::decide_consulted`] split the two for a caller that must not hold a lock
    /// while it runs).
    pub fn decide(&mut self, ask: &Ask, now_ns: u64) -> Decision {
        let note = self.consult_for(ask, now_ns).map(Planned::run);
        self.decide_consulted(ask, now_ns, note)
    }

    /// The consults that count toward the caps: those that ran, and those planned and not
    /// decided on yet (a reservation older than twice the timeout and a minute is given up:
    /// its request ended without a decision).
    fn consults_counted(&mut self, now_ns: u64) -> Vec<Mark> {
        let patience =
            (2 * self.policy.classifier.timeout.as_nanos() as u64).saturating_add(60_000_000_000);
        self.reserved.retain(|(_, m)| now_ns.saturating_sub(m.ts_ns) < patience);
        let mut counted = self.consult_history();
        counted.extend(self.reserved.iter().map(|(_, m)| m.clone()));
        counted
    }

    /// The classifier consult deciding `ask` at `now_ns` would make: none unless
    /// `[classifier]` names a command, the question is at a consult point (`stall` at its
    /// structural `fall_back` with a last message; `crashed` on a silent session with a
    /// screen) and there is text to show; a note saying so when a cap stops it.
    ///
    /// A consult planned counts toward the caps at once, until the decision it is for is made
    /// ([`Decider::decide_consulted`]): two requests planning at the same time cannot both
    /// pass a cap. A peek never consults.
    pub fn consult_for(&mut self, ask: &Ask, now_ns: u64) -> Option<Planned> {
        if ask.peek {
            return None;
        }
        let command = self.policy.classifier.command.clone()?;
        let det = self.deterministic(ask, now_ns, None);
        let input = match ask.question {
            Question::Stall
                if det.structured.rule == RuleId::StallNoStructuralSignal
                    && det.ruling.action == Action::FallBack =>
            {
                ConsultInput::last_message(det.snapshot.as_ref()?.last_message.as_deref()?)?
            }
            Question::Crashed
                if matches!(
                    det.structured.rule,
                    RuleId::NoCompletionSignal | RuleId::UnknownState
                ) && det.ruling.action <= Action::Hold =>
            {
                ConsultInput::screen(ask.pane.as_ref()?.screen.as_deref()?)?
            }
            _ => return None,
        };
        let history = self.consults_counted(now_ns);
        let hour_ago = now_ns.saturating_sub(3_600_000_000_000);
        let of_session =
            history.iter().filter(|m| m.concerns(&ask.session, det.key.as_deref())).count();
        let last_hour = history.iter().filter(|m| m.ts_ns > hour_ago).count();
        let caps = &self.policy.classifier;
        if of_session >= caps.max_per_session as usize {
            return Some(Planned::Skip(Consult::skipped(&input, ConsultOutcome::SessionCap)));
        }
        if last_hour >= caps.max_per_hour as usize {
            return Some(Planned::Skip(Consult::skipped(&input, ConsultOutcome::HourlyCap)));
        }
        let timeout = caps.timeout;
        let mark = Mark {
            ts_ns: now_ns,
            session: ask.session.clone(),
            key: det.key.clone(),
            question: ask.question,
            verdict: ClassifierVerdict::unknown(ask.question)
                .unwrap_or(ClassifierVerdict::Crashed(CrashedVerdict::Unknown)),
        };
        self.next_reservation += 1;
        self.reserved.push((self.next_reservation, mark));
        Some(Planned::Run(Consult { command, input, timeout }))
    }

    /// Answers one question at `now_ns` as [`Decider::decide`] does, with the classifier's
    /// note of a consult already run (or skipped) for it, which only the act-gate
    /// ([`super::classifier::gate`]) reads; a note of another question is ignored.
    pub fn decide_consulted(
        &mut self,
        ask: &Ask,
        now_ns: u64,
        note: Option<ConsultNote>,
    ) -> Decision {
        self.decide_with(ask, now_ns, note, None)
    }

    /// [`Decider::decide_consulted`]; with `held`, for a requester holding that lease on the
    /// slot: the slot it holds counts as free for it, nothing new is taken, nothing counted.
    fn decide_with(
        &mut self,
        ask: &Ask,
        now_ns: u64,
        note: Option<ConsultNote>,
        held: Option<&Lease>,
    ) -> Decision {
        let quiet = ask.peek || held.is_some();
        let Deterministic {
            key,
            snapshot,
            mut counters,
            quota,
            host,
            structured,
            holes,
            ruling: deterministic,
            caller,
        } = self.deterministic(ask, now_ns, held);
        let mut note = note.filter(|n| n.question == ask.question);
        // The consult planned for it (if any) is decided on now: counted from here on as one
        // that ran, or not at all.
        if let Some(i) = self
            .reserved
            .iter()
            .position(|(_, m)| m.question == ask.question && m.session == ask.session)
        {
            self.reserved.remove(i);
        }
        let mut ruling = deterministic.clone();
        if let Some(note) = &mut note {
            let history = self.consult_history();
            let waiting = ClassifierVerdict::Crashed(CrashedVerdict::WaitingOnHuman);
            note.waiting_in_a_row = if note.verdict == waiting
                && note.outcome == ConsultOutcome::Answered
            {
                let before = history
                    .iter()
                    .rev()
                    .filter(|m| {
                        m.question == Question::Crashed && m.concerns(&ask.session, key.as_deref())
                    })
                    .take_while(|m| m.verdict == waiting)
                    .count();
                u32::try_from(before).unwrap_or(u32::MAX).saturating_add(1)
            } else {
                0
            };
            let no_structural_signal = structured.action == Action::FallBack
                && structured.rule == RuleId::StallNoStructuralSignal
                && snapshot.as_ref().is_some_and(|v| {
                    v.state.kind() == StateKind::Idle
                        && !rules::pending_wakes(&self.policy, v).iter().any(|w| w.gates)
                });
            let said = snapshot
                .as_ref()
                .and_then(|v| v.last_message.as_deref())
                .and_then(rules::last_sentence);
            let nudge_text = match said {
                Some(said) => format!(
                    "You ended your turn on {said:?} with the work not done. Please carry on \
                     with it; if it is done, say so."
                ),
                None => "You ended your turn with the work not done. Please carry on with it; \
                         if it is done, say so."
                    .to_owned(),
            };
            let facts = GateFacts {
                question: ask.question,
                deterministic: &deterministic,
                no_structural_signal,
                waiting_in_a_row: note.waiting_in_a_row,
                waiting_limit: self.policy.classifier.waiting_in_a_row,
                nudge_text: &nudge_text,
            };
            // Only an answer is a verdict: a note of a consult that did not answer changes
            // nothing, whatever it holds.
            let verdict = match note.outcome {
                ConsultOutcome::Answered => note.verdict,
                _ => ClassifierVerdict::unknown(ask.question).unwrap_or(note.verdict),
            };
            ruling = precedence::enforce(classifier::gate(&facts, verdict));
            note.changed = ruling != deterministic;
            note.deterministic = Some(deterministic.action);
            if note.outcome.ran() {
                self.consults.push(Mark {
                    ts_ns: now_ns,
                    session: ask.session.clone(),
                    key: key.clone(),
                    question: ask.question,
                    verdict: note.verdict,
                });
            }
        }
        let mut slot = None;
        let mut lease = None;
        if ruling.action == Action::Proceed
            && matches!(ask.question, Question::Input | Question::Nudge)
        {
            self.sweep_leases(now_ns);
            let taken = match held {
                Some(held) => match self.tracker.input_slot_now(&ask.session, now_ns, ask.expect) {
                    Err(Refusal::AlreadyTaken)
                        if self.tracker.at_idle_of(&held.key, &held.slot) =>
                    {
                        Ok(held.slot.clone())
                    }
                    Ok(_) => Ok(held.slot.clone()),
                    Err(refusal) => Err(refusal),
                },
                None if ask.peek => {
                    self.tracker.input_slot_now(&ask.session, now_ns, ask.expect).map(|(_, s)| s)
                }
                None => self.tracker.take_input_slot_expecting(&ask.session, now_ns, ask.expect),
            };
            match taken {
                Ok(taken) => {
                    if let Some(held) = held {
                        lease = Some(held.id.clone());
                    } else if !ask.peek
                        && let Some(key) = &key
                    {
                        let held = self.leases.take(
                            &ask.session,
                            key,
                            ask.question,
                            taken.clone(),
                            now_ns,
                        );
                        lease = Some(held.id);
                    }
                    slot = Some(taken);
                }
                Err(refusal) => {
                    ruling = Ruling::new(
                        Action::Hold,
                        Signal::StructuredEvent,
                        RuleId::InputSlotRefused,
                        rules::slot_refused(ask.question, &refusal),
                    );
                }
            }
            // An allowed nudge carries the text `stall` would quote, when it quotes one.
            if ruling.action == Action::Proceed && ask.question == Question::Nudge {
                let profile = snapshot.as_ref().and_then(|v| self.tracker.profiles().get(&v.cli));
                let stall = Facts {
                    question: Question::Stall,
                    session: &ask.session,
                    snapshot: snapshot.as_ref(),
                    profile,
                    policy: &self.policy,
                    host: None,
                    window_dead: None,
                    counters,
                    quota: None,
                    one_shot: false,
                };
                ruling.nudge_text = precedence::enforce(rules::rule(&stall)).nudge_text;
            }
        }
        let withheld = ruling.action != Action::Proceed;
        if let (Some(key), Some(v)) = (&key, &snapshot) {
            let memory = self.memory.entry(key.clone()).or_default();
            match ask.question {
                _ if !self.counts || quiet => {}
                Question::Nudge | Question::Crashed if withheld => {
                    let count = match memory.streak {
                        Some(s) if s.state == v.state.kind() && s.since_ns == v.since_ns => {
                            s.count + 1
                        }
                        _ => 1,
                    };
                    let state = v.state.kind();
                    memory.streak = Some(Streak { state, since_ns: v.since_ns, count });
                    counters.withheld_in_a_row = count;
                }
                Question::Nudge | Question::Crashed => {
                    memory.streak = None;
                    counters.withheld_in_a_row = 0;
                }
                _ => {}
            }
            if !withheld && ask.question == Question::Nudge && !quiet {
                if memory.nudge_epoch != v.epoch {
                    memory.nudges = 0;
                    memory.nudge_epoch = v.epoch;
                }
                memory.nudges += 1;
                counters.nudges_in_a_row = memory.nudges;
            }
            if !withheld && ask.question == Question::Input && !quiet {
                memory.nudges = 0;
                counters.nudges_in_a_row = 0;
            }
        }
        let decision = Decision {
            question: ask.question,
            session: ask.session.clone(),
            verdict: ruling.action.verdict(),
            action: ruling.action,
            signal: ruling.signal,
            rule: ruling.rule,
            reason: ruling.reason.clone(),
            retry_after_ms: ruling.retry_after_ms,
            slot,
            lease,
            nudge_text: ruling.nudge_text.clone().filter(|_| ruling.action == Action::Proceed),
            state: snapshot.as_ref().map(|v| v.state.kind()),
            at_ns: now_ns,
            evidence: DecisionEvidence {
                structured,
                caller,
                host: host.map(|(pid, status)| HostCheck {
                    pid,
                    status,
                    note: "kill(pid, 0), and the process start time on Linux: a reused pid \
                           whose start time cannot be read looks alive (crashed then waits for \
                           the session end or a dead window); a pid from another pid namespace \
                           cannot be checked (turn crashed.check-host-pid off)"
                        .to_owned(),
                }),
                window_dead: ask.window_dead,
                holes,
                counters,
                quota_notice: quota,
                pending_wakes: match (&snapshot, ask.question) {
                    (Some(v), Question::Nudge | Question::Stall) => {
                        rules::pending_wakes(&self.policy, v)
                    }
                    _ => Vec::new(),
                },
                classifier: note,
                view: snapshot.as_ref().map(View::from),
            },
        };
        // A consult is journaled whatever the verdict: the caps are counted there. A peek
        // counts nothing, and is not journaled.
        if !ask.peek
            && (decision.verdict == Verdict::Withhold || decision.evidence.classifier.is_some())
        {
            self.record(&Record::of(&decision, key.as_deref(), self.counts));
        }
        decision
    }

    /// What the structured layer and the caller's evidence say, before any classifier. With
    /// `held`, for the holder of that lease: the slot it holds counts as free, and the nudge
    /// its allow counted is not counted again.
    fn deterministic(&self, ask: &Ask, now_ns: u64, held: Option<&Lease>) -> Deterministic {
        let key = self.tracker.session_key(&ask.session);
        let mut snapshot = self.tracker.snapshot(&ask.session, now_ns);
        if let Some(v) = &mut snapshot {
            self.as_holder(held, v);
        }
        let profile = snapshot.as_ref().and_then(|v| self.tracker.profiles().get(&v.cli));
        let memory = key.as_ref().and_then(|k| self.memory.get(k)).cloned().unwrap_or_default();
        let counters = Counters {
            withheld_in_a_row: match (memory.streak, &snapshot) {
                (Some(s), Some(v)) if s.state == v.state.kind() && s.since_ns == v.since_ns => {
                    s.count
                }
                _ => 0,
            },
            nudges_in_a_row: match &snapshot {
                Some(v) if memory.nudge_epoch == v.epoch => {
                    let own = held.is_some_and(|l| {
                        l.question == Question::Nudge && l.slot.epoch == memory.nudge_epoch
                    });
                    memory.nudges.saturating_sub(u32::from(own))
                }
                _ => 0,
            },
        };
        let quota = memory.quota.clone().filter(|notice| {
            snapshot.as_ref().is_some_and(|v| notice.ts_ns >= v.evidence.ts_ns)
                && u128::from(now_ns.saturating_sub(notice.ts_ns))
                    <= self.policy.quota_notice_for.as_nanos()
        });
        let host = match (&snapshot, ask.question) {
            (Some(v), Question::Crashed) if self.policy.check_host_pid => v.host_pid.map(|pid| {
                let first_seen = memory
                    .host_first_seen
                    .filter(|(known, _)| *known == pid)
                    .map_or(u64::MAX, |(_, ts)| ts);
                (pid, self.probe.probe(pid, first_seen))
            }),
            _ => None,
        };
        let facts = Facts {
            question: ask.question,
            session: &ask.session,
            snapshot: snapshot.as_ref(),
            profile,
            policy: &self.policy,
            host,
            window_dead: ask.window_dead,
            counters,
            quota: quota.as_ref(),
            one_shot: self.one_shot,
        };
        let mut structured = precedence::enforce(rules::rule(&facts));
        // A state the transcript set (rank 2) may only make the answer more careful than the
        // structured events alone would.
        let plain = snapshot
            .as_ref()
            .filter(|v| v.evidence.kind == "transcript")
            .and_then(|_| self.tracker.structured_snapshot(&ask.session, now_ns))
            .map(|mut plain| {
                self.as_holder(held, &mut plain);
                plain
            });
        if let Some(plain) = &plain {
            let without =
                precedence::enforce(rules::rule(&Facts { snapshot: Some(plain), ..facts }));
            // An allow is never the transcript's: at proceed, the structured events' own.
            if without.action > structured.action
                || (without.action == Action::Proceed && structured.action == Action::Proceed)
            {
                structured = without;
            }
        }
        let holes = rules::holes(profile, snapshot.as_ref());
        let evidence = self.caller_evidence(ask, snapshot.as_ref(), now_ns);
        let (ruling, caller) = precedence::combine(ask.question, &structured, &evidence);
        Deterministic { key, snapshot, counters, quota, host, structured, holes, ruling, caller }
    }

    /// The snapshot as the holder of `held` sees it: the idle's slot it holds is free for it.
    fn as_holder(&self, held: Option<&Lease>, v: &mut Snapshot) {
        if let Some(lease) = held
            && v.input == InputSlot::Refused(Refusal::AlreadyTaken)
            && self.tracker.at_idle_of(&lease.key, &lease.slot)
        {
            v.input = InputSlot::Available;
        }
    }

    /// The consults that ran, oldest first: the journal's (shared with every other decider
    /// writing it) when there is one, else this decider's own.
    fn consult_history(&self) -> Vec<Mark> {
        match &self.journal {
            Some(journal) if self.policy.journal_enabled => journal
                .read()
                .into_iter()
                .filter_map(|r| {
                    let note = r.consult.filter(|n| n.outcome.ran())?;
                    Some(Mark {
                        ts_ns: r.ts_ns,
                        session: r.session,
                        key: r.key,
                        question: note.question,
                        verdict: note.verdict,
                    })
                })
                .collect(),
            _ => self.consults.clone(),
        }
    }

    /// Takes a session's input slot directly, as a lease:
    /// no rule but the slot's own is checked (explicit, fresh, live idle; the slot free; the
    /// caller's generation and epoch). A refusal is journaled as a withheld `input`. A
    /// one-shot decider always refuses.
    pub fn take_input_slot(
        &mut self,
        id_or_tag: &str,
        now_ns: u64,
        expect: Expect,
    ) -> Result<Lease, Refusal> {
        self.sweep_leases(now_ns);
        let result = if self.one_shot {
            Err(Refusal::Replayed { live_since_ns: None })
        } else {
            self.tracker.take_input_slot_expecting(id_or_tag, now_ns, expect)
        };
        match result {
            Ok(slot) => {
                let key = self.tracker.session_key(id_or_tag).unwrap_or_default();
                if let Some(memory) = self.memory.get_mut(&key) {
                    memory.nudges = 0;
                }
                Ok(self.leases.take(id_or_tag, &key, Question::Input, slot, now_ns))
            }
            Err(refusal) => {
                let view = self.tracker.view(id_or_tag, now_ns);
                let record = Record {
                    ts_ns: now_ns,
                    at: crate::units::rfc3339(now_ns),
                    session: id_or_tag.to_owned(),
                    key: self.tracker.session_key(id_or_tag),
                    question: Question::Input,
                    verdict: Verdict::Withhold,
                    action: Action::Hold,
                    signal: Signal::StructuredEvent,
                    rule: RuleId::InputSlotRefused.as_str().to_owned(),
                    reason: refusal.to_string(),
                    state: view.as_ref().map(|v| v.state),
                    since_ns: view.as_ref().map(|v| v.since_ns),
                    epoch: view.as_ref().map(|v| v.epoch),
                    generation: view.as_ref().map(|v| v.generation),
                    delivery: None,
                    consult: None,
                    counted: self.counts,
                };
                self.record(&record);
                Err(refusal)
            }
        }
    }

    /// Ends the leases whose idle is over (the session left it: void) or that were held longer
    /// than `input.lease-expires-after` (expired: the slot is free again).
    pub(crate) fn sweep_leases(&mut self, now_ns: u64) {
        let expiry = self.policy.lease_expires_after.as_nanos() as u64;
        let tracker = &self.tracker;
        let over = self.leases.over(|lease| {
            if !tracker.at_idle_of(&lease.key, &lease.slot) {
                Some(Spent::Void)
            } else if expiry > 0 && now_ns.saturating_sub(lease.taken_ns) >= expiry {
                Some(Spent::Expired)
            } else {
                None
            }
        });
        for (id, spent) in over {
            if let Some(lease) = self.leases.end(&id, spent)
                && spent == Spent::Expired
            {
                self.tracker.release_input_slot(&lease.key, &lease.slot);
                self.uncount(&lease);
            }
        }
    }

    /// The lease held under `id`, for `session` (named exactly, as the lease's requester
    /// named it, or by the other of its id and tag): what a delivery under a caller's lease
    /// checks before it types.
    pub fn lease(
        &mut self,
        id: &LeaseId,
        session: &str,
        now_ns: u64,
    ) -> Result<Lease, LeaseProblem> {
        self.sweep_leases(now_ns);
        let lease = self.leases.get(id)?;
        let key = self.tracker.session_key(session);
        if key.as_deref() != Some(lease.key.as_str()) {
            return Err(LeaseProblem::OtherSession {
                id: id.clone(),
                holds: lease.session.clone(),
                asked: session.to_owned(),
            });
        }
        Ok(lease.clone())
    }

    /// The leases held now, for `hookline lease list` and `status`.
    pub fn leases(&mut self, now_ns: u64) -> Vec<Lease> {
        self.sweep_leases(now_ns);
        let mut held: Vec<Lease> = self.leases.held().cloned().collect();
        held.sort_by_key(|l| l.taken_ns);
        held
    }

    /// Gives a lease back: the slot is free again for the next caller when the session is
    /// still at that idle ([`Released::Freed`]); [`Released::Void`] when it has left it. A
    /// nudge lease given back is not counted as a nudge. An unknown or spent lease is a
    /// [`LeaseProblem`].
    pub fn release(&mut self, id: &LeaseId, now_ns: u64) -> Result<Released, LeaseProblem> {
        self.sweep_leases(now_ns);
        self.leases.get(id)?;
        let lease = self.leases.end(id, Spent::Released).expect("the lease was held");
        if self.tracker.release_input_slot(&lease.key, &lease.slot) {
            self.uncount(&lease);
            Ok(Released::Freed)
        } else {
            Ok(Released::Void)
        }
    }

    /// Marks a lease used: something was typed under it. It never comes back.
    pub fn consume(&mut self, id: &LeaseId, now_ns: u64) -> Result<Lease, LeaseProblem> {
        self.sweep_leases(now_ns);
        self.leases.get(id)?;
        Ok(self.leases.end(id, Spent::Consumed).expect("the lease was held"))
    }

    /// Takes back what an allowed nudge counted, for a nudge lease given back unused.
    fn uncount(&mut self, lease: &Lease) {
        if lease.question != Question::Nudge {
            return;
        }
        if let Some(memory) = self.memory.get_mut(&lease.key)
            && memory.nudge_epoch == lease.slot.epoch
        {
            memory.nudges = memory.nudges.saturating_sub(1);
        }
    }

    /// Answers `input` (or `nudge`) for a requester that already holds `lease` on the
    /// session's slot: the same rules and evidence as [`Decider::decide`], the slot held by the
    /// lease instead of free. Nothing new is taken; a withheld answer leaves the lease held.
    pub fn decide_under_lease(&mut self, ask: &Ask, lease: &LeaseId, now_ns: u64) -> Decision {
        let plain = Ask { peek: false, ..ask.clone() };
        let held = match self.lease(lease, &ask.session, now_ns) {
            Ok(held) => held,
            Err(problem) => {
                let decision = self.decide_with(&Ask { peek: true, ..plain }, now_ns, None, None);
                return self.refuse_lease(decision, RuleId::LeaseRefused, problem.to_string());
            }
        };
        if ask.question == Question::Nudge && held.question != Question::Nudge {
            let decision = self.decide_with(&Ask { peek: true, ..plain }, now_ns, None, None);
            let problem =
                LeaseProblem::OtherQuestion { id: lease.clone(), taken_by: held.question };
            return self.refuse_lease(decision, RuleId::LeaseRefused, problem.to_string());
        }
        self.decide_with(&plain, now_ns, None, Some(&held))
    }

    fn refuse_lease(&mut self, mut decision: Decision, rule: RuleId, reason: String) -> Decision {
        decision.verdict = Verdict::Withhold;
        decision.action = Action::Hold;
        decision.signal = Signal::StructuredEvent;
        decision.rule = rule;
        decision.reason = reason;
        decision.slot = None;
        decision.lease = None;
        decision.nudge_text = None;
        let key = self.tracker.session_key(&decision.session);
        self.record(&Record::of(&decision, key.as_deref(), false));
        decision
    }

    /// Journals a delivery's step (see [`super::DeliveryNote`]) for the session of the
    /// `input` decision it asked for, with the rule and reason of the step (the decision's,
    /// the pane's refusal, or what was seen instead of a confirmation).
    pub fn journal_delivery(
        &mut self,
        decision: &Decision,
        rule: &str,
        reason: &str,
        note: super::journal::DeliveryNote,
    ) {
        let key = self.tracker.session_key(&decision.session);
        let mut record = Record::of(decision, key.as_deref(), false);
        record.rule = rule.to_owned();
        record.reason = reason.to_owned();
        record.ts_ns = crate::format::clock::now_ns();
        record.at = crate::units::rfc3339(record.ts_ns);
        record.delivery = Some(note);
        self.record(&record);
    }

    fn record(&mut self, record: &Record) {
        if !self.policy.journal_enabled {
            return;
        }
        if let Some(journal) = &self.journal
            && let Err(e) = journal.append(record)
        {
            self.journal_errors.push(format!("cannot append to {}: {e}", journal.path().display()));
        }
    }

    /// Counts a journaled withheld verdict into the session's streak.
    fn count_record(&mut self, record: &Record) {
        let (Some(key), Some(state), Some(since_ns)) = (&record.key, record.state, record.since_ns)
        else {
            return;
        };
        if !record.counted || !matches!(record.question, Question::Nudge | Question::Crashed) {
            return;
        }
        let memory = self.memory.entry(key.clone()).or_default();
        let count = match memory.streak {
            Some(s) if s.state == state && s.since_ns == since_ns => s.count + 1,
            _ => 1,
        };
        memory.streak = Some(Streak { state, since_ns, count });
    }
}
