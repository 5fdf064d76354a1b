//! `hookline demo-agent`: the scripted agent of `demo --live`. A terminal program drawn like
//! Claude Code 2.1.332 (so that the `claude` profile's `[pane]` patterns read it as they read
//! the real one) that runs its hooks as Claude Code does: the real relay, one process per
//! hook, synchronously, a payload captured from the real CLI on its stdin (the fixtures under
//! `watcher/tests/fixtures/claude-code/2.1.332/`, with this session's id, prompt and tool).
//!
//! A prompt (typed, pasted by `hookline deliver`, or the `--opening` one) fires
//! `UserPromptSubmit`, then works by what it asks for:
//!
//! * `rm`, `clean`, `delete`, `permission`: a Bash tool that asks for permission: the dialog
//!   stays open until a person answers (1 or Enter approves, 2 denies and the turn goes on, Esc
//!   interrupts the turn and fires nothing, as Claude Code does); 6 s in, `Notification`
//!   `permission_prompt`;
//! * else `test`, `build`, `long`: a long Bash tool (`cargo test`, 20 s) under a spinner;
//! * anything else: a short Read;
//!
//! then fires `Stop`. At the prompt for 60 s it fires `Notification` `idle_prompt`, as Claude
//! Code does. `/exit`, or Ctrl-C twice at an empty prompt, fires `SessionEnd` and exits. It
//! has no model: what it answers is written here.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cli::DemoAgentArgs;
use crate::cmd::Outcome;

macro_rules! payload {
    ($file:literal) => {
        include_str!(concat!("../../../../watcher/tests/fixtures/claude-code/2.1.332/", $file))
    };
}

/// The captured payloads each hook starts from.
mod captured {
    pub const SESSION_START: &str = payload!("SessionStart-startup.json");
    pub const PROMPT: &str = payload!("UserPromptSubmit.json");
    pub const TOOL_START: &str = payload!("PreToolUse.json");
    pub const PERMISSION: &str = payload!("PermissionRequest.json");
    pub const PERMISSION_NOTICE: &str = payload!("Notification-permission_prompt.json");
    pub const TOOL_END: &str = payload!("PostToolUse.json");
    pub const STOP: &str = payload!("Stop.json");
    pub const IDLE_NOTICE: &str = payload!("Notification-idle_prompt.json");
    pub const SESSION_END: &str = payload!("SessionEnd-prompt_input_exit.json");
}

/// How long Claude Code waits at its prompt before its `idle_prompt` notification.
const IDLE_NOTICE_AFTER: Duration = Duration::from_secs(60);
/// How long a permission dialog is open before its `permission_prompt` notification.
const PERMISSION_NOTICE_AFTER: Duration = Duration::from_secs(6);
/// How long after start the `--opening` prompt is submitted.
const OPENING_AFTER: Duration = Duration::from_millis(1500);
/// The spinner's glyphs, Claude Code's.
const SPINNER: [&str; 6] = ["·", "✢", "✳", "✶", "✻", "✽"];

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

pub fn run(args: &DemoAgentArgs) -> Outcome {
    // A hangup (the tmux server killed), SIGTERM or SIGINT ends the loop after the hook being
    // run, so that no relay is left writing into a directory being removed. poll() is not
    // restarted after a handler, so the loop sees the flag at once.
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGHUP, handler);
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
    }
    let terminal = Terminal::raw()?;
    let mut agent = Agent::new(args);
    agent.fire(Hook::SessionStart);
    let opening = args.opening.clone().map(|text| (Instant::now() + OPENING_AFTER, text));
    let result = agent.run(opening);
    drop(terminal);
    result.map(|()| ExitCode::SUCCESS)
}

/// The terminal in raw mode with bracketed paste on, as the real TUIs set it; restored on
/// drop.
struct Terminal {
    saved: Option<libc::termios>,
}

