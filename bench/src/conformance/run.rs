//! One scenario played against one CLI: the real binary in a sandbox, behind `hookline-tap`
//! in a private tmux server (with a neighbouring pane that must never get a byte), offline
//! against the suites' mock API, its hooks through the real relay into an events directory
//! that a real `hookline daemon` and a real `hookline notify` follow. While the driver plays
//! the steps, two threads ask the daemon, as an orchestrator would: one follows the session
//! (`next_event`, which carries its state), one polls `input` and `nudge` as peeks with the
//! pane. What the driver did, what the mock saw and what the tap passed are kept as the facts
//! the true timeline is built from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use hookline::daemon::Client;
use hookline::decide::{Ask, Question};
use hookline::format::clock::now_ns;
use hookline::pane::TmuxPane;
use hookline::protocol::{DeliverAnswer, DeliverRequest};
use hookline::vocab::StateKind;
use hookline_tests::deliver_check::Daemon;
use hookline_tests::mock_http::{Exchange, Meaning};
use hookline_tests::npm_install::Installed;
use hookline_tests::tmux::{TARGET, Tmux};

use super::clis::{Cli, Host, Key, WAKE_FILE};
use super::notify::Notifier;
use super::scenario::{Perturbation, Scenario, Step, Until};
use super::score::Reported;
use super::tap::{self, Fact, Tap};
use super::truth::{Act, Facts, Tools};

/// How long a TUI may take to show its first screen (OpenCode and Kilo take 20 s and more on
/// two loaded cores).
const LAUNCH: Duration = Duration::from_secs(120);
/// How long `next_event` waits per call: the reported timeline's resolution when nothing
/// happens.
const FOLLOW_STEP: Duration = Duration::from_millis(100);
/// The pause between two peeks.
const PEEK_GAP: Duration = Duration::from_millis(100);
/// How long output is held in a slow redraw.
const SLOW_REDRAW_MS: u64 = 400;

/// A peek's answer.
#[derive(Debug, Clone)]
pub struct Peek {
    /// The question.
    pub question: Question,
    /// When the daemon decided (its `at_ns`).
    pub at_ns: u64,
    /// Whether it allowed.
    pub allowed: bool,
    /// The rule.
    pub rule: String,
}

/// One delivery and what it did.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The perturbation.
    pub perturb: Perturbation,
    /// The daemon's answer (`None`: the request failed; the error is `error`).
    pub answer: Option<DeliverAnswer>,
    /// Why the request failed.
    pub error: Option<String>,
    /// When it was asked and answered.
    pub window: (u64, u64),
}

/// Everything one run recorded.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The facts the truth is built from.
    pub facts: Facts,
    /// hookline's answers: the session's state, each with when it was received.
    pub reported: Vec<(u64, Reported)>,
    /// The scored window.
    pub window: (u64, u64),
    /// The peeks.
    pub peeks: Vec<Peek>,
    /// The deliveries.
    pub deliveries: Vec<Delivered>,
    /// Every byte the CLI's pane passed on, with its time.
    pub pane_bytes: Vec<(u64, u8)>,
    /// Bytes that reached the neighbouring pane.
    pub neighbour_bytes: usize,
    /// Notification latencies (ns).
    pub notifications: Vec<u64>,
    /// Errors of the following threads (a daemon that stopped answering).
    pub thread_errors: Vec<String>,
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// Played to its end.
    Played(Box<Recording>),
    /// Not played, and why.
    Skipped(String),
    /// It broke; what was recorded until then, and why.
    Failed(Box<Recording>, String),
}

/// Plays `scenario` against `cli`.
pub fn play(cli: &'static Cli, installed: &Installed, scenario: &Scenario) -> Outcome {
    if let Some(why) = cli.cannot_play(&scenario.needs) {
        return Outcome::Skipped(why);
    }
    let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cli.host(installed, &scenario.name)
    }));
    let host = match prepared {
        Ok(host) => host,
        Err(panic) => return Outcome::Failed(Box::default(), panic_text(&panic)),
    };
    let mut run = match Run::start(cli, host) {
        Ok(run) => run,
        Err(e) => return Outcome::Failed(Box::default(), e),
    };
    let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.steps(scenario)));
    let error = match played {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(panic) => Some(panic_text(&panic)),
    };
    let recording = run.finish();
    match error {
        None => Outcome::Played(Box::new(recording)),
        Some(e) => Outcome::Failed(Box::new(recording), e),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic".into());
    // The harness's reports are long: the first lines say what failed.
    text.lines().take(6).collect::<Vec<_>>().join(" | ")
}

