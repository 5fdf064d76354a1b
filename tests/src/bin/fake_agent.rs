//! A small agent TUI for the delivery tests: a raw-mode terminal program drawn like Claude
//! Code (so the `claude` profile's `[pane]` patterns read it), which fires its hooks through
//! the real built relay with Claude-shaped payloads and logs every byte it receives.
//!
//! ```text
//! fake_agent --log FILE --relay PATH --events-dir DIR --session ID [behaviour flags]
//! ```
//!
//! Behaviour flags:
//! * `--eat-first-enter`: the first Enter after a paste end is dropped (Claude Code 2.1.105+).
//! * `--dialog`: starts with a permission dialog open (and fires `Notification`
//!   `permission_prompt`); Enter or `1` approves, Esc denies.
//! * `--long-child`: a submitted prompt runs a silent child (`sleep 3`): no redraw meanwhile.
//! * `--spinner`: a submitted prompt shows a spinner for 2 s.
//! * `--defer-redraw`: after a submission the screen is redrawn only at the next keystroke.
//! * `--no-prompt-hook`: never fires `UserPromptSubmit` (hooks broken).
//! * `--tag TAG`: the orchestrator's tag (`HOOKLINE_TAG`) on every event.
//! * `--tasks`: the first turn builds a task list of two and completes the first (Claude's
//!   `TaskCreated` ×2, `TaskCompleted`, then a `Stop` with one item open, as in
//!   `Stop-after-tasks.json`); the next turn completes the second.
//! * `--hold-turn FILE`: a submitted turn stays mid-turn (after its `UserPromptSubmit`) until
//!   FILE exists, then removes it and ends.
//! * `--odd-prompts K,K,...`: the n-th submission after the first reports its prompt in a
//!   `UserPromptSubmit` of kind K: `other` (a person's own prompt instead), `bignum` (a
//!   person's own prompt, a number beyond a float beside it), `deep` (a person's own prompt,
//!   nesting deeper than 128 beside it), `surrogate` (the prompt cut inside its last
//!   character, a lone surrogate left, as Node writes a cut emoji), `same-bignum` (the prompt
//!   itself, a number beyond a float beside it).
//! * `--editor CMD`: Ctrl-G hands the terminal to `sh -c CMD` in the foreground (cooked mode,
//!   bracketed paste off, as a TUI does for an external editor) until it exits.
//! * `--dialog-on-paste`: a paste's end starts a turn by itself that opens a permission
//!   dialog (as a background task ending just then does): `PreToolUse`, then `Notification`
//!   `permission_prompt`, then the dialog, which the next Enter approves.
//!
//! A submission fires `UserPromptSubmit` (with the prompt), works, then fires `Stop`. Ctrl-D
//! with an empty composer fires `SessionEnd` and exits.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Flags {
    log: PathBuf,
    relay: PathBuf,
    events_dir: PathBuf,
    session: String,
    eat_first_enter: bool,
    dialog: bool,
    long_child: bool,
    spinner: bool,
    defer_redraw: bool,
    no_prompt_hook: bool,
    tag: Option<String>,
    tasks: bool,
    hold_turn: Option<PathBuf>,
    odd_prompts: Vec<String>,
    editor: Option<String>,
    dialog_on_paste: bool,
}

fn flags() -> Flags {
    let mut f = Flags::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || PathBuf::from(args.next().expect("a value"));
        match arg.as_str() {
            "--log" => f.log = value(),
            "--relay" => f.relay = value(),
            "--events-dir" => f.events_dir = value(),
            "--session" => f.session = value().to_string_lossy().into_owned(),
            "--eat-first-enter" => f.eat_first_enter = true,
            "--dialog" => f.dialog = true,
            "--long-child" => f.long_child = true,
            "--spinner" => f.spinner = true,
            "--defer-redraw" => f.defer_redraw = true,
            "--no-prompt-hook" => f.no_prompt_hook = true,
            "--tag" => f.tag = Some(value().to_string_lossy().into_owned()),
            "--tasks" => f.tasks = true,
            "--hold-turn" => f.hold_turn = Some(value()),
            "--odd-prompts" => {
                let kinds = value().to_string_lossy().into_owned();
                f.odd_prompts = kinds.split(',').map(str::to_owned).collect();
            }
            "--editor" => f.editor = Some(value().to_string_lossy().into_owned()),
            "--dialog-on-paste" => f.dialog_on_paste = true,
            other => panic!("unknown argument {other}"),
        }
    }
    f
}

