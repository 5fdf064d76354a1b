//! The Kilo Code TUI, driven in tmux, with `bash` set to ask. As OpenCode, the TUI creates its
//! session at the first prompt (nothing fires at launch), fires nothing while the dialog is
//! open, and nothing on exit but the plugin's own `hookline.exit`. Unlike OpenCode, Escape on
//! the dialog does not reject: it opens a "Reject permission" box, and only its Enter replies
//! `reject`, which ends the turn.

use std::path::Path;
use std::time::Duration;

use hookline_tests::agent_session::{Action, AgentSession, Input, Step, native, step};
use hookline_tests::dialog::{self, Exit, Outcome, dialog_left_open, quiet_launch};
use hookline_tests::kilo::{self, APPROVAL_DIALOG, Bash, READY, REJECT_BOX, SentinelGuard};
use hookline_tests::npm_install::Installed;
use hookline_tests::plugins::check_status;

/// Kilo is left with `/exit`.
const EXIT: Exit = Exit { cli: "kilo", command: "/exit" };

/// How long a TUI step may take on two busy cores.
const STEP: Duration = Duration::from_secs(30);

/// How long the TUI may take to come up: 24 s was seen with the machine's load at 10.
const LAUNCH: Duration = Duration::from_secs(120);

/// A prompt asking for `command`: the session is created, the turn starts, the tool starts
/// and the permission dialog is drawn.
fn prompt(name: &'static str, command: String) -> Step {
    step(name, Action::Type(format!("please RUNBASH: {command}")), "waiting_on_human(permission)")
        .expect([
            native("session.created", "session_start").state("unknown"),
            native("chat.message", "turn_start").state("active"),
            native("tool.execute.before", "tool_start").state("child_command"),
            native("permission.asked", "permission_request").state("waiting_on_human(permission)"),
        ])
        .within(STEP)
        .then_shown(APPROVAL_DIALOG)
}

/// Launch, then a prompt up to the open permission dialog.
fn up_to_the_dialog(out: &Path) -> Vec<Step> {
    vec![
        quiet_launch(READY),
        prompt("prompt asking for a shell command", format!("echo hi > {}", out.display())),
        dialog_left_open("permission dialog left open"),
    ]
}

/// `/exit`: Kilo fires nothing; the plugin's sentinel sends `hookline.exit`.
fn exit() -> Step {
    step("/exit", Action::Type("/exit".into()), "ended(exit)")
        .when_shown(READY)
        .expect([native("hookline.exit", "session_end").state("ended(exit)")])
        .within(STEP)
        .then_quiet_for(Duration::from_secs(1))
}

/// Runs the scenario's steps and what follows the dialog, checking `hookline status` at the
/// dialog, after the decision and at the end.
fn run(session: &mut AgentSession, file: &str, decide: &[Step], outcome: Outcome) {
    let out = session.sandbox.project().join(file);
    session.launch_tui(&[]);
    session.wait_for_text(READY, LAUNCH);
    session.run(&up_to_the_dialog(&out));
    check_status(session, "waiting_on_human(permission)");
    session.run(decide);
    check_status(session, "idle");
    session.run(&[exit()]);
    check_status(session, "ended");
    dialog::finish(session, EXIT);
    match (outcome, std::fs::read_to_string(&out)) {
        (Outcome::Ran, Ok(text)) if text == "hi\n" => {}
        (Outcome::NotRun, Err(_)) => {}
        (_, other) => session.fail(&format!("{file} after the dialog: {other:?}")),
    }
    session.save_report();
}

/// Approve with Enter ("Allow once"): the command runs, the turn ends, the session is idle
/// with one input slot.
pub fn approved(installed: &Installed) {
    let mut session = kilo::new_session(installed, "approved", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    kilo::install_plugin(&session);
    let decide = [step("approve with Enter", Action::Press("Enter"), "idle")
        .expect([
            native("permission.replied", "notification(permission_replied)")
                .state("waiting_on_human(permission)"),
            native("tool.execute.after", "tool_end").state("active"),
            native("session.idle", "stop").state("idle"),
        ])
        .within(STEP)
        .then_shown(READY)
        .input(Input::Once)];
    run(&mut session, "out.txt", &decide, Outcome::Ran);
}

/// Escape opens the reject box (nothing fires, the session still waits); its Enter rejects:
/// the turn ends, the session is idle with one input slot.
pub fn denied(installed: &Installed) {
    let mut session = kilo::new_session(installed, "denied", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    kilo::install_plugin(&session);
    let decide = [
        step(
            "Escape opens the reject box",
            Action::Press("Escape"),
            "waiting_on_human(permission)",
        )
        .then_shown(REJECT_BOX)
        .then_quiet_for(Duration::from_secs(2)),
        step("Enter rejects", Action::Press("Enter"), "idle")
            .expect([
                native("permission.replied", "notification(permission_replied)")
                    .state("waiting_on_human(permission)"),
                native("session.idle", "stop").state("idle"),
            ])
            .within(STEP)
            .then_quiet_for(Duration::from_secs(2))
            .input(Input::Once),
    ];
    run(&mut session, "denied.txt", &decide, Outcome::NotRun);
}

/// An approved `sleep 30`: nothing fires while it runs (the session still reads
/// waiting_on_human, a hole the profile names); Esc twice aborts the turn, which ends idle.
/// Then a prompt meeting a 503: Kilo retries it (session.status retry: env_fault) until
/// Escape twice aborts it, which fires session.idle alone (no session.error).
pub fn esc_and_api_error(installed: &Installed) {
    let mut session = kilo::new_session(installed, "esc-api-error", Bash::Ask);
    let _sentinels = SentinelGuard::new(&session);
    kilo::install_plugin(&session);
    session.launch_tui(&[]);
    session.wait_for_text(READY, LAUNCH);
    session.run(&[
        quiet_launch(READY),
        prompt("prompt for a long command", "sleep 30".into()),
        step("approve with Enter", Action::Press("Enter"), "waiting_on_human(permission)")
            .expect([native("permission.replied", "notification(permission_replied)")
                .state("waiting_on_human(permission)")])
            .within(STEP)
            .then_quiet_for(Duration::from_secs(2)),
        step("first Escape", Action::Press("Escape"), "waiting_on_human(permission)")
            .then_shown("esc again to interrupt"),
        step("second Escape aborts", Action::Press("Escape"), "idle")
            .expect([
                native("session.error", "notification(turn_aborted)")
                    .state("waiting_on_human(permission)"),
                native("session.idle", "stop").state("idle"),
                native("tool.execute.after", "tool_end").state("active"),
                native("session.idle", "stop").state("idle"),
            ])
            .within(STEP)
            .then_quiet_for(Duration::from_secs(2))
            .input(Input::Once),
    ]);
    check_status(&session, "idle");
    session.run(&[step(
        "prompt meeting a 503",
        Action::Type("APIERROR: overloaded".into()),
        "env_fault",
    )
    .when_shown(READY)
    .expect([
        native("chat.message", "turn_start").state("active"),
        native("session.status", "stop_failure").state("env_fault(other)"),
    ])
    .within(STEP)]);
    check_status(&session, "env_fault");
    session.run(&[
        step("first Escape while retrying", Action::Press("Escape"), "env_fault")
            .then_shown("esc again to interrupt"),
        step("second Escape aborts the retries", Action::Press("Escape"), "idle")
            .expect([native("session.idle", "stop").state("idle")])
            .within(STEP)
            .then_quiet_for(Duration::from_secs(2))
            .input(Input::Once),
        exit(),
    ]);
    check_status(&session, "ended");
    dialog::finish(&session, EXIT);
    session.save_report();
}
