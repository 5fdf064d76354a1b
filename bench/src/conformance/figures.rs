//! The figures: each run scored against its truth, then gathered per CLI.

use std::collections::BTreeMap;

use hookline::decide::Question;
use hookline::profile::Profile;
use serde_json::{Value, json};

use super::run::{Outcome, Peek, Recording};
use super::scenario::{Perturbation, Scenario};
use super::score::{self, Comparison, Wrong};
use super::tap;
use super::truth::{self, Truth};

/// A wrong stretch shorter than this is hookline catching up (a hook's latency), not a hole.
pub const CATCHING_UP_NS: u64 = 1_000_000_000;

/// What a wrong stretch is put down to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// Shorter than [`CATCHING_UP_NS`]: the events were on their way.
    CatchingUp,
    /// A hole the CLI's profile names.
    Hole(String),
    /// Nothing names it.
    Defect,
}

impl Cause {
    /// For tables: `hole esc-interrupt`, `defect`, `catching up`.
    pub fn label(&self) -> String {
        match self {
            Cause::CatchingUp => "catching up".into(),
            Cause::Hole(id) => format!("hole `{id}`"),
            Cause::Defect => "**defect**".into(),
        }
    }
}

/// Puts a wrong stretch down to a hole of the CLI's profile: the first hole the scenario names
/// that the profile has and whose state is the one reported (or that names no state), else
/// the first it names that the profile has, else a hole of the profile whose state is the one
/// reported; a defect when none fits.
pub fn cause(w: &Wrong, profile: Option<&Profile>, scenario_holes: &[String]) -> Cause {
    if w.len_ns < CATCHING_UP_NS {
        return Cause::CatchingUp;
    }
    let Some(profile) = profile else { return Cause::Defect };
    let listed: Vec<_> = profile.holes.iter().filter(|h| scenario_holes.contains(&h.id)).collect();
    listed
        .iter()
        .find(|h| h.state.is_none_or(|s| s == w.reported))
        .or(listed.first())
        .map(|h| Cause::Hole(h.id.clone()))
        .or_else(|| {
            profile
                .holes
                .iter()
                .find(|h| h.state == Some(w.reported))
                .map(|h| Cause::Hole(h.id.clone()))
        })
        .unwrap_or(Cause::Defect)
}

/// One delivery, scored.
#[derive(Debug, Clone)]
pub struct DeliveryScore {
    /// The perturbation.
    pub perturb: Perturbation,
    /// How it ended: `confirmed`, `refused`, `unconfirmed`, or `error`.
    pub outcome: String,
    /// The rule that refused it or left it unconfirmed.
    pub rule: Option<String>,
    /// Whether the self-heal pressed Enter again.
    pub enter_resent: bool,
    /// From the allow to the outcome (ms), when it was allowed.
    pub allow_to_outcome_ms: Option<u64>,
    /// Bytes that reached the CLI while a dialog was open.
    pub wrongful: usize,
    /// Bytes that reached it while a turn ran (not a dialog).
    pub into_turn: usize,
    /// Bracketed pastes that reached it.
    pub pastes: usize,
    /// Whether it typed onto a draft in the composer.
    pub over_draft: bool,
}

/// One run, scored.
#[derive(Debug, Clone)]
pub struct RunScore {
    /// The scenario.
    pub scenario: String,
    /// `played`, `skipped` or `failed`.
    pub status: &'static str,
    /// Why it was skipped or failed.
    pub reason: Option<String>,
    /// The comparison.
    pub comparison: Comparison,
    /// The true timeline (ns since the run's start, state).
    pub truth: Vec<(u64, Truth)>,
    /// Every wrong stretch of a second or more, with its cause.
    pub holes: Vec<(Wrong, Cause)>,
    /// The worst wrong stretch, with its cause.
    pub worst: Option<(Wrong, Cause)>,
    /// Peeks asked.
    pub peeks: usize,
    /// Peeks that allowed `input` or `nudge` while the truth was not an idle prompt.
    pub false_auths: Vec<Peek>,
    /// The deliveries.
    pub deliveries: Vec<DeliveryScore>,
    /// Bytes that reached the neighbouring pane.
    pub neighbour_bytes: usize,
    /// Notification latencies (ns).
    pub notifications: Vec<u64>,
    /// The following threads' errors, counted.
    pub thread_errors: usize,
    /// The machine's 1-minute load average when the run ended.
    pub load: Option<f64>,
}

