//! Codex as a user gets it: no bypass flag, so the hooks run only once trusted, and the TUI runs
//! its session in the background app-server daemon.
//!
//! After `hookline install codex` nothing is trusted: `hookline doctor codex` says which hooks
//! Codex will skip and how to trust them, and `codex exec` indeed runs none of them, silently.
//! Trusted in the TUI (`/hooks`, `t`), doctor reports them trusted and they fire. The session
//! lives in the daemon: `/exit` only detaches (nothing fires, the session stays idle) and it ends
//! when the daemon stops.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use hookline_tests::agent_session::{Action, AgentSession, native, step};
use hookline_tests::binaries;
use hookline_tests::codex::{self, DaemonGuard, HOOKS_NEED_REVIEW, READY};
use hookline_tests::npm_install::Installed;

use crate::interactive::{approve, up_to_the_dialog};

/// On the `/hooks` screen while hooks wait for review.
const NEED_REVIEW: &str = "need review before they can run";
/// On the `/hooks` screen once nothing waits for review.
const ALL_REVIEWED: &str = "enter details";

/// Runs `hookline doctor codex`; returns its exit code and stdout.
fn doctor(session: &AgentSession) -> (Option<i32>, String) {
    let output = session.hookline(&["doctor", "codex"]);
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = codex::new_session(installed, "trusted");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    let mut report = String::new();

    let (code, before) = doctor(&session);
    let _ = writeln!(report, "$ hookline doctor codex   # after install (exit {code:?})\n{before}");
    let skipped = "Codex will skip 12 of hookline's 12 hooks: not trusted (no trust record): \
                   SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, \
                   Stop, PreCompact, PostCompact, SubagentStart, SubagentStop, Interrupt, \
                   SessionEnd";
    if code != Some(1) || !before.contains(skipped) || !before.contains("fix: trust them in") {
        session
            .fail(&format!("doctor did not report the untrusted hooks (exit {code:?}):\n{before}"));
    }

    let output = session
        .run_headless(&["exec", "untrusted RUNBASH: echo untrusted"], Duration::from_secs(90));
    if !output.status.success() {
        session.fail(&format!("codex exec exited with {}", output.status));
    }
    session.run(&[step("codex exec, hooks untrusted", Action::Wait, "none")
        .then_quiet_for(Duration::from_secs(2))]);

    session.launch_tui(&[]);
    session.wait_for_text(READY, Duration::from_secs(20));
    open_hooks_review(&session);
    let screen = session.wait_for_text(NEED_REVIEW, Duration::from_secs(5));
    if screen.contains("clamping") {
        session.fail("/hooks lists issues with the timeouts hookline wrote");
    }
    trust_all(&session);
    session.run(&[step("close /hooks", Action::Press("Escape"), "none").then_shown(READY)]);

    let (code, after) = doctor(&session);
    let _ =
        writeln!(report, "$ hookline doctor codex   # after /hooks, t (exit {code:?})\n{after}");
    if code != Some(0) || !after.contains("Codex trusts all 12 of hookline's hooks") {
        session.fail(&format!("doctor did not report the hooks trusted (exit {code:?}):\n{after}"));
    }

    let out = session.sandbox.project().join("out.txt");
    let mut steps = up_to_the_dialog(&out);
    steps.remove(0); // the TUI is already up
    session.run(&steps);
    session.run(&[
        approve(),
        // The TUI leaves; its session lives on in the daemon, idle, and nothing fires.
        step("/exit detaches from the daemon", Action::Type("/exit".into()), "idle")
            .when_shown(READY)
            .then_quiet_for(Duration::from_secs(2))
            .then_shown("Disconnected from this task"),
    ]);
    session.wait_for_exit(Duration::from_secs(15));
    codex::stop_daemon(&session);
    session.run(&[step("codex app-server daemon stop", Action::Wait, "ended(other)")
        .expect([native("SessionEnd", "session_end").q("other").state("ended")])
        .then_quiet_for(Duration::from_secs(1))]);
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "hi\n" => {}
        other => session.fail(&format!("the approved command did not write out.txt: {other:?}")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the daemon stopped");
    println!("[{}] doctor output:\n{report}", session.label);
    let dir = binaries::profile_dir().join("..").join("hookline-e2e");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("codex-doctor-trust.txt"), &report);
    }
    session.save_report();
}

/// Opens the list of hooks awaiting review. The TUI offers it by itself ("Hooks need review",
/// "1. Review hooks") 6 to 9 s after it starts, once its daemon is up, over whatever is on the
/// screen then; so the test waits for that offer, and types `/hooks` only if it never comes.
fn open_hooks_review(session: &AgentSession) {
    let tmux = session.tmux.as_ref().expect("the TUI is up");
    let deadline = Instant::now() + Duration::from_secs(30);
    let offered = loop {
        let screen = tmux.screen().unwrap_or_default();
        if screen.contains(HOOKS_NEED_REVIEW) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The offer can be drawn a moment before it takes keys: press again while it still shows.
    for _ in 0..5 {
        let result = if offered {
            tmux.press("Enter") // "1. Review hooks"
        } else {
            session.submit_line("/hooks")
        };
        if let Err(e) = result {
            session.fail(&format!("cannot open the hooks review: {e}"));
        }
        std::thread::sleep(Duration::from_millis(700));
        let screen = tmux.screen().unwrap_or_default();
        if screen.contains(NEED_REVIEW) || !(offered && screen.contains(HOOKS_NEED_REVIEW)) {
            break;
        }
    }
    session.wait_for_text(NEED_REVIEW, Duration::from_secs(15));
}

/// Presses `t` ("trust all") on the review list until nothing waits for review. The list can be
/// drawn a moment before it takes keys, so a press that changes nothing is repeated.
fn trust_all(session: &AgentSession) {
    let tmux = session.tmux.as_ref().expect("the TUI is up");
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(500));
        if let Err(e) = tmux.press("t") {
            session.fail(&format!("cannot press t: {e}"));
        }
        let trusted = tmux.wait_for_screen(Duration::from_secs(3), |screen| {
            screen.contains(ALL_REVIEWED) && !screen.contains(NEED_REVIEW)
        });
        if trusted.is_ok() {
            return;
        }
    }
    session.fail("pressing t on the hooks review did not trust the hooks");
}
