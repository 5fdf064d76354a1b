//! The tables the scenarios are written as, for both step harnesses ([`crate::session`] for
//! Claude Code, [`crate::agent_session`] for Codex and Gemini CLI).
//!
//! A scenario is a list of [`Step`]s: an action (type a line, press a key, or just wait), the
//! native events that must follow — exactly those, in order, except those marked
//! [`Expect::any_order`] — and for each of them the canonical event hookline must make of it and
//! the session state once a tracker applied it; then, per step, silence, the screen, the state
//! after the step and what taking the session's input slot must do.
//!
//! How a label is compared is the harness's: each writes canonical events its own way
//! ([`crate::labels`]), and the Codex and Gemini harness lets a state without detail match any
//! detail ([`crate::labels::state_matches`]).

use std::time::Duration;

use crate::events::Event;
use crate::version::Version;

/// One expected native event, and what hookline must make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// Native event name.
    pub event: &'static str,
    /// Expected qualifier ([`Event::qualifier`]): notification type, source, reason, trigger.
    pub qualifier: Option<&'static str>,
    /// Only expected from this version on.
    pub since: Option<&'static str>,
    /// May come anywhere among the step's events: a CLI that runs its hooks without waiting,
    /// or a side thread, can race the next one.
    pub any_order: bool,
    /// The canonical event hookline must make of it, as the harness writes it.
    pub canonical: Option<&'static str>,
    /// The session state once the tracker applied it, as
    /// [`state_label`](crate::labels::state_label) writes it (`waiting_on_human(permission)`).
    pub state: Option<&'static str>,
    /// The tracker must leave the state exactly as it was: same state, same evidence.
    pub unchanged: bool,
}

/// Expects the native event `event`, nothing said yet of what hookline makes of it.
pub const fn native(event: &'static str) -> Expect {
    Expect {
        event,
        qualifier: None,
        since: None,
        any_order: false,
        canonical: None,
        state: None,
        unchanged: false,
    }
}

impl Expect {
    /// With this qualifier.
    pub const fn q(mut self, qualifier: &'static str) -> Expect {
        self.qualifier = Some(qualifier);
        self
    }

    /// Only from `version` on (the event is absent before).
    pub const fn since(mut self, version: &'static str) -> Expect {
        self.since = Some(version);
        self
    }

    /// Hookline must make this canonical event of it.
    pub const fn canonical(mut self, label: &'static str) -> Expect {
        self.canonical = Some(label);
        self
    }

    /// The session must be in this state once the tracker applied it.
    pub const fn state(mut self, label: &'static str) -> Expect {
        self.state = Some(label);
        self
    }

    /// The tracker must not change the state for it (nor its evidence).
    pub const fn unchanged(mut self) -> Expect {
        self.unchanged = true;
        self
    }

    /// Anywhere among the step's events.
    pub const fn any_order(mut self) -> Expect {
        self.any_order = true;
        self
    }

    /// Whether `version` sends it.
    pub fn applies_to(&self, version: Version) -> bool {
        self.since.is_none_or(|since| Version::lit(since) <= version)
    }

    /// Whether `event` is this one.
    pub fn matches(&self, event: &Event) -> bool {
        event.name() == self.event && self.qualifier.is_none_or(|q| event.qualifier() == Some(q))
    }

    /// `Name` or `Name(qualifier)`.
    pub fn label(&self) -> String {
        match self.qualifier {
            Some(q) => format!("{}({q})", self.event),
            None => self.event.to_string(),
        }
    }
}

/// Matches `events` to `expected`: the in-order expectations must match in order, each
/// `any_order` one once anywhere. `events` may be a prefix of what is expected (still
/// arriving). Returns the expectation each event matched, or the index of the first event that
/// matches none.
pub fn match_events(events: &[Event], expected: &[Expect]) -> Result<Vec<Expect>, usize> {
    let mut in_order = expected.iter().filter(|e| !e.any_order).peekable();
    let mut floating: Vec<&Expect> = expected.iter().filter(|e| e.any_order).collect();
    let mut matched = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        if let Some(expect) = in_order.next_if(|e| e.matches(event)) {
            matched.push(*expect);
        } else if let Some(at) = floating.iter().position(|e| e.matches(event)) {
            matched.push(*floating.remove(at));
        } else {
            return Err(i);
        }
    }
    Ok(matched)
}

/// The index of the first of `events` that [`match_events`] cannot match.
pub fn first_mismatch(events: &[Event], expected: &[Expect]) -> Option<usize> {
    match_events(events, expected).err()
}

/// What a step does before waiting for its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing: the events come from earlier actions (a headless run, a command) or from
    /// timers.
    Wait,
    /// Type a line and press Enter.
    Type(String),
    /// Press one key (tmux key name).
    Press(&'static str),
}

/// What taking the session's input slot must do after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Granted, once: taking it a second time is refused as already taken.
    Once,
    /// Refused, with a reason that contains this text (`""`: any reason).
    Refused(&'static str),
}