/// Scores one run.
pub fn score(scenario: &Scenario, outcome: &Outcome, profile: Option<&Profile>) -> RunScore {
    let (status, reason, recording) = match outcome {
        Outcome::Played(r) => ("played", None, Some(r.as_ref())),
        Outcome::Skipped(why) => ("skipped", Some(why.clone()), None),
        Outcome::Failed(r, why) => ("failed", Some(why.clone()), Some(r.as_ref())),
    };
    let mut s = RunScore {
        scenario: scenario.name.clone(),
        status,
        reason,
        comparison: Comparison::default(),
        truth: Vec::new(),
        holes: Vec::new(),
        worst: None,
        peeks: 0,
        false_auths: Vec::new(),
        deliveries: Vec::new(),
        neighbour_bytes: 0,
        notifications: Vec::new(),
        thread_errors: 0,
        load: None,
    };
    let Some(r) = recording.filter(|r| r.window.0 > 0) else { return s };
    let truth = truth::timeline(&r.facts);
    s.comparison = score::compare(&truth, &r.reported, r.window.0, r.window.1);
    s.holes = s
        .comparison
        .wrong
        .iter()
        .filter(|w| w.len_ns >= CATCHING_UP_NS)
        .map(|w| {
            let relative = Wrong { start_ns: w.start_ns.saturating_sub(r.window.0), ..w.clone() };
            (relative, cause(w, profile, &scenario.holes))
        })
        .collect();
    s.worst = s
        .comparison
        .wrong
        .iter()
        .max_by_key(|w| w.len_ns)
        .map(|w| (w.clone(), cause(w, profile, &scenario.holes)));
    s.peeks = r.peeks.len();
    s.false_auths = false_auths(&truth, &r.peeks);
    s.deliveries = deliveries(&truth, r);
    s.neighbour_bytes = r.neighbour_bytes;
    s.notifications = r.notifications.clone();
    s.thread_errors = r.thread_errors.len();
    s.truth = truth.iter().map(|(t, st)| (t.saturating_sub(r.window.0), *st)).collect();
    s
}

/// Peeks that allowed while the truth, at the instant the daemon decided, was not an idle
/// prompt.
pub fn false_auths(truth: &[(u64, Truth)], peeks: &[Peek]) -> Vec<Peek> {
    peeks
        .iter()
        .filter(|p| p.allowed && matches!(p.question, Question::Input | Question::Nudge))
        .filter(|p| truth::at(truth, p.at_ns) != Truth::Idle)
        .cloned()
        .collect()
}

fn deliveries(truth: &[(u64, Truth)], r: &Recording) -> Vec<DeliveryScore> {
    r.deliveries
        .iter()
        .map(|d| {
            let bytes: Vec<(u64, u8)> = r
                .pane_bytes
                .iter()
                .copied()
                .filter(|(t, _)| (d.window.0..=d.window.1).contains(t))
                .collect();
            // What the CLI showed just before each byte arrived.
            let before = |t: u64| truth::at(truth, t.saturating_sub(1));
            let into_dialog = bytes.iter().filter(|(t, _)| before(*t) == Truth::Dialog).count();
            let into_turn = bytes
                .iter()
                .filter(|(t, _)| matches!(before(*t), Truth::Active | Truth::Tool | Truth::Fault))
                .count();
            let answer = d.answer.as_ref();
            let outcome = answer.map_or("error", |a| a.outcome.as_str());
            DeliveryScore {
                perturb: d.perturb,
                outcome: outcome.into(),
                rule: answer.and_then(|a| a.rule.clone()).or_else(|| d.error.clone()),
                enter_resent: answer.is_some_and(|a| a.enter_resent),
                allow_to_outcome_ms: answer.and_then(|a| {
                    a.allowed_after_ms.map(|allowed| a.elapsed_ms.saturating_sub(allowed))
                }),
                wrongful: into_dialog,
                into_turn,
                pastes: tap::pastes(&bytes),
                over_draft: d.perturb == Perturbation::TextInComposer
                    && answer.is_some_and(|a| a.delivered),
            }
        })
        .collect()
}

