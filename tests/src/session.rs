//! One run of the real CLI in a sandbox, against the mock API, with the relay registered by
//! `hookline install` and the events followed by `hookline watch`: the harness the scenarios
//! are written with.
//!
//! A scenario is a table of [`Step`]s: an action (type a line, press a key, or just wait), the
//! native events that must follow — exactly those, in order, except those marked
//! [`Expect::any_order`] — and for each of them the canonical event `hookline watch` must
//! print and the session state a [`Tracker`] must be in once it applied it; then, per step, the
//! state after the step (held through any silence the step requires) and what taking the
//! session's input slot must do.
//!
//! The tracker's generation starts before the CLI is launched, so every event is live and its
//! state authoritative, as for an orchestrator that was running before its agent. Every failure
//! panics with a full report: the native events, the canonical events with the state after
//! each, the screen with its scrollback, the mock's requests, `hookline watch`'s stderr and
//! the relay's diagnostics.
//!
//! After a passing run, [`ClaudeSession::finish`] prints the table of what was seen per step
//! and writes it to `target/hookline-e2e/`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Output;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use hookline::format::relay::now_ns;
use hookline::profile::Profiles;
use hookline::state::{Refusal, Tracker, View};
use hookline_relay::diag::{self, Level};
use serde_json::Value;

use crate::binaries;
use crate::claude_hooks;
use crate::events::{Event, EventsDir, POLL};
use crate::follow::Follower;
use crate::labels::{canonical_label, state_label};
use crate::mock_api;
use crate::mock_http::MockServer;
use crate::npm_install::Installed;
use crate::process::output_within;
use crate::sandbox::Sandbox;
use crate::tmux::{Exit, Tmux};
use crate::version::Version;

/// What Claude prints in its transcript when a hook command fails or writes to stderr.
pub const HOOK_ERROR: &str = "hook error";

/// The title of the dialog Claude shows when a settings file registers an event it does not
/// know.
pub const SETTINGS_WARNING: &str = "Settings Warning";

/// The durable cursor `hookline watch` follows the events with.
pub const CURSOR: &str = "e2e";

/// Held by each [`ClaudeSession`] for its whole life: scenarios run one at a time, whatever
/// the number of test threads. With the machine's 2 cores already loaded (load average 7 to 12
/// from other builds), two Claude Code 2.1.332 processes at once stalled for up to a minute (no
/// redraw, keys lost, `-p` not exiting after `SessionEnd`), which breaks the timers the
/// scenarios assert; at low load two at once ran fine, so this is CPU starvation, not the CLIs
/// interfering. One at a time, the whole suite takes 70 to 95 s.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long `hookline watch` may take to print the canonical event of a native event that is
/// already in the directory (it is notified at once; it rescans every second anyway).
const DELIVERY: Duration = Duration::from_secs(10);

/// One expected native event, and what hookline must make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// Native event name.
    pub event: &'static str,
    /// Expected qualifier ([`Event::qualifier`]): notification type, source, reason, trigger.
    pub qualifier: Option<&'static str>,
    /// Only expected from this version on.
    pub since: Option<&'static str>,
    /// May come anywhere among the step's events: Claude runs its hooks without waiting, so
    /// one can race the next.
    pub any_order: bool,
    /// The canonical event `hookline watch` must print for it, as
    /// [`canonical_label`] writes it (`tool_end(Bash, ok)`).
    pub canonical: Option<&'static str>,
    /// The session state once the tracker applied it, as
    /// [`state_label`] writes it (`waiting_on_human(permission)`).
    pub state: Option<&'static str>,
    /// The tracker must leave the state exactly as it was: same state, same evidence.
    pub unchanged: bool,
}

/// Expects the native event `event`.
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

    /// `hookline watch` must print this canonical event for it.
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
    /// Nothing: the events come from earlier actions or from timers.
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
    /// Refused, with a reason that contains this text.
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
    /// After them, no event at all may arrive for this long (and the state must hold).
    pub quiet_for: Option<Duration>,
    /// Text the screen must show after the events.
    pub shown_after: Option<&'static str>,
    /// The session state after the step, as [`state_label`] writes it; with
    /// [`Step::then_quiet_for`], it must hold through the whole silence.
    pub state: Option<&'static str>,
    /// What taking the input slot after the step must do.
    pub input: Option<Input>,
}

impl Step {
    /// A step doing `action`, expecting nothing yet.
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

