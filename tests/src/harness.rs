//! The checks and reports both step harnesses ([`crate::session`] for Claude Code,
//! [`crate::agent_session`] for Codex and Gemini CLI) are built of: waiting for a step's native
//! events, taking the input slot, what must never happen in a run (a failing hook on screen, a
//! relay error, a malformed envelope), the report a failure panics with and the table a passing
//! run saves.
//!
//! Checks return what went wrong as text; the harness fails with it, adding what only it knows.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hookline::decide::Policy;
use hookline::engine::{Engine, EngineConfig, Pusher, Source, pushed};
use hookline::format::clock::now_ns;
use hookline::profile::Profiles;
use hookline::state::{Applied, Refusal, Slot, Tracker, View};
use hookline_relay::diag::{self, Level};

use crate::binaries;
use crate::events::{Event, EventsDir};
use crate::labels::state_label;
use crate::mock_http::MockServer;
use crate::sandbox::Sandbox;
use crate::scenario::{Expect, Input, match_events};
use crate::tmux::Tmux;

/// What a screen shows when a CLI reports a failing hook (lower case).
pub const HOOK_FAILURES: &[&str] = &["hook error", "hook failed", "hook execution failed"];

/// Waits until the native events after the first `cursor` ones begin with `expected`
/// ([`match_events`]) and returns those `expected.len()` events; fails early on the first event
/// that differs.
pub fn wait_for_native(
    events: &EventsDir,
    cursor: usize,
    expected: &[Expect],
    within: Duration,
) -> Result<Vec<Event>, String> {
    let mismatch = |events: &[Event]| {
        let window = &events[cursor.min(events.len())..];
        match_events(&window[..window.len().min(expected.len())], expected).err()
    };
    let outcome = events.wait_until(within, |events| {
        mismatch(events).is_some() || events.len() >= cursor + expected.len()
    });
    match outcome {
        Ok(events) if mismatch(&events).is_none() => {
            Ok(events[cursor..cursor + expected.len()].to_vec())
        }
        Ok(events) | Err(events) => {
            let seen: Vec<String> =
                events[cursor.min(events.len())..].iter().map(Event::label).collect();
            let wanted: Vec<String> = expected.iter().map(Expect::label).collect();
            Err(format!("expected the native events {wanted:?} within {within:?}, got {seen:?}"))
        }
    }
}

/// A live engine the harness feeds the events it reads itself, one by one: everything it
/// applies arrived after the engine started (its history is empty), so it is live, as a
/// daemon started before the CLI would see it.
pub struct LiveTracker {
    engine: Engine,
    pusher: Pusher,
}

impl LiveTracker {
    /// An engine over `profiles`, with the default policy, its journal beside `events_dir`.
    pub fn new(profiles: Profiles, events_dir: &std::path::Path) -> LiveTracker {
        let (pusher, source) = pushed();
        let mut config = EngineConfig::new(profiles, Policy::default(), events_dir);
        config.checkpoints = false;
        config.transcripts = false;
        let mut engine = Engine::open(config, Source::Custom(Box::new(source)))
            .expect("an engine over pushed events opens");
        pusher.history_done();
        while !engine.is_live() {
            engine.poll(Duration::from_millis(10)).expect("the pushed history is read");
        }
        LiveTracker { engine, pusher }
    }

    /// Applies one event, live.
    pub fn apply(&mut self, event: &hookline::canonical::Event) -> Applied {
        self.pusher.push(event.clone());
        loop {
            if let Some(step) = self.engine.poll(Duration::from_secs(1)).expect("poll") {
                return step.applied;
            }
        }
    }

    /// The tracker.
    pub fn tracker(&self) -> &Tracker {
        self.engine.tracker()
    }

    /// A session's view now.
    pub fn view(&self, session: &str, now_ns: u64) -> Option<View> {
        self.engine.tracker().view(session, now_ns)
    }

    /// Every session's view now.
    pub fn views(&self, now_ns: u64) -> Vec<View> {
        self.engine.tracker().views(now_ns)
    }

    /// Whether no session is known.
    pub fn is_empty(&self) -> bool {
        self.engine.tracker().is_empty()
    }

    /// The generation.
    pub fn generation(&self) -> hookline::state::Generation {
        self.engine.tracker().generation()
    }

    /// Takes a session's input slot, as a lease, through the engine's decider.
    pub fn take_input_slot(&mut self, session: &str, _now_ns: u64) -> Result<Slot, Refusal> {
        self.engine.take_input_slot(session, hookline::state::Expect::default()).map(|l| l.slot)
    }
}

