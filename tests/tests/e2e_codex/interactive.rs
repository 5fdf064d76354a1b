//! The Codex TUI, driven in tmux: a prompt asking for a command outside the sandbox, the
//! approval dialog, approved (Enter) or denied (Escape), then `/exit`.
//!
//! Codex fires `SessionStart` only when the first prompt is submitted, so a TUI waiting at its
//! first prompt has no session at all. These runs pass `--dangerously-bypass-hook-trust`, so the
//! session runs in the TUI's own process and `/exit` ends it; `trusted.rs` runs the TUI a user
//! gets once the hooks are trusted, whose session lives in the background daemon.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, Expect, Input, Step, native, step};
use hookline_tests::codex::{self, APPROVAL_DIALOG, BYPASS_TRUST, DaemonGuard, READY};
use hookline_tests::deliver_check::{Daemon, deliver_command_confirmed, deliver_confirmed};
use hookline_tests::npm_install::Installed;

/// How long a dialog is left open: nothing may fire meanwhile.
const DIALOG_OPEN: Duration = Duration::from_secs(3);

/// The steps up to the open approval dialog: nothing at launch, then the lazy session start.
pub fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    let prompt_for_bash: [Expect; 4] = [
        native("SessionStart", "session_start").q("startup").state("unknown"),
        native("UserPromptSubmit", "turn_start").state("active"),
        native("PreToolUse", "tool_start").state("child_command"),
        native("PermissionRequest", "permission_request").state("waiting_on_human(permission)"),
    ];
    vec![
        step("launch", Action::Wait, "none")
            .when_shown(READY)
            .then_quiet_for(Duration::from_secs(2)),
        step(
            "prompt asking for a command outside the sandbox",
            Action::Type(format!("please RUNBASH_ESC: echo hi > {}", out.display())),
            "waiting_on_human(permission)",
        )
        .expect(prompt_for_bash)
        .then_shown(APPROVAL_DIALOG),
        step("approval dialog left open", Action::Wait, "waiting_on_human(permission)")
            .then_quiet_for(DIALOG_OPEN),
    ]
}

/// Approve with Enter: the turn ends, the session is idle with one input slot; `/exit` ends it.
pub fn approved(installed: &Installed) {
    let mut session = codex::new_session(installed, "approved");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[BYPASS_TRUST]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[approve(), exit()]);
    match session.wait_for_exit(Duration::from_secs(15)) {
        Some(0) | None => {}
        Some(status) => session.fail(&format!("codex exited with status {status} after /exit")),
    }
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "hi\n" => {}
        other => session.fail(&format!("the approved command did not write out.txt: {other:?}")),
    }
    session.check_one_session_one_epoch();
    session.check_clean("after exit");
    session.save_report();
}

/// Enter on the approval dialog: the command runs, the turn ends at the input prompt.
pub fn approve() -> Step {
    step("approve with Enter", Action::Press("Enter"), "idle")
        .expect([
            native("PostToolUse", "tool_end").state("active"),
            native("Stop", "stop").state("idle"),
        ])
        .then_shown(READY)
        .input(Input::Once)
}

/// `/exit` in a TUI run with the bypass flag: the session ends (`SessionEnd`, `other`).
fn exit() -> Step {
    step("/exit", Action::Type("/exit".into()), "ended(other)")
        .when_shown(READY)
        .expect([native("SessionEnd", "session_end").q("other").state("ended")])
        .then_quiet_for(Duration::from_secs(1))
}

/// Deny with Escape: Codex fires `Interrupt` and nothing else; the session waits for its human
/// until `/exit` ends it.
pub fn denied(installed: &Installed) {
    let mut session = codex::new_session(installed, "denied");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    let out = session.sandbox.project().join("denied.txt");
    session.launch_tui(&[BYPASS_TRUST]);
    session.run(&up_to_the_dialog(&out));
    session.run(&[
        step("deny with Escape", Action::Press("Escape"), "waiting_on_human(other)")
            .expect([
                native("Interrupt", "waiting_for_input(other)").state("waiting_on_human(other)")
            ])
            .then_quiet_for(Duration::from_secs(3))
            .then_shown(READY),
        exit(),
    ]);
    match session.wait_for_exit(Duration::from_secs(15)) {
        Some(0) | None => {}
        Some(status) => session.fail(&format!("codex exited with status {status} after /exit")),
    }
    if out.exists() {
        session.fail("the denied command ran: denied.txt exists");
    }
    session.check_one_session_one_epoch();
    session.check_clean("after exit");
    session.save_report();
}

/// With the relay wired as Codex's legacy `notify` too: the title generator's side thread fires
/// one (another thread-id) while the dialog is open, which must neither read as a stop nor take
/// the pane's tag; the real turn's own notify follows its `Stop` and gives no second input slot.
pub fn approved_with_notify(installed: &Installed) {
    let mut session = codex::new_session(installed, "notify");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    codex::wire_notify(&session);
    let out = session.sandbox.project().join("out.txt");
    session.launch_tui(&[BYPASS_TRUST]);
    let title = native("agent-turn-complete", "notification(thread_title)").any_order();
    let mut steps = up_to_the_dialog(&out);
    steps[1].native.push(title);
    session.run(&steps);
    let mut approve = approve();
    approve.native.push(native("agent-turn-complete", "stop").any_order());
    session.run(&[approve, exit()]);
    session.wait_for_exit(Duration::from_secs(15));
    // Two sessions: the pane's, ended in its first epoch, and the title generator's thread,
    // known from its notification only and never anything but unknown.
    let views = session.tracker().views(hookline::format::clock::now_ns());
    let ours = session.view().unwrap_or_else(|| session.fail("no session for the tag"));
    let others: Vec<String> = views
        .iter()
        .filter(|v| v.session_id != ours.session_id)
        .map(|v| format!("{:?} {}", v.session_id, v.state.as_str()))
        .collect();
    if views.len() != 2 || ours.epoch != 1 || others.iter().any(|o| !o.ends_with(" unknown")) {
        session.fail(&format!(
            "expected the pane's session (epoch 1) and the title thread (unknown): {others:?}"
        ));
    }
    session.check_clean("after exit");
    session.save_report();
}

/// A two-line prompt delivered with `hookline::deliver` (one bracketed paste, Enter after the
/// profile's delay: Codex takes an Enter right after a paste for a newline), confirmed by its
/// `UserPromptSubmit`, whose prompt is the delivered text; then a second through the `hookline
/// deliver` command via a real `hookline daemon`, confirmed the same way.
pub fn delivered(installed: &Installed) {
    let mut session = codex::new_session(installed, "deliver");
    let _daemon = DaemonGuard::new(&session);
    codex::install_hooks(&session);
    session.launch_tui(&[BYPASS_TRUST]);
    session.wait_for_text(READY, Duration::from_secs(30));
    let text = "say hello\nin two lines";
    let tmux = session.tmux.as_ref().unwrap();
    // The live authority, started before the first turn ends: that turn end is live.
    let daemon = Daemon::start(session.events.path()).unwrap_or_else(|e| session.fail(&e));
    let report = deliver_confirmed(tmux, session.events.path(), "codex", &session.tag, text)
        .unwrap_or_else(|e| session.fail(&e));
    println!("[codex deliver] {report:?}");
    // The second prompt through the `hookline deliver` command, once the daemon allows it.
    let second = "now say goodbye";
    let json =
        deliver_command_confirmed(&daemon, tmux, session.events.path(), &session.tag, second)
            .unwrap_or_else(|e| session.fail(&e));
    println!("[codex hookline deliver] {json}");
}