    /// Then requires silence for this long, the state holding all along.
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

/// One canonical event as the harness received and applied it.
#[derive(Debug, Clone)]
pub struct Tracked {
    /// The event's `seq`.
    pub seq: u64,
    /// The canonical event, as [`canonical_label`] writes it.
    pub canonical: String,
    /// The state rule the tracker applied.
    pub rule: &'static str,
    /// Whether it changed the state.
    pub changed: bool,
    /// The state after it, as [`state_label`] writes it.
    pub state: String,
}

/// A step as it ran.
#[derive(Debug, Clone)]
struct StepRecord {
    name: String,
    events: Vec<Event>,
    /// What hookline made of each of `events`.
    tracked: Vec<Tracked>,
    took: Duration,
    /// The state after the step, and how long it was checked to hold.
    state: String,
    held: Option<Duration>,
    /// What taking the input slot did.
    input: Option<String>,
}

/// The CLI under test, in its sandbox.
pub struct ClaudeSession {
    /// `claude <version> <scenario>`, the prefix of every failure.
    pub label: String,
    /// The CLI's version.
    pub version: Version,
    /// The native binary.
    pub binary: PathBuf,
    /// The mock API it talks to.
    pub api: MockServer,
    /// Its sandbox.
    pub sandbox: Sandbox,
    /// The events directory.
    pub events: EventsDir,
    /// The tmux server, once the TUI is launched.
    pub tmux: Option<Tmux>,
    /// The idle threshold written to `.claude.json`.
    pub idle_threshold: Duration,
    /// `HOOKLINE_TAG` of the sandbox: the orchestrator's name for the session.
    pub tag: String,
    /// What the first `hookline install` printed.
    pub install_output: String,
    /// Whether the screen may show Claude's [`SETTINGS_WARNING`] (only where a scenario
    /// provokes it).
    pub settings_warning_expected: bool,
    follower: Option<Follower>,
    tracker: Tracker,
    /// Every canonical event applied, in order.
    tracked: Vec<Tracked>,
    cursor: usize,
    started: Instant,
    log: Vec<StepRecord>,
    /// Released last, once the CLI and the watcher are gone.
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl Drop for ClaudeSession {
    fn drop(&mut self) {
        // Kill the CLI and the watcher before the sandbox is removed, or they recreate files
        // in it as they die.
        self.tmux.take();
        self.follower.take();
    }
}

impl ClaudeSession {
    /// Starts the mock and the tracker, builds the sandbox, registers the relay with
    /// `hookline install claude --scope project` and starts `hookline watch`.
    pub fn new(installed: &Installed, scenario: &str, idle_threshold: Duration) -> ClaudeSession {
        let label = format!("claude {} {scenario}", installed.version);
        // A scenario that failed poisons the lock; the next one runs all the same.
        let one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        // The generation starts now, before the CLI: every event of the run is live.
        let profiles =
            Profiles::shipped().unwrap_or_else(|e| panic!("[{label}] shipped profiles: {e}"));
        let tracker = Tracker::new(profiles, now_ns());
        let api = mock_api::start().unwrap_or_else(|e| panic!("[{label}] mock API: {e}"));
        let tag = format!("e2e-{}-{scenario}", installed.version);
        let sandbox = Sandbox::new(&api.base_url(), idle_threshold, &tag);
        let events = EventsDir::new(&sandbox.events_dir());
        let mut session = ClaudeSession {
            label,
            version: installed.version,
            binary: installed.binary.clone(),
            api,
            sandbox,
            events,
            tmux: None,
            idle_threshold,
            tag,
            install_output: String::new(),
            settings_warning_expected: false,
            follower: None,
            tracker,
            tracked: Vec::new(),
            cursor: 0,
            started: Instant::now(),
            log: Vec::new(),
            _one_at_a_time: one_at_a_time,
        };
        session.install_hooks();
        let follower = Follower::start(
            session.sandbox.command(&binaries::hookline()),
            session.events.path(),
            CURSOR,
        )
        .unwrap_or_else(|e| session.fail(&e));
        session.follower = Some(follower);
        session
    }

    /// The project's settings file.
    pub fn settings_path(&self) -> PathBuf {
        self.sandbox.project().join(".claude").join("settings.json")
    }