/// A run in progress.
struct Run {
    cli: &'static Cli,
    host: Host,
    daemon: Option<Daemon>,
    notifier: Option<Notifier>,
    tap: Tap,
    neighbour: Tap,
    events: PathBuf,
    tag: String,
    pane: TmuxPane,
    client: Client,
    stop: Arc<AtomicBool>,
    followers: Vec<JoinHandle<()>>,
    reported: Arc<Mutex<Vec<(u64, Reported)>>>,
    peeks: Arc<Mutex<Vec<Peek>>>,
    errors: Arc<Mutex<Vec<String>>>,
    facts: Facts,
    deliveries: Vec<Delivered>,
    /// When the driver last acted: "since the last step" for the waits.
    last_act_ns: u64,
}

impl Run {
    fn start(cli: &'static Cli, host: Host) -> Result<Run, String> {
        let sandbox = host.sandbox();
        let events = sandbox.events_dir();
        std::fs::create_dir_all(&events).map_err(|e| format!("{}: {e}", events.display()))?;
        let daemon = Daemon::start(&events)?;
        let hookline = hookline_tests::binaries::hookline();
        let notifier = Notifier::start(sandbox.command(&hookline), &events, sandbox.root())?;
        let tap_program = hookline_tests::binaries::profile_dir().join("hookline-tap");
        let tap = Tap::new(sandbox.root(), "cli-tap");
        let neighbour = Tap::new(sandbox.root(), "neighbour-tap");
        let args: Vec<&str> = host.args.iter().map(String::as_str).collect();
        let launch = sandbox.launch_script(host.binary(), &args);
        let script = tap.script(&tap_program, &launch)?;
        let tmux = Tmux::start(sandbox.root(), &script)?;
        let socket = tmux.socket_path().ok_or("the tmux server has no socket path")?.to_owned();
        // A neighbouring pane, in a window of its own: no byte may ever reach it.
        let idle = sandbox.root().join("neighbour.sh");
        std::fs::write(&idle, "#!/bin/sh\nexec sleep 100000\n")
            .and_then(|()| {
                std::fs::set_permissions(&idle, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            })
            .map_err(|e| format!("{}: {e}", idle.display()))?;
        let neighbour_script = neighbour.script(&tap_program, &idle)?;
        let status = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["new-window", "-d", "-t", &format!("{TARGET}:"), "-n", "neighbour"])
            .arg(&neighbour_script)
            .status()
            .map_err(|e| format!("tmux new-window: {e}"))?;
        if !status.success() {
            return Err("tmux new-window failed".into());
        }
        let tag = host.tag().to_owned();
        let mut host = host;
        host.set_tmux(tmux);
        let pane = TmuxPane { target: TARGET.into(), socket: Some(socket) };
        let client = Client::connect(&events).map_err(|e| e.to_string())?;
        let mut run = Run {
            cli,
            host,
            daemon: Some(daemon),
            notifier: Some(notifier),
            tap,
            neighbour,
            events,
            tag,
            pane,
            client,
            stop: Arc::new(AtomicBool::new(false)),
            followers: Vec::new(),
            reported: Arc::default(),
            peeks: Arc::default(),
            errors: Arc::default(),
            facts: Facts::default(),
            deliveries: Vec::new(),
            last_act_ns: 0,
        };
        run.follow();
        run.wait_for_first_screen()?;
        Ok(run)
    }

