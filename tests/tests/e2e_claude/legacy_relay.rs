//! The older Python relay's hook installed beside hookline's, as while a project migrates:
//! both fire for every hook, so each `Stop` reaches `hookline serve` twice, once from the
//! events directory and once from the legacy directory. Each stop gives exactly one input
//! slot: the second copy is delivered as an echo of the first and opens none.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use hookline_tests::binaries;
use hookline_tests::claude_install::Installed;
use hookline_tests::session::{Action, ClaudeSession, Input, Step, native};
use serde_json::{Value, json};

use super::interactive::{READY, exit, session_started};

/// How long the older relay takes to write a `Stop` (a slow interpreter start): long enough
/// to ask for the input slot between the two copies, as the orchestrator of issue 22 did.
const OLDER_RELAY_DELAY: Duration = Duration::from_secs(3);
/// The events the older relay's installer registers.
const OLDER_RELAY_EVENTS: [&str; 4] = ["SessionStart", "Stop", "SessionEnd", "PreCompact"];

/// `hookline serve` over the events directory and the legacy directory.
struct Serve {
    child: Child,
    replies: mpsc::Receiver<Value>,
}

impl Serve {
    fn start(session: &ClaudeSession, legacy: &Path) -> Serve {
        let mut command = session.sandbox.command(&binaries::hookline());
        command
            .arg("serve")
            .arg("--events-dir")
            .arg(session.events.path())
            .arg("--legacy-dir")
            .arg(legacy)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child =
            command.spawn().unwrap_or_else(|e| session.fail(&format!("hookline serve: {e}")));
        let stdout = child.stdout.take().expect("piped");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(value) = serde_json::from_str::<Value>(&line) else { return };
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut serve = Serve { child, replies };
        // Answered once the history is replayed: every event of the CLI is live.
        serve.ask(session, json!({"op": "hello"}));
        serve
    }

    fn ask(&mut self, session: &ClaudeSession, request: Value) -> Value {
        let sent = self
            .child
            .stdin
            .as_mut()
            .map(|stdin| writeln!(stdin, "{request}").and_then(|()| stdin.flush()));
        if !matches!(sent, Some(Ok(()))) {
            session.fail(&format!("hookline serve took no request {request}: {sent:?}"));
        }
        match self.replies.recv_timeout(Duration::from_secs(30)) {
            Ok(reply) if reply["ok"] == true => reply,
            Ok(reply) => session.fail(&format!("hookline serve refused {request}: {reply}")),
            Err(_) => session.fail(&format!("hookline serve did not answer {request}")),
        }
    }

    /// The next event of the session that is a `stop`, passing over the others.
    fn next_stop(&mut self, session: &ClaudeSession) -> Value {
        let request = json!({"op": "next_event", "session": session.tag, "timeout_ms": 20_000});
        loop {
            let reply = self.ask(session, request.clone());
            if reply["timed_out"] == true {
                session.fail("hookline serve delivered no stop within 20 s");
            }
            if reply["event"]["kind"] == "stop" {
                return reply["event"].clone();
            }
        }
    }

