//! One run of the real Claude Code CLI in a sandbox, against the mock API, with the relay
//! registered by `hookline install` and the events followed by `hookline watch`: the harness
//! the Claude Code scenarios are written with.
//!
//! A scenario is a table of [`Step`]s ([`crate::scenario`]): for each native event, the
//! canonical event `hookline watch` must print ([`canonical_label`]) and the session state a
//! [`hookline::state::Tracker`] must be in once it applied it (compared exactly); then, per step, the state
//! after the step (held through any silence the step requires) and what taking the session's
//! input slot must do. An expectation may be limited to versions ([`Expect::since`]).
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
use std::sync::MutexGuard;
use std::thread;
use std::time::{Duration, Instant};

use hookline::format::clock::now_ns;
use hookline::profile::Profiles;
use hookline::state::{Refusal, View};
use serde_json::Value;

pub use crate::scenario::{Action, Expect, Input, Step, native};

use crate::binaries;
use crate::claude_hooks;
use crate::events::{Event, EventsDir, POLL};
use crate::follow::Follower;
use crate::harness::{self, EnvelopeRules};
use crate::labels::{canonical_label, state_label};
use crate::mock_api;
use crate::mock_http::MockServer;
use crate::npm_install::Installed;
use crate::process::output_within;
use crate::sandbox::Sandbox;
use crate::scenario::match_events;
use crate::tmux::Tmux;
use crate::version::Version;

/// The title of the dialog Claude shows when a settings file registers an event it does not
/// know.
pub const SETTINGS_WARNING: &str = "Settings Warning";

/// The durable cursor `hookline watch` follows the events with.
pub const CURSOR: &str = "e2e";

/// How long `hookline watch` may take to print the canonical event of a native event that is
/// already in the directory (it is notified at once; it rescans every second anyway).
const DELIVERY: Duration = Duration::from_secs(10);

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
    tracker: harness::LiveTracker,
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
        crate::transcripts::capture(&self.label, &self.sandbox);
    }
}

impl ClaudeSession {
    /// Starts the mock and the tracker, builds the sandbox, registers the relay with
    /// `hookline install claude --scope project` and starts `hookline watch`.
    pub fn new(installed: &Installed, scenario: &str, idle_threshold: Duration) -> ClaudeSession {
        let label = format!("claude {} {scenario}", installed.version);
        // A scenario that failed poisons the lock; the next one runs all the same.
        let one_at_a_time = harness::one_at_a_time();
        // The generation starts now, before the CLI: every event of the run is live.
        let api = mock_api::start().unwrap_or_else(|e| panic!("[{label}] mock API: {e}"));
        let tag = format!("e2e-{}-{scenario}", installed.version);
        let sandbox = Sandbox::new(&api.base_url(), idle_threshold, &tag);
        // The sandbox lowers Claude's idle timer; its overlay says so to the tracker, whose
        // idle_prompt rule (idle-prompt-delay) follows that timer.
        let mut profiles =
            Profiles::shipped().unwrap_or_else(|e| panic!("[{label}] shipped profiles: {e}"));
        profiles
            .overlay_file(&sandbox.claude_profile_overlay())
            .unwrap_or_else(|e| panic!("[{label}] profile overlay: {e}"));
        let tracker = harness::LiveTracker::new(profiles, &sandbox.events_dir());
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

    /// Runs `hookline install claude --scope project --relay <built relay>` in the project (a
    /// copy of it in the sandbox's `bin/`, outside the build directory, as a user installs it),
    /// with the CLI's folder first on `PATH` so that install detects its version; checks what
    /// it printed and wrote, then runs it again and checks that nothing changed.
    fn install_hooks(&mut self) {
        let relay = binaries::relay_copied_to(&self.sandbox.root().join("bin"));
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
        let events = harness::wait_for_native(&self.events, self.cursor, expected, within)
            .unwrap_or_else(|e| self.fail(&format!("step {step:?}: {e}")));
        self.cursor += events.len();
        events
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
        if expect.unchanged
            && let Err(e) = harness::check_unchanged(before.as_ref(), view.as_ref(), &applied)
        {
            self.fail(&format!("{what} ({label}) {e}"));
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
        harness::take_input_slot(&mut self.tracker, &self.tag, input)
            .unwrap_or_else(|e| self.fail(&format!("step {step:?}: {e}")))
    }

    /// Checks that the screen never showed a failing hook (nor, unless provoked, a settings
    /// warning), that the relay logged no error, and that every envelope carries a payload, our
    /// tag and the CLI's session id.
    pub fn check_clean(&self, step: &str) {
        if let Some(tmux) = &self.tmux {
            let screen = tmux.screen_with_history().unwrap_or_default();
            if let Some(failure) = harness::hook_failure(&screen) {
                self.fail(&format!("step {step:?}: the screen shows {failure:?}"));
            }
            if !self.settings_warning_expected && screen.contains(SETTINGS_WARNING) {
                self.fail(&format!(
                    "step {step:?}: the screen shows a {SETTINGS_WARNING:?}: the CLI rejects a hook event hookline registered"
                ));
            }
        }
        let rules = EnvelopeRules {
            cli: "claude",
            tag: &self.tag,
            event_fields: &["hook_event_name"],
            host_session_always: true,
        };
        harness::check_relay_log(&self.sandbox)
            .and_then(|()| harness::check_envelopes(&self.all_events(), &rules))
            .unwrap_or_else(|e| self.fail(&format!("step {step:?}: {e}")));
    }

    /// Types a line into the TUI, waits for it to be echoed, then presses Enter.
    pub fn submit_line(&self, line: &str) -> Result<(), String> {
        self.tmux().submit_line(line, 40, Duration::from_millis(200))
    }

    /// Waits for the TUI to exit and returns its exit status, `None` when tmux does not report
    /// it (see [`Tmux::exit`](crate::tmux::Tmux::exit)).
    pub fn wait_for_exit(&self, timeout: Duration) -> Option<i32> {
        self.tmux().wait_for_exit(timeout).unwrap_or_else(|e| self.fail(&e))
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
        harness::save_report(&self.label, self.started, table, &self.api);
    }

    /// Panics with `message` and everything needed to see why.
    pub fn fail(&self, message: &str) -> ! {
        let mut report =
            harness::report_head(&self.label, message, &self.sandbox, &self.events, self.cursor);
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
        harness::report_tail(&mut report, self.tmux.as_ref(), &self.api, &self.sandbox);
        panic!("{report}");
    }
}
