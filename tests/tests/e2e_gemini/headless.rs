//! `gemini -p … --approval-mode yolo -o stream-json`: the shell tool is offered only in yolo
//! mode (in the default mode `-p` does not offer it to the model at all), runs without asking,
//! and `SessionEnd` fires once.

use std::time::Duration;

use hookline_tests::agent_session::{Action, native, step};
use hookline_tests::gemini;
use hookline_tests::npm_install::Installed;
use serde_json::Value;

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = gemini::new_session(installed, "headless");
    gemini::install_hooks(&session);
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("headless RUNBASH: echo headless > {}", out.display());
    let args = ["-p", prompt.as_str(), "-o", "stream-json", "--approval-mode", "yolo"];
    let output = session.run_headless_ok("gemini -p", &args, Duration::from_secs(90));
    let pre_compress = native("PreCompress", "notification(pre_compress)").q("auto");
    session.run(&[step("gemini -p", Action::Wait, "ended(exit)")
        .expect([
            native("SessionStart", "session_start").q("startup").state("unknown"),
            native("BeforeAgent", "turn_start").state("active"),
            pre_compress.state("active"),
            native("BeforeTool", "tool_start").state("child_command"),
            native("AfterTool", "tool_end").state("active"),
            pre_compress.state("active"),
            native("AfterAgent", "stop").state("idle"),
            native("SessionEnd", "session_end").q("exit").state("ended(exit)"),
        ])
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(1))]);
    match std::fs::read_to_string(&out) {
        Ok(text) if text == "headless\n" => {}
        other => session.fail(&format!("the command did not write out.txt: {other:?}")),
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let types: Vec<String> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|event| event["type"].as_str().unwrap_or("?").to_owned())
        .collect();
    if types.last().map(String::as_str) != Some("result") {
        session.fail(&format!("stream-json does not end with a result: {types:?}\n{stdout}"));
    }
    session.check_one_session_one_epoch();
    session.check_clean("after the run");
    session.save_report();
}