/// One step of a scenario.
#[derive(Debug, Clone)]
pub struct Step {
    /// What the step is, for reports.
    pub name: &'static str,
    /// Text the screen must show before the action (the TUI is ready for it).
    pub shown_before: Option<&'static str>,
    /// The action.
    pub action: Action,
    /// The native events that must follow the action, exactly and in order.
    pub native: Vec<Expect>,
    /// How long they may take.
    pub within: Duration,
    /// After them, no event at all may arrive for this long.
    pub quiet_for: Option<Duration>,
    /// Text the screen must show after the events.
    pub shown_after: Option<&'static str>,
    /// The session state after the step, as
    /// [`state_label`](crate::labels::state_label) writes it.
    pub state: Option<&'static str>,
    /// What taking the input slot after the step must do.
    pub input: Option<Input>,
}

impl Step {
    /// A step doing `action`, expecting nothing yet, its events allowed 15 s.
    pub fn new(name: &'static str, action: Action) -> Step {
        Step {
            name,
            shown_before: None,
            action,
            native: Vec::new(),
            within: Duration::from_secs(15),
            quiet_for: None,
            shown_after: None,
            state: None,
            input: None,
        }
    }

    /// Waits for the screen to show `text` before acting.
    pub fn when_shown(mut self, text: &'static str) -> Step {
        self.shown_before = Some(text);
        self
    }

    /// Expects these native events.
    pub fn expect(mut self, native: impl IntoIterator<Item = Expect>) -> Step {
        self.native = native.into_iter().collect();
        self
    }

    /// Allows the events this long.
    pub fn within(mut self, within: Duration) -> Step {
        self.within = within;
        self
    }

    /// Then requires silence for this long.
    pub fn then_quiet_for(mut self, quiet: Duration) -> Step {
        self.quiet_for = Some(quiet);
        self
    }

    /// Then requires the screen to show `text`.
    pub fn then_shown(mut self, text: &'static str) -> Step {
        self.shown_after = Some(text);
        self
    }

    /// The session state after the step.
    pub fn state(mut self, label: &'static str) -> Step {
        self.state = Some(label);
        self
    }

    /// What taking the input slot after the step must do.
    pub fn input(mut self, input: Input) -> Step {
        self.input = Some(input);
        self
    }
}

#[cfg(test)]
mod tests {
    use hookline_relay::envelope::Envelope;

    use super::*;

    fn event(name: &str, seq: u64) -> Event {
        let text = format!(
            r#"{{"v":1,"seq":{seq},"ts_ns":1,"cli":"claude","event":"{name}","pid":1,"ppid":1,
            "relay_version":"0","payload":{{"hook_event_name":"{name}"}}}}"#
        );
        Event { file: String::new(), envelope: Envelope::from_slice(text.as_bytes()).unwrap() }
    }

    fn events(names: &[&str]) -> Vec<Event> {
        names.iter().enumerate().map(|(i, n)| event(n, i as u64)).collect()
    }

    #[test]
    fn in_order_events_must_keep_their_order_and_any_order_ones_may_float() {
        let expected =
            [native("PostToolUse"), native("MessageDisplay").any_order(), native("Stop")];
        for seen in [
            ["PostToolUse", "MessageDisplay", "Stop"],
            ["PostToolUse", "Stop", "MessageDisplay"],
            ["MessageDisplay", "PostToolUse", "Stop"],
        ] {
            assert_eq!(first_mismatch(&events(&seen), &expected), None, "{seen:?}");
        }
        assert_eq!(
            first_mismatch(&events(&["Stop", "PostToolUse", "MessageDisplay"]), &expected),
            Some(0)
        );
        assert_eq!(
            first_mismatch(
                &events(&["PostToolUse", "MessageDisplay", "MessageDisplay"]),
                &expected
            ),
            Some(2)
        );
        assert_eq!(first_mismatch(&events(&["PostToolUse"]), &expected), None, "a prefix");
        let matched = match_events(&events(&["PostToolUse", "Stop", "MessageDisplay"]), &expected);
        let names: Vec<&str> = matched.unwrap().iter().map(|e| e.event).collect();
        assert_eq!(names, ["PostToolUse", "Stop", "MessageDisplay"], "in the events' order");
    }

    #[test]
    fn matched_expectations_come_in_the_events_order() {
        let expected = [
            native("PreToolUse").canonical("tool_start"),
            native("agent-turn-complete").canonical("notification").any_order(),
            native("PermissionRequest").canonical("permission_request"),
        ];
        for seen in [
            ["PreToolUse", "agent-turn-complete", "PermissionRequest"],
            ["PreToolUse", "PermissionRequest", "agent-turn-complete"],
        ] {
            let matched = match_events(&events(&seen), &expected).unwrap();
            let names: Vec<&str> = matched.iter().map(|e| e.event).collect();
            assert_eq!(names, seen, "in the events' order");
        }
        assert_eq!(match_events(&events(&["PermissionRequest"]), &expected), Err(0));
        assert!(match_events(&events(&["PreToolUse"]), &expected).is_ok(), "a prefix");
    }

    #[test]
    fn expectations_since_a_version_apply_from_that_version_on() {
        let expect = native("PermissionRequest").since("2.1.332");
        assert!(!expect.applies_to(Version::lit("2.1.197")));
        assert!(expect.applies_to(Version::lit("2.1.332")));
        assert!(native("Stop").applies_to(Version::lit("1.0.0")));
    }
}
