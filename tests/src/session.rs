//! One run of the real CLI in a sandbox, against the mock API, with the relay registered: the
//! harness the scenarios are written with.
//!
//! A scenario is a table of [`Step`]s: an action (type a line, press a key, or just wait), the
//! native events that must follow — exactly those, in order, except those marked
//! [`Expect::any_order`] — and, as placeholders for phase 2, the canonical kinds and the session
//! state `hookline watch` / the library should report for them. Every failure panics with a full
//! report: the events seen, the screen with its scrollback, the mock's requests and the relay's
//! diagnostics.
//!
//! After a passing run, [`ClaudeSession::save_report`] prints the native events per step and
//! writes them to `target/hookline-e2e/`, with a preview of the canonical kind today's
//! `hookline watch` gives each one (not asserted yet; steps whose kinds differ from their
//! placeholders are marked).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use hookline_relay::diag::{self, Level};

use crate::binaries;
use crate::claude_hooks;
use crate::claude_install::Installed;
use crate::events::{Event, EventsDir};
use crate::mock_api::MockApi;
use crate::sandbox::Sandbox;
use crate::tmux::{Exit, Tmux};
use crate::version::Version;

/// What Claude prints in its transcript when a hook command fails or writes to stderr.
pub const HOOK_ERROR: &str = "hook error";

/// One expected native event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// Native event name.
    pub event: &'static str,
    /// Expected qualifier ([`Event::qualifier`]): notification type, source, reason, trigger.
    pub qualifier: Option<&'static str>,
    /// Only expected from this version on.
    pub since: Option<&'static str>,
    /// May come anywhere among the step's events: Claude runs its hook without waiting, so it
    /// races the next one (`MessageDisplay` against `Stop`).
    pub any_order: bool,
    /// Phase 2 placeholder: the canonical kind hookline must give it; `None` for none (today
    /// `unknown`).
    pub canonical: Option<&'static str>,
}