/// Takes the input slot of the session `tag` names as `input` says it must go, and returns what
/// happened, for the reports. [`Input::Once`]: granted while the view says input is available,
/// for the tracker's generation and the view's epoch and session, then refused as already
/// taken. [`Input::Refused`]: refused, with the reason asked for, and not available.
pub fn take_input_slot(
    tracker: &mut LiveTracker,
    tag: &str,
    input: Input,
) -> Result<String, String> {
    let view = tracker.view(tag, now_ns());
    let available = view.as_ref().is_some_and(|v| v.input == "available");
    match input {
        Input::Once => {
            let slot = tracker.take_input_slot(tag, now_ns()).map_err(|refusal| {
                format!("the input slot was refused ({refusal}); expected it once")
            })?;
            let view = view.ok_or("a slot was granted for no session")?;
            let generation = tracker.generation().id;
            if !available
                || slot.generation != generation
                || slot.epoch != view.epoch
                || slot.session_id != view.session_id
            {
                return Err(format!(
                    "the slot {slot:?} does not match the view {view:?} (generation {generation})"
                ));
            }
            match tracker.take_input_slot(tag, now_ns()) {
                Err(refusal @ Refusal::AlreadyTaken) => Ok(format!(
                    "granted once (epoch {}, seq {}), then refused: {refusal}",
                    slot.epoch, slot.seq
                )),
                other => Err(format!(
                    "a second take of the input slot gave {other:?}; expected it refused as \
                     already taken"
                )),
            }
        }
        Input::Refused(why) => match tracker.take_input_slot(tag, now_ns()) {
            Err(refusal) if refusal.to_string().contains(why) && !available => {
                Ok(format!("refused: {refusal}"))
            }
            other => Err(format!(
                "taking the input slot gave {other:?} (view: {}); expected a refusal saying {why:?}",
                view.as_ref().map_or("no session", |v| v.input.as_str())
            )),
        },
    }
}

/// For [`Expect::unchanged`]: fails when applying an event changed the session, by the
/// tracker's word (`applied`) or by its state, detail or evidence (`before` and `after` it).
pub fn check_unchanged(
    before: Option<&View>,
    after: Option<&View>,
    applied: &Applied,
) -> Result<(), String> {
    let same = before.zip(after).is_some_and(|(b, a)| {
        b.state == a.state && b.detail == a.detail && b.evidence == a.evidence
    });
    if applied.changed || !same {
        return Err(format!(
            "changed the state (rule {}): {} -> {}",
            applied.rule,
            state_label(before),
            state_label(after)
        ));
    }
    Ok(())
}

/// The first of [`HOOK_FAILURES`] that `screen` shows, in any case.
pub fn hook_failure(screen: &str) -> Option<&'static str> {
    let screen = screen.to_lowercase();
    HOOK_FAILURES.iter().copied().find(|failure| screen.contains(failure))
}

/// Fails when the relay logged an error in the sandbox's diagnostics file.
pub fn check_relay_log(sandbox: &Sandbox) -> Result<(), String> {
    let errors: Vec<String> = diag::read(&sandbox.relay_log())
        .into_iter()
        .filter(|r| r.level == Level::Error)
        .map(|r| format!("{:?}: {}", r.event, r.message))
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("the relay logged errors: {errors:?}")) }
}

/// What every envelope of a run must carry.
#[derive(Debug, Clone, Copy)]
pub struct EnvelopeRules<'a> {
    /// The `--cli` the relay runs with.
    pub cli: &'a str,
    /// The sandbox's `HOOKLINE_TAG`.
    pub tag: &'a str,
    /// The payload fields that may name the event, first found first: `hook_event_name`, and
    /// `type` for Codex's legacy `notify` payload. Empty for a CLI whose payloads do not name
    /// their event (Copilot's camelCase hooks: the relay is told with `--event`), which skips
    /// the check.
    pub event_fields: &'a [&'a str],
    /// Whether `host_session_id` must be the payload's `session_id` even where either is
    /// missing (Claude Code gives its hooks the session in their environment); else only a
    /// `host_session_id` that is there must match.
    pub host_session_always: bool,
}

