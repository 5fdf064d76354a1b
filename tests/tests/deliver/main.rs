//! `hookline::deliver` against a real tmux server (private `-L` socket, killed at the end) and
//! the fake agent TUI (`src/bin/fake_agent.rs`), whose hooks go through the real built relay.
//! Every test asserts what the fake TUI received, byte for byte.
//!
//! ```text
//! cargo build --workspace && cargo test -p hookline-tests --test deliver
//! ```

mod astray;
mod daemon;
mod docs;
mod lease;
mod live;

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use hookline::deliver::{
    Delivery, EventsConfirmations, Options, Outcome, Report, Rule, SessionRef, deliver,
};
use hookline::pane::Pane;
use hookline::profile::Profiles;
use hookline_tests::binaries;
use hookline_tests::tmux::{TARGET, Tmux};

const SESSION: &str = "fake-session-1";
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// The fake agent in its own tmux server, with its events directory and byte log.
struct Fixture {
    dir: tempfile::TempDir,
    tmux: Tmux,
}

impl Fixture {
    fn start(flags: &[&str]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        let log = dir.path().join("received.bin");
        let script = dir.path().join("agent.sh");
        let mut command = format!(
            "#!/bin/sh\nexec '{}' --log '{}' --relay '{}' --events-dir '{}' --session {SESSION}",
            env!("CARGO_BIN_EXE_fake_agent"),
            log.display(),
            binaries::relay().display(),
            events.display()
        );
        for flag in flags {
            command.push_str(&format!(" {flag}"));
        }
        command.push('\n');
        std::fs::write(&script, command).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let tmux = Tmux::start(dir.path(), &script).unwrap();
        let fixture = Fixture { dir, tmux };
        fixture.wait_for_screen(|s| s.contains("fake agent"));
        // The SessionStart hook ran before the first draw: the events directory exists.
        fixture
    }

    /// The fake agent started with `flags`, at its input prompt.
    fn at_prompt(flags: &[&str]) -> Fixture {
        let fixture = Fixture::start(flags);
        fixture.wait_for_screen(|s| s.contains("? for shortcuts"));
        fixture
    }

    fn wait_for_screen(&self, what: impl Fn(&str) -> bool) -> String {
        self.tmux
            .wait_for_screen(Duration::from_secs(10), what)
            .unwrap_or_else(|screen| panic!("the screen did not show it:\n{screen}"))
    }

    fn events(&self) -> PathBuf {
        self.dir.path().join("events")
    }

    /// Every byte the fake agent received.
    fn received(&self) -> String {
        let bytes = std::fs::read(self.dir.path().join("received.bin")).unwrap_or_default();
        String::from_utf8(bytes).unwrap()
    }

    fn pane(&self) -> Pane {
        Pane::on_socket(self.tmux.socket_path().unwrap(), TARGET)
    }

    fn delivery(&self, text: &str) -> Delivery {
        let profiles = Profiles::shipped().unwrap();
        let mut d = Delivery::new(
            self.pane(),
            profiles.get("claude").unwrap(),
            SessionRef::Id(SESSION.into()),
            text.into(),
        );
        d.options = Options {
            heal_after: Duration::from_millis(600),
            confirm_timeout: Duration::from_secs(4),
            ..Options::default()
        };
        d
    }

    fn deliver(&self, d: &Delivery) -> Report {
        let mut confirmations =
            EventsConfirmations::open(self.events(), Profiles::shipped().unwrap()).unwrap();
        deliver(d, &mut confirmations).unwrap()
    }

    /// Waits long enough for stray bytes to have arrived, then returns what was received.
    fn received_settled(&self) -> String {
        thread::sleep(Duration::from_millis(400));
        self.received()
    }
}

fn pasted(text: &str) -> String {
    // tmux pastes line feeds as carriage returns, as a terminal does.
    format!("{PASTE_START}{}{PASTE_END}", text.replace('\n', "\r"))
}

