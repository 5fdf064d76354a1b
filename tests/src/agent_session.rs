//! One run of Codex CLI or Gemini CLI in a sandbox, against a mock API, with the relay
//! registered by `hookline install`: the harness their scenarios are written with.
//!
//! A scenario is a table of [`Step`]s, as in the Claude Code suite: an action (type a line,
//! press a key, or just wait), then the native events that must follow — exactly those, in
//! order — each with the canonical event hookline must make of it and, where it matters, the
//! session state right after it; then the state after the step and whether the session's input
//! slot may be taken there.
//!
//! The canonical events and states come from the library, as an orchestrator would get them:
//! a [`Reader`] follows the events directory from its start and a [`Tracker`] whose generation
//! begins before the CLI is launched folds them, so every state is live and authoritative.
//! Sessions are looked up by the scenario's `HOOKLINE_TAG`. Every failure panics with a full
//! report: the events seen, the canonical events and states so far, the screen with its
//! scrollback, the mock's requests and the relay's diagnostics. A passing run prints its
//! native → canonical → state table and writes it to `target/hookline-e2e/`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use hookline::canonical::Event as Canonical;
use hookline::format::relay::now_ns;
use hookline::profile::Profiles;
use hookline::reader::{Reader, ReaderConfig, Start};
use hookline::state::{Tracker, View};
use hookline_relay::diag::{self, Level};

use crate::binaries;
use crate::events::{Event, EventsDir};
use crate::labels::{kind_label, state_label, state_matches};
use crate::mock_http::MockServer;
use crate::npm_install::Installed;
use crate::process::output_within;
use crate::sandbox::Sandbox;
use crate::tmux::{Exit, Tmux};
use crate::version::Version;

/// What a screen line shows when a CLI reports a failing hook (lower case).
const HOOK_FAILURES: &[&str] = &["hook error", "hook failed", "hook execution failed"];

/// One expected native event and what hookline must make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// Native event name.
    pub event: &'static str,
    /// Expected qualifier ([`Event::qualifier`]): notification type, source, reason, trigger.
    pub qualifier: Option<&'static str>,
    /// The canonical event, as [`kind_label`] writes it (`tool_start`,
    /// `waiting_for_input(permission)`).
    pub canonical: &'static str,
    /// The session state right after it, as [`state_label`] writes it; `None`: not checked.
    pub state: Option<&'static str>,
    /// May come anywhere among the step's events: a side thread races the main one.
    pub any_order: bool,
}

/// Expects the native `event`, mapped to the canonical `canonical`.
pub const fn native(event: &'static str, canonical: &'static str) -> Expect {
    Expect { event, qualifier: None, canonical, state: None, any_order: false }
}

impl Expect {
    /// With this qualifier.
    pub const fn q(mut self, qualifier: &'static str) -> Expect {
        self.qualifier = Some(qualifier);
        self
    }

    /// The session state right after it.
    pub const fn state(mut self, state: &'static str) -> Expect {
        self.state = Some(state);
        self
    }