/// Fails on the first envelope without a payload, or whose cli, tag, event name or host session
/// is not what `rules` say.
pub fn check_envelopes(events: &[Event], rules: &EnvelopeRules<'_>) -> Result<(), String> {
    for event in events {
        let envelope = &event.envelope;
        let named = rules.event_fields.iter().find_map(|field| event.field(field));
        let host = envelope.host_session_id.as_deref();
        let problem = if envelope.error.is_some() || envelope.payload.is_none() {
            Some("has no payload")
        } else if envelope.cli != rules.cli {
            Some("has the wrong cli")
        } else if envelope.tag.as_deref() != Some(rules.tag) {
            Some("lacks the HOOKLINE_TAG of the sandbox")
        } else if !rules.event_fields.is_empty() && named != envelope.event.as_deref() {
            Some("names another event than its payload")
        } else if (rules.host_session_always || host.is_some()) && host != event.field("session_id")
        {
            Some("has a host_session_id that is not the payload's session_id")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(format!("event {} {problem}: {envelope:?}", event.file));
        }
    }
    Ok(())
}

/// The start of the report a failure panics with: `[<label>] <message>`, the sandbox, and every
/// native event, those after the first `cursor` (not consumed by a step yet) marked `>`.
pub fn report_head(
    label: &str,
    message: &str,
    sandbox: &Sandbox,
    events: &EventsDir,
    cursor: usize,
) -> String {
    let mut report = format!("[{label}] {message}\n");
    let _ = writeln!(report, "sandbox: {}", sandbox.root().display());
    let _ = writeln!(report, "native events (consumed up to #{cursor}):");
    match events.read() {
        Ok(events) => {
            let first = events.first().cloned();
            for (i, event) in events.iter().enumerate() {
                let at = first.as_ref().map_or(0.0, |f| event.secs_since(f));
                let mark = if i < cursor { ' ' } else { '>' };
                let _ = writeln!(report, " {mark} {at:>7.2} s  {event}");
            }
        }
        Err(e) => {
            let _ = writeln!(report, "  cannot read: {e}");
        }
    }
    report
}

/// The end of the report a failure panics with: the screen with its scrollback (its last 60
/// non-empty lines), the mock's requests and the relay's diagnostics.
pub fn report_tail(report: &mut String, tmux: Option<&Tmux>, api: &MockServer, sandbox: &Sandbox) {
    if let Some(tmux) = tmux {
        let screen = tmux.screen_with_history().unwrap_or_else(|e| e);
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &lines[lines.len().saturating_sub(60)..];
        let _ = writeln!(report, "screen (last non-empty lines):\n{}", tail.join("\n"));
    }
    let _ = writeln!(report, "mock API requests:");
    for request in api.requests() {
        let _ = writeln!(report, "  {}", request.summary());
    }
    let diagnostics = diag::read(&sandbox.relay_log());
    if diagnostics.is_empty() {
        let _ = writeln!(report, "relay diagnostics: none");
    } else {
        let _ = writeln!(report, "relay diagnostics:");
        for record in diagnostics {
            let _ = writeln!(report, "  {:?} {:?}: {}", record.level, record.event, record.message);
        }
    }
}

/// `target/hookline-e2e/`, where passing scenarios leave their reports.
pub fn report_dir() -> PathBuf {
    binaries::profile_dir().join("..").join("hookline-e2e")
}

/// Ends `table` (a passing run's steps) with the mock's requests, prints it and writes it to
/// `target/hookline-e2e/<label>.txt`.
pub fn save_report(label: &str, started: Instant, mut table: String, api: &MockServer) {
    let _ = writeln!(table, "  mock API requests:");
    for request in api.requests() {
        let _ = writeln!(table, "    {}", request.summary());
    }
    println!("[{label}] passed in {:.1} s:\n{table}", started.elapsed().as_secs_f64());
    let dir = report_dir();
    if std::fs::create_dir_all(&dir).is_ok() {
        let name = label.replace(' ', "-");
        let _ = std::fs::write(dir.join(format!("{name}.txt")), &table);
    }
}

/// Held by each session (Claude's and the Codex/Gemini harness's) for its whole life: scenarios run one at a time, whatever
/// the number of test threads. With the machine's 2 cores already loaded (load average 7 to 12
/// from other builds), two Claude Code 2.1.332 processes at once stalled for up to a minute (no
/// redraw, keys lost, `-p` not exiting after `SessionEnd`), which breaks the timers the
/// scenarios assert; at low load two at once ran fine, so this is CPU starvation, not the CLIs
/// interfering. One at a time, the Claude suite takes 70 to 95 s. The Codex and Gemini
/// suites hold it too: running two of their TUIs at once lost a keystroke once in nine runs.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the scenario lock of this test binary: CLI scenarios run one at a time. A scenario
/// that failed poisons the lock; the next one runs all the same.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