impl Terminal {
    fn raw() -> Result<Terminal, Box<dyn std::error::Error>> {
        // SAFETY: tcgetattr/tcsetattr on stdin with a zeroed, then filled, termios.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return Err("demo-agent runs in a terminal (demo --live starts it in tmux)".into());
            }
            let saved = t;
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(0, libc::TCSANOW, &t);
            Some(saved)
        };
        print!("\x1b[?2004h\x1b[?25l");
        let _ = std::io::stdout().flush();
        Ok(Terminal { saved })
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        print!("\x1b[?2004l\x1b[?25h\r\n");
        let _ = std::io::stdout().flush();
        if let Some(saved) = &self.saved {
            // SAFETY: restores the attributes read in `raw`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, saved);
            }
        }
    }
}

/// One hook call.
#[derive(Debug, Clone)]
enum Hook {
    SessionStart,
    Prompt(String),
    ToolStart(Tool),
    Permission(Tool),
    PermissionNotice,
    ToolEnd(Tool),
    Stop(String),
    IdleNotice,
    SessionEnd,
}

/// A tool call.
#[derive(Debug, Clone)]
struct Tool {
    name: &'static str,
    input: Value,
    id: String,
}

/// One step of a turn.
#[derive(Debug, Clone)]
enum Step {
    Fire(Hook),
    /// A line of the conversation.
    Say(String),
    /// Working under the spinner for this long.
    Work(&'static str, Duration),
    /// The permission dialog for this tool, until a person answers.
    Ask(Tool),
}

/// The conversation, the composer and the turn in progress.
struct Agent {
    relay: PathBuf,
    events_dir: PathBuf,
    tag: String,
    session: String,
    cwd: String,
    transcript: String,
    prompt_id: String,
    ids: Ids,
    lines: Vec<String>,
    composer: Vec<u8>,
    steps: VecDeque<Step>,
    /// When the step in front started (a `Work` or an `Ask`).
    step_started: Option<Instant>,
    /// The permission notification of the open dialog was sent.
    asked_notice: bool,
    /// At the prompt since (`None` during a turn).
    idle_since: Option<Instant>,
    idle_noticed: bool,
    /// Ctrl-C was pressed once at an empty prompt.
    exit_armed: bool,
    ended: bool,
    frame: usize,
    /// The screen last drawn: one that has not changed is not drawn again (no flicker).
    drawn: String,
}

impl Agent {
    fn new(args: &DemoAgentArgs) -> Agent {
        let mut ids = Ids::seeded();
        let session = ids.uuid();
        let cwd = std::env::current_dir().map_or("/".into(), |d| d.display().to_string());
        let transcripts = args.events_dir.parent().unwrap_or(Path::new("/")).join("transcripts");
        Agent {
            relay: args.relay.clone(),
            events_dir: args.events_dir.clone(),
            tag: args.tag.clone(),
            transcript: transcripts.join(format!("{session}.jsonl")).display().to_string(),
            prompt_id: ids.uuid(),
            session,
            cwd,
            ids,
            lines: Vec::new(),
            composer: Vec::new(),
            steps: VecDeque::new(),
            step_started: None,
            asked_notice: false,
            idle_since: Some(Instant::now()),
            idle_noticed: false,
            exit_armed: false,
            ended: false,
            frame: 0,
            drawn: String::new(),
        }
    }