/// Expects the native event `event`.
pub const fn native(event: &'static str) -> Expect {
    Expect { event, qualifier: None, since: None, any_order: false, canonical: None }
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

    /// Phase 2 placeholder: hookline must map it to the canonical `kind`.
    pub const fn canonical(mut self, kind: &'static str) -> Expect {
        self.canonical = Some(kind);
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
    /// Phase 2 placeholder: the session state after the step.
    pub state: Option<&'static str>,
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

    /// Phase 2 placeholder: the session state after the step.
    pub fn state(mut self, state: &'static str) -> Step {
        self.state = Some(state);
        self
    }
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
    pub api: MockApi,
    /// Its sandbox.
    pub sandbox: Sandbox,
    /// The events directory.
    pub events: EventsDir,
    /// The tmux server, once the TUI is launched.
    pub tmux: Option<Tmux>,
    /// The idle threshold written to `.claude.json`.
    pub idle_threshold: Duration,
    cursor: usize,
    started: Instant,
    log: Vec<StepRecord>,
}

impl Drop for ClaudeSession {
    fn drop(&mut self) {
        // Kill the CLI before its sandbox is removed, or it recreates files in it as it dies.
        self.tmux.take();
    }
}

/// A step as it ran.
#[derive(Debug, Clone)]
struct StepRecord {
    name: &'static str,
    events: Vec<Event>,
    took: Duration,
    /// The expectations that applied, in the order of `events`' matches.
    expected: Vec<Expect>,
    state: Option<&'static str>,
}

impl ClaudeSession {
    /// Starts the mock, builds the sandbox and registers the relay for the version's events.
    pub fn new(installed: &Installed, scenario: &str, idle_threshold: Duration) -> ClaudeSession {
        let label = format!("claude {} {scenario}", installed.version);
        let api = MockApi::start().unwrap_or_else(|e| panic!("[{label}] mock API: {e}"));
        let tag = format!("e2e-{}-{scenario}", installed.version);
        let sandbox = Sandbox::new(&api.base_url(), idle_threshold, &tag);
        claude_hooks::register_hooks_temporarily(
            &sandbox.project(),
            &binaries::relay(),
            installed.version,
        );
        let events = EventsDir::new(&sandbox.events_dir());
        ClaudeSession {
            label,
            version: installed.version,
            binary: installed.binary.clone(),
            api,
            sandbox,
            events,
            tmux: None,
            idle_threshold,
            cursor: 0,
            started: Instant::now(),
            log: Vec::new(),
        }
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

    /// Runs the steps in order.
    pub fn run(&mut self, steps: &[Step]) {
        for step in steps {
            self.run_step(step);
        }
    }

    /// Runs one step: waits for the screen, acts, waits for exactly the expected native events,
    /// then checks silence and the screen as the step asks, and that nothing went wrong.
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
        // Phase 2: compare each expectation's `canonical` with the canonical event hookline
        // gives the native event it matched, and `step.state` with the session's state.
        if let Some(quiet) = step.quiet_for {
            self.expect_quiet(step.name, quiet);
        }
        if let Some(text) = step.shown_after {
            self.wait_for_text(text, Duration::from_secs(10));
        }
        let took = started.elapsed();
        self.check_clean(step.name);
        self.log.push(StepRecord {
            name: step.name,
            expected: match_events(&consumed, &expected).unwrap_or_default(),
            events: consumed,
            took,
            state: step.state,
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

    /// Requires that no event arrives for `quiet`.
    pub fn expect_quiet(&mut self, step: &str, quiet: Duration) {
        let cursor = self.cursor;
        if let Ok(events) = self.events.wait_until(quiet, |events| events.len() > cursor) {
            let extra: Vec<String> = events[cursor..].iter().map(Event::label).collect();
            self.fail(&format!("step {step:?}: expected no event for {quiet:?}, got {extra:?}"));
        }
    }

    /// Checks that the screen never showed a hook error, that the relay logged no error, and
    /// that every envelope carries a payload, our tag and the CLI's session id.
    pub fn check_clean(&self, step: &str) {
        if let Some(tmux) = &self.tmux {
            let screen = tmux.screen_with_history().unwrap_or_default();
            if screen.to_lowercase().contains(HOOK_ERROR) {
                self.fail(&format!("step {step:?}: the screen shows {HOOK_ERROR:?}"));
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
        let tag = self
            .sandbox
            .env()
            .iter()
            .find(|(k, _)| k == "HOOKLINE_TAG")
            .and_then(|(_, v)| v.to_str());
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
    pub fn run_headless(&self, args: &[&str], timeout: Duration) -> Output {
        self.sandbox.launch_script(&self.binary, args); // for rerunning by hand
        let mut command = self.sandbox.command(&self.binary);
        command.args(args).env("TERM", "dumb");
        output_within(command, timeout)
            .unwrap_or_else(|e| self.fail(&format!("claude {args:?}: {e}")))
    }

    /// Phase 2 preview: the canonical kind `hookline watch` gives each event so far, by `seq`
    /// (`kind`, or `kind(phase|reason|failed)`). Never fails the test: an error is returned
    /// for the report.
    pub fn canonical_kinds(&self) -> Result<BTreeMap<u64, String>, String> {
        let hookline = binaries::profile_dir().join("hookline");
        if !hookline.exists() {
            return Err(format!("{} is not built", hookline.display()));
        }
        let mut command = self.sandbox.command(&hookline);
        command.arg("watch").arg("--events-dir").arg(self.events.path());
        command.args(["--from-start", "--no-follow"]);
        let output = output_within(command, Duration::from_secs(20))?;
        if !output.status.success() {
            return Err(format!(
                "hookline watch: {} {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let mut kinds = BTreeMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let event: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("hookline watch: {e}: {line}"))?;
            let Some(seq) = event["source"]["seq"].as_u64() else { continue };
            let kind = event["kind"].as_str().unwrap_or("?");
            let detail = match kind {
                "compact" => event["phase"].as_str(),
                "waiting_for_input" => event["reason"].as_str(),
                "tool_end" if event["ok"] == false => Some("failed"),
                _ => None,
            };
            let label = match detail {
                Some(detail) => format!("{kind}({detail})"),
                None => kind.to_string(),
            };
            kinds.insert(seq, label);
        }
        Ok(kinds)
    }

    /// The events consumed by the steps, as a table: per step its name, time and phase 2 state
    /// placeholder; per event its seq, seconds since the first event, native label, the phase 2
    /// canonical placeholder and, as a preview, the canonical kind today's `hookline watch`
    /// gives it, marked `!=` where the two differ.
    pub fn event_table(&self) -> String {
        let preview = self.canonical_kinds();
        let mut table = String::new();
        if let Err(e) = &preview {
            let _ = writeln!(table, "  (no canonical preview: {e})");
        }
        let _ = writeln!(
            table,
            "  {:>4} {:>9}  {:<34} {:<20} hookline watch today",
            "seq", "at", "native", "canonical (phase 2)"
        );
        let first = self.log.iter().flat_map(|r| &r.events).next().cloned();
        for record in &self.log {
            let _ = writeln!(
                table,
                "  -- {} ({:.1} s); state (phase 2): {}",
                record.name,
                record.took.as_secs_f64(),
                record.state.unwrap_or("?")
            );
            for (event, expect) in record.events.iter().zip(&record.expected) {
                let at = first.as_ref().map_or(0.0, |f| event.secs_since(f));
                let placeholder = expect.canonical.unwrap_or("-");
                let today = preview.as_ref().ok().and_then(|c| c.get(&event.envelope.seq));
                let today_kind = today.map(|k| k.split('(').next().unwrap_or(k));
                let differs = match (expect.canonical, today_kind) {
                    (_, None) => false,
                    (Some(kind), Some(today)) => kind != today,
                    (None, Some(today)) => today != "unknown",
                };
                let _ = writeln!(
                    table,
                    "  {:>4} {at:>7.2} s  {:<34} {placeholder:<20} {}{}",
                    event.envelope.seq,
                    event.label(),
                    today.map_or("", String::as_str),
                    if differs { "  !=" } else { "" }
                );
            }
        }
        table
    }

    /// Writes [`ClaudeSession::event_table`] and the mock's requests to
    /// `target/hookline-e2e/<label>.txt` and prints them.
    pub fn save_report(&self) {
        let mut table = self.event_table();
        let _ = writeln!(table, "  mock API requests:");
        for request in self.api.requests() {
            let _ = writeln!(table, "    {}", request.summary());
        }
        println!(
            "[{}] passed in {:.1} s; native events:\n{table}",
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

/// Runs `command` with stdin closed and its output captured, killing it after `timeout`.
pub fn output_within(mut command: Command, timeout: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish within {timeout:?}"));
            }
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
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
