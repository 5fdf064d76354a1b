//! The end of a turn, as `stall` sees it (`claude -p`, so every turn runs to its end unattended):
//! a turn that starts a `run_in_background` Bash command stops with it running, and `stall` is
//! withheld naming it; the command's end starts a turn (a `<task-notification>` prompt) whose
//! stop has nothing pending, and the gate is gone. A turn that builds a task list and stops with
//! an item open: `stall` allows, quoting that item.

use std::time::Duration;

use hookline::decide::{Ask, Decider, Decision, Policy, Question, RuleId};
use hookline::ingest::reader::{ReaderConfig, Start, read_all};
use hookline::profile::Profiles;
use hookline::state::Tracker;
use hookline_tests::claude_install::Installed;
use hookline_tests::session::{Action, ClaudeSession, Step, native};

/// `stall` asked right after each `stop` of the run, as an orchestrator's turn-end loop asks it:
/// a decider fed the run's canonical events one by one (the profile overlay of the sandbox
/// included, as the tracker has it).
fn stall_at_each_stop(session: &ClaudeSession) -> Vec<Decision> {
    let mut profiles = Profiles::shipped().expect("the shipped profiles");
    profiles.overlay_file(&session.sandbox.claude_profile_overlay()).expect("the overlay");
    let config = ReaderConfig::new(session.events.path(), Start::Beginning, profiles.clone());
    let events =
        read_all(config).unwrap_or_else(|e| session.fail(&format!("reading the events: {e}")));
    let mut decider = Decider::new(Tracker::new(profiles, 0), Policy::default());
    let mut decisions = Vec::new();
    for event in &events {
        decider.apply(event);
        if event.kind.name() == "stop" {
            decisions.push(decider.decide(&Ask::new(&session.tag, Question::Stall), event.ts_ns));
        }
    }
    decisions
}

/// `claude -p <prompt>` with `allowed_tools`, streaming JSON, in the default permission mode:
/// it must exit successfully within 90 s.
fn run_print(session: &mut ClaudeSession, prompt: &str, allowed_tools: &str) {
    let args = [
        "-p",
        prompt,
        "--allowedTools",
        allowed_tools,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "default",
    ];
    let output = session.run_headless(&args, Duration::from_secs(90));
    if !output.status.success() {
        session.fail(&format!(
            "claude -p exited with {} and stderr {:?}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

/// A background command: withheld while it runs, named; the gate is gone once it ended.
pub fn background_task(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "stall-background", Duration::from_secs(3));
    // -p waits for the background command, runs the turn its end starts, then ends.
    run_print(&mut session, "RUNBG: sleep 6", "Bash");
    let steps = [Step::new("claude -p with a background command", Action::Wait)
        .expect([
            native("SessionStart").q("startup").canonical("session_start(startup)"),
            native("UserPromptSubmit").canonical("turn_start").state("active"),
            native("PreToolUse").canonical("tool_start(Bash)").state("child_command(Bash)"),
            native("PostToolUse").canonical("tool_end(Bash, ok)").state("active"),
            native("Stop").canonical("stop(tasks=1, wakes=0)").state("idle"),
            native("UserPromptSubmit").canonical("turn_start").state("active"),
            native("Stop").canonical("stop").state("idle"),
            native("SessionEnd").q("other").canonical("session_end(other)").state("ended(other)"),
        ])
        .within(Duration::from_secs(10))
        .state("ended(other)")];
    session.run(&steps);

    let decisions = stall_at_each_stop(&session);
    let [running, after] = decisions.as_slice() else {
        session.fail(&format!("{} stops, not 2", decisions.len()))
    };
    let named = "\"Run the requested command\": `sleep 6` is running";
    let gate = running.evidence.pending_wakes.first();
    if running.rule != RuleId::StallWithheldPendingWake
        || !running.reason.contains(named)
        || !gate.is_some_and(|w| w.gates && w.id.is_some())
    {
        session.fail(&format!("stall at the first stop: {}: {}", running.rule, running.reason));
    }
    if after.rule != RuleId::StallNoStructuralSignal || !after.evidence.pending_wakes.is_empty() {
        session.fail(&format!("stall once the command ended: {}: {}", after.rule, after.reason));
    }
    println!("[{}] stall: {} / {}", session.label, running.reason, after.rule);
    session.finish();
}

/// A task list left with an item open: allowed, the item quoted.
pub fn open_task(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "stall-tasks", Duration::from_secs(3));
    // The task tools are off by default on 2.1.332's default model.
    session.sandbox.set_env("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1");
    run_print(&mut session, "SCRIPT:todo", "ToolSearch TaskCreate TaskUpdate");
    let create = [
        native("PreToolUse").canonical("tool_start(TaskCreate)").state("child_command(TaskCreate)"),
        native("TaskCreated").canonical("todo").unchanged(),
        native("PostToolUse").canonical("tool_end(TaskCreate, ok)").state("active"),
    ];
    let mut expected = vec![
        native("SessionStart").q("startup").canonical("session_start(startup)"),
        native("UserPromptSubmit").canonical("turn_start").state("active"),
        native("PreToolUse").canonical("tool_start(ToolSearch)"),
        native("PostToolUse").canonical("tool_end(ToolSearch, ok)").state("active"),
    ];
    expected.extend(create);
    expected.extend(create);
    expected.extend([
        native("PreToolUse").canonical("tool_start(TaskUpdate)").state("child_command(TaskUpdate)"),
        native("TaskCompleted").canonical("todo").unchanged(),
        native("PostToolUse").canonical("tool_end(TaskUpdate, ok)").state("active"),
        native("Stop").canonical("stop").state("idle"),
        native("SessionEnd").q("other").canonical("session_end(other)").state("ended(other)"),
    ]);
    let steps = [Step::new("claude -p building a task list", Action::Wait)
        .expect(expected)
        .within(Duration::from_secs(10))
        .state("ended(other)")];
    session.run(&steps);

    let decisions = stall_at_each_stop(&session);
    let [stop] = decisions.as_slice() else {
        session.fail(&format!("{} stops, not 1", decisions.len()))
    };
    let text = stop.nudge_text.as_deref().unwrap_or("");
    if stop.rule != RuleId::StallOpenTodoItem
        || !text.contains("\"Second task\" is still pending")
        || !text.contains("one of two tasks done")
        || stop.slot.is_some()
    {
        session.fail(&format!("stall at the stop: {}: {} / {text:?}", stop.rule, stop.reason));
    }
    let open = stop.evidence.view.as_ref().map(|v| v.open_todos.clone()).unwrap_or_default();
    if open.len() != 1 || open[0].subject.as_deref() != Some("Second task") {
        session.fail(&format!("open items in the view: {open:?}"));
    }
    println!("[{}] stall: {}", session.label, text);
    session.finish();
}