    /// Reads keys and works until the session ends or a signal arrives.
    fn run(
        &mut self,
        mut opening: Option<(Instant, String)>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let mut input = Input::default();
        let mut buf = [0u8; 4096];
        self.draw();
        while !self.ended && !SIGNALLED.load(Ordering::Relaxed) {
            let wait = if self.steps.is_empty() { 500 } else { 100 };
            let mut fds = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut fds, 1, wait) };
            if ready > 0 {
                // SAFETY: reading into a buffer of its length.
                let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    // The terminal is gone (EIO, end of file).
                    let again = std::io::Error::last_os_error().kind();
                    if n < 0 && again == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Ok(());
                }
                for key in input.feed(&buf[..n as usize]) {
                    self.key(key);
                }
            }
            if let Some((at, _)) = &opening
                && Instant::now() >= *at
                && self.steps.is_empty()
                && let Some((_, text)) = opening.take()
            {
                self.submit(text);
            }
            self.tick();
            self.draw();
        }
        Ok(())
    }

    /// Runs the hook through the relay, as Claude Code runs a command hook.
    fn fire(&mut self, hook: Hook) {
        let payload = self.payload(&hook);
        let child = Command::new(&self.relay)
            .args(["--cli", "claude"])
            .env("HOOKLINE_EVENTS_DIR", &self.events_dir)
            .env("HOOKLINE_TAG", &self.tag)
            .env("CLAUDE_PID", std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            self.lines.push(format!("  ⎿  hook error: cannot run {}", self.relay.display()));
            return;
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(payload.to_string().as_bytes());
        }
        let _ = child.wait();
    }

    /// The captured payload of `hook`, made this session's.
    fn payload(&self, hook: &Hook) -> Value {
        let captured = match hook {
            Hook::SessionStart => captured::SESSION_START,
            Hook::Prompt(_) => captured::PROMPT,
            Hook::ToolStart(_) => captured::TOOL_START,
            Hook::Permission(_) => captured::PERMISSION,
            Hook::PermissionNotice => captured::PERMISSION_NOTICE,
            Hook::ToolEnd(_) => captured::TOOL_END,
            Hook::Stop(_) => captured::STOP,
            Hook::IdleNotice => captured::IDLE_NOTICE,
            Hook::SessionEnd => captured::SESSION_END,
        };
        let mut p: Value = serde_json::from_str(captured).expect("a captured payload is JSON");
        p["session_id"] = self.session.clone().into();
        p["cwd"] = self.cwd.clone().into();
        p["transcript_path"] = self.transcript.clone().into();
        if p.get("prompt_id").is_some() {
            p["prompt_id"] = self.prompt_id.clone().into();
        }
        match hook {
            Hook::Prompt(prompt) => p["prompt"] = prompt.clone().into(),
            Hook::ToolStart(tool) => tool.fill(&mut p),
            Hook::Permission(tool) => {
                tool.fill(&mut p);
                p["permission_suggestions"][0]["directories"] = json!([self.cwd]);
            }
            Hook::ToolEnd(tool) => {
                tool.fill(&mut p);
                if tool.name != "Bash" {
                    p["tool_response"] = json!({ "type": "text" });
                }
            }
            Hook::Stop(said) => p["last_assistant_message"] = said.clone().into(),
            Hook::SessionStart | Hook::PermissionNotice | Hook::IdleNotice | Hook::SessionEnd => {}
        }
        p
    }

    fn key(&mut self, key: Key) {
        if !matches!(key, Key::CtrlC) {
            self.exit_armed = false;
        }
        let asking = matches!(self.steps.front(), Some(Step::Ask(_)));
        match key {
            Key::Paste(text) if !asking => self.composer.extend(text),
            Key::Paste(_) => {}
            Key::Enter | Key::Char(b'1') if asking => self.answer(true),
            Key::Char(b'2') if asking => self.answer(false),
            Key::Esc if asking || !self.steps.is_empty() => self.interrupt(),
            Key::Enter if self.steps.is_empty() => {
                let text =
                    String::from_utf8_lossy(&std::mem::take(&mut self.composer)).into_owned();
                if !text.trim().is_empty() {
                    self.submit(text);
                }
            }
            Key::Backspace => {
                // One character, not one byte.
                while let Some(b) = self.composer.pop() {
                    if b & 0xC0 != 0x80 {
                        break;
                    }
                }
            }
            Key::CtrlC if !self.composer.is_empty() => self.composer.clear(),
            Key::CtrlC if self.exit_armed && self.steps.is_empty() => self.end(),
            Key::CtrlC => self.exit_armed = true,
            Key::Char(b) if !asking => self.composer.push(b),
            _ => {}
        }
    }

    /// A prompt submitted: `UserPromptSubmit`, then the turn it asks for.
    fn submit(&mut self, text: String) {
        let shown = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if shown == "/exit" {
            return self.end();
        }
        self.prompt_id = self.ids.uuid();
        self.lines.push(String::new());
        self.lines.push(format!("❯ {shown}"));
        self.idle_since = None;
        self.idle_noticed = false;
        self.fire(Hook::Prompt(text.clone()));
        let lower = text.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
        let steps: Vec<Step> = if has(&["rm", "clean", "delete", "permission"]) {
            let tool = self.tool(
                "Bash",
                json!({ "command": "rm -rf build", "description": "Clean the build directory" }),
            );
            vec![
                Step::Work("Thinking…", Duration::from_secs(2)),
                Step::Say("● Bash(rm -rf build)".into()),
                Step::Fire(Hook::ToolStart(tool.clone())),
                Step::Fire(Hook::Permission(tool.clone())),
                Step::Ask(tool.clone()),
                Step::Work("Cleaning…", Duration::from_secs(3)),
                Step::Fire(Hook::ToolEnd(tool)),
                Step::Say("  ⎿  (no output)".into()),
                Step::Say("● (scripted) The build directory is gone.".into()),
                Step::Fire(Hook::Stop("The build directory is gone.".into())),
            ]
        } else if has(&["test", "build", "long"]) {
            let tool = self
                .tool("Bash", json!({ "command": "cargo test", "description": "Run the tests" }));
            vec![
                Step::Work("Thinking…", Duration::from_secs(2)),
                Step::Say("● Bash(cargo test)".into()),
                Step::Fire(Hook::ToolStart(tool.clone())),
                Step::Work("Testing…", Duration::from_secs(20)),
                Step::Fire(Hook::ToolEnd(tool)),
                Step::Say("  ⎿  test result: ok. 42 passed; 0 failed".into()),
                Step::Say("● (scripted) The tests pass.".into()),
                Step::Fire(Hook::Stop("The tests pass.".into())),
            ]
        } else {
            let tool = self.tool("Read", json!({ "file_path": format!("{}/README.md", self.cwd) }));
            vec![
                Step::Work("Thinking…", Duration::from_secs(2)),
                Step::Say("● Read(README.md)".into()),
                Step::Fire(Hook::ToolStart(tool.clone())),
                Step::Work("Reading…", Duration::from_secs(2)),
                Step::Fire(Hook::ToolEnd(tool)),
                Step::Say("  ⎿  Read 12 lines".into()),
                Step::Say(
                    "● (scripted) Done: ask me to run the tests, or to clean the build.".into(),
                ),
                Step::Fire(Hook::Stop("Done.".into())),
            ]
        };
        self.steps.extend(steps);
        self.step_started = None;
    }

    fn tool(&mut self, name: &'static str, input: Value) -> Tool {
        Tool { name, input, id: format!("toolu_demo_{}", self.ids.hex(16)) }
    }

    /// The person's answer to the permission dialog.
    fn answer(&mut self, approved: bool) {
        let Some(Step::Ask(tool)) = self.steps.pop_front() else { return };
        self.step_started = None;
        self.asked_notice = false;
        if !approved {
            // The tool is refused; the turn goes on without it.
            let said = "I will leave the build directory alone.";
            self.steps = VecDeque::from([
                Step::Say(format!("  ⎿  {} denied by the user", tool.name)),
                Step::Work("Thinking…", Duration::from_secs(1)),
                Step::Say(format!("● (scripted) {said}")),
                Step::Fire(Hook::Stop(said.into())),
            ]);
        }
    }

    /// Esc during a turn: Claude Code stops at once and runs no hook.
    fn interrupt(&mut self) {
        self.steps.clear();
        self.step_started = None;
        self.asked_notice = false;
        self.lines.push("  ⎿  Interrupted · What should Claude do instead?".into());
        self.idle_since = Some(Instant::now());
    }

    fn end(&mut self) {
        self.fire(Hook::SessionEnd);
        self.ended = true;
    }

    /// Moves the turn on: hooks and lines at once, work and dialogs by the clock.
    fn tick(&mut self) {
        let now = Instant::now();
        while let Some(step) = self.steps.front().cloned() {
            match step {
                Step::Fire(hook) => {
                    self.steps.pop_front();
                    let stop = matches!(hook, Hook::Stop(_));
                    self.fire(hook);
                    if stop {
                        self.idle_since = Some(Instant::now());
                    }
                }
                Step::Say(line) => {
                    self.steps.pop_front();
                    self.lines.push(line);
                }
                Step::Work(_, long) => {
                    let started = *self.step_started.get_or_insert(now);
                    if now.duration_since(started) < long {
                        return;
                    }
                    self.steps.pop_front();
                    self.step_started = None;
                }
                Step::Ask(_) => {
                    let started = *self.step_started.get_or_insert(now);
                    if !self.asked_notice && now.duration_since(started) >= PERMISSION_NOTICE_AFTER
                    {
                        self.asked_notice = true;
                        self.fire(Hook::PermissionNotice);
                    }
                    return;
                }
            }
        }
        if let Some(since) = self.idle_since
            && !self.idle_noticed
            && now.duration_since(since) >= IDLE_NOTICE_AFTER
        {
            self.idle_noticed = true;
            self.fire(Hook::IdleNotice);
        }
    }

    /// Redraws the whole screen: header, the conversation's last lines, then the spinner, and
    /// the prompt box or the dialog at the bottom.
    fn draw(&mut self) {
        let (width, height) = size();
        let rule = "─".repeat(width);
        let mut bottom: Vec<String> = Vec::new();
        match self.steps.front() {
            Some(Step::Ask(tool)) => {
                let command = tool.input["command"].as_str().unwrap_or_default();
                let what = tool.input["description"].as_str().unwrap_or_default();
                bottom.push(rule.clone());
                bottom.push(" Bash command".into());
                bottom.push(String::new());
                bottom.push(format!("   {command}"));
                bottom.push(format!("   {what}"));
                bottom.push(String::new());
                bottom.push(" Do you want to proceed?".into());
                bottom.push(" ❯ 1. Yes".into());
                bottom.push("   2. No, and tell Claude what to do differently (esc)".into());
                bottom.push(String::new());
                bottom.push(" Esc to cancel · Tab to amend".into());
            }
            front => {
                if let Some(Step::Work(label, long)) = front {
                    self.frame += 1;
                    let glyph = SPINNER[self.frame % SPINNER.len()];
                    let left = self
                        .step_started
                        .map_or(*long, |s| long.saturating_sub(s.elapsed()))
                        .as_secs();
                    bottom.push(format!("{glyph} {label} ({left}s · esc to interrupt)"));
                    bottom.push(String::new());
                }
                let composer = String::from_utf8_lossy(&self.composer).replace('\n', "\r\n  ");
                bottom.push(rule.clone());
                bottom.push(format!("❯ {composer}"));
                bottom.push(rule);
                let footer = if self.exit_armed {
                    "Press Ctrl-C again to exit"
                } else if self.steps.is_empty() {
                    "? for shortcuts"
                } else {
                    "esc to interrupt"
                };
                bottom.push(format!("  {footer}"));
            }
        }
        let header = [
            " ▐▛███▜▌   Claude Code v2.1.332 (fake: hookline demo-agent, scripted, no model)"
                .to_owned(),
            format!("▝▜█████▛▘  {} · session {}", self.tag, &self.session[..8]),
            format!("  ▘▘ ▝▝    {}", self.cwd),
            String::new(),
        ];
        let room = height.saturating_sub(header.len() + bottom.len());
        let skip = self.lines.len().saturating_sub(room);
        let mut screen = String::from("\x1b[H\x1b[2J");
        for line in header.iter().chain(&self.lines[skip..]).chain(&bottom) {
            screen.push_str(&clip(line, width));
            screen.push_str("\r\n");
        }
        // The last line's line feed would scroll the screen by one.
        screen.truncate(screen.len() - 2);
        if screen == self.drawn {
            return;
        }
        self.drawn.clone_from(&screen);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(screen.as_bytes());
        let _ = out.flush();
    }
}

