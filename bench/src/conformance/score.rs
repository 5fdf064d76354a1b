//! One run scored: hookline's reported timeline against the true one.

use hookline::vocab::StateKind;

use super::truth::{self, Truth};

/// What hookline reported at one instant: no session yet, or a state.
pub type Reported = Option<StateKind>;

/// A stretch of time in which hookline reported a known state other than the truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrong {
    /// When it began (ns).
    pub start_ns: u64,
    /// How long it lasted (ns).
    pub len_ns: u64,
    /// The true state when it began.
    pub truth: Truth,
    /// What hookline said.
    pub reported: StateKind,
}

/// How long hookline took to say a true state after it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToTruth {
    /// The transition, `from→to`.
    pub kind: String,
    /// From the true transition to hookline saying the new state (ns); `None`: it did not say
    /// it before the truth changed again.
    pub after_ns: Option<u64>,
}

/// The comparison of one run.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// Time compared (ns).
    pub total_ns: u64,
    /// Time hookline said the truth.
    pub agree_ns: u64,
    /// Time it said `unknown` or knew no session.
    pub unknown_ns: u64,
    /// Stretches it said something else.
    pub wrong: Vec<Wrong>,
    /// Time to truth after each true transition.
    pub to_truth: Vec<ToTruth>,
}

/// The reported state at `at` (the last sample at or before it).
pub fn reported_at(samples: &[(u64, Reported)], at: u64) -> Reported {
    samples.iter().take_while(|(t, _)| *t <= at).last().and_then(|(_, r)| *r)
}

/// Compares `samples` (hookline's answers, in time order) with `truth` over `[from, to]`.
pub fn compare(
    truth: &[(u64, Truth)],
    samples: &[(u64, Reported)],
    from: u64,
    to: u64,
) -> Comparison {
    let mut points: Vec<u64> = truth
        .iter()
        .map(|(t, _)| *t)
        .chain(samples.iter().map(|(t, _)| *t))
        .filter(|t| (from..to).contains(t))
        .collect();
    points.push(from);
    points.push(to);
    points.sort_unstable();
    points.dedup();
    let mut c = Comparison::default();
    let mut open: Option<Wrong> = None;
    for pair in points.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let len = end - start;
        let true_state = truth::at(truth, start);
        let said = reported_at(samples, start);
        c.total_ns += len;
        match said {
            None | Some(StateKind::Unknown) => c.unknown_ns += len,
            Some(kind) if kind == true_state.kind() => c.agree_ns += len,
            Some(kind) => {
                match &mut open {
                    Some(w) if w.reported == kind && w.start_ns + w.len_ns == start => {
                        w.len_ns += len;
                        continue;
                    }
                    _ => {}
                }
                if let Some(w) = open.take() {
                    c.wrong.push(w);
                }
                open =
                    Some(Wrong { start_ns: start, len_ns: len, truth: true_state, reported: kind });
                continue;
            }
        }
        if let Some(w) = open.take() {
            c.wrong.push(w);
        }
    }
    if let Some(w) = open.take() {
        c.wrong.push(w);
    }
    for (i, pair) in truth.windows(2).enumerate() {
        let (_, before) = pair[0];
        let (at, now) = pair[1];
        if !(from..to).contains(&at) {
            continue;
        }
        let until = truth.get(i + 2).map_or(to, |(t, _)| *t).min(to);
        let said_at = |t: u64| reported_at(samples, t) == Some(now.kind());
        let after_ns = if said_at(at) {
            Some(0)
        } else {
            samples
                .iter()
                .find(|(t, r)| *t > at && *t < until && *r == Some(now.kind()))
                .map(|(t, _)| t - at)
        };
        c.to_truth
            .push(ToTruth { kind: format!("{}→{}", before.as_str(), now.as_str()), after_ns });
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_unknown_wrong_stretches_and_time_to_truth() {
        let truth =
            [(0, Truth::Idle), (100, Truth::Active), (200, Truth::Idle), (300, Truth::Dialog)];
        let samples = [
            (20, Some(StateKind::Unknown)),
            (130, Some(StateKind::Active)),
            (250, Some(StateKind::Active)),
            (260, Some(StateKind::Idle)),
            (320, Some(StateKind::ChildCommand)),
            (330, Some(StateKind::ChildCommand)),
            (340, Some(StateKind::WaitingOnHuman)),
        ];
        let c = compare(&truth, &samples, 0, 400);
        assert_eq!(c.total_ns, 400);
        // 0..20 no session, 20..130 unknown.
        assert_eq!(c.unknown_ns, 130);
        // 130..200 active, 260..300 idle, 340..400 waiting.
        assert_eq!(c.agree_ns, 70 + 40 + 60);
        assert_eq!(
            c.wrong,
            [
                Wrong {
                    start_ns: 200,
                    len_ns: 60,
                    truth: Truth::Idle,
                    reported: StateKind::Active
                },
                // The dialog opened before hookline heard of it: idle, then the tool.
                Wrong {
                    start_ns: 300,
                    len_ns: 20,
                    truth: Truth::Dialog,
                    reported: StateKind::Idle
                },
                Wrong {
                    start_ns: 320,
                    len_ns: 20,
                    truth: Truth::Dialog,
                    reported: StateKind::ChildCommand
                },
            ]
        );
        let kinds: Vec<(&str, Option<u64>)> =
            c.to_truth.iter().map(|t| (t.kind.as_str(), t.after_ns)).collect();
        assert_eq!(
            kinds,
            [
                ("idle→active", Some(30)),
                ("active→idle", Some(60)),
                ("idle→waiting_on_human", Some(40))
            ]
        );
    }

    #[test]
    fn a_state_never_said_before_the_truth_moved_on_is_a_miss() {
        let truth = [(0, Truth::Idle), (100, Truth::Active), (150, Truth::Idle)];
        let samples = [(10, Some(StateKind::Idle)), (200, Some(StateKind::Active))];
        let c = compare(&truth, &samples, 0, 300);
        assert_eq!(c.to_truth[0].after_ns, None);
        // Already said when the truth got there: no wait at all.
        assert_eq!(c.to_truth[1].after_ns, Some(0));
        assert_eq!(c.wrong.len(), 2);
    }
}
