//! The Pi TUI, driven in tmux. Pi has no approval dialog of its own: the approve and deny
//! scenarios load the permission gate Pi ships (`-e permission-gate.ts`), which asks through
//! Pi's shared `ctx.ui` before `chmod 777` runs; hookline's extension reports that dialog
//! (`hookline.dialog_open`), and the session waits on its human until the tool ends. A denied
//! call ends with an error and the turn goes on. `session_start` fires at launch, and
//! `session_shutdown` at `/quit`.

use std::time::Duration;

use hookline_tests::agent_session::{Action, AgentSession, Input, Step, native, step};
use hookline_tests::dialog::{self, DIALOG_OPEN, Exit, Outcome};
use hookline_tests::npm_install::Installed;
use hookline_tests::pi::{self, APPROVAL_DIALOG, BUSY, READY, STEP};
use hookline_tests::plugins::check_status;

/// Pi is left with `/quit`.
const EXIT: Exit = Exit { cli: "pi", command: "/quit" };

/// How long the TUI may take to come up on two busy cores.
const LAUNCH: Duration = Duration::from_secs(90);

/// The file the gated command writes, in the project.
const OUT: &str = "out.txt";

/// Launch: `session_start` fires before any prompt.
fn launch() -> Step {
    step("launch", Action::Wait, "unknown")
        .when_shown(READY)
        .expect([native("session_start", "session_start").state("unknown")])
        .then_quiet_for(Duration::from_secs(1))
}

/// `/quit`: `session_shutdown` (quit) ends the session.
fn quit() -> Step {
    step("/quit", Action::Type("/quit".into()), "ended")
        .when_shown(READY)
        .expect([native("session_shutdown", "session_end").state("ended")])
        .then_quiet_for(Duration::from_secs(1))
}

/// A prompt's first events, up to the tool's start.
fn turn_to_the_tool() -> [hookline_tests::agent_session::Expect; 3] {
    [
        native("before_agent_start", "turn_start").state("active"),
        native("agent_start", "notification(agent_start)").state("active"),
        native("tool_execution_start", "tool_start").state("child_command"),
    ]
}

/// Launches Pi with the gate, prompts for a gated command and leaves the dialog open; checks
/// that `hookline status` reads the wait.
fn up_to_the_dialog(session: &mut AgentSession, installed: &Installed) {
    let gate = pi::permission_gate(installed);
    session.launch_tui(&["-e", gate.to_str().expect("UTF-8 path")]);
    session.wait_for_text(READY, LAUNCH);
    let prompt = format!("please RUNBASH: echo hi > {OUT} && chmod 777 {OUT}");
    let mut events = turn_to_the_tool().to_vec();
    events.push(
        native("hookline.dialog_open", "permission_request").state("waiting_on_human(permission)"),
    );
    session.run(&[
        launch(),
        step("prompt for a gated command", Action::Type(prompt), "waiting_on_human(permission)")
            .expect(events)
            .within(STEP)
            .then_shown(APPROVAL_DIALOG),
        step("gate dialog left open", Action::Wait, "waiting_on_human(permission)")
            .then_quiet_for(DIALOG_OPEN),
    ]);
    check_status(session, "waiting_on_human(permission)");
}

/// Checks the command's file, that the session stays idle, quits and checks the end.
fn idle_then_quit(session: &mut AgentSession, outcome: Outcome) {
    session.run(&[step("idle at the prompt", Action::Wait, "idle")
        .then_quiet_for(Duration::from_secs(3))
        .input(Input::Refused(""))]);
    check_status(session, "idle");
    session.run(&[quit()]);
    check_status(session, "ended");
    dialog::finish(session, EXIT);
    let out = session.sandbox.project().join(OUT);
    match (outcome, std::fs::read_to_string(&out)) {
        (Outcome::Ran, Ok(text)) if text == "hi\n" => {}
        (Outcome::NotRun, Err(_)) => {}
        (_, other) => session.fail(&format!("{OUT} after the dialog: {other:?}")),
    }
    session.save_report();
}

/// Approve with Enter ("Yes"): the command runs, the turn ends, the session is idle with one
/// input slot.
pub fn approved(installed: &Installed) {
    let mut session = pi::new_session(installed, "approved");
    pi::install_extension(&session);
    up_to_the_dialog(&mut session, installed);
    session.run(&[step("approve with Enter", Action::Press("Enter"), "idle")
        .expect([
            native("hookline.dialog_close", "notification(dialog_closed)")
                .state("waiting_on_human(permission)"),
            native("tool_execution_end", "tool_end").state("active"),
            native("agent_end", "stop").state("idle"),
        ])
        .within(STEP)
        .input(Input::Once)]);
    idle_then_quit(&mut session, Outcome::Ran);
}

/// Deny with Escape: the gate blocks the call, which ends with an error; the model answers and
/// the turn ends; the session is idle with one input slot.
pub fn denied(installed: &Installed) {
    let mut session = pi::new_session(installed, "denied");
    pi::install_extension(&session);
    up_to_the_dialog(&mut session, installed);
    session.run(&[step("deny with Escape", Action::Press("Escape"), "idle")
        .expect([
            native("hookline.dialog_close", "notification(dialog_closed)")
                .state("waiting_on_human(permission)"),
            native("tool_execution_end", "tool_end(failed)").state("active"),
            native("agent_end", "stop").state("idle"),
        ])
        .within(STEP)
        .input(Input::Once)]);
    idle_then_quit(&mut session, Outcome::NotRun);
}

/// Esc while a command runs ends the turn as aborted: the human took over, never idle. Then an
/// API error (503): the turn fails (env_fault, overloaded), Pi retries once on its own (the
/// retry's agent_start makes it active again) and fails again.
pub fn esc_and_api_error(installed: &Installed) {
    let mut session = pi::new_session(installed, "esc-api-error");
    pi::install_extension(&session);
    session.launch_tui(&[]);
    session.wait_for_text(READY, LAUNCH);
    session.run(&[
        launch(),
        step(
            "prompt for a long command",
            Action::Type("please RUNBASH: sleep 30".into()),
            "child_command",
        )
        .expect(turn_to_the_tool())
        .within(STEP)
        .then_shown(BUSY),
        step("the command runs", Action::Wait, "child_command")
            .then_quiet_for(Duration::from_secs(2)),
    ]);
    check_status(&session, "child_command");
    session.run(&[step(
        "Escape during the command",
        Action::Press("Escape"),
        "waiting_on_human(interrupted)",
    )
    .expect([
        native("tool_execution_end", "tool_end(failed)").state("active"),
        native("agent_end", "waiting_for_input(interrupted)")
            .state("waiting_on_human(interrupted)"),
    ])
    .within(STEP)
    .then_quiet_for(Duration::from_secs(2))]);
    check_status(&session, "waiting_on_human(interrupted)");
    session.run(&[step(
        "prompt meeting a 503",
        Action::Type("APIERROR: overloaded".into()),
        "env_fault(overloaded)",
    )
    .when_shown(READY)
    .expect([
        native("before_agent_start", "turn_start").state("active"),
        native("agent_start", "notification(agent_start)").state("active"),
        native("agent_end", "stop_failure").state("env_fault(overloaded)"),
        native("agent_start", "turn_start").state("active"),
        native("agent_end", "stop_failure").state("env_fault(overloaded)"),
    ])
    .within(STEP)
    .then_quiet_for(Duration::from_secs(2))]);
    check_status(&session, "env_fault(overloaded)");
    session.run(&[quit()]);
    check_status(&session, "ended");
    dialog::finish(&session, EXIT);
    session.save_report();
}
