//! The decision layer: what an orchestrator may safely do, with the reason and the evidence.
//!
//! Five questions ([`Question`]), each asking whether the orchestrator may go ahead,
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
//! | `nudge` | as `input`, and idle for `nudge.min-idle`, no pending background task or wake from the last stop, fewer than `nudge.max-in-a-row` nudges since real input (takes the slot) | `hold` waiting on its human, a running tool, a turn in progress, a pending wake, a session end; `pause`/`escalate` an env fault; `escalate` at the nudge cap; `fall_back` `unknown` |
//! | `crashed` | session end (not `/clear`), host pid dead or reused, window dead (caller) | `hold` waiting on its human (the freshest evidence), any live state; `pause`/`escalate` an env fault; `fall_back` `unknown` or no events |
//! | `env-fault` | no `stop_failure` or quota notification stands, and the CLI can report them; a transient error after `env-fault.backoff` | `pause` `rate_limit`/`billing`/`auth` and quota notifications, transient errors during the backoff; `escalate` an unclassified error; `fall_back` a CLI that cannot report API errors, `unknown` |
//! | `escalate` | nothing calls for a human | `escalate` `unknown` for `escalate.unknown-after`, waiting on its human for `escalate.waiting-after`, `escalate.withheld-in-a-row` withheld nudge/crashed verdicts on one state, the nudge cap, an unclassified error |
//!
//! Signal precedence is documented and enforced in [`precedence`]. The thresholds are in
//! [`Policy`]; withheld verdicts go to the [`Journal`].
//!
//! ```
//! use hookline::decide::{Ask, Decider, PaneEvidence, Policy, Question};
//! use hookline::profile::Profiles;
//! use hookline::state::Tracker;
//!
//! let now = hookline::format::relay::now_ns();
//! let tracker = Tracker::new(Profiles::shipped()?, now);
//! let mut decider = Decider::new(tracker, Policy::default());
//! // Feed it every canonical event: decider.apply(&event) (e.g. from a hookline::watch::Watcher).
//! let ask = Ask::new("task-1", Question::Nudge).pane(PaneEvidence { spinner: true, ..Default::default() });
//! let decision = decider.decide(&ask, now);
//! assert!(!decision.allowed()); // no event seen for task-1: "no structured signal", fall back
//! println!("{} ({}): {}", decision.action.as_str(), decision.signal.as_str(), decision.reason);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decider;
mod evidence;
mod journal;
pub mod policy;
pub mod precedence;
pub mod protocol;
mod rules;
mod verdict;

pub use decider::{Ask, Decider};
pub use evidence::{
    CallerEvidence, HostProbe, HostStatus, KillProbe, PaneEvidence, TranscriptEvidence,
};
pub use journal::{Journal, Record};
pub use policy::{Policy, PolicyError};
pub use verdict::{
    Action, Counters, Decision, DecisionEvidence, Finding, HoleNote, HostCheck, Question,
    QuotaNotice, Ruling, Signal, Verdict,
};

#[cfg(test)]
mod tests;