    /// Runs `hookline install claude --scope project --relay <built relay>` in the project,
    /// with the CLI's folder first on `PATH` so that install detects its version; checks what
    /// it printed and wrote, then runs it again and checks that nothing changed.
    fn install_hooks(&mut self) {
        let relay = binaries::relay();
        let relay = relay.to_str().expect("UTF-8 relay path").to_owned();
        let path = self.settings_path();
        let expected = claude_hooks::hookline_registers(self.version);

        let first = self.run_install(&relay);
        let mut wanted = vec![
            format!(
                "Claude Code {} (from `claude --version`): {} events",
                self.version,
                expected.len()
            ),
            format!("settings: {} (project)", path.display()),
        ];
        wanted.extend(expected.iter().map(|e| format!("hooks.{e}: added")));
        wanted.push(format!("wrote {}", path.display()));
        self.check_install_output("hookline install", &first, &wanted);
        self.install_output = first;

        let written = std::fs::read(&path)
            .unwrap_or_else(|e| self.fail(&format!("install wrote no {}: {e}", path.display())));
        let settings: Value = serde_json::from_slice(&written)
            .unwrap_or_else(|e| self.fail(&format!("{} is not JSON: {e}", path.display())));
        let mut registered = claude_hooks::registered_in(&settings);
        let mut sorted = expected.clone();
        registered.sort();
        sorted.sort();
        if registered != sorted {
            self.fail(&format!(
                "install registered {registered:?}, the profile says {sorted:?} for {}",
                self.version
            ));
        }
        let known: Vec<&str> =
            claude_hooks::known_events(self.version).iter().map(|e| e.name).collect();
        if let Some(unknown) = registered.iter().find(|e| !known.contains(&e.as_str())) {
            self.fail(&format!(
                "install registered {unknown}, which {} does not know",
                self.version
            ));
        }
        let command = format!("{relay} --cli claude");
        for event in &registered {
            let handlers: Vec<&Value> = settings["hooks"][event]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
                .collect();
            let ok = handlers.len() == 1
                && handlers[0]["type"] == "command"
                && handlers[0]["command"] == command.as_str();
            if !ok {
                self.fail(&format!("hooks.{event} does not run {command:?} once: {handlers:?}"));
            }
        }

        let second = self.run_install(&relay);
        let mut wanted = wanted[..2].to_vec();
        wanted.extend(expected.iter().map(|e| format!("hooks.{e}: already installed")));
        wanted.push("nothing to change".into());
        self.check_install_output("a second hookline install", &second, &wanted);
        if std::fs::read(&path).ok().as_deref() != Some(written.as_slice()) {
            self.fail("a second hookline install changed the settings file");
        }
    }

