//! One run of Codex CLI, Gemini CLI, OpenCode or Copilot CLI in a sandbox, against a mock API, with the relay
//! registered by `hookline install`: the harness their scenarios are written with.
//!
//! A scenario is a table of [`Step`]s ([`crate::scenario`]), as in the Claude Code suite: each
//! native event names the canonical event hookline must make of it ([`kind_label`]) and, where
//! it matters, the session state right after it; every step names the state after it ([`step`]:
//! a state without detail matches any detail) and takes the session's input slot, which must be
//! refused unless the step says [`Input::Once`].
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
use std::sync::MutexGuard;
use std::thread;
use std::time::{Duration, Instant};

use hookline::canonical::Event as Canonical;
use hookline::format::clock::now_ns;
use hookline::ingest::reader::{Reader, ReaderConfig, Start};
use hookline::profile::Profiles;
use hookline::state::{Tracker, View};

pub use crate::scenario::{Action, Expect, Input, Step};

use crate::binaries;
use crate::events::{Event, EventsDir};
use crate::harness::{self, EnvelopeRules};
use crate::labels::{kind_label, state_label, state_matches};
use crate::mock_http::MockServer;
use crate::npm_install::Installed;
use crate::process::output_within;
use crate::sandbox::Sandbox;
use crate::scenario::match_events;
use crate::tmux::{Exit, Tmux};
use crate::version::Version;

/// Expects the native `event`, which hookline must make the canonical `canonical` of, as
/// [`kind_label`] writes it (`tool_start`, `waiting_for_input(permission)`).
pub const fn native(event: &'static str, canonical: &'static str) -> Expect {
    crate::scenario::native(event).canonical(canonical)
}

/// A step doing `action`, after which the session is in `state` ([`state_label`]; a state
/// without detail matches any detail); its events are allowed 20 s, and the input slot must be
/// refused after it unless [`Step::input`] says otherwise.
pub fn step(name: &'static str, action: Action, state: &'static str) -> Step {
    Step::new(name, action).within(Duration::from_secs(20)).state(state).input(Input::Refused(""))
}

/// The shipped profiles, plus `profiles/<cli>.toml` of the workspace as an overlay when no
/// shipped profile has that name yet (a profile written before it is embedded: OpenCode's).
pub fn profiles_for(cli: &str) -> Result<Profiles, hookline::ConfigError> {
    let mut profiles = Profiles::shipped()?;
    if profiles.get(cli).is_none() {
        let file =
            crate::npm_install::workspace_root().join("profiles").join(format!("{cli}.toml"));
        profiles.overlay_file(&file)?;
    }
    Ok(profiles)
}

/// The payloads captured from one version of a CLI, in `watcher/tests/fixtures/<cli>/<version>`.
#[cfg(test)]
pub(crate) struct Fixtures {
    cli: &'static str,
    /// The folder they are in.
    pub(crate) dir: PathBuf,
}

#[cfg(test)]
impl Fixtures {
    /// The payloads captured from `version` of `cli`.
    pub(crate) fn of(cli: &'static str, version: &str) -> Fixtures {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../watcher/tests/fixtures");
        Fixtures { cli, dir: dir.join(cli).join(version) }
    }

    /// Checks that `expected` names every captured payload (`*.json`) and no other file: a
    /// payload captured later cannot go untested.
    pub(crate) fn check_covered<'a>(&self, expected: impl IntoIterator<Item = &'a str>) {
        let mut files: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".json"))
            .collect();
        files.sort();
        let mut covered: Vec<&str> = expected.into_iter().collect();
        covered.sort();
        assert_eq!(files, covered, "every fixture has an expectation");
    }

    /// The payload `file` and the canonical event `profiles` make of it as the relay wraps it,
    /// told the native event `native(payload)`.
    pub(crate) fn map(
        &self,
        profiles: &Profiles,
        file: &str,
        native: impl FnOnce(&serde_json::Value) -> String,
    ) -> (serde_json::Value, Canonical) {
        let text = std::fs::read_to_string(self.dir.join(file)).unwrap();
        let payload: serde_json::Value = serde_json::from_str(&text).unwrap();
        let envelope = hookline_relay::envelope::Envelope::built(
            self.cli,
            Some(native(&payload)),
            &payload.clone(),
        );
        let source = hookline::canonical::SourceRef {
            dir: self.dir.clone(),
            seq: 1,
            file: file.into(),
            legacy: false,
        };
        let event = hookline::ingest::mapping::map_envelope(profiles, &envelope, source);
        (payload, event)
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
    input: Option<String>,
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
    tracker: harness::LiveTracker,
    /// Every canonical event applied, in order.
    canonical: Vec<Canonical>,
    cursor: usize,
    first_ts_ns: Option<u64>,
    started: Instant,
    log: Vec<StepRecord>,
    /// Released last, once the CLI is gone.
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        // Kill the CLI before its sandbox is removed, or it recreates files in it as it dies.
        self.tmux.take();
        crate::transcripts::capture(&self.label, &self.sandbox);
    }
}