struct Agent {
    flags: Flags,
    history: Vec<String>,
    /// What the composer holds, as received (UTF-8, line feeds for pasted line breaks).
    composer: Vec<u8>,
    dialog: bool,
    status: Option<String>,
    /// The first Enter after a paste end is still to be eaten.
    eat_next_enter: bool,
    /// An Enter was eaten already (only the first is).
    ate: bool,
    /// A redraw is owed at the next keystroke.
    owed_redraw: bool,
    /// Submissions so far.
    submissions: usize,
}

impl Agent {
    fn hook(&self, event: &str, extra: serde_json::Value) {
        let mut payload = serde_json::json!({
            "hook_event_name": event,
            "session_id": self.flags.session,
            "cwd": "/",
            "transcript_path": "/nonexistent",
        });
        if let (Some(p), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
            p.extend(extra.clone());
        }
        self.hook_raw(&payload.to_string());
    }

    /// Runs the relay with `payload` as it is, which need not decode strictly.
    fn hook_raw(&self, payload: &str) {
        let mut relay = Command::new(&self.flags.relay);
        relay
            .args(["--cli", "claude"])
            .env("HOOKLINE_EVENTS_DIR", &self.flags.events_dir)
            .env("CLAUDE_PID", std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(tag) = &self.flags.tag {
            relay.env("HOOKLINE_TAG", tag);
        }
        let mut child = relay.spawn().expect("the relay runs");
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        let _ = child.wait();
    }

    /// `UserPromptSubmit` for `prompt`, as the odd-prompt kind of this submission says.
    fn prompt_hook(&self, prompt: &str) {
        const OWN: &str = "a prompt of my own";
        let kind = self.submissions.checked_sub(2).and_then(|n| self.flags.odd_prompts.get(n));
        let (prompt, beside) = match kind.map(String::as_str) {
            None => return self.hook("UserPromptSubmit", serde_json::json!({ "prompt": prompt })),
            Some("other") => (serde_json::json!(OWN).to_string(), String::new()),
            Some("bignum") => (serde_json::json!(OWN).to_string(), r#","usage":1e999"#.into()),
            Some("same-bignum") => {
                (serde_json::json!(prompt).to_string(), r#","usage":1e999"#.into())
            }
            Some("deep") => {
                let deep = format!(r#","nested":{}{}"#, "[".repeat(200), "]".repeat(200));
                (serde_json::json!(OWN).to_string(), deep)
            }
            Some("surrogate") => {
                // The last character cut to the first half of its UTF-16 pair.
                let mut chars = prompt.chars();
                chars.next_back();
                let head = serde_json::json!(chars.as_str()).to_string();
                (format!("{}\\ud83d\"", &head[..head.len() - 1]), String::new())
            }
            Some(other) => panic!("unknown odd prompt {other}"),
        };
        let session = serde_json::json!(self.flags.session);
        self.hook_raw(&format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":{session},"cwd":"/","transcript_path":"/nonexistent","prompt":{prompt}{beside}}}"#
        ));
    }

    /// Claude's task hooks for the turn that ends now: the first builds a list of two and
    /// completes the first; the second completes the other.
    fn task_hooks(&self) -> &'static str {
        let task = |event: &str, id: &str, subject: &str| {
            self.hook(
                event,
                serde_json::json!({ "task_id": id, "task_subject": subject, "task_description": subject }),
            );
        };
        if self.submissions == 1 {
            task("TaskCreated", "1", "First task");
            task("TaskCreated", "2", "Second task");
            task("TaskCompleted", "1", "First task");
            "one of two tasks done"
        } else {
            task("TaskCompleted", "2", "Second task");
            "both tasks done"
        }
    }

    /// Hands the terminal to `sh -c CMD` in a process group of its own, in the foreground,
    /// until it exits, as a TUI does for an external editor.
    fn run_in_foreground(&mut self, cmd: &str) {
        use std::os::unix::process::CommandExt;
        print!("\x1b[?2004l");
        let _ = std::io::stdout().flush();
        cooked_mode();
        let mut child = Command::new("/bin/sh");
        child.args(["-c", cmd]);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            child.pre_exec(|| {
                libc::setpgid(0, 0);
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                libc::tcsetpgrp(0, libc::getpid());
                libc::signal(libc::SIGTTOU, libc::SIG_DFL);
                Ok(())
            });
        }
        if let Ok(mut child) = child.spawn() {
            let _ = child.wait();
        }
        // SAFETY: taking the terminal back from the background, SIGTTOU ignored.
        unsafe {
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(0, libc::getpgrp());
        }
        raw_mode();
        print!("\x1b[?2004h");
        self.history.push("editor closed".into());
    }

    /// A turn the agent starts by itself asks for permission: its hooks, then the dialog.
    fn open_dialog_by_itself(&mut self) {
        self.hook(
            "PreToolUse",
            serde_json::json!({ "tool_name": "Bash", "tool_input": { "command": "rm -rf build" } }),
        );
        self.hook(
            "Notification",
            serde_json::json!({ "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash" }),
        );
        self.dialog = true;
    }

    fn draw(&self) {
        let mut out = String::from("\x1b[2J\x1b[H");
        out.push_str(&format!("fake agent · session {}\r\n", self.flags.session));
        for line in &self.history {
            out.push_str(&format!("{line}\r\n"));
        }
        if let Some(status) = &self.status {
            out.push_str(&format!("{status}\r\n"));
        }
        let rule = "─".repeat(40);
        if self.dialog {
            out.push_str(&format!("{rule}\r\n Bash command\r\n   rm -rf build\r\n"));
            out.push_str(" Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. No\r\n");
            out.push_str(" Esc to cancel · Tab to amend\r\n");
        } else {
            let composer = String::from_utf8_lossy(&self.composer).replace('\n', "\r\n  ");
            out.push_str(&format!("{rule}\r\n❯ {composer}\r\n{rule}\r\n"));
            let footer = if self.status.is_some() { "esc to interrupt" } else { "? for shortcuts" };
            out.push_str(&format!("  {footer}\r\n"));
        }
        let mut stdout = std::io::stdout();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }

    fn submit(&mut self) {
        let prompt = String::from_utf8_lossy(&std::mem::take(&mut self.composer)).into_owned();
        self.submissions += 1;
        if !self.flags.no_prompt_hook {
            self.prompt_hook(&prompt);
        }
        self.history.push(format!("❯ {}", prompt.replace('\n', " ")));
        if let Some(hold) = &self.flags.hold_turn {
            self.draw();
            while !hold.exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = std::fs::remove_file(hold);
        }
        if self.flags.defer_redraw {
            // The screen keeps the text in the composer until the next keystroke.
            self.owed_redraw = true;
        } else if self.flags.long_child {
            let _ = Command::new("sleep").arg("3").status();
        } else if self.flags.spinner {
            let glyphs = ["✶", "✻", "✽", "✢"];
            let started = Instant::now();
            let mut i = 0;
            while started.elapsed() < Duration::from_secs(2) {
                self.status = Some(format!("{} Working… (esc to interrupt)", glyphs[i % 4]));
                self.draw();
                i += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            self.status = None;
        }
        self.history.push("● done".into());
        let said = if self.flags.tasks { self.task_hooks() } else { "done" };
        let stop = serde_json::json!({ "stop_hook_active": false, "last_assistant_message": said });
        self.hook("Stop", stop);
        if !self.owed_redraw {
            self.draw();
        }
    }

    fn key(&mut self, byte: u8) {
        match byte {
            b'\r' | b'\n' if self.eat_next_enter => self.eat_next_enter = false,
            b'\r' | b'\n' if self.dialog => {
                self.dialog = false;
                self.history.push("approved".into());
            }
            b'\r' | b'\n' if !self.composer.trim_ascii().is_empty() => return self.submit(),
            b'\r' | b'\n' => {}
            0x1b if self.dialog => {
                self.dialog = false;
                self.history.push("denied".into());
            }
            b'1' if self.dialog => {
                self.dialog = false;
                self.history.push("approved".into());
            }
            0x7f => {
                self.composer.pop();
            }
            0x04 if self.composer.is_empty() && !self.dialog => {
                self.hook("SessionEnd", serde_json::json!({ "reason": "prompt_input_exit" }));
                std::process::exit(0);
            }
            0x07 if !self.dialog => {
                if let Some(cmd) = self.flags.editor.clone() {
                    self.run_in_foreground(&cmd);
                }
            }
            b if b >= 0x20 && !self.dialog => self.composer.push(b),
            _ => {}
        }
        self.draw();
    }
}

/// The terminal's settings before raw mode, to hand a foreground child a cooked terminal.
static COOKED: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();

fn raw_mode() {
    // SAFETY: tcgetattr/tcsetattr on stdin with a zeroed, then filled, termios.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut t) == 0 {
            let _ = COOKED.set(t);
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(0, libc::TCSANOW, &t);
        }
    }
}