impl Tool {
    fn fill(&self, payload: &mut Value) {
        payload["tool_name"] = self.name.into();
        payload["tool_input"] = self.input.clone();
        if payload.get("tool_use_id").is_some() {
            payload["tool_use_id"] = self.id.clone().into();
        }
    }
}

/// The terminal's size (80×24 when it cannot be read).
fn size() -> (usize, usize) {
    // SAFETY: TIOCGWINSZ fills a winsize.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 && ws.ws_row > 0 {
        (usize::from(ws.ws_col), usize::from(ws.ws_row))
    } else {
        (80, 24)
    }
}

/// At most `width` characters of a line.
fn clip(line: &str, width: usize) -> String {
    line.chars().take(width).collect()
}

/// A key, or a paste.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    Char(u8),
    Enter,
    Esc,
    Backspace,
    CtrlC,
    /// A bracketed paste's bytes (line breaks as line feeds).
    Paste(Vec<u8>),
}

/// Turns the bytes read into keys: bracketed pastes whole, escape sequences (arrows) skipped,
/// a lone ESC as Esc.
#[derive(Debug, Default)]
struct Input {
    pending: Vec<u8>,
    paste: Option<Vec<u8>>,
}

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

impl Input {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        let mut keys = Vec::new();
        loop {
            let p = &self.pending;
            if p.is_empty() {
                break;
            }
            if let Some(paste) = &mut self.paste {
                match p.windows(PASTE_END.len()).position(|w| w == PASTE_END) {
                    Some(end) => {
                        paste.extend(p[..end].iter().map(|&b| if b == b'\r' { b'\n' } else { b }));
                        self.pending.drain(..end + PASTE_END.len());
                        keys.push(Key::Paste(self.paste.take().unwrap_or_default()));
                        continue;
                    }
                    None => {
                        // Keep what could be the start of the end marker.
                        let keep = (1..PASTE_END.len())
                            .rev()
                            .find(|&n| p.len() >= n && PASTE_END.starts_with(&p[p.len() - n..]))
                            .unwrap_or(0);
                        let take = p.len() - keep;
                        paste.extend(p[..take].iter().map(|&b| if b == b'\r' { b'\n' } else { b }));
                        self.pending.drain(..take);
                        break;
                    }
                }
            }
            if p.starts_with(PASTE_START) {
                self.paste = Some(Vec::new());
                self.pending.drain(..PASTE_START.len());
                continue;
            }
            if p[0] == 0x1b {
                if p.len() == 1 {
                    keys.push(Key::Esc);
                    self.pending.clear();
                    break;
                }
                if PASTE_START.starts_with(p) && p.len() < PASTE_START.len() {
                    break; // a marker split across reads
                }
                if matches!(p[1], b'[' | b'O') {
                    // A CSI or SS3 sequence: up to its final byte.
                    match p[2..].iter().position(|b| (0x40..=0x7e).contains(b)) {
                        Some(end) => drop(self.pending.drain(..end + 3)),
                        None => break,
                    }
                    continue;
                }
                keys.push(Key::Esc);
                self.pending.remove(0);
                continue;
            }
            let b = self.pending.remove(0);
            keys.push(match b {
                b'\r' | b'\n' => Key::Enter,
                0x7f | 0x08 => Key::Backspace,
                0x03 => Key::CtrlC,
                b if b >= 0x20 => Key::Char(b),
                _ => continue,
            });
        }
        keys
    }
}

