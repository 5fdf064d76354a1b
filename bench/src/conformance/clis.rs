//! The CLIs the conformance benchmark plays: each one's pinned install (the end-to-end
//! suites'), its sandbox and hook registration (the suites' own setup), and how a scenario's
//! steps are done in it: what its screen shows when it is ready or asks, which keys approve,
//! refuse or cancel, which command ends or compacts it, and what it cannot play.

use std::path::Path;

use hookline_tests::agent_session::AgentSession;
use hookline_tests::claude_install::{CLAUDE, Pin};
use hookline_tests::mock_http::MockServer;
use hookline_tests::npm_install::{
    CODEX, COPILOT, DROID, GEMINI, Installed, KILO, NpmCli, OPENCODE, PI, QWEN,
};
use hookline_tests::sandbox::Sandbox;
use hookline_tests::session::ClaudeSession;
use hookline_tests::tmux::Tmux;
use hookline_tests::version::Version;
use hookline_tests::{codex, copilot, droid, gemini, kilo, opencode, pi, qwen};

use super::scenario::{Need, Prompt};
use super::truth::Tools;

/// A key, or a line typed with its Enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A key by its tmux name.
    Press(&'static str),
    /// A line of text, then Enter.
    Line(&'static str),
}

/// One CLI, as the benchmark drives it.
pub struct Cli {
    /// The profile's name (`--cli`).
    pub name: &'static str,
    /// Its name for people.
    pub title: &'static str,
    /// Its pinned npm package.
    pub npm: &'static NpmCli,
    /// On screen while its prompt is ready (any of them).
    pub ready: &'static [&'static str],
    /// On screen while its permission dialog is open.
    pub dialog: &'static str,
    /// On screen while a question to the user waits, when the CLI has one.
    pub question: Option<&'static str>,
    /// A screen to pass before the prompt (a trust screen), and the key that passes it.
    pub first_screen: Option<(&'static str, Key)>,
    /// The keys that approve a dialog.
    pub approve: &'static [Key],
    /// The keys that choose the dialog's "no".
    pub deny: &'static [Key],
    /// The keys that cancel: a dialog, or a turn in progress.
    pub escape: &'static [Key],
    /// The keys that answer a question with its first choice.
    pub answer: &'static [Key],
    /// The command that ends the session.
    pub exit: &'static str,
    /// The command that compacts the conversation.
    pub compact: Option<&'static str>,
    /// The marker asking the mock for a shell command that needs approval.
    pub ask: &'static str,
    /// Whether the mock's plain `RUNBASH:` runs without a dialog in this CLI (a sandboxed
    /// command).
    pub runs_unasked: bool,
    /// What it cannot play, and why.
    pub cannot: &'static [(Need, &'static str)],
}

const ENTER: &[Key] = &[Key::Press("Enter")];
const ESCAPE: &[Key] = &[Key::Press("Escape")];
const NO_WAKES: &str = "its mock scripts no background command, wake or subagent (only Claude \
                        Code's tools are scripted: Bash run_in_background, ScheduleWakeup, Agent)";