fn cooked_mode() {
    if let Some(t) = COOKED.get() {
        // SAFETY: tcsetattr on stdin with the settings tcgetattr gave.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, t) };
    }
}

fn main() {
    let flags = flags();
    let mut log = OpenOptions::new().create(true).append(true).open(&flags.log).expect("the log");
    raw_mode();
    // Ask for bracketed paste, as the real TUIs do.
    print!("\x1b[?2004h");
    let mut agent = Agent {
        dialog: flags.dialog,
        eat_next_enter: false,
        ate: false,
        flags,
        history: Vec::new(),
        composer: Vec::new(),
        status: None,
        owed_redraw: false,
        submissions: 0,
    };
    agent.hook("SessionStart", serde_json::json!({ "source": "startup" }));
    if agent.dialog {
        agent.hook(
            "Notification",
            serde_json::json!({ "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash" }),
        );
    }
    agent.draw();
    let mut stdin = std::io::stdin().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut in_paste = false;
    let mut buf = [0u8; 4096];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let _ = log.write_all(&buf[..n]);
        let _ = log.flush();
        if std::mem::take(&mut agent.owed_redraw) {
            agent.draw();
        }
        pending.extend_from_slice(&buf[..n]);
        loop {
            if pending.starts_with(b"\x1b[200~") {
                in_paste = true;
                pending.drain(..6);
            } else if pending.starts_with(b"\x1b[201~") {
                in_paste = false;
                agent.eat_next_enter = agent.flags.eat_first_enter && !agent.ate;
                agent.ate |= agent.eat_next_enter;
                pending.drain(..6);
                if agent.flags.dialog_on_paste && !agent.dialog {
                    agent.open_dialog_by_itself();
                }
                agent.draw();
            } else if pending.len() < 6
                && (b"\x1b[200~".starts_with(&pending) || b"\x1b[201~".starts_with(&pending))
            {
                break; // a marker split across reads (or nothing left)
            } else {
                let b = pending.remove(0);
                if in_paste {
                    agent.composer.push(if b == b'\r' { b'\n' } else { b });
                } else {
                    agent.key(b);
                }
            }
        }
        if in_paste {
            agent.draw();
        }
    }
}
