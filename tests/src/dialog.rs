//! What the TUI dialog scenarios of the npm-installed CLIs (Gemini, Copilot, OpenCode, Qwen,
//! Droid, Kilo, Pi) share: a
//! prompt asking for a shell command that writes `hi` into a file of the project, the approval
//! dialog left open, the decision, the exit, and what must hold after it.

use std::path::Path;
use std::time::Duration;

use crate::agent_session::{Action, AgentSession, Expect, Input, Step, step};
use crate::claude_style::run_checked;
use crate::deliver_check::deliver_confirmed;

/// How long a TUI may take to show its first screen.
pub const LAUNCH: Duration = Duration::from_secs(120);

/// How long a dialog is left open: nothing may fire meanwhile.
pub const DIALOG_OPEN: Duration = Duration::from_secs(3);

/// How a CLI's TUI is left: its name in failure messages and the command that ends it.
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    /// The CLI's name, as failure messages write it (`gemini`).
    pub cli: &'static str,
    /// The command typed to end the session (`/quit`).
    pub command: &'static str,
}

/// What the decision at the dialog must have done to the command's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The command ran: the file holds `hi`.
    Ran,
    /// The command never ran: the file does not exist.
    NotRun,
}

/// The launch of a CLI that fires nothing at launch: `ready` is shown, then 2 s pass quietly.
pub fn quiet_launch(ready: &'static str) -> Step {
    step("launch", Action::Wait, "none").when_shown(ready).then_quiet_for(Duration::from_secs(2))
}

/// The step typing a prompt that asks for a shell command writing `hi` into `out`, after which
/// `events` have fired, the session waits on its human for a permission and `dialog` is shown.
pub fn prompt_for_a_command(
    out: &Path,
    events: impl IntoIterator<Item = Expect>,
    dialog: &'static str,
) -> Step {
    step(
        "prompt asking for a shell command",
        Action::Type(format!("please RUNBASH: echo hi > {}", out.display())),
        "waiting_on_human(permission)",
    )
    .expect(events)
    .then_shown(dialog)
}

/// The step named `name` leaving the dialog open for [`DIALOG_OPEN`]: nothing may fire.
pub fn dialog_left_open(name: &'static str) -> Step {
    step(name, Action::Wait, "waiting_on_human(permission)").then_quiet_for(DIALOG_OPEN)
}

/// Runs one dialog scenario in `session`, whose hooks are installed: launches the TUI, runs
/// `up_to_the_dialog` for the project's `file`, then `then` (the decision and the exit), checks
/// the exit ([`finish`]) and `outcome` on the file, and saves the report.
pub fn run(
    session: &mut AgentSession,
    file: &str,
    up_to_the_dialog: impl Fn(&Path) -> Vec<Step>,
    then: &[Step],
    exit: Exit,
    outcome: Outcome,
) {
    let out = session.sandbox.project().join(file);
    session.launch_tui(&[]);
    let steps = up_to_the_dialog(&out);
    // A TUI's first screen can take far longer than a step's 20 s on two loaded cores
    // (OpenCode and Kilo Code took 20 to 25 s at a load of 10).
    if let Some(ready) = steps.first().and_then(|step| step.shown_before) {
        session.wait_for_text(ready, LAUNCH);
    }
    session.run(&steps);
    session.run(then);
    finish(session, exit);
    check_outcome(session, &out, outcome);
    session.save_report();
}

/// Checks what the decision at the dialog did to the command's file `out`.
pub fn check_outcome(session: &AgentSession, out: &Path, outcome: Outcome) {
    match outcome {
        Outcome::Ran => match std::fs::read_to_string(out) {
            Ok(text) if text == "hi\n" => {}
            other => session
                .fail(&format!("the approved command did not write {}: {other:?}", out.display())),
        },
        Outcome::NotRun => {
            if out.exists() {
                session.fail(&format!("the denied command ran: {} exists", out.display()));
            }
        }
    }
}

/// The end of an approved dialog scenario, after the approval's turn left the session idle:
/// a two-line prompt typed with `hookline::deliver` (the profile `exit.cli`'s `[pane]` and
/// `[deliver]`), which a `turn_start` whose prompt is the text must confirm; its turn runs
/// (the native events `delivered`) to an idle with one input slot and `ready` on screen;
/// `quit` ends the CLI; and the approved command has written `out`.
pub fn deliver_two_lines_then_quit(
    session: &mut AgentSession,
    exit: Exit,
    ready: &'static str,
    delivered: impl IntoIterator<Item = Expect>,
    quit: Step,
    out: &Path,
) {
    let text = "say hello\nin two lines";
    let tmux = session.tmux.as_ref().expect("the TUI runs");
    let report = deliver_confirmed(tmux, session.events.path(), exit.cli, &session.tag, text)
        .unwrap_or_else(|e| session.fail(&e));
    println!("[{} deliver] {report:?}", exit.cli);
    run_checked(
        session,
        &[
            step("the delivered prompt's turn", Action::Wait, "idle")
                .expect(delivered)
                .then_shown(ready)
                .input(Input::Once),
            quit,
        ],
    );
    finish(session, exit);
    check_outcome(session, out, Outcome::Ran);
    session.save_report();
}

/// After the exit command: the CLI ends within 20 s with status 0 (or is gone), there was one
/// session with one epoch, and the relay's diagnostics are clean.
pub fn finish(session: &AgentSession, exit: Exit) {
    match session.wait_for_exit(Duration::from_secs(20)) {
        Some(0) | None => {}
        Some(status) => session
            .fail(&format!("{} exited with status {status} after {}", exit.cli, exit.command)),
    }
    session.check_one_session_one_epoch();
    session.check_clean(&format!("after {}", exit.command));
}

/// The suite setup of an npm-installed CLI's end-to-end suite, for the npm package `$cli` of
/// [`crate::npm_install`] (`GEMINI`): `installed()`, the pinned version installed (or found in
/// the cache); the test that the installer fails loudly without a registry; and the two dialog
/// scenarios every such suite runs, `interactive::approved` and `interactive::denied`.
#[macro_export]
macro_rules! npm_cli_suite {
    ($cli:ident) => {
        /// The pinned version, installed (or found in the cache).
        fn installed() -> $crate::npm_install::Installed {
            $crate::npm_install::$cli.installed($crate::npm_install::$cli.version())
        }

        /// The installer fails loudly when npm cannot reach the registry: the suite never skips.
        #[test]
        fn an_unreachable_registry_fails_the_install_with_a_message_that_says_so() {
            $crate::npm_install::check_unreachable_registry_fails_loudly(
                &$crate::npm_install::$cli,
                $crate::npm_install::$cli.version(),
            );
        }

        #[test]
        fn interactive_approved() {
            interactive::approved(&installed());
        }

        #[test]
        fn interactive_denied_with_escape() {
            interactive::denied(&installed());
        }
    };
}