    fn run_install(&self, relay: &str) -> String {
        let mut command = self.sandbox.command(&binaries::hookline());
        let cli_dir = self.binary.parent().expect("the CLI's folder");
        let path = std::env::join_paths(
            std::iter::once(cli_dir.to_owned())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .expect("PATH joins");
        command
            .env("PATH", path)
            .args(["install", "claude", "--scope", "project", "--relay", relay]);
        let output = output_within(command, Duration::from_secs(30))
            .unwrap_or_else(|e| self.fail(&format!("hookline install: {e}")));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() || !output.stderr.is_empty() {
            self.fail(&format!(
                "hookline install exited with {} and stderr {:?}; stdout:\n{stdout}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        stdout
    }

    /// `output` must be exactly the `wanted` lines, plus notes (`note: ...`) after them.
    fn check_install_output(&self, what: &str, output: &str, wanted: &[String]) {
        let lines: Vec<&str> = output.lines().collect();
        let notes = lines.iter().skip(wanted.len()).all(|l| l.starts_with("note: "));
        if lines.len() < wanted.len() || lines[..wanted.len()] != *wanted || !notes {
            self.fail(&format!(
                "{what} printed:\n{output}\nexpected:\n{}\n(then only notes)",
                wanted.join("\n")
            ));
        }
    }

    /// Launches the interactive TUI in a fresh tmux server with `args`.
    pub fn launch_tui(&mut self, args: &[&str]) {
        self.expect_no_session_before_launch();
        let script = self.sandbox.launch_script(&self.binary, args);
        self.tmux.take();
        let tmux = Tmux::start(self.sandbox.root(), &script)
            .unwrap_or_else(|e| self.fail(&format!("cannot start tmux: {e}")));
        self.tmux = Some(tmux);
    }

    /// Before the first launch the tracker knows no session for the tag: nothing says what it
    /// is doing, and input is refused.
    fn expect_no_session_before_launch(&mut self) {
        if !self.tracker.is_empty() {
            return;
        }
        if let Some(view) = self.view() {
            self.fail(&format!("a session exists before the launch: {view:?}"));
        }
        let input = match self.tracker.take_input_slot(&self.tag, now_ns()) {
            Err(refusal @ Refusal::NoSuchSession { .. }) => format!("refused: {refusal}"),
            other => self.fail(&format!("input before the launch: {other:?}")),
        };
        self.log.push(StepRecord {
            name: "before launch".into(),
            events: Vec::new(),
            tracked: Vec::new(),
            took: Duration::ZERO,
            state: state_label(None),
            held: None,
            input: Some(input),
        });
    }

    fn tmux(&self) -> &Tmux {
        self.tmux.as_ref().unwrap_or_else(|| self.fail("the TUI was not launched"))
    }

    /// Waits for the screen to show `text`; returns the screen.
    pub fn wait_for_text(&self, text: &str, timeout: Duration) -> String {
        self.tmux().wait_for_screen(timeout, |screen| screen.contains(text)).unwrap_or_else(|_| {
            self.fail(&format!("the screen did not show {text:?} in {timeout:?}"))
        })
    }

    /// Every event so far.
    pub fn all_events(&self) -> Vec<Event> {
        self.events.read().unwrap_or_else(|e| self.fail(&format!("reading events: {e}")))
    }

    /// The tracker's view of the session the tag names, now.
    pub fn view(&self) -> Option<View> {
        self.tracker.view(&self.tag, now_ns())
    }

    /// Runs the steps in order.
    pub fn run(&mut self, steps: &[Step]) {
        for step in steps {
            self.run_step(step);
        }
    }

    /// Runs one step: waits for the screen, acts, waits for exactly the expected native events
    /// and for `hookline watch` to print their canonical events, applying each to the tracker
    /// and checking kind and state; then checks silence (the state holding), the screen, the
    /// state after the step and the input slot as the step asks, and that nothing went wrong.
    pub fn run_step(&mut self, step: &Step) {
        if let Some(text) = step.shown_before {
            self.wait_for_text(text, Duration::from_secs(15));
        }
        let started = Instant::now();
        let acted = match &step.action {
            Action::Wait => Ok(()),
            Action::Type(line) => self.submit_line(line),
            Action::Press(key) => self.tmux().press(key),
        };
        if let Err(e) = acted {
            self.fail(&format!("step {:?}: {e}", step.name));
        }
        let expected: Vec<Expect> =
            step.native.iter().copied().filter(|e| e.applies_to(self.version)).collect();
        let consumed = self.expect_events(step.name, &expected, step.within);
        let matched = match_events(&consumed, &expected).unwrap_or_default();
        let mut tracked = Vec::with_capacity(consumed.len());
        for (event, expect) in consumed.iter().zip(&matched) {
            tracked.push(self.follow(step.name, event, expect));
        }
        if let Some(quiet) = step.quiet_for {
            self.expect_quiet(step.name, quiet, step.state);
        }
        if let Some(text) = step.shown_after {
            self.wait_for_text(text, Duration::from_secs(10));
        }
        let state = self.expect_state(step.name, step.state);
        let input = step.input.map(|input| self.expect_input(step.name, input));
        let took = started.elapsed();
        self.check_clean(step.name);
        self.log.push(StepRecord {
            name: step.name.to_owned(),
            events: consumed,
            tracked,
            took,
            state,
            held: step.quiet_for,
            input,
        });
    }

    /// Waits until the events after the cursor begin with `expected`, exactly and in order;
    /// consumes and returns them. Fails early on the first event that differs.
    pub fn expect_events(
        &mut self,
        step: &str,
        expected: &[Expect],
        within: Duration,
    ) -> Vec<Event> {
        let cursor = self.cursor;
        let mismatch = |events: &[Event]| {
            let window = &events[cursor.min(events.len())..];
            first_mismatch(&window[..window.len().min(expected.len())], expected)
        };
        let outcome = self.events.wait_until(within, |events| {
            mismatch(events).is_some() || events.len() >= cursor + expected.len()
        });
        let events = match outcome {
            Ok(events) if mismatch(&events).is_none() => events,
            Ok(events) | Err(events) => {
                let seen: Vec<String> =
                    events[cursor.min(events.len())..].iter().map(Event::label).collect();
                let wanted: Vec<String> = expected.iter().map(Expect::label).collect();
                self.fail(&format!(
                    "step {step:?}: expected the native events {wanted:?} within {within:?}, got {seen:?}"
                ));
            }
        };
        self.cursor += expected.len();
        events[cursor..self.cursor].to_vec()
    }

    fn follower(&mut self) -> &mut Follower {
        self.follower.as_mut().expect("hookline watch runs from the start")
    }

    /// Waits for `hookline watch` to print the canonical event of `event` (the next one it
    /// prints must be that one), applies it to the tracker and checks it against `expect`.
    fn follow(&mut self, step: &str, event: &Event, expect: &Expect) -> Tracked {
        let seq = event.envelope.seq;
        let canonical = match self.follower().next(DELIVERY) {
            Ok(Some(canonical)) => canonical,
            Ok(None) => self.fail(&format!(
                "step {step:?}: hookline watch did not print #{seq} {} within {DELIVERY:?}",
                event.label()
            )),
            Err(e) => self.fail(&format!("step {step:?}: {e}")),
        };
        let label = canonical_label(&canonical);
        if canonical.source.seq != seq || canonical.native.as_deref() != Some(event.name()) {
            self.fail(&format!(
                "step {step:?}: hookline watch printed #{} {:?} ({label}) where #{seq} {} was next",
                canonical.source.seq,
                canonical.native,
                event.label()
            ));
        }
        if canonical.cli != "claude"
            || canonical.session_id.as_deref() != event.field("session_id")
            || canonical.tag.as_deref() != Some(self.tag.as_str())
        {
            self.fail(&format!(
                "step {step:?}: #{seq} {label} has cli {:?}, session {:?}, tag {:?}; the payload's session is {:?}",
                canonical.cli,
                canonical.session_id,
                canonical.tag,
                event.field("session_id")
            ));
        }
        let before = self.view();
        let applied = self.tracker.apply(&canonical);
        let view = self.view();
        let state = state_label(view.as_ref());
        let tracked = Tracked {
            seq,
            canonical: label.clone(),
            rule: applied.rule,
            changed: applied.changed,
            state: state.clone(),
        };
        self.tracked.push(tracked.clone());
        let what = format!("step {step:?}: #{seq} {}", event.label());
        if let Some(wanted) = expect.canonical.filter(|wanted| *wanted != label) {
            self.fail(&format!("{what}: hookline gives {label}, expected {wanted}"));
        }
        if let Some(wanted) = expect.state.filter(|wanted| *wanted != state) {
            self.fail(&format!(
                "{what} ({label}): the state is {state} (rule {}), expected {wanted}",
                applied.rule
            ));
        }
        if expect.unchanged {
            let same = before.as_ref().zip(view.as_ref()).is_some_and(|(b, a)| {
                b.state == a.state && b.detail == a.detail && b.evidence == a.evidence
            });
            if applied.changed || !same {
                self.fail(&format!(
                    "{what} ({label}) changed the state (rule {}): {} -> {state}",
                    applied.rule,
                    state_label(before.as_ref())
                ));
            }
        }
        self.check_live(&what, view.as_ref());
        tracked
    }

    /// Every view the harness looks at comes from live events: authoritative and fresh.
    fn check_live(&self, what: &str, view: Option<&View>) {
        if let Some(view) = view
            && (!view.authoritative || view.replayed || !view.fresh)
        {
            self.fail(&format!(
                "{what}: the state is not live (authoritative {}, fresh {}): {view:?}",
                view.authoritative, view.fresh
            ));
        }
    }

    /// Requires that no native event arrives for `quiet`, that `hookline watch` prints nothing,
    /// and, when `hold` is given, that the session stays in that state all along (checked at
    /// every poll).
    pub fn expect_quiet(&mut self, step: &str, quiet: Duration, hold: Option<&str>) {
        let deadline = Instant::now() + quiet;
        loop {
            let events = self.all_events();
            if events.len() > self.cursor {
                let extra: Vec<String> = events[self.cursor..].iter().map(Event::label).collect();
                self.fail(&format!(
                    "step {step:?}: expected no event for {quiet:?}, got {extra:?}"
                ));
            }
            match self.follower().try_next() {
                Ok(None) => {}
                Ok(Some(event)) => self.fail(&format!(
                    "step {step:?}: hookline watch printed {} (#{}) during the silence",
                    canonical_label(&event),
                    event.source.seq
                )),
                Err(e) => self.fail(&format!("step {step:?}: {e}")),
            }
            if let Some(hold) = hold {
                let view = self.view();
                let state = state_label(view.as_ref());
                if state != hold {
                    self.fail(&format!(
                        "step {step:?}: the state became {state} during the silence, expected {hold} throughout"
                    ));
                }
                self.check_live(&format!("step {step:?}"), view.as_ref());
            }
            if Instant::now() >= deadline {
                return;
            }
            thread::sleep(POLL);
        }
    }

    /// Checks the state after a step (when the step says one) and returns it.
    fn expect_state(&self, step: &str, wanted: Option<&str>) -> String {
        let view = self.view();
        let state = state_label(view.as_ref());
        if let Some(wanted) = wanted.filter(|wanted| *wanted != state) {
            self.fail(&format!("step {step:?}: the state is {state}, expected {wanted}"));
        }
        self.check_live(&format!("step {step:?}"), view.as_ref());
        state
    }

    /// Takes the input slot as the step says it must go; returns what happened, for reports.
    fn expect_input(&mut self, step: &str, input: Input) -> String {
        let view = self.view();
        let available = view.as_ref().is_some_and(|v| v.input == "available");
        match input {
            Input::Once => {
                let slot = match self.tracker.take_input_slot(&self.tag, now_ns()) {
                    Ok(slot) => slot,
                    Err(refusal) => self.fail(&format!(
                        "step {step:?}: the input slot was refused ({refusal}); expected it once"
                    )),
                };
                let view = view.expect("a granted slot has a session");
                let generation = self.tracker.generation().id;
                if !available
                    || slot.generation != generation
                    || slot.epoch != view.epoch
                    || slot.session_id != view.session_id
                {
                    self.fail(&format!(
                        "step {step:?}: the slot {slot:?} does not match the view {view:?} (generation {generation})"
                    ));
                }
                match self.tracker.take_input_slot(&self.tag, now_ns()) {
                    Err(refusal @ Refusal::AlreadyTaken) => {
                        format!("granted once (epoch {}, seq {}), then refused: {refusal}", slot.epoch, slot.seq)
                    }
                    other => self.fail(&format!(
                        "step {step:?}: a second take of the input slot gave {other:?}; expected it refused as already taken"
                    )),
                }
            }
            Input::Refused(why) => match self.tracker.take_input_slot(&self.tag, now_ns()) {
                Err(refusal) if refusal.to_string().contains(why) && !available => {
                    format!("refused: {refusal}")
                }
                other => self.fail(&format!(
                    "step {step:?}: taking the input slot gave {other:?} (view: {}); expected a refusal saying {why:?}",
                    view.as_ref().map_or("no session", |v| v.input.as_str())
                )),
            },
        }
    }

    /// Checks that the screen never showed a hook error (nor, unless provoked, a settings
    /// warning), that the relay logged no error, and that every envelope carries a payload, our
    /// tag and the CLI's session id.
    pub fn check_clean(&self, step: &str) {
        if let Some(tmux) = &self.tmux {
            let screen = tmux.screen_with_history().unwrap_or_default();
            if screen.to_lowercase().contains(HOOK_ERROR) {
                self.fail(&format!("step {step:?}: the screen shows {HOOK_ERROR:?}"));
            }
            if !self.settings_warning_expected && screen.contains(SETTINGS_WARNING) {
                self.fail(&format!(
                    "step {step:?}: the screen shows a {SETTINGS_WARNING:?}: the CLI rejects a hook event hookline registered"
                ));
            }
        }
        let errors: Vec<String> = diag::read(&self.sandbox.relay_log())
            .into_iter()
            .filter(|r| r.level == Level::Error)
            .map(|r| format!("{:?}: {}", r.event, r.message))
            .collect();
        if !errors.is_empty() {
            self.fail(&format!("step {step:?}: the relay logged errors: {errors:?}"));
        }
        let tag = Some(self.tag.as_str());
        for event in self.all_events() {
            let envelope = &event.envelope;
            let problem = if envelope.error.is_some() || envelope.payload.is_none() {
                Some("has no payload")
            } else if envelope.cli != "claude" {
                Some("has the wrong cli")
            } else if envelope.tag.as_deref() != tag {
                Some("lacks the HOOKLINE_TAG of the sandbox")
            } else if event.field("hook_event_name") != envelope.event.as_deref() {
                Some("names another event than its payload")
            } else if envelope.host_session_id.as_deref() != event.field("session_id") {
                Some("has a host_session_id that is not the payload's session_id")
            } else {
                None
            };
            if let Some(problem) = problem {
                self.fail(&format!("step {step:?}: event {} {problem}: {envelope:?}", event.file));
            }
        }
    }

    /// Types a line into the TUI, waits for it to be echoed, then presses Enter. (An Enter that
    /// follows the text at once can be taken as part of it: 2.1.197 then leaves the line
    /// unsubmitted.)
    pub fn submit_line(&self, line: &str) -> Result<(), String> {
        let tmux = self.tmux();
        tmux.type_text(line)?;
        let tail: String =
            line.chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        tmux.wait_for_screen(Duration::from_secs(10), |screen| screen.contains(&tail))
            .map_err(|_| format!("the typed text {line:?} was not echoed"))?;
        thread::sleep(Duration::from_millis(200));
        tmux.press("Enter")
    }

    /// Waits for the TUI to exit and returns its exit status, `None` when tmux does not report
    /// it (see [`Tmux::exit`]).
    pub fn wait_for_exit(&self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        let mut exited_at = None;
        loop {
            match self.tmux().exit() {
                Ok(Exit::Status(status)) => return Some(status),
                // A zombie is usually reaped (and its status reported) a moment later.
                Ok(Exit::Unknown) => {
                    let since = *exited_at.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_secs(3) {
                        return None;
                    }
                    thread::sleep(Duration::from_millis(100))
                }
                Ok(Exit::Running) if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(100))
                }
                Ok(Exit::Running) => {
                    let pid = self.tmux().pane_pid().map_or_else(|e| e, |p| p.to_string());
                    self.fail(&format!("the CLI (pid {pid}) did not exit within {timeout:?}"))
                }
                Err(e) => self.fail(&e),
            }
        }
    }

    /// Runs the CLI without a terminal (`claude -p ...`), killing it after `timeout`.
    pub fn run_headless(&mut self, args: &[&str], timeout: Duration) -> Output {
        self.expect_no_session_before_launch();
        self.sandbox.launch_script(&self.binary, args); // for rerunning by hand
        let mut command = self.sandbox.command(&self.binary);
        command.args(args).env("TERM", "dumb");
        output_within(command, timeout)
            .unwrap_or_else(|e| self.fail(&format!("claude {args:?}: {e}")))
    }

    /// What a one-shot reader says afterwards: `hookline status --json` rebuilds the session
    /// from the events directory; it must find the tracker's state, marked replayed (never
    /// authoritative, never granting input).
    pub fn check_status(&self, wanted: &str) {
        let mut command = self.sandbox.command(&binaries::hookline());
        command.arg("status").arg("--events-dir").arg(self.events.path()).arg("--json");
        let output = output_within(command, Duration::from_secs(20))
            .unwrap_or_else(|e| self.fail(&format!("hookline status: {e}")));
        let text = String::from_utf8_lossy(&output.stdout);
        let rows: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| {
            self.fail(&format!("hookline status --json ({}): {e}: {text}", output.status))
        });
        let Some(row) = rows.iter().find(|r| r["tag"] == self.tag.as_str()) else {
            self.fail(&format!("hookline status shows no session tagged {}: {text}", self.tag))
        };
        let state = match row["detail"].as_str() {
            Some(detail) => format!("{}({detail})", row["state"].as_str().unwrap_or("?")),
            None => row["state"].as_str().unwrap_or("?").to_owned(),
        };
        let live = self.view().map(|v| v.session_id);
        if state != wanted
            || row["authoritative"] != false
            || row["replayed"] != true
            || row["session_id"].as_str() != live.flatten().as_deref()
        {
            self.fail(&format!("hookline status says {row}; expected {wanted}, replayed"));
        }
    }

    /// The end of a scenario: nothing went wrong, every native event was consumed by a step
    /// and `hookline watch` printed nothing more; then the report.
    pub fn finish(&mut self) {
        self.check_clean("at the end");
        self.expect_quiet("at the end", Duration::from_millis(300), None);
        self.save_report();
    }

    /// The steps as they ran: per step its name, time, the state after it (and how long it
    /// held), the input slot; per event its seq, seconds since the first event, native label,
    /// the canonical event, the state rule and the state after it.
    pub fn event_table(&self) -> String {
        let mut table = String::new();
        let _ = writeln!(
            table,
            "  {:>4} {:>9}  {:<32} {:<30} {:<34} state after",
            "seq", "at", "native", "canonical (hookline watch)", "state rule (Tracker)"
        );
        let first = self.log.iter().flat_map(|r| &r.events).next().cloned();
        for record in &self.log {
            let held = record.held.map(|d| format!(", held {:.1} s", d.as_secs_f64()));
            let _ = writeln!(
                table,
                "  -- {} ({:.1} s) -> {}{}",
                record.name,
                record.took.as_secs_f64(),
                record.state,
                held.unwrap_or_default()
            );
            for (event, tracked) in record.events.iter().zip(&record.tracked) {
                let at = first.as_ref().map_or(0.0, |f| event.secs_since(f));
                let rule = if tracked.changed {
                    tracked.rule.to_string()
                } else {
                    format!("{} (kept)", tracked.rule)
                };
                let _ = writeln!(
                    table,
                    "  {:>4} {at:>7.2} s  {:<32} {:<30} {rule:<34} {}",
                    event.envelope.seq,
                    event.label(),
                    tracked.canonical,
                    tracked.state
                );
            }
            if let Some(input) = &record.input {
                let _ = writeln!(table, "  {:>16}  input slot: {input}", "");
            }
        }
        table
    }

    /// Writes [`ClaudeSession::event_table`], the install output and the mock's requests to
    /// `target/hookline-e2e/<label>.txt` and prints them.
    pub fn save_report(&self) {
        let mut table = self.event_table();
        let _ = writeln!(table, "  hookline install:");
        for line in self.install_output.lines() {
            let _ = writeln!(table, "    {line}");
        }
        let _ = writeln!(table, "  mock API requests:");
        for request in self.api.requests() {
            let _ = writeln!(table, "    {}", request.summary());
        }
        println!(
            "[{}] passed in {:.1} s:\n{table}",
            self.label,
            self.started.elapsed().as_secs_f64()
        );
        let dir = binaries::profile_dir().join("..").join("hookline-e2e");
        if std::fs::create_dir_all(&dir).is_ok() {
            let name = self.label.replace(' ', "-");
            let _ = std::fs::write(dir.join(format!("{name}.txt")), &table);
        }
    }

    /// Panics with `message` and everything needed to see why.
    pub fn fail(&self, message: &str) -> ! {
        let mut report = format!("[{}] {message}\n", self.label);
        let _ = writeln!(report, "sandbox: {}", self.sandbox.root().display());
        let _ = writeln!(report, "native events (consumed up to #{}):", self.cursor);
        match self.events.read() {
            Ok(events) => {
                let first = events.first().cloned();
                for (i, event) in events.iter().enumerate() {
                    let at = first.as_ref().map_or(0.0, |f| event.secs_since(f));
                    let mark = if i < self.cursor { ' ' } else { '>' };
                    let _ = writeln!(report, " {mark} {at:>7.2} s  {event}");
                }
            }
            Err(e) => {
                let _ = writeln!(report, "  cannot read: {e}");
            }
        }
        let _ = writeln!(report, "canonical events (hookline watch) and states (Tracker):");
        for tracked in &self.tracked {
            let _ = writeln!(
                report,
                "  #{:<4} {:<30} {:<34} -> {}",
                tracked.seq, tracked.canonical, tracked.rule, tracked.state
            );
        }
        let _ = writeln!(report, "state now: {:?}", self.view());
        if let Some(follower) = &self.follower {
            let stderr = follower.stderr();
            if !stderr.trim().is_empty() {
                let _ = writeln!(report, "hookline watch stderr:\n{}", stderr.trim_end());
            }
        }
        if let Some(tmux) = &self.tmux {
            let screen = tmux.screen_with_history().unwrap_or_else(|e| e);
            let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = &lines[lines.len().saturating_sub(60)..];
            let _ = writeln!(report, "screen (last non-empty lines):\n{}", tail.join("\n"));
        }
        let _ = writeln!(report, "mock API requests:");
        for request in self.api.requests() {
            let _ = writeln!(report, "  {}", request.summary());
        }
        let diagnostics = diag::read(&self.sandbox.relay_log());
        if diagnostics.is_empty() {
            let _ = writeln!(report, "relay diagnostics: none");
        } else {
            let _ = writeln!(report, "relay diagnostics:");
            for record in diagnostics {
                let _ =
                    writeln!(report, "  {:?} {:?}: {}", record.level, record.event, record.message);
            }
        }
        panic!("{report}");
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
    fn expectations_since_a_version_apply_from_that_version_on() {
        let expect = native("PermissionRequest").since("2.1.332");
        assert!(!expect.applies_to(Version::lit("2.1.197")));
        assert!(expect.applies_to(Version::lit("2.1.332")));
        assert!(native("Stop").applies_to(Version::lit("1.0.0")));
    }
}