    /// Anywhere among the step's events.
    pub const fn any_order(mut self) -> Expect {
        self.any_order = true;
        self
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

/// What a step does before waiting for its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing: the events come from earlier actions (a headless run, a command).
    Wait,
    /// Type a line and press Enter.
    Type(String),
    /// Press one key (tmux key name).
    Press(&'static str),
}

/// Whether the session's input slot may be taken after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// It may not.
    Refused,
    /// It may, exactly once.
    Once,
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
    /// The session state after the step ([`state_label`]; a state without detail matches any
    /// detail).
    pub state: &'static str,
    /// Whether the input slot may be taken after the step.
    pub input: Input,
}

impl Step {
    /// A step doing `action`, after which the session is in `state`.
    pub fn new(name: &'static str, action: Action, state: &'static str) -> Step {
        Step {
            name,
            shown_before: None,
            action,
            native: Vec::new(),
            within: Duration::from_secs(20),
            quiet_for: None,
            shown_after: None,
            state,
            input: Input::Refused,
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

    /// The input slot may be taken exactly once after the step.
    pub fn input_once(mut self) -> Step {
        self.input = Input::Once;
        self
    }
}

/// One event as a step saw it.
#[derive(Debug, Clone)]
struct Row {
    seq: u64,
    at: f64,
    native: String,
    canonical: String,
    state: String,
}

/// A step as it ran.
#[derive(Debug, Clone)]
struct StepRecord {
    name: &'static str,
    took: Duration,
    rows: Vec<Row>,
    state: String,
    input: &'static str,
}

/// The CLI under test, in its sandbox, with the library following its events.
pub struct AgentSession {
    /// `<cli> <version> <scenario>`, the prefix of every failure.
    pub label: String,
    /// The profile name (`codex`, `gemini`).
    pub cli: &'static str,
    /// The CLI's version.
    pub version: Version,
    /// The program run (`node_modules/.bin/<bin>`).
    pub binary: PathBuf,
    /// The mock API it talks to.
    pub api: MockServer,
    /// Its sandbox.
    pub sandbox: Sandbox,
    /// The events directory.
    pub events: EventsDir,
    /// The tmux server, once the TUI is launched.
    pub tmux: Option<Tmux>,
    /// `HOOKLINE_TAG`: the orchestrator's name for the session.
    pub tag: String,
    reader: Reader,
    tracker: Tracker,
    /// Every canonical event applied, in order.
    canonical: Vec<Canonical>,
    cursor: usize,
    first_ts_ns: Option<u64>,
    started: Instant,
    log: Vec<StepRecord>,
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        // Kill the CLI before its sandbox is removed, or it recreates files in it as it dies.
        self.tmux.take();
    }
}

impl AgentSession {
    /// Builds the sandbox and starts following its events directory with a tracker whose
    /// generation starts now, before the CLI is launched. The CLI's `node_modules/.bin` goes
    /// first on `PATH` (so `hookline install` finds it); the CLI's own variables are set by the
    /// caller with [`Sandbox::set_env`].
    pub fn new(installed: &Installed, scenario: &str, api: MockServer) -> AgentSession {
        let cli = installed.cli.cli;
        let label = format!("{cli} {} {scenario}", installed.version);
        let tag = format!("e2e-{cli}-{}-{scenario}", installed.version);
        let mut path = OsString::from(installed.bin_dir());
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
        let sandbox = Sandbox::for_cli(&tag, vec![("PATH".into(), path)]);
        let profiles = Profiles::shipped()
            .unwrap_or_else(|e| panic!("[{label}] the shipped profiles do not load: {e}"));
        let config = ReaderConfig::new(sandbox.events_dir(), Start::Beginning, profiles.clone());
        let reader =
            Reader::open(config).unwrap_or_else(|e| panic!("[{label}] cannot open a reader: {e}"));
        let tracker = Tracker::new(profiles, now_ns());
        AgentSession {
            label,
            cli,
            version: installed.version,
            binary: installed.binary.clone(),
            api,
            events: EventsDir::new(&sandbox.events_dir()),
            sandbox,
            tmux: None,
            tag,
            reader,
            tracker,
            canonical: Vec::new(),
            cursor: 0,
            first_ts_ns: None,
            started: Instant::now(),
            log: Vec::new(),
        }
    }

    /// Runs the built `hookline` with `args` in the project, with the sandbox's environment;
    /// returns its output.
    pub fn hookline(&self, args: &[&str]) -> Output {
        let hookline = binaries::hookline();
        self.sandbox.launch_script(&hookline, args); // for rerunning by hand
        let mut command = self.sandbox.command(&hookline);
        command.args(args);
        output_within(command, Duration::from_secs(60))
            .unwrap_or_else(|e| self.fail(&format!("hookline {args:?}: {e}")))
    }

