//! Staleness windows set from outside the profiles (the decision policy's `[stale]`).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::vocab::StateKind;

/// Windows that replace the profiles' `stale-after`: after this much silence in a state that a
/// hole says the CLI can leave without any event, the state reads `unknown`.
///
/// A window applies to every hole of its state, including a hole that declares no
/// `stale-after` of its own (which otherwise never goes stale). A zero window turns staleness
/// off for that state. A CLI's own window wins over the per-state one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaleWindows {
    /// State → window, for every CLI.
    pub by_state: BTreeMap<StateKind, Duration>,
    /// CLI (profile name) → state → window.
    pub by_cli: BTreeMap<String, BTreeMap<StateKind, Duration>>,
}

/// Where a stale state's window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WindowFrom {
    /// The profile hole's `stale-after`.
    Profile,
    /// `stale.<state>`.
    State,
    /// `stale.<cli>.<state>`.
    Cli,
}

impl StaleWindows {
    /// Whether no window is set (the profiles' windows apply as they are).
    pub fn is_empty(&self) -> bool {
        self.by_state.is_empty() && self.by_cli.values().all(BTreeMap::is_empty)
    }

    /// Sets every window of `other` over these.
    pub fn extend(&mut self, other: &StaleWindows) {
        self.by_state.extend(&other.by_state);
        for (cli, windows) in &other.by_cli {
            let own = self.by_cli.entry(cli.clone()).or_default();
            own.extend(windows);
        }
    }

    /// The window in force for a hole of `cli` in `state` whose profile says `profile`:
    /// `None` means the state never goes stale.
    pub(super) fn window(
        &self,
        cli: &str,
        state: StateKind,
        profile: Option<Duration>,
    ) -> (Option<Duration>, WindowFrom) {
        let set = |d: &Duration| (!d.is_zero()).then_some(*d);
        if let Some(d) = self.by_cli.get(cli).and_then(|w| w.get(&state)) {
            return (set(d), WindowFrom::Cli);
        }
        if let Some(d) = self.by_state.get(&state) {
            return (set(d), WindowFrom::State);
        }
        (profile, WindowFrom::Profile)
    }
}