    /// Starts the two threads asking the daemon.
    fn follow(&mut self) {
        let (events, tag) = (self.events.clone(), self.tag.clone());
        let (stop, reported, errors) =
            (Arc::clone(&self.stop), Arc::clone(&self.reported), Arc::clone(&self.errors));
        self.followers.push(thread::spawn(move || {
            let mut client = None;
            while !stop.load(Ordering::SeqCst) {
                let answer = match client.as_mut() {
                    Some(c) => Client::next_event(c, &tag, FOLLOW_STEP, None),
                    None => match Client::connect(&events) {
                        Ok(c) => {
                            client = Some(c);
                            continue;
                        }
                        Err(e) => Err(e),
                    },
                };
                match answer {
                    Ok(answer) => {
                        let state = answer.view.map(|v| v.state);
                        reported.lock().unwrap_or_else(|e| e.into_inner()).push((now_ns(), state));
                    }
                    Err(e) => {
                        errors.lock().unwrap_or_else(|e| e.into_inner()).push(e.to_string());
                        client = None;
                        thread::sleep(FOLLOW_STEP);
                    }
                }
            }
        }));
        let (events, tag, pane) = (self.events.clone(), self.tag.clone(), self.pane.clone());
        let (stop, peeks, errors) =
            (Arc::clone(&self.stop), Arc::clone(&self.peeks), Arc::clone(&self.errors));
        self.followers.push(thread::spawn(move || {
            let mut client = None;
            let mut questions = [Question::Input, Question::Nudge].into_iter().cycle();
            while !stop.load(Ordering::SeqCst) {
                let Some(c) = client.as_mut() else {
                    client = Client::connect(&events).ok();
                    thread::sleep(PEEK_GAP);
                    continue;
                };
                let question = questions.next().unwrap_or(Question::Input);
                match c.decide(&Ask::new(&tag, question).peek(), Some(pane.clone())) {
                    Ok(d) => peeks.lock().unwrap_or_else(|e| e.into_inner()).push(Peek {
                        question,
                        at_ns: d.at_ns,
                        allowed: d.allowed(),
                        rule: d.rule.as_str().to_owned(),
                    }),
                    Err(e) => {
                        // A pane gone with the CLI is no decision.
                        errors.lock().unwrap_or_else(|e| e.into_inner()).push(e.to_string());
                        client = None;
                    }
                }
                thread::sleep(PEEK_GAP);
            }
        }));
    }

    fn tmux(&self) -> Result<&Tmux, String> {
        self.host.tmux().ok_or_else(|| "no tmux server".to_owned())
    }

    fn screen(&self) -> Result<String, String> {
        self.tmux()?.screen()
    }

    /// Waits for the CLI's first screen (passing a trust screen), then for its prompt: the
    /// timeline starts there.
    fn wait_for_first_screen(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + LAUNCH;
        let mut passed = self.cli.first_screen.is_none();
        loop {
            let screen = self.screen()?;
            if !passed
                && let Some((text, key)) = self.cli.first_screen
                && screen.contains(text)
            {
                self.keys(&[key])?;
                passed = true;
            }
            if self.cli.is_ready(&screen) {
                break;
            }
            if self.tap.ended_ns().is_some() {
                return Err(format!("the CLI exited before its prompt showed:\n{screen}"));
            }
            if Instant::now() > deadline {
                return Err(format!("the prompt did not show in {LAUNCH:?}:\n{screen}"));
            }
            thread::sleep(Duration::from_millis(50));
        }
        self.facts.ready_ns = now_ns();
        self.last_act_ns = self.facts.ready_ns;
        Ok(())
    }