/// Ids for sessions, prompts and tool calls: xorshift, seeded with the time and the pid.
struct Ids(u64);

impl Ids {
    fn seeded() -> Ids {
        let now = hookline::format::clock::now_ns();
        Ids(now ^ (u64::from(std::process::id()) << 32) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn hex(&mut self, digits: usize) -> String {
        let mut out = String::new();
        while out.len() < digits {
            out.push_str(&format!("{:016x}", self.next()));
        }
        out.truncate(digits);
        out
    }

    fn uuid(&mut self) -> String {
        let h = self.hex(32);
        format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
    }
}

#[cfg(test)]
mod tests {
    use super::{Input, Key};

    #[test]
    fn a_paste_split_across_reads_is_one_paste_and_arrows_are_no_keys() {
        let mut input = Input::default();
        assert_eq!(input.feed(b"ab\x1b[20"), vec![Key::Char(b'a'), Key::Char(b'b')]);
        assert_eq!(input.feed(b"0~run\rthe"), vec![]);
        assert_eq!(input.feed(b" tests\x1b[2"), vec![]);
        assert_eq!(input.feed(b"01~\r"), vec![Key::Paste(b"run\nthe tests".to_vec()), Key::Enter]);
        assert_eq!(input.feed(b"\x1b[A\x1bOBx"), vec![Key::Char(b'x')]);
        assert_eq!(input.feed(b"\x1b"), vec![Key::Esc]);
        assert_eq!(input.feed(b"\x03\x7f"), vec![Key::CtrlC, Key::Backspace]);
    }
}