    /// `hookline install <cli> --relay <built relay>`: the only way the suites register hooks.
    /// Fails unless it succeeds; returns what it printed.
    pub fn install_hooks(&self) -> String {
        let relay = binaries::relay();
        let relay = relay.to_str().expect("UTF-8 relay path");
        let output = self.hookline(&["install", self.cli, "--relay", relay]);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            self.fail(&format!(
                "hookline install {} failed ({}):\n{stdout}{}",
                self.cli,
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let detected = format!("{} (from `{} --version`)", self.version, self.cli);
        if !stdout.lines().next().is_some_and(|l| l.contains(&detected)) {
            self.fail(&format!("hookline install did not detect {detected}:\n{stdout}"));
        }
        stdout
    }

    /// Launches the interactive TUI in a fresh tmux server with `args`.
    pub fn launch_tui(&mut self, args: &[&str]) {
        let script = self.sandbox.launch_script(&self.binary, args);
        let tmux = Tmux::start(self.sandbox.root(), &script)
            .unwrap_or_else(|e| self.fail(&format!("cannot start tmux: {e}")));
        self.tmux = Some(tmux);
    }

    fn tmux(&self) -> &Tmux {
        self.tmux.as_ref().unwrap_or_else(|| self.fail("the TUI was not launched"))
    }

    /// Waits for the screen to show `text`; returns the screen. Once the CLI has exited, what
    /// it printed last may sit above the visible screen: the scrollback counts then.
    pub fn wait_for_text(&self, text: &str, timeout: Duration) -> String {
        let tmux = self.tmux();
        let deadline = Instant::now() + timeout;
        loop {
            let screen = tmux.screen().unwrap_or_else(|e| self.fail(&e));
            if screen.contains(text) {
                return screen;
            }
            if tmux.exit().is_ok_and(|exit| exit != Exit::Running) {
                let all = tmux.screen_with_history().unwrap_or_else(|e| self.fail(&e));
                if all.contains(text) {
                    return all;
                }
            }
            if Instant::now() >= deadline {
                self.fail(&format!("the screen did not show {text:?} in {timeout:?}"));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs the CLI without a terminal, stdin closed, killing it after `timeout`.
    pub fn run_headless(&self, args: &[&str], timeout: Duration) -> Output {
        self.sandbox.launch_script(&self.binary, args); // for rerunning by hand
        let mut command = self.sandbox.command(&self.binary);
        command.args(args).env("TERM", "dumb");
        output_within(command, timeout)
            .unwrap_or_else(|e| self.fail(&format!("{} {args:?}: {e}", self.cli)))
    }

    /// A command for `program` with exactly the sandbox's environment, in the project.
    pub fn command(&self, program: &Path) -> Command {
        self.sandbox.command(program)
    }

    /// Runs the steps in order.
    pub fn run(&mut self, steps: &[Step]) {
        for step in steps {
            self.run_step(step);
        }
    }

    /// Runs one step: waits for the screen, acts, waits for exactly the expected native events,
    /// checks the canonical event and state hookline gives each, then silence and the screen
    /// as the step asks, the state after the step and its input slot, and that nothing went
    /// wrong.
    pub fn run_step(&mut self, step: &Step) {
        if let Some(text) = step.shown_before {
            self.wait_for_text(text, Duration::from_secs(20));
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
        let events = self.expect_events(step.name, &step.native, step.within);
        let matched = match_events(&events, &step.native).unwrap_or_default();
        let mut rows = Vec::new();
        for (event, expect) in events.iter().zip(&matched) {
            rows.push(self.apply(step.name, event, expect));
        }
        if let Some(quiet) = step.quiet_for {
            self.expect_quiet(step.name, quiet);
        }
        if let Some(text) = step.shown_after {
            self.wait_for_text(text, Duration::from_secs(15));
        }
        let took = started.elapsed();
        let state = self.state();
        if !state_matches(step.state, &state) {
            self.fail(&format!(
                "step {:?}: the session is {state} after the step, expected {}",
                step.name, step.state
            ));
        }
        let input = self.check_input(step);
        self.check_clean(step.name);
        self.log.push(StepRecord { name: step.name, took, rows, state, input });
    }

    /// The session's state now, by tag.
    pub fn state(&self) -> String {
        state_label(self.view().as_ref())
    }

    /// The session's view now, by tag.
    pub fn view(&self) -> Option<View> {
        self.tracker.view(&self.tag, now_ns())
    }

    /// The tracker, for checks a scenario adds.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Every canonical event applied so far.
    pub fn canonical_events(&self) -> &[Canonical] {
        &self.canonical
    }

    /// Checks the input slot as the step says: taken once and refused the second time, or
    /// refused.
    fn check_input(&mut self, step: &Step) -> &'static str {
        let first = self.tracker.take_input_slot(&self.tag, now_ns());
        match (step.input, first) {
            (Input::Refused, Err(_)) => "refused",
            (Input::Refused, Ok(slot)) => self.fail(&format!(
                "step {:?}: the input slot was granted ({slot:?}) in state {}",
                step.name,
                self.state()
            )),
            (Input::Once, Err(refusal)) => {
                self.fail(&format!("step {:?}: the input slot was refused: {refusal}", step.name))
            }
            (Input::Once, Ok(_)) => match self.tracker.take_input_slot(&self.tag, now_ns()) {
                Err(_) => "once",
                Ok(slot) => self.fail(&format!(
                    "step {:?}: the input slot was granted a second time ({slot:?})",
                    step.name
                )),
            },
        }
    }

    /// Reads the canonical event of `event` from the library, checks it against `expect`,
    /// applies it to the tracker and checks the state after it.
    fn apply(&mut self, step: &str, event: &Event, expect: &Expect) -> Row {
        let seq = event.envelope.seq;
        let canonical = self.next_canonical(step, seq);
        let label = kind_label(&canonical);
        if label != expect.canonical {
            self.fail(&format!(
                "step {step:?}: #{seq} {} is the canonical {label} (rule {}), expected {}",
                event.label(),
                canonical.rule,
                expect.canonical
            ));
        }
        self.tracker.apply(&canonical);
        self.canonical.push(canonical);
        let state = self.state();
        if let Some(expected) = expect.state
            && !state_matches(expected, &state)
        {
            self.fail(&format!(
                "step {step:?}: after #{seq} {} the session is {state}, expected {expected}",
                event.label()
            ));
        }
        let first = *self.first_ts_ns.get_or_insert(event.envelope.ts_ns);
        Row {
            seq,
            at: (event.envelope.ts_ns.saturating_sub(first)) as f64 / 1e9,
            native: event.label(),
            canonical: label,
            state,
        }
    }

    /// The library's canonical event for the native event `seq`, the next one it delivers.
    fn next_canonical(&mut self, step: &str, seq: u64) -> Canonical {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(event) = self.reader.next_event() {
                if event.source.seq != seq {
                    self.fail(&format!(
                        "step {step:?}: the reader delivered #{} ({:?}) where #{seq} was expected",
                        event.source.seq, event.native
                    ));
                }
                return event;
            }
            if Instant::now() >= deadline {
                self.fail(&format!("step {step:?}: the reader did not deliver #{seq} in 10 s"));
            }
            if let Err(e) = self.reader.poll() {
                self.fail(&format!("step {step:?}: the reader failed: {e}"));
            }
            if !self.reader.has_pending() {
                thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Waits until the events after the cursor are `expected` ([`match_events`]); consumes and
    /// returns them. Fails early on the first event that differs.
    pub fn expect_events(
        &mut self,
        step: &str,
        expected: &[Expect],
        within: Duration,
    ) -> Vec<Event> {
        let cursor = self.cursor;
        let mismatch = |events: &[Event]| {
            let window = &events[cursor.min(events.len())..];
            match_events(&window[..window.len().min(expected.len())], expected).err()
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

    /// Requires that no event arrives for `quiet`.
    pub fn expect_quiet(&mut self, step: &str, quiet: Duration) {
        let cursor = self.cursor;
        if let Ok(events) = self.events.wait_until(quiet, |events| events.len() > cursor) {
            let extra: Vec<String> = events[cursor..].iter().map(Event::label).collect();
            self.fail(&format!("step {step:?}: expected no event for {quiet:?}, got {extra:?}"));
        }
    }

    /// Checks that the screen never showed a failing hook, that the relay logged no error, and
    /// that every envelope carries a payload naming its event, our cli, our tag and, where the
    /// CLI's environment gives one, the payload's session id.
    pub fn check_clean(&self, step: &str) {
        if let Some(tmux) = &self.tmux {
            let screen = tmux.screen_with_history().unwrap_or_default().to_lowercase();
            if let Some(failure) = HOOK_FAILURES.iter().find(|f| screen.contains(*f)) {
                self.fail(&format!("step {step:?}: the screen shows {failure:?}"));
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
        for event in self.all_events() {
            let envelope = &event.envelope;
            let problem = if envelope.error.is_some() || envelope.payload.is_none() {
                Some("has no payload")
            } else if envelope.cli != self.cli {
                Some("has the wrong cli")
            } else if envelope.tag.as_deref() != Some(self.tag.as_str()) {
                Some("lacks the HOOKLINE_TAG of the sandbox")
            } else if event.field("hook_event_name").or(event.field("type"))
                != envelope.event.as_deref()
            {
                Some("names another event than its payload")
            } else if envelope
                .host_session_id
                .as_ref()
                .is_some_and(|id| Some(id.as_str()) != event.field("session_id"))
            {
                Some("has a host_session_id that is not the payload's session_id")
            } else {
                None
            };
            if let Some(problem) = problem {
                self.fail(&format!("step {step:?}: event {} {problem}: {envelope:?}", event.file));
            }
        }
    }

    /// Every event so far.
    pub fn all_events(&self) -> Vec<Event> {
        self.events.read().unwrap_or_else(|e| self.fail(&format!("reading events: {e}")))
    }

    /// Fails unless the tracker holds exactly one session, in its first epoch.
    pub fn check_one_session_one_epoch(&self) {
        let views = self.tracker.views(now_ns());
        let ids: Vec<String> = views.iter().map(|v| format!("{:?}", v.session_id)).collect();
        if views.len() != 1 {
            self.fail(&format!(
                "the tracker holds {} sessions, expected one: {ids:?}",
                views.len()
            ));
        }
        if views[0].epoch != 1 {
            self.fail(&format!("the session is in epoch {}, expected 1", views[0].epoch));
        }
    }

    /// Types a line into the TUI, waits for it to be echoed, then presses Enter.
    pub fn submit_line(&self, line: &str) -> Result<(), String> {
        let tmux = self.tmux();
        tmux.type_text(line)?;
        let tail: String =
            line.chars().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
        tmux.wait_for_screen(Duration::from_secs(10), |screen| screen.contains(&tail))
            .map_err(|_| format!("the typed text {line:?} was not echoed"))?;
        thread::sleep(Duration::from_millis(300));
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
                Ok(Exit::Running) => self.fail(&format!("the CLI did not exit within {timeout:?}")),
                Err(e) => self.fail(&e),
            }
        }
    }

    /// The steps run, as a table: per step its name, time, the state after it and the input
    /// slot; per event its seq, seconds since the first event, native label, canonical event
    /// and the state right after it.
    pub fn event_table(&self) -> String {
        let mut table = String::new();
        let _ = writeln!(
            table,
            "  {:>4} {:>9}  {:<32} {:<32} state after",
            "seq", "at", "native", "canonical"
        );
        for record in &self.log {
            let _ = writeln!(
                table,
                "  -- {} ({:.1} s) -> {}; input {}",
                record.name,
                record.took.as_secs_f64(),
                record.state,
                record.input
            );
            for row in &record.rows {
                let _ = writeln!(
                    table,
                    "  {:>4} {:>7.2} s  {:<32} {:<32} {}",
                    row.seq, row.at, row.native, row.canonical, row.state
                );
            }
        }
        table
    }

    /// Prints [`AgentSession::event_table`] and the mock's requests, and writes them to
    /// `target/hookline-e2e/<label>.txt`.
    pub fn save_report(&self) {
        let mut table = self.event_table();
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
        let _ = writeln!(report, "events (consumed up to #{}):", self.cursor);
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
        let _ = writeln!(report, "canonical events applied:");
        for event in &self.canonical {
            let _ = writeln!(
                report,
                "  #{} {:?} -> {} ({})",
                event.source.seq,
                event.native,
                kind_label(event),
                event.rule
            );
        }
        let _ = writeln!(report, "sessions:");
        for view in self.tracker.views(now_ns()) {
            let _ = writeln!(
                report,
                "  {:?} tag {:?}: {} epoch {} ({})",
                view.session_id,
                view.tag,
                state_label(Some(&view)),
                view.epoch,
                view.evidence.rule
            );
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
        if !diagnostics.is_empty() {
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
    use super::*;

    fn events(names: &[&str]) -> Vec<Event> {
        names
            .iter()
            .enumerate()
            .map(|(seq, name)| {
                let text = format!(
                    r#"{{"v":1,"seq":{seq},"ts_ns":1,"cli":"codex","event":"{name}","pid":1,
                    "ppid":1,"relay_version":"0","payload":{{"hook_event_name":"{name}"}}}}"#
                );
                let envelope =
                    hookline_relay::envelope::Envelope::from_slice(text.as_bytes()).unwrap();
                Event { file: String::new(), envelope }
            })
            .collect()
    }

    #[test]
    fn in_order_events_keep_their_order_and_any_order_ones_float() {
        let expected = [
            native("PreToolUse", "tool_start"),
            native("agent-turn-complete", "notification").any_order(),
            native("PermissionRequest", "permission_request"),
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
}
