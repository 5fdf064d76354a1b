//! `claude -p ... --output-format stream-json`: a Bash call that needs approval, with no one to
//! approve it, is denied automatically and the run ends.

use std::time::Duration;

use hookline_tests::claude_install::Installed;
use hookline_tests::session::{Action, ClaudeSession, Step, native};
use serde_json::Value;

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    let mut session = ClaudeSession::new(installed, "headless", Duration::from_secs(3));
    let out = session.sandbox.project().join("out.txt");
    let prompt = format!("headless RUNBASH: echo headless >> {}", out.display());
    let args = [
        "-p",
        prompt.as_str(),
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "default",
    ];
    let output = session.run_headless(&args, Duration::from_secs(60));

    let steps = [Step::new("claude -p", Action::Wait)
        .expect([
            native("SessionStart").q("startup").canonical("session_start"),
            native("UserPromptSubmit").canonical("turn_start"),
            native("PreToolUse").canonical("tool_start"),
            // 2.1.197 asks no one: it denies without a PermissionRequest.
            native("PermissionRequest").since("2.1.332").canonical("permission_request"),
            native("PostToolBatch"),
            native("MessageDisplay").any_order(),
            native("Stop").canonical("stop"),
            native("SessionEnd").q("other").canonical("session_end"),
        ])
        .within(Duration::from_secs(10))
        .then_quiet_for(Duration::from_secs(1))
        .state("ended")];
    session.run(&steps);

    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !output.stderr.is_empty() {
        session.fail(&format!(
            "claude -p exited with {} and stderr {:?}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| session.fail(&format!("stream-json line {line:?}: {e}")))
        })
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| match l["subtype"].as_str() {
            Some(subtype) => format!("{}/{subtype}", l["type"].as_str().unwrap_or("?")),
            None => l["type"].as_str().unwrap_or("?").to_string(),
        })
        .collect();
    if kinds.last().map(String::as_str) != Some("result/success") {
        session.fail(&format!("stream-json does not end with a successful result: {kinds:?}"));
    }
    // The stream shows what each hook printed (for SessionStart): the relay prints nothing.
    let responses: Vec<&Value> =
        lines.iter().filter(|l| l["type"] == "system" && l["subtype"] == "hook_response").collect();
    if responses.is_empty() {
        session.fail(&format!("stream-json has no hook_response: {kinds:?}"));
    }
    for response in responses {
        let silent = response["stdout"] == "" && response["stderr"] == "";
        if !silent || response["exit_code"] != 0 || response["outcome"] != "success" {
            session.fail(&format!("a relay call was not silent and successful: {response}"));
        }
    }
    // 2.1.332 reports the automatic denial in the stream; 2.1.197 only in the tool result.
    let reports_denial = kinds.iter().any(|k| k == "system/permission_denied");
    if reports_denial != (session.version >= hookline_tests::version::Version::lit("2.1.332")) {
        session.fail(&format!("unexpected presence of system/permission_denied in {kinds:?}"));
    }
    if out.exists() {
        session.fail("the command ran although no one approved it");
    }
    println!("[{}] stream-json: {kinds:?}", session.label);
    session.check_clean("after the run");
    session.save_report();
}