    fn decide_input(&mut self, session: &ClaudeSession) -> Value {
        let request = json!({"op": "decide", "session": session.tag, "question": "input"});
        self.ask(session, request)["decision"].clone()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Copies the older relay into the project and registers it in the project's settings beside
/// hookline's entries, as its installer does; sets the variables its orchestrator sets.
/// Returns the legacy directory it writes.
fn install_older_relay(session: &mut ClaudeSession) -> std::path::PathBuf {
    let project = session.sandbox.project();
    let script = project.join(".bmad-loop/bmad_loop_hook.py");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e_claude/bmad_loop_hook.py");
    std::fs::create_dir_all(script.parent().unwrap())
        .and_then(|()| std::fs::copy(&source, &script).map(drop))
        .unwrap_or_else(|e| session.fail(&format!("copy the older relay: {e}")));
    let path = session.settings_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let mut settings: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    for event in OLDER_RELAY_EVENTS {
        let command =
            format!(r#"python3 "$CLAUDE_PROJECT_DIR"/.bmad-loop/bmad_loop_hook.py {event}"#);
        let group = json!({"hooks": [{"type": "command", "command": command}]});
        let groups = &mut settings["hooks"][event];
        match groups.as_array_mut() {
            Some(groups) => groups.push(group),
            None => *groups = json!([group]),
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&settings).expect("json"))
        .unwrap_or_else(|e| session.fail(&format!("{}: {e}", path.display())));
    let run_dir = session.sandbox.root().join("run");
    let tag = session.tag.clone();
    session.sandbox.set_env("BMAD_LOOP_RUN_DIR", run_dir.clone());
    session.sandbox.set_env("BMAD_LOOP_TASK_ID", tag);
    session
        .sandbox
        .set_env("HOOKLINE_E2E_OLDER_RELAY_DELAY", OLDER_RELAY_DELAY.as_secs_f64().to_string());
    run_dir.join("events")
}

/// One turn's stop as `serve` sees it: the relay's copy first, one slot; then the older
/// relay's copy, an echo of it, and no second slot.
fn one_slot_per_stop(session: &ClaudeSession, serve: &mut Serve, turn: &str) {
    let first = serve.next_stop(session);
    if first.get("echo_of").is_some() || first["origin"]["legacy"] == true {
        session.fail(&format!("{turn}: the relay's stop should come first: {first}"));
    }
    let allowed = serve.decide_input(session);
    if allowed["verdict"] != "allow" || !allowed["slot"].is_object() {
        session.fail(&format!("{turn}: the stop gives no slot: {allowed}"));
    }
    let echo = serve.next_stop(session);
    let again = serve.decide_input(session);
    let refused = again["reason"].as_str().is_some_and(|r| r.contains("already taken"));
    if again["verdict"] != "withhold" || !again["slot"].is_null() || !refused {
        session.fail(&format!("{turn}: the older relay's stop gave a second slot: {again}"));
    }
    if echo["origin"]["legacy"] != true || echo["echo_of"] != first["origin"] {
        session.fail(&format!("{turn}: the older relay's stop is no echo of {first}: {echo}"));
    }
}

/// Runs the scenario against `installed`.
pub fn run(installed: &Installed) {
    // No idle_prompt during the scenario: only the stops give slots.
    let mut session = ClaudeSession::new(installed, "legacy-relay", Duration::from_secs(600));
    let legacy = install_older_relay(&mut session);
    let mut serve = Serve::start(&session, &legacy);
    session.launch_tui(&["--permission-mode", "default"]);
    session.run(&[Step::new("launch", Action::Wait)
        .expect([session_started()])
        .within(Duration::from_secs(30))
        .then_shown(READY)
        .state("unknown(session started)")
        .input(Input::Refused("state is unknown"))]);
    for (name, line) in [("first prompt", "say ok"), ("second prompt", "say ok again")] {
        session.run(&[Step::new(name, Action::Type(line.into()))
            .when_shown(READY)
            .expect([
                native("UserPromptSubmit").canonical("turn_start").state("active"),
                native("Stop").canonical("stop").state("idle"),
            ])
            .state("idle")
            .input(Input::Once)]);
        one_slot_per_stop(&session, &mut serve, name);
    }
    let sessions = serve.ask(&session, json!({"op": "sessions"}))["sessions"].clone();
    if sessions.as_array().map(Vec::len) != Some(1) {
        session.fail(&format!("both relays should report one session: {sessions}"));
    }
    session.run(&[exit()]);
    // Its SessionEnd may still be on its way: the two stops are what counts.
    let files: Vec<String> = std::fs::read_dir(&legacy)
        .map(|dir| dir.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    if files.iter().filter(|f| f.ends_with("-Stop.json")).count() != 2 {
        session.fail(&format!("the older relay wrote {files:?} into {}", legacy.display()));
    }
    drop(serve);
    session.finish();
}