    fn steps(&mut self, scenario: &Scenario) -> Result<(), String> {
        for (i, step) in scenario.steps.iter().enumerate() {
            self.step(step).map_err(|e| format!("step {} ({step:?}): {e}", i + 1))?;
        }
        Ok(())
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        let project = self.host.sandbox().project();
        match step {
            Step::Prompt { prompt } => {
                let (text, tools, wakes) = self.cli.prompt(*prompt, &project);
                let at = self.submit(&text)?;
                self.act(at, Act::Submit { tools, wakes });
            }
            Step::Wait { until, timeout, required } => match self.wait(*until, *timeout) {
                Err(_) if !required && *until == Until::Dialog => {
                    // Seen by the driver: the turns the CLI started by itself ran their tools
                    // without a dialog.
                    for (_, act) in &mut self.facts.acts {
                        if let Act::Submit { wakes, .. } = act {
                            *wakes = Tools::Run;
                        }
                    }
                }
                Err(_) if !required => {}
                other => other?,
            },
            Step::Hold { time } => thread::sleep(*time),
            Step::Approve => {
                let at = self.keys(self.cli.approve)?;
                self.act(at, Act::Approve);
            }
            Step::ApproveIfAsked => {
                if self.asked()? {
                    let at = self.keys(self.cli.approve)?;
                    self.act(at, Act::Approve);
                } else {
                    // Seen by the driver: this turn's tool calls ran without a dialog.
                    if let Some((_, Act::Submit { tools, .. })) = self
                        .facts
                        .acts
                        .iter_mut()
                        .rev()
                        .find(|(_, a)| matches!(a, Act::Submit { .. }))
                    {
                        *tools = Tools::Run;
                    }
                }
            }
            Step::Deny => {
                let at = self.keys(self.cli.deny)?;
                self.act(at, Act::Dismiss);
            }
            Step::Escape => {
                let at = self.keys(self.cli.escape)?;
                self.act(at, Act::Dismiss);
            }
            Step::Answer => {
                let at = self.keys(self.cli.answer)?;
                self.act(at, Act::Answer);
            }
            Step::Compact => {
                let command = self.cli.compact.ok_or("no compaction command")?;
                let at = self.submit(command)?;
                self.act(at, Act::Compact);
            }
            Step::Exit => {
                self.submit(self.cli.exit)?;
                self.last_act_ns = now_ns();
            }
            Step::Kill => {
                let pid = self.tap.child(Duration::from_secs(5))?;
                let at = now_ns();
                // The CLI leads its own session (the tap's child): its whole process group.
                // SAFETY: kill(2) on the processes this run started.
                unsafe {
                    libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
                self.act(at, Act::Kill);
            }
            Step::Draft { text } => {
                let tmux = self.tmux()?;
                tmux.type_text(text)?;
                let tail = echo_tail(text);
                tmux.wait_for_screen(Duration::from_secs(10), |s| s.contains(&tail))
                    .map_err(|_| format!("the draft {text:?} was not echoed"))?;
                self.last_act_ns = now_ns();
            }
            Step::Deliver { text, perturb } => self.deliver(text, *perturb, &project)?,
        }
        Ok(())
    }

    fn act(&mut self, at: u64, act: Act) {
        self.facts.acts.push((at, act));
        self.last_act_ns = at;
    }

    /// Presses `keys`; returns when the last one reached the CLI (by the tap's log).
    fn keys(&self, keys: &[Key]) -> Result<u64, String> {
        let tmux = self.tmux()?;
        let mut at = now_ns();
        for key in keys {
            let before = now_ns();
            match key {
                Key::Press(name) => tmux.press(name)?,
                Key::Line(text) => tmux.submit_line(text, 20, Duration::from_millis(300))?,
            }
            at = self.arrival(before).unwrap_or_else(now_ns);
            thread::sleep(Duration::from_millis(150));
        }
        Ok(at)
    }

    /// When the tap passed the first bytes sent after `since`.
    fn arrival(&self, since: u64) -> Option<u64> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let found = self
                .tap
                .facts()
                .into_iter()
                .find_map(|(ns, f)| (ns >= since && matches!(f, Fact::In(_))).then_some(ns));
            if found.is_some() || Instant::now() > deadline {
                return found;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Types a line as an orchestrator does: through the session's input slot when hookline
    /// says it is idle (so no one else is told to type meanwhile), then the text, its echo,
    /// and Enter. Returns when the Enter reached the CLI.
    fn submit(&mut self, text: &str) -> Result<u64, String> {
        let idle = self
            .client
            .state(&self.tag)
            .map_err(|e| e.to_string())?
            .is_some_and(|v| v.state == StateKind::Idle);
        if idle {
            // The lease is kept, never typed under: the slot stays taken for this idle.
            let _ =
                self.client.decide(&Ask::new(&self.tag, Question::Input), Some(self.pane.clone()));
        }
        let tmux = self.tmux()?;
        tmux.type_text(text)?;
        let tail = echo_tail(text);
        tmux.wait_for_screen(Duration::from_secs(10), |s| s.contains(&tail))
            .map_err(|screen| format!("the typed text {text:?} was not echoed:\n{screen}"))?;
        thread::sleep(Duration::from_millis(300));
        let before = now_ns();
        tmux.press("Enter")?;
        Ok(self.enter_arrival(before).unwrap_or_else(now_ns))
    }

    /// When the first carriage return sent after `since` reached the CLI.
    fn enter_arrival(&self, since: u64) -> Option<u64> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let facts = self.tap.facts();
            let found = tap::bytes_between(&facts, since, u64::MAX)
                .into_iter()
                .find_map(|(ns, b)| (b == b'\r').then_some(ns));
            if found.is_some() || Instant::now() > deadline {
                return found;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether a dialog opens before the turn goes on without one (a tool's result reaches
    /// the mock, or the turn ends).
    fn asked(&self) -> Result<bool, String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let since = self.last_act_ns;
        loop {
            if self.screen()?.contains(self.cli.dialog) {
                return Ok(true);
            }
            let went_on = self.host.api().exchanges().iter().any(|e| {
                e.received_ns >= since
                    && e.meaning != Meaning::Side
                    && (e.after_tool || (e.meaning == Meaning::EndsTurn && e.done_ns.is_some()))
            });
            if went_on {
                return Ok(false);
            }
            if Instant::now() > deadline {
                return Err("neither a dialog nor the turn going on within 60 s".into());
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for a condition of the world.
    fn wait(&mut self, until: Until, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let since = self.last_act_ns;
        loop {
            // When the condition was met: the next wait looks at what happens from there on (an
            // answer may finish between two looks: from "now" on, the next wait would miss it).
            let now = now_ns();
            let exchanges = self.host.api().exchanges();
            let first =
                |hit: &dyn Fn(&Exchange) -> Option<u64>| exchanges.iter().filter_map(hit).min();
            let met: Option<u64> = match until {
                Until::Ready => self.cli.is_ready(&self.screen()?).then_some(now),
                Until::Dialog => {
                    let s = self.screen()?;
                    (s.contains(self.cli.dialog)
                        || self.cli.question.is_some_and(|q| s.contains(q)))
                    .then_some(now)
                }
                Until::Streaming => exchanges
                    .iter()
                    .any(|e| {
                        e.received_ns >= since
                            && e.meaning == Meaning::EndsTurn
                            && e.first_byte_ns
                                .is_some_and(|f| now.saturating_sub(f) > 1_000_000_000)
                            && e.done_ns.is_none()
                    })
                    .then_some(now),
                Until::TurnEnd => first(&|e| {
                    (e.meaning == Meaning::EndsTurn && e.complete)
                        .then_some(e.done_ns)
                        .flatten()
                        .filter(|d| *d >= since)
                }),
                Until::Answer => {
                    first(&|e| (e.received_ns >= since).then_some(e.done_ns).flatten())
                }
                Until::ApiError => first(&|e| {
                    matches!(e.meaning, Meaning::Fails(_))
                        .then_some(e.done_ns)
                        .flatten()
                        .filter(|d| *d >= since)
                }),
                Until::Request => first(&|e| {
                    (e.received_ns >= since && e.meaning != Meaning::Side).then_some(e.received_ns)
                }),
                Until::Exit => self.tap.ended_ns().is_some().then_some(now),
            };
            if let Some(at) = met {
                // Past the instant itself: the next wait does not meet the same exchange again.
                self.last_act_ns = at + 1;
                return Ok(());
            }
            if Instant::now() > deadline {
                let screen = self.screen().unwrap_or_default();
                return Err(format!(
                    "{until:?} did not come within {timeout:?}; the screen:\n{screen}"
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// A delivery through the daemon, under `perturb`.
    fn deliver(&mut self, text: &str, perturb: Perturbation, project: &Path) -> Result<(), String> {
        match perturb {
            Perturbation::EatenEnter => self.tap.command("drop-enter-after-paste")?,
            Perturbation::SlowRedraw => {
                self.tap.command(&format!("delay-output {SLOW_REDRAW_MS}"))?
            }
            Perturbation::DialogDuringPaste => {
                let go = project.join(WAKE_FILE);
                self.tap.command(&format!("touch-on-paste {}", go.display()))?;
            }
            Perturbation::None | Perturbation::TextInComposer | Perturbation::SecondDeliverer => {}
        }
        let request = DeliverRequest {
            session: self.tag.clone(),
            tmux: self.pane.clone(),
            text: Some(text.to_owned()),
            question: Question::Input,
            lease: None,
            wait_ms: 10_000,
            confirm_timeout_ms: Some(15_000),
            heal_after_ms: None,
        };
        // The second deliverer asks once, at the same instant: of the two, one gets the idle's
        // slot.
        let requests = match perturb {
            Perturbation::SecondDeliverer => {
                vec![request.clone(), DeliverRequest { wait_ms: 0, ..request }]
            }
            _ => vec![request],
        };
        let events = self.events.clone();
        let started = now_ns();
        let handles: Vec<_> = requests
            .into_iter()
            .map(|request| {
                let events = events.clone();
                thread::spawn(move || -> Result<DeliverAnswer, String> {
                    let mut client = Client::connect(&events).map_err(|e| e.to_string())?;
                    client.deliver(&request).map_err(|e| e.to_string())
                })
            })
            .collect();
        for handle in handles {
            let result =
                handle.join().unwrap_or_else(|_| Err("the delivery thread panicked".into()));
            let (answer, error) = match result {
                Ok(a) => (Some(a), None),
                Err(e) => (None, Some(e)),
            };
            self.deliveries.push(Delivered { perturb, answer, error, window: (started, now_ns()) });
        }
        if perturb == Perturbation::SlowRedraw {
            self.tap.command("delay-output 0")?;
        }
        // The prompt reached the CLI with the Enter the tap passed after the paste.
        let facts = self.tap.facts();
        let bytes = tap::bytes_between(&facts, started, now_ns());
        let plain: Vec<u8> = bytes.iter().map(|(_, b)| *b).collect();
        if let Some(end) = plain.windows(6).position(|w| w == b"\x1b[201~")
            && let Some((at, _)) = bytes[end + 6..].iter().find(|(_, b)| *b == b'\r')
        {
            self.act(*at, Act::Submit { tools: Tools::Run, wakes: self.wakes_after(perturb) });
        }
        self.last_act_ns = self.last_act_ns.max(started);
        Ok(())
    }

    /// What a turn the CLI starts by itself opens after a delivery: the same as the last
    /// prompt said.
    fn wakes_after(&self, _perturb: Perturbation) -> Tools {
        self.facts
            .acts
            .iter()
            .rev()
            .find_map(|(_, a)| match a {
                Act::Submit { wakes, .. } => Some(*wakes),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Stops everything and gathers the recording.
    fn finish(mut self) -> Recording {
        let end = now_ns();
        self.stop.store(true, Ordering::SeqCst);
        for handle in self.followers.drain(..) {
            let _ = handle.join();
        }
        // The notifier and the daemon stop before the CLI: nothing more is asked of them.
        let notifications = self.notifier.as_ref().map(Notifier::latencies).unwrap_or_default();
        self.notifier.take();
        self.daemon.take();
        let mut facts = self.facts.clone();
        facts.exchanges = self.host.api().exchanges();
        facts.ended_ns = self.tap.ended_ns().filter(|t| *t <= end);
        let tap_facts = self.tap.facts();
        let pane_bytes = tap::bytes_between(&tap_facts, 0, u64::MAX);
        let neighbour_bytes = tap::bytes_between(&self.neighbour.facts(), 0, u64::MAX).len();
        let mut reported: Vec<(u64, Reported)> = take(&self.reported);
        reported.sort_by_key(|(t, _)| *t);
        let mut peeks: Vec<Peek> = take(&self.peeks);
        peeks.sort_by_key(|p| p.at_ns);
        let thread_errors: Vec<String> = take(&self.errors);
        Recording {
            window: (facts.ready_ns, end),
            facts,
            reported,
            peeks,
            deliveries: std::mem::take(&mut self.deliveries),
            pane_bytes,
            neighbour_bytes,
            notifications,
            thread_errors,
        }
    }
}

/// The end of a typed text that must show on screen before Enter: short enough that no
/// composer wraps it (OpenCode wraps a long path mid-way).
fn echo_tail(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(12)..].iter().collect()
}

fn take<T>(shared: &Arc<Mutex<Vec<T>>>) -> Vec<T> {
    std::mem::take(&mut *shared.lock().unwrap_or_else(|e| e.into_inner()))
}