impl AgentSession {
    /// Builds the sandbox and starts following its events directory with a tracker whose
    /// generation starts now, before the CLI is launched. The CLI's `node_modules/.bin` goes
    /// first on `PATH` (so `hookline install` finds it); the CLI's own variables are set by the
    /// caller with [`Sandbox::set_env`].
    pub fn new(installed: &Installed, scenario: &str, api: MockServer) -> AgentSession {
        let one_at_a_time = harness::one_at_a_time();
        let cli = installed.cli.cli;
        let label = format!("{cli} {} {scenario}", installed.version);
        let tag = format!("e2e-{cli}-{}-{scenario}", installed.version);
        let mut path = OsString::from(installed.bin_dir());
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
        let sandbox = Sandbox::for_cli(&tag, vec![("PATH".into(), path)]);
        let profiles = profiles_for(cli)
            .unwrap_or_else(|e| panic!("[{label}] the shipped profiles do not load: {e}"));
        let config = ReaderConfig::new(sandbox.events_dir(), Start::Beginning, profiles.clone());
        let reader =
            Reader::open(config).unwrap_or_else(|e| panic!("[{label}] cannot open a reader: {e}"));
        let tracker = harness::LiveTracker::new(profiles, &sandbox.events_dir());
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
            _one_at_a_time: one_at_a_time,
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
        self.install_hooks_with(&[])
    }