/// Nearest-rank percentile of unsorted values.
pub fn percentile(values: &[u64], p: f64) -> Option<u64> {
    let mut v = values.to_vec();
    v.sort_unstable();
    if v.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    Some(v[rank.clamp(1, v.len()) - 1])
}

/// Milliseconds or seconds, for people.
pub fn human_ns(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// One CLI's figures over its runs.
#[derive(Debug, Clone)]
pub struct CliFigures {
    /// The profile's name.
    pub cli: String,
    /// Its name for people.
    pub title: String,
    /// The version played.
    pub version: String,
    /// Each run.
    pub runs: Vec<RunScore>,
}

impl CliFigures {
    /// The runs with a recording: the safety counts read every one of them.
    fn recorded(&self) -> impl Iterator<Item = &RunScore> {
        self.runs.iter().filter(|r| r.status != "skipped" && r.comparison.total_ns > 0)
    }

    /// The runs that played to their end: the other figures read only these (a run that broke
    /// stopped short of what its truth expects).
    fn played(&self) -> impl Iterator<Item = &RunScore> {
        self.recorded().filter(|r| r.status == "played")
    }

    /// Σ agreeing time / Σ time, and Σ unknown time / Σ time.
    pub fn agreement(&self) -> Option<(f64, f64)> {
        let total: u64 = self.played().map(|r| r.comparison.total_ns).sum();
        let agree: u64 = self.played().map(|r| r.comparison.agree_ns).sum();
        let unknown: u64 = self.played().map(|r| r.comparison.unknown_ns).sum();
        (total > 0).then(|| (agree as f64 / total as f64, unknown as f64 / total as f64))
    }

    /// Time to truth by transition: the times it was said, and how many were missed.
    pub fn to_truth(&self) -> BTreeMap<String, (Vec<u64>, usize)> {
        let mut by: BTreeMap<String, (Vec<u64>, usize)> = BTreeMap::new();
        for t in self.played().flat_map(|r| &r.comparison.to_truth) {
            let entry = by.entry(t.kind.clone()).or_default();
            match t.after_ns {
                Some(ns) => entry.0.push(ns),
                None => entry.1 += 1,
            }
        }
        by
    }

    /// The worst wrong stretch, with its run's scenario.
    pub fn worst(&self) -> Option<(&str, &Wrong, &Cause)> {
        self.played()
            .filter_map(|r| r.worst.as_ref().map(|(w, c)| (r.scenario.as_str(), w, c)))
            .max_by_key(|(_, w, _)| w.len_ns)
    }

    /// False authorizations, and peeks asked.
    pub fn false_auths(&self) -> (usize, usize) {
        (self.recorded().map(|r| r.false_auths.len()).sum(), self.recorded().map(|r| r.peeks).sum())
    }

    /// Every time to truth (ns), all transitions together.
    pub fn all_to_truth(&self) -> Vec<u64> {
        self.to_truth().into_values().flat_map(|(said, _)| said).collect()
    }

    /// Every delivery.
    pub fn deliveries(&self) -> Vec<&DeliveryScore> {
        self.played().flat_map(|r| &r.deliveries).collect()
    }

    /// How many deliveries ended with `outcome` (`confirmed`, `refused`, ...).
    pub fn count_outcome(&self, outcome: &str) -> usize {
        self.deliveries().iter().filter(|d| d.outcome == outcome).count()
    }

    /// From the allow to the confirmation (ns), of every confirmed delivery.
    pub fn allow_to_confirmed(&self) -> Vec<u64> {
        self.deliveries()
            .iter()
            .filter(|d| d.outcome == "confirmed")
            .filter_map(|d| d.allow_to_outcome_ms.map(|m| m * 1_000_000))
            .collect()
    }

    /// Wrongful keystrokes: into a dialog, beyond one paste, or into the neighbouring pane.
    pub fn wrongful(&self) -> usize {
        self.recorded()
            .map(|r| r.neighbour_bytes + r.deliveries.iter().map(|d| d.wrongful).sum::<usize>())
            .sum()
    }

    /// Notification latencies (ns).
    pub fn notifications(&self) -> Vec<u64> {
        self.played().flat_map(|r| r.notifications.iter().copied()).collect()
    }

    /// The figures as JSON.
    pub fn json(&self) -> Value {
        let agreement = self.agreement();
        let to_truth: Value = self
            .to_truth()
            .into_iter()
            .map(|(kind, (said, missed))| {
                (kind, json!({"n": said.len(), "missed": missed,
                    "p50_ms": percentile(&said, 50.0).map(ms), "p99_ms": percentile(&said, 99.0).map(ms)}))
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        let all = self.all_to_truth();
        let (false_auths, peeks) = self.false_auths();
        let deliveries = self.deliveries();
        let count = |o: &str| self.count_outcome(o);
        let allow = self.allow_to_confirmed();
        let notes = self.notifications();
        json!({
            "cli": self.cli,
            "title": self.title,
            "version": self.version,
            "agreement": agreement.map(|a| a.0),
            "unknown": agreement.map(|a| a.1),
            "time_to_truth": {"p50_ms": percentile(&all, 50.0).map(ms),
                              "p99_ms": percentile(&all, 99.0).map(ms), "by_transition": to_truth},
            "worst_wrong_state": self.worst().map(|(scenario, w, c)| json!({
                "scenario": scenario, "ms": ms(w.len_ns), "truth": w.truth.as_str(),
                "reported": w.reported.as_str(), "cause": cause_json(c)})),
            "false_authorizations": false_auths,
            "peeks": peeks,
            "deliveries": {"confirmed": count("confirmed"), "refused": count("refused"),
                           "unconfirmed": count("unconfirmed"), "error": count("error"),
                           "over_draft": deliveries.iter().filter(|d| d.over_draft).count()},
            "wrongful_keystrokes": self.wrongful(),
            "allow_to_confirmed": {"n": allow.len(), "p50_ms": percentile(&allow, 50.0).map(ms),
                                   "p99_ms": percentile(&allow, 99.0).map(ms)},
            "notification": {"n": notes.len(), "p50_ms": percentile(&notes, 50.0).map(ms),
                             "p99_ms": percentile(&notes, 99.0).map(ms)},
            "runs": self.runs.iter().map(run_json).collect::<Vec<_>>(),
        })
    }
}

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e4).round() / 100.0
}

fn cause_json(c: &Cause) -> Value {
    match c {
        Cause::CatchingUp => json!({"kind": "catching_up"}),
        Cause::Hole(id) => json!({"kind": "hole", "hole": id}),
        Cause::Defect => json!({"kind": "defect"}),
    }
}

fn run_json(r: &RunScore) -> Value {
    let c = &r.comparison;
    let share = |x: u64| (c.total_ns > 0).then(|| x as f64 / c.total_ns as f64);
    json!({
        "scenario": r.scenario,
        "status": r.status,
        "reason": r.reason,
        "seconds": c.total_ns as f64 / 1e9,
        "agreement": share(c.agree_ns),
        "unknown": share(c.unknown_ns),
        "truth": r.truth.iter().map(|(t, s)| json!([ms(*t), s.as_str()])).collect::<Vec<_>>(),
        "wrong_stretches": r.holes.iter().map(|(w, cause)| json!({
            "at_ms": ms(w.start_ns), "ms": ms(w.len_ns), "truth": w.truth.as_str(),
            "reported": w.reported.as_str(), "cause": cause_json(cause)})).collect::<Vec<_>>(),
        "time_to_truth": c.to_truth.iter().map(|t| json!({"transition": t.kind,
            "ms": t.after_ns.map(ms)})).collect::<Vec<_>>(),
        "peeks": r.peeks,
        "false_authorizations": r.false_auths.iter().map(|p| json!({
            "question": p.question.as_str(), "at_ns": p.at_ns, "rule": p.rule})).collect::<Vec<_>>(),
        "deliveries": r.deliveries.iter().map(|d| json!({
            "perturbation": d.perturb.as_str(), "outcome": d.outcome, "rule": d.rule,
            "enter_resent": d.enter_resent, "allow_to_outcome_ms": d.allow_to_outcome_ms,
            "wrongful_keystrokes": d.wrongful, "into_running_turn": d.into_turn,
            "pastes": d.pastes, "over_draft": d.over_draft})).collect::<Vec<_>>(),
        "neighbour_bytes": r.neighbour_bytes,
        "notifications_ms": r.notifications.iter().map(|n| ms(*n)).collect::<Vec<_>>(),
        "follower_errors": r.thread_errors,
        "load_average": r.load,
    })
}

#[cfg(test)]
mod tests {
    use hookline::profile::Profiles;
    use hookline::vocab::StateKind;

    use super::*;

    fn wrong(secs: u64, reported: StateKind) -> Wrong {
        Wrong { start_ns: 0, len_ns: secs * 1_000_000_000, truth: Truth::Idle, reported }
    }

    #[test]
    fn a_wrong_stretch_is_put_down_to_the_hole_the_scenario_names_or_else_to_a_defect() {
        let profiles = Profiles::shipped().unwrap();
        let claude = profiles.get("claude");
        let holes = ["permission-denied-esc".to_owned(), "esc-interrupt".to_owned()];
        assert_eq!(cause(&wrong(0, StateKind::Active), claude, &holes), Cause::CatchingUp);
        assert_eq!(
            cause(&wrong(5, StateKind::Active), claude, &holes),
            Cause::Hole("esc-interrupt".into())
        );
        assert_eq!(
            cause(&wrong(5, StateKind::WaitingOnHuman), claude, &holes),
            Cause::Hole("permission-denied-esc".into())
        );
        // No hole named: one whose state is the one reported, else a defect.
        assert_eq!(
            cause(&wrong(5, StateKind::ChildCommand), claude, &[]),
            Cause::Hole("tool-killed".into())
        );
        assert_eq!(cause(&wrong(5, StateKind::EnvFault), claude, &[]), Cause::Defect);
        assert_eq!(cause(&wrong(5, StateKind::Active), None, &holes), Cause::Defect);
    }

    #[test]
    fn a_peek_allowed_outside_an_idle_prompt_is_a_false_authorization() {
        let truth = [(0, Truth::Idle), (100, Truth::Active), (200, Truth::Idle)];
        let peek = |at_ns, allowed| Peek {
            question: Question::Input,
            at_ns,
            allowed,
            rule: String::new(),
        };
        let found = false_auths(
            &truth,
            &[peek(50, true), peek(150, true), peek(150, false), peek(250, true)],
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].at_ns, 150);
        assert_eq!(percentile(&[5, 1, 3], 50.0), Some(3));
        assert_eq!(percentile(&[], 99.0), None);
        assert_eq!(human_ns(1_500_000), "1.5 ms");
        assert_eq!(human_ns(2_345_000_000), "2.3 s");
    }
}