fn refused_rule(report: &Report) -> Rule {
    match &report.outcome {
        Outcome::Refused { rule, .. } => *rule,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_delivery_is_submitted_exactly_once_and_confirmed_by_its_turn_start() {
    let f = Fixture::at_prompt(&[]);
    let text = "first line\nsecond line with ❯ and \"quotes\" and $(no shell)";
    let mut d = f.delivery(text);
    // A multi-line text is typed only into the foreground of the session's host: the agent.
    d.host_pid = Some(f.tmux.pane_pid().unwrap());
    let report = f.deliver(&d);
    let Outcome::Confirmed { event } = &report.outcome else { panic!("{report:?}") };
    assert_eq!(event.native.as_deref(), Some("UserPromptSubmit"));
    assert_eq!(event.prompt.as_deref(), Some(text));
    assert!(report.delivered && !report.enter_resent, "{report:?}");
    assert_eq!(report.outcome.exit_code(), 0);
    assert_eq!(f.received_settled(), format!("{}\r", pasted(text)));
}

#[test]
fn an_eaten_enter_is_healed_with_exactly_one_more_enter() {
    let f = Fixture::at_prompt(&["--eat-first-enter"]);
    let report = f.deliver(&f.delivery("please run the tests"));
    assert!(matches!(report.outcome, Outcome::Confirmed { .. }), "{report:?}");
    assert!(report.enter_resent, "{report:?}");
    assert!(report.elapsed_ms >= 600, "the heal waits heal_after: {report:?}");
    assert_eq!(f.received_settled(), format!("{}\r\r", pasted("please run the tests")));
}

#[test]
fn a_dialog_on_screen_refuses_and_the_dialog_is_untouched() {
    let f = Fixture::start(&["--dialog"]);
    let before = f.wait_for_screen(|s| s.contains("Do you want to proceed?"));
    let report = f.deliver(&f.delivery("yes"));
    assert_eq!(refused_rule(&report), Rule::Dialog);
    assert!(!report.delivered);
    assert_eq!(report.outcome.exit_code(), 1);
    assert_eq!(f.received_settled(), "", "a refused delivery sends no byte");
    assert_eq!(f.tmux.screen().unwrap(), before, "the dialog is still there, untouched");
}

#[test]
fn refused_deliveries_send_no_byte() {
    let f = Fixture::at_prompt(&[]);
    // Text that could end the paste early or press keys.
    for text in ["x\x1b[201~\r", "8-bit \u{9b}201~", "bell\x07", ""] {
        assert_eq!(refused_rule(&f.deliver(&f.delivery(text))), Rule::Text, "{text:?}");
    }
    // A host pid that is not in the pane's process tree: a reused pane.
    let mut d = f.delivery("hello");
    d.host_pid = Some(std::process::id());
    assert_eq!(refused_rule(&f.deliver(&d)), Rule::HostNotInPane);
    assert_eq!(f.received_settled(), "");
    // A person typing: the composer holds text, the delivery is not glued onto it.
    f.tmux.type_text("half a thought").unwrap();
    f.wait_for_screen(|s| s.contains("❯ half a thought"));
    assert_eq!(refused_rule(&f.deliver(&f.delivery("hello"))), Rule::ComposerHoldsText);
    assert_eq!(f.received_settled(), "half a thought");
}

#[test]
fn the_host_pid_in_the_pane_lets_the_delivery_through() {
    let f = Fixture::at_prompt(&[]);
    let mut d = f.delivery("hello");
    // The shell script exec'd the agent: the pane's pid is the agent's.
    d.host_pid = Some(f.tmux.pane_pid().unwrap());
    let report = f.deliver(&d);
    assert!(matches!(report.outcome, Outcome::Confirmed { .. }), "{report:?}");
    assert_eq!(f.received_settled(), format!("{}\r", pasted("hello")));
}

#[test]
fn broken_hooks_leave_the_delivery_unconfirmed_with_one_enter() {
    let f = Fixture::at_prompt(&["--no-prompt-hook"]);
    let report = f.deliver(&f.delivery("nobody will hear this"));
    let Outcome::Unconfirmed { reason } = &report.outcome else { panic!("{report:?}") };
    assert!(reason.contains("no turn_start"), "{reason}");
    assert_eq!(report.outcome.exit_code(), 3);
    assert!(report.delivered && !report.enter_resent, "the composer emptied: {report:?}");
    assert_eq!(f.received_settled(), format!("{}\r", pasted("nobody will hear this")));
}

#[test]
fn a_stale_screen_does_not_earn_a_second_enter_once_the_turn_started() {
    let f = Fixture::at_prompt(&["--defer-redraw"]);
    let report = f.deliver(&f.delivery("look at the logs"));
    assert!(matches!(report.outcome, Outcome::Confirmed { .. }), "{report:?}");
    assert!(!report.enter_resent);
    // The screen still shows the text in the composer: the TUI redraws at its next key.
    assert!(f.tmux.screen().unwrap().contains("❯ look at the logs"));
    assert_eq!(f.received_settled(), format!("{}\r", pasted("look at the logs")));
}

#[test]
fn a_busy_pane_refuses_and_a_silent_child_is_not_mistaken_for_a_stuck_enter() {
    let f = Fixture::at_prompt(&["--spinner"]);
    f.tmux.type_line("start working").unwrap();
    f.wait_for_screen(|s| s.contains("esc to interrupt"));
    assert_eq!(refused_rule(&f.deliver(&f.delivery("more"))), Rule::Busy);
    assert_eq!(f.received_settled(), "start working\r");

    let g = Fixture::at_prompt(&["--long-child"]);
    let report = g.deliver(&g.delivery("run the long thing"));
    assert!(matches!(report.outcome, Outcome::Confirmed { .. }), "{report:?}");
    assert!(!report.enter_resent);
    assert_eq!(g.received_settled(), format!("{}\r", pasted("run the long thing")));
}

#[test]
fn a_pane_that_has_exited_refuses() {
    let f = Fixture::at_prompt(&[]);
    let pid = f.tmux.pane_pid().unwrap();
    // SAFETY: kill(2) on the fake agent this test started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    f.tmux.wait_for_exit(Duration::from_secs(10)).unwrap();
    assert_eq!(refused_rule(&f.deliver(&f.delivery("hello"))), Rule::PaneDead);
}

/// `hookline pane`, the built binary, on the fake agent's pane.
fn hookline_pane(f: &Fixture, args: &[&str]) -> std::process::Output {
    std::process::Command::new(binaries::hookline())
        .args(["pane", "--tmux", TARGET, "--tmux-socket"])
        .arg(f.tmux.socket_path().unwrap())
        .args(args)
        .env_remove("TMUX")
        .env("XDG_CONFIG_HOME", f.dir.path())
        .output()
        .unwrap()
}

#[test]
fn hookline_pane_reports_what_the_screen_shows() {
    let f = Fixture::at_prompt(&[]);
    let out = hookline_pane(&f, &["--cli", "claude", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["text_says_idle"], true, "{json}");
    assert_eq!(json["dialog"], false);
    assert_eq!(json["typed_not_submitted"], false);
    assert_eq!(json["composer"], "");

    f.tmux.type_text("draft").unwrap();
    f.wait_for_screen(|s| s.contains("❯ draft"));
    let out = hookline_pane(&f, &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("typed_not_submitted: true\ncomposer: \"draft\"\n"), "{text}");

    let d = Fixture::start(&["--dialog"]);
    d.wait_for_screen(|s| s.contains("Do you want to proceed?"));
    let out = hookline_pane(&d, &["--cli", "claude"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("dialog: true\n"), "{text}");
    assert!(text.contains("composer: not on screen\n"), "{text}");
    assert!(text.contains("dialog \"Do you want to proceed?\" in \"Do you want to proceed?\""));
    assert_eq!(d.received_settled(), "", "reading a pane types nothing");
}

#[test]
fn hookline_pane_on_a_missing_pane_fails_and_says_how_to_fix_it() {
    let f = Fixture::at_prompt(&[]);
    let out = std::process::Command::new(binaries::hookline())
        .args(["pane", "--tmux", "nosuch:9", "--tmux-socket"])
        .arg(f.tmux.socket_path().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("hookline: cannot capture tmux pane \"nosuch:9\": "), "{stderr}");
    assert!(stderr.contains("fix: check the target with `tmux list-panes -a`"), "{stderr}");
    let out = hookline_pane(&f, &["--cli", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no profile for \"nosuch\""));
}