    /// [`AgentSession::install_hooks`] with more arguments (`--scope user`).
    pub fn install_hooks_with(&self, extra: &[&str]) -> String {
        let relay = binaries::relay();
        let relay = relay.to_str().expect("UTF-8 relay path");
        let mut args = vec!["install", self.cli, "--relay", relay];
        args.extend(extra);
        let output = self.hookline(&args);
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

    /// [`run_headless`](Self::run_headless), which must exit with status 0: a failure names
    /// the command (`what`, as `pi -p`), its status and its output.
    pub fn run_headless_ok(&self, what: &str, args: &[&str], timeout: Duration) -> Output {
        let output = self.run_headless(args, timeout);
        if !output.status.success() {
            self.fail(&format!(
                "{what} exited with {}: {}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        output
    }

    /// The end of a headless run whose command wrote `headless` into `out`: the file holds
    /// it, there was one session with one epoch, the relay's diagnostics are clean, and the
    /// report is saved.
    pub fn finish_headless(&self, out: &Path) {
        match std::fs::read_to_string(out) {
            Ok(text) if text == "headless\n" => {}
            other => self.fail(&format!("{} after the run: {other:?}", out.display())),
        }
        self.check_one_session_one_epoch();
        self.check_clean("after the run");
        self.save_report();
    }

    /// `git init` in the sandbox's project folder (a CLI that wants a repository there).
    pub fn git_init_project(&self) {
        let output = Command::new("git")
            .args(["init", "-q"])
            .arg(self.sandbox.project())
            .output()
            .unwrap_or_else(|e| self.fail(&format!("cannot run git: {e}")));
        if !output.status.success() {
            self.fail(&format!("git init failed: {}", String::from_utf8_lossy(&output.stderr)));
        }
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
        let Some(wanted) = step.state else {
            self.fail(&format!("step {:?} says no state (build it with `step`)", step.name));
        };
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
        let expected: Vec<Expect> =
            step.native.iter().copied().filter(|e| e.applies_to(self.version)).collect();
        let events = self.expect_events(step.name, &expected, step.within);
        let matched = match_events(&events, &expected).unwrap_or_default();
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
        if !state_matches(wanted, &state) {
            self.fail(&format!(
                "step {:?}: the session is {state} after the step, expected {wanted}",
                step.name
            ));
        }
        let input = step.input.map(|input| {
            harness::take_input_slot(&mut self.tracker, &self.tag, input)
                .unwrap_or_else(|e| self.fail(&format!("step {:?}: {e}", step.name)))
        });
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
        self.tracker.tracker()
    }

    /// Every canonical event applied so far.
    pub fn canonical_events(&self) -> &[Canonical] {
        &self.canonical
    }

    /// Reads the canonical event of `event` from the library, checks it against `expect`,
    /// applies it to the tracker and checks the state after it.
    fn apply(&mut self, step: &str, event: &Event, expect: &Expect) -> Row {
        let seq = event.envelope.seq;
        let canonical = self.next_canonical(step, seq);
        let label = kind_label(&canonical);
        if let Some(wanted) = expect.canonical.filter(|wanted| *wanted != label) {
            self.fail(&format!(
                "step {step:?}: #{seq} {} is the canonical {label} (rule {}), expected {wanted}",
                event.label(),
                canonical.rule
            ));
        }
        let before = self.view();
        let applied = self.tracker.apply(&canonical);
        self.canonical.push(canonical);
        let after = self.view();
        if expect.unchanged
            && let Err(e) = harness::check_unchanged(before.as_ref(), after.as_ref(), &applied)
        {
            self.fail(&format!("step {step:?}: #{seq} {} ({label}) {e}", event.label()));
        }
        let state = state_label(after.as_ref());
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
        let events = harness::wait_for_native(&self.events, self.cursor, expected, within)
            .unwrap_or_else(|e| self.fail(&format!("step {step:?}: {e}")));
        self.cursor += events.len();
        events
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
            let screen = tmux.screen_with_history().unwrap_or_default();
            if let Some(failure) = harness::hook_failure(&screen) {
                self.fail(&format!("step {step:?}: the screen shows {failure:?}"));
            }
            // Droid prints every hook it runs, with its exit code.
            if self.cli == "droid"
                && let Some(failure) = crate::droid::hook_failures(&screen).first()
            {
                self.fail(&format!("step {step:?}: the screen shows {failure:?}"));
            }
        }
        // Copilot's camelCase payloads carry no event name, except `notification`'s
        // `hook_event_name: "Notification"`: the relay is told the name with `--event`.
        let event_fields: &[&str] =
            if self.cli == "copilot" { &[] } else { &["hook_event_name", "type"] };
        let rules = EnvelopeRules {
            cli: self.cli,
            tag: &self.tag,
            event_fields,
            host_session_always: false,
        };
        harness::check_relay_log(&self.sandbox)
            .and_then(|()| harness::check_envelopes(&self.all_events(), &rules))
            .unwrap_or_else(|e| self.fail(&format!("step {step:?}: {e}")));
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
        self.tmux().submit_line(line, 30, Duration::from_millis(300))
    }

    /// Waits for the TUI to exit and returns its exit status, `None` when tmux does not report
    /// it (see [`Tmux::exit`]).
    pub fn wait_for_exit(&self, timeout: Duration) -> Option<i32> {
        self.tmux().wait_for_exit(timeout).unwrap_or_else(|e| self.fail(&e))
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
                record.input.as_deref().unwrap_or("not checked")
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
        harness::save_report(&self.label, self.started, self.event_table(), &self.api);
    }

    /// Panics with `message` and everything needed to see why.
    pub fn fail(&self, message: &str) -> ! {
        let mut report =
            harness::report_head(&self.label, message, &self.sandbox, &self.events, self.cursor);
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
        harness::report_tail(&mut report, self.tmux.as_ref(), &self.api, &self.sandbox);
        panic!("{report}");
    }
}
