//! The decision layer: what an orchestrator may safely do, with the reason and the evidence.
//!
//! The questions ([`Question`]), each asking whether the orchestrator may go ahead,
//! unattended, with something that would be wrong if hookline were wrong. Every answer is a
//! [`Decision`]: a [`Verdict`] (`allow` or `withhold`), an [`Action`] (`proceed`, or what to do
//! instead: `fall_back`, `hold`, `pause`, `escalate`), the [`Signal`] that decided, the rule,
//! the reason, and the evidence (the session's view with its events, states and ages; the
//! caller's evidence and what it did; the host check; the profile holes that bear on it).
//!
//! The invariant: **only an explicit structured event can make a session eligible for input.**
//! Pane heuristics and transcript signals may only make the answer more careful, never allow;
//! `unknown` is loud and never treated as idle; where hookline has no structured signal (a CLI
//! whose profile has no such event, a session with no events at all) the answer is
//! `fall_back` — keep your own behaviour — never a guess.
//!
//! | question | allows (`proceed`) | withholds |
//! |---|---|---|
//! | `input` | explicit, fresh, authoritative `idle` of the current generation and epoch whose slot is free (it is taken: deliver once) | `hold` any other state, a replayed or taken idle, a one-shot reader; `pause`/`escalate` an env fault; `fall_back` `unknown` or no events |
//! | `nudge` | as `input`, and idle for `nudge.min-idle`, no pending wake from the last stop (a running task or one-shot wake; not a dev server or a recurring cron), fewer than `nudge.max-in-a-row` nudges since real input (takes the slot) | `hold` waiting on its human, a running tool, a turn in progress, a pending wake, a session end; `pause`/`escalate` an env fault; `escalate` at the nudge cap; `fall_back` `unknown` |
//! | `crashed` | session end (not `/clear`), host pid dead or reused, window dead (caller) | `hold` waiting on its human (the freshest evidence), any live state; `pause`/`escalate` an env fault; `fall_back` `unknown` or no events |
//! | `env-fault` | no `stop_failure` or quota notification stands, and the CLI can report them; a transient error after `env-fault.backoff` | `pause` `rate_limit`/`billing`/`auth` and quota notifications, transient errors during the backoff; `escalate` an unclassified error; `fall_back` a CLI that cannot report API errors, `unknown` |
//! | `escalate` | nothing calls for a human | `escalate` `unknown` for `escalate.unknown-after`, waiting on its human for `escalate.waiting-after`, `escalate.withheld-in-a-row` withheld nudge/crashed verdicts on one state, the nudge cap, an unclassified error |
//! | `stall` | at the end of a turn, no pending wake (a running task or one-shot wake; not a `stall.services` dev server, not a recurring cron), and a livelock (`stall.livelock-repeats` identical consecutive calls) or an open item of the session's own task list: a nudge is wanted, its text in `nudge_text` (no slot is taken: ask `nudge` before typing) | `hold` not at an explicit idle (waiting on its human, a running tool, a turn in progress, a session end) or a pending wake; `pause`/`escalate` an env fault; `fall_back` `unknown`, no events, or no structural signal either way |
//!
//! Where no structural signal answers (`stall`'s `fall_back`, `crashed` on a silent session), a
//! classifier the policy's `[classifier]` names may be consulted inside the request; its
//! verdicts act only through the act-gate ([`classifier::gate`]), which can only make an answer
//! more careful except `stalled` at `stall`'s `fall_back` (docs/classifier.md).
//!
//! Signal precedence is documented and enforced in [`precedence`]. The thresholds are in
//! [`Policy`]; withheld verdicts go to the [`Journal`]. `docs/decide.md` has every rule by
//! name, and the `hookline serve` protocol ([`crate::serve`]) for other languages.
//!
//! An orchestrator's loop: an engine ([`crate::engine`]) feeds the decider every event and
//! says when its history is read; ask before acting.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hookline::decide::{Action, Ask, PaneEvidence, Policy, Question};
//! use hookline::engine::{Engine, EngineConfig, Source};
//! use hookline::ingest::reader::{ReaderConfig, Start};
//! use hookline::profile::{OverlayDirs, Profiles};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let profiles = Profiles::load(&OverlayDirs::standard())?;
//! let events_dir = hookline::format::location::events_dir()?;
//! let policy = Policy::default(); // or Policy::load(path)?
//! let config = EngineConfig::new(profiles.clone(), policy, &events_dir);
//! let reader = ReaderConfig::new(&events_dir, Start::Beginning, profiles);
//! // One generation: the events present now are history, shown but never authorizing;
//! // what arrives after is live, whatever the wall clock does.
//! let mut engine = Engine::open(config, Source::directory(reader))?;
//! loop {
//!     while engine.poll(Duration::from_millis(200))?.is_some() {}
//!     // Your stall timer fired for task-42: may I nudge it? Your pane heuristics can only
//!     // make the answer more careful.
//!     let pane = PaneEvidence { spinner: false, ..Default::default() };
//!     let decision = engine.decide(&Ask::new("task-42", Question::Nudge).pane(pane));
//!     match decision.action {
//!         Action::Proceed => { /* a lease is held (decision.lease): type the nudge, once */ }
//!         Action::FallBack => { /* no structured signal: keep your existing behaviour */ }
//!         Action::Hold => { /* not now: decision.reason says why */ }
//!         Action::Pause => { /* quota, billing, auth: pause the run, charge nothing */ }
//!         Action::Escalate => { /* ask a human */ }
//!     }
//! }
//! # }
//! ```
//!
//! A decider with no event for a session answers "no structured signal":
//!
//! ```
//! use hookline::decide::{Action, Ask, Decider, Policy, Question, Signal};
//! use hookline::profile::Profiles;
//! use hookline::state::Tracker;
//!
//! let now = hookline::format::clock::now_ns();
//! let mut decider = Decider::new(Tracker::new(Profiles::shipped()?, now), Policy::default());
//! let decision = decider.decide(&Ask::new("task-1", Question::Input), now);
//! assert!(!decision.allowed());
//! assert_eq!((decision.action, decision.signal), (Action::FallBack, Signal::None));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod classifier;
mod decider;
mod journal;
pub mod lease;
pub mod policy;
pub mod precedence;
mod rules;
mod verdict;
pub(crate) mod wire;

pub use crate::evidence::{
    CallerEvidence, HostProbe, HostStatus, KillProbe, PaneEvidence, TranscriptEvidence,
};
pub use decider::{Ask, Decider, Planned};
pub use journal::{DeliveryNote, DeliveryStep, Journal, Record};
pub use lease::{Lease, LeaseId, LeaseProblem, Released, Spent};
pub use policy::{ClassifierPolicy, Policy};
pub use verdict::{
    Action, Counters, Decision, DecisionEvidence, Finding, HoleNote, HostCheck, PendingWake,
    Question, QuotaNotice, RuleId, Ruling, Signal, Verdict, WakeSource,
};

#[cfg(test)]
mod tests;