/// Every CLI with an end-to-end suite, Claude Code first (the `--quick` one).
pub static CLIS: &[Cli] = &[
    Cli {
        name: "claude",
        title: "Claude Code",
        npm: &CLAUDE,
        // The footer's hint, or while a background shell runs, how to manage it.
        ready: &["for shortcuts", "to manage"],
        dialog: "Do you want to proceed?",
        question: Some("Enter to select"),
        first_screen: None,
        approve: ENTER,
        // "4. No" of the four choices a command writing into the project gets.
        deny: &[Key::Press("Down"), Key::Press("Down"), Key::Press("Down"), Key::Press("Enter")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/exit",
        compact: Some("/compact"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[],
    },
    Cli {
        name: "codex",
        title: "Codex CLI",
        npm: &CODEX,
        ready: &[codex::READY],
        dialog: codex::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        deny: &[Key::Press("Down"), Key::Press("Down"), Key::Press("Enter")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/exit",
        compact: Some("/compact"),
        ask: "RUNBASH_ESC: ",
        runs_unasked: true,
        cannot: &[
            (Need::Question, "its question tool (request_user_input) runs only in plan mode"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
        ],
    },
    Cli {
        name: "gemini",
        title: "Gemini CLI",
        npm: &GEMINI,
        ready: &[gemini::READY],
        dialog: gemini::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        deny: &[Key::Press("Down"), Key::Press("Down"), Key::Press("Enter")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/quit",
        compact: Some("/compress"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
        ],
    },
    Cli {
        name: "copilot",
        title: "Copilot CLI",
        npm: &COPILOT,
        ready: &[copilot::READY],
        dialog: copilot::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        // "2. No, and tell Copilot what to do differently", with a reason.
        deny: &[Key::Press("Down"), Key::Line("do not run it")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/exit",
        compact: Some("/compact"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
            (Need::Composer, "its profile declares no [pane] patterns: a draft cannot be seen"),
        ],
    },
    Cli {
        name: "opencode",
        title: "OpenCode",
        npm: &OPENCODE,
        ready: &[opencode::READY],
        dialog: opencode::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        // Escape is its "Reject".
        deny: ESCAPE,
        escape: ESCAPE,
        answer: ENTER,
        exit: "/exit",
        compact: Some("/compact"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
            (Need::Composer, "its profile declares no [pane] patterns: a draft cannot be seen"),
        ],
    },
    Cli {
        name: "pi",
        title: "Pi",
        npm: &PI,
        ready: &[pi::READY],
        dialog: pi::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        deny: ESCAPE,
        escape: ESCAPE,
        answer: ENTER,
        exit: "/quit",
        compact: Some("/compact"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "Pi has no question tool of its own"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
            (Need::Composer, "its profile declares no [pane] patterns: a draft cannot be seen"),
        ],
    },
    Cli {
        name: "kilo",
        title: "Kilo Code",
        npm: &KILO,
        ready: &[kilo::READY],
        dialog: kilo::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        // Escape opens its reject box; Enter there rejects.
        deny: &[Key::Press("Escape"), Key::Press("Enter")],
        escape: &[Key::Press("Escape"), Key::Press("Enter")],
        answer: ENTER,
        exit: "/exit",
        compact: Some("/compact"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
            (Need::Composer, "its profile declares no [pane] patterns: a draft cannot be seen"),
        ],
    },
    Cli {
        name: "qwen",
        title: "Qwen Code",
        npm: &QWEN,
        ready: &[qwen::READY],
        dialog: qwen::APPROVAL_DIALOG,
        question: None,
        first_screen: None,
        approve: ENTER,
        deny: &[Key::Press("Down"), Key::Press("Down"), Key::Press("Down"), Key::Press("Enter")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/quit",
        compact: Some("/compress"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
        ],
    },
    Cli {
        name: "droid",
        title: "Factory Droid",
        npm: &DROID,
        ready: &[droid::READY],
        dialog: droid::APPROVAL_DIALOG,
        question: None,
        first_screen: Some((droid::TRUST, Key::Press("Enter"))),
        approve: ENTER,
        deny: &[Key::Press("Down"), Key::Press("Down"), Key::Press("Enter")],
        escape: ESCAPE,
        answer: ENTER,
        exit: "/quit",
        compact: Some("/compress"),
        ask: "RUNBASH: ",
        runs_unasked: false,
        cannot: &[
            (Need::Question, "the mock scripts no question tool for it"),
            (Need::Background, NO_WAKES),
            (Need::Wake, NO_WAKES),
            (Need::Subagent, NO_WAKES),
            (Need::WakeDialog, NO_WAKES),
        ],
    },
];

/// The long tool's command: about 6 s (the comment keeps Qwen from refusing a bare `sleep`).
pub const LONG_COMMAND: &str =
    "sleep 6 # intentional-sleep: the conformance benchmark measures a long tool";

/// The file that ends the background command of a [`Prompt::WakeDialog`] when it appears.
pub const WAKE_FILE: &str = "conformance-go";

impl Cli {
    /// The CLI named `name`.
    pub fn named(name: &str) -> Option<&'static Cli> {
        CLIS.iter().find(|c| c.name == name)
    }

    /// The pinned version the suites run.
    pub fn version(&self) -> Version {
        if self.name == "claude" { Pin::Primary.version() } else { self.npm.version() }
    }

    /// Whether `screen` shows the prompt ready, no dialog open.
    pub fn is_ready(&self, screen: &str) -> bool {
        self.ready.iter().any(|r| screen.contains(r))
            && !screen.contains(self.dialog)
            && !self.question.is_some_and(|q| screen.contains(q))
    }

    /// Why it cannot play a scenario needing `needs`, if it cannot.
    pub fn cannot_play(&self, needs: &[Need]) -> Option<String> {
        needs.iter().find_map(|need| {
            if *need == Need::Compact && self.compact.is_none() {
                return Some("it has no compaction command".to_owned());
            }
            self.cannot
                .iter()
                .find(|(n, _)| n == need)
                .map(|(n, why)| format!("{}: {why}", n.as_str()))
        })
    }

    /// The prompt asking for `prompt` in the project `project`: its text, what its tool calls
    /// open, and what those of a turn the CLI starts by itself later open.
    pub fn prompt(&self, prompt: Prompt, project: &Path) -> (String, Tools, Tools) {
        let file = project.join("conformance.txt");
        let run = Tools::Run;
        match prompt {
            Prompt::Plain => ("say ok".into(), run, run),
            Prompt::Slow => ("SLOW: stream a long answer".into(), run, run),
            Prompt::Dialog => {
                (self.asking(&format!("echo hi > {}", file.display())), Tools::Approval, run)
            }
            Prompt::LongTool if self.runs_unasked => (format!("RUNBASH: {LONG_COMMAND}"), run, run),
            Prompt::LongTool => (self.asking(LONG_COMMAND), Tools::Approval, run),
            Prompt::Question => {
                ("ASKUSER: Which way should the conformance run go?".into(), Tools::Question, run)
            }
            Prompt::RateLimit => ("APIERROR: rate_limit".into(), run, run),
            Prompt::Overloaded => ("APIERROR: overloaded".into(), run, run),
            Prompt::Quota => ("APIERROR: quota".into(), run, run),
            // Claude runs these background commands without asking.
            Prompt::Background => ("RUNBG: sleep 4".into(), run, run),
            Prompt::WakeDialog => {
                let go = project.join(WAKE_FILE);
                let wait = format!("until [ -e {} ]; do sleep 0.05; done", go.display());
                (format!("RUNBG: {wait} # WAKEDIALOG"), run, Tools::Approval)
            }
            Prompt::Wake => ("WAKEUP: 60".into(), run, run),
            Prompt::Subagent => ("RUNAGENT: say ok".into(), run, run),
        }
    }

    /// A prompt asking for `command` in a way that makes this CLI ask first.
    fn asking(&self, command: &str) -> String {
        match self.name {
            // Pi asks only through the permission gate it ships, for a dangerous command.
            "pi" => format!("please {}chmod 777 conformance.txt; {command}", self.ask),
            _ => format!("please {}{command}", self.ask),
        }
    }

    /// Installs (or finds in the cache) the pinned version.
    pub fn install(&'static self) -> Result<Installed, String> {
        self.npm.install(self.version()).map_err(|e| e.to_string())
    }

    /// The CLI's sandbox, its mock started and its hooks registered as a user does; and the
    /// arguments its TUI is launched with. Panics (the suites' setup does) when something
    /// fails: the caller catches it.
    pub fn host(&self, installed: &Installed, scenario: &str) -> Host {
        let tag = format!("conformance-{}", scenario);
        let (session, args, guards): (Hosted, Vec<String>, Vec<Box<dyn std::any::Any>>) = match self
            .name
        {
            "claude" => {
                // Claude's own idle timer (60 s): nothing lowered.
                let mut s = ClaudeSession::new(installed, &tag, std::time::Duration::from_secs(60));
                // One try per request: an API error ends the turn at once.
                s.sandbox.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
                let args = vec!["--permission-mode".into(), "default".into()];
                (Hosted::Claude(Box::new(s)), args, Vec::new())
            }
            "codex" => {
                let s = codex::new_session(installed, &tag);
                codex::install_hooks(&s);
                let guard = codex::DaemonGuard::new(&s);
                (
                    Hosted::Agent(Box::new(s)),
                    vec![codex::BYPASS_TRUST.into()],
                    vec![Box::new(guard)],
                )
            }
            "gemini" => {
                let s = gemini::new_session(installed, &tag);
                gemini::install_hooks(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), Vec::new())
            }
            "copilot" => {
                let s = copilot::new_session(installed, &tag);
                copilot::install_hooks(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), Vec::new())
            }
            "opencode" => {
                let s = opencode::new_session(installed, &tag, opencode::Bash::Ask);
                let guard = opencode::SentinelGuard::new(&s);
                opencode::install_plugin(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), vec![Box::new(guard)])
            }
            "kilo" => {
                let s = kilo::new_session(installed, &tag, kilo::Bash::Ask);
                let guard = kilo::SentinelGuard::new(&s);
                kilo::install_plugin(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), vec![Box::new(guard)])
            }
            "pi" => {
                let s = pi::new_session(installed, &tag);
                pi::install_extension(&s);
                let gate = pi::permission_gate(installed);
                let args = vec!["-e".into(), gate.to_string_lossy().into_owned()];
                (Hosted::Agent(Box::new(s)), args, Vec::new())
            }
            "qwen" => {
                let s = qwen::new_session(installed, &tag);
                qwen::install_hooks(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), Vec::new())
            }
            "droid" => {
                let s = droid::new_session(installed, &tag);
                droid::install_hooks(&s);
                (Hosted::Agent(Box::new(s)), Vec::new(), Vec::new())
            }
            other => panic!("no setup for {other}"),
        };
        Host { session, args, _guards: guards }
    }
}

/// A CLI's sandbox and harness, whichever the suite uses for it.
pub enum Hosted {
    /// Claude Code's harness.
    Claude(Box<ClaudeSession>),
    /// Every other CLI's.
    Agent(Box<AgentSession>),
}

/// A CLI ready to launch.
pub struct Host {
    /// Its harness.
    pub session: Hosted,
    /// The TUI's arguments.
    pub args: Vec<String>,
    /// What ends its helper processes when the run is over (dropped last).
    _guards: Vec<Box<dyn std::any::Any>>,
}

impl Host {
    /// The sandbox.
    pub fn sandbox(&self) -> &Sandbox {
        match &self.session {
            Hosted::Claude(s) => &s.sandbox,
            Hosted::Agent(s) => &s.sandbox,
        }
    }

    /// The mock API.
    pub fn api(&self) -> &MockServer {
        match &self.session {
            Hosted::Claude(s) => &s.api,
            Hosted::Agent(s) => &s.api,
        }
    }

    /// The session's tag.
    pub fn tag(&self) -> &str {
        match &self.session {
            Hosted::Claude(s) => &s.tag,
            Hosted::Agent(s) => &s.tag,
        }
    }

    /// The CLI's program.
    pub fn binary(&self) -> &Path {
        match &self.session {
            Hosted::Claude(s) => &s.binary,
            Hosted::Agent(s) => &s.binary,
        }
    }

    /// Hands the tmux server running the CLI to the harness, which stops it first when the
    /// run ends (before the sandbox goes).
    pub fn set_tmux(&mut self, tmux: Tmux) {
        match &mut self.session {
            Hosted::Claude(s) => s.tmux = Some(tmux),
            Hosted::Agent(s) => s.tmux = Some(tmux),
        }
    }

    /// The tmux server.
    pub fn tmux(&self) -> Option<&Tmux> {
        match &self.session {
            Hosted::Claude(s) => s.tmux.as_ref(),
            Hosted::Agent(s) => s.tmux.as_ref(),
        }
    }
}
