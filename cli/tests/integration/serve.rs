//! `hookline serve` driven over its JSON-lines protocol by a Python script, as an orchestrator
//! in another language would drive it, with events written by the real relay.

use std::path::Path;
use std::process::Command;

#[test]
fn the_serve_protocol_holds_when_driven_from_python() {
    let python = Command::new("python3").arg("--version").output();
    assert!(
        python.as_ref().is_ok_and(|o| o.status.success()),
        "python3 is required to test the serve protocol (Python 3, standard library only): \
         install it ({python:?})"
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(manifest.join("tests/serve_protocol.py"))
        .arg("--hookline")
        .arg(env!("CARGO_BIN_EXE_hookline"))
        .arg("--relay")
        .arg(super::watch::relay())
        .arg("--fixtures")
        .arg(manifest.join("../watcher/tests/fixtures"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "serve_protocol.py failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("checks passed"), "{stdout}");
}

/// A `hookline serve` child with a line reader on its stdout.
struct Serve {
    child: std::process::Child,
    replies: std::sync::mpsc::Receiver<serde_json::Value>,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        Serve::start_with(dir, &[])
    }

    fn start_with(dir: &Path, args: &[&std::ffi::OsStr]) -> Serve {
        let mut child = Command::new(super::watch::hookline())
            .args(["serve", "--events-dir"])
            .arg(dir)
            .args(args)
            .env("XDG_CONFIG_HOME", dir.join("no-config"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let replies = super::watch::lines(child.stdout.take().unwrap());
        Serve { child, replies }
    }

    fn send(&mut self, request: serde_json::Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    }

    fn reply(&self) -> serde_json::Value {
        self.replies.recv_timeout(std::time::Duration::from_secs(30)).expect("a reply")
    }
}

#[test]
fn a_waiting_next_event_holds_up_no_other_request() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut serve = Serve::start(&dir);
    serve.send(json!({"id": 1, "op": "next_event", "session": "s1", "timeout_ms": 60000}));
    serve.send(json!({"id": 2, "op": "sessions"}));
    serve.send(json!({"id": 3, "op": "state", "session": "s1"}));
    let (two, three) = (serve.reply(), serve.reply());
    assert_eq!((&two["id"], &two["ok"]), (&json!(2), &json!(true)), "{two}");
    assert_eq!((&three["id"], &three["view"]), (&json!(3), &json!(null)), "{three}");

    // The event the first request waits for, written by the real relay.
    let prompt = br#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#;
    super::watch::run_relay(&dir, &["--cli", "claude"], prompt);
    let one = serve.reply();
    assert_eq!(
        (&one["id"], &one["ok"], &one["timed_out"]),
        (&json!(1), &json!(true), &json!(false))
    );
    assert_eq!(one["event"]["kind"], "turn_start", "{one}");

    // 64 waits at once at most; the next one is refused at once, naming the limit.
    for id in 0..64 {
        serve.send(json!({"id": id, "op": "next_event", "session": "s2", "timeout_ms": 5000}));
    }
    serve.send(json!({"id": "one too many", "op": "next_event", "session": "s2", "timeout_ms": 1}));
    let refused = serve.reply();
    assert_eq!((&refused["id"], &refused["ok"]), (&json!("one too many"), &json!(false)));
    assert!(refused["error"].as_str().unwrap().contains("64 next_event requests"), "{refused}");

    // EOF: the waits still running are answered (timed out) before serve exits.
    drop(serve.child.stdin.take());
    let mut ids: Vec<i64> = (0..64)
        .map(|_| {
            let reply = serve.reply();
            assert_eq!(reply["timed_out"], json!(true), "{reply}");
            reply["id"].as_i64().unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..64).collect::<Vec<_>>());
    assert!(serve.child.wait().unwrap().success());
}

#[test]
fn the_turn_end_loop_asks_stall_then_nudge_and_types_once() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let policy = tmp.path().join("policy.toml");
    std::fs::write(&policy, "[nudge]\nmin-idle = \"0s\"\n").unwrap();
    let mut serve = Serve::start_with(&dir, &["--policy".as_ref(), policy.as_os_str()]);
    serve.send(json!({"op": "hello"}));
    assert_eq!(serve.reply()["ok"], true);
    const C: &str = "claude-code/2.1.332/";
    for fixture in ["UserPromptSubmit.json", "TaskCreated.json", "Stop-after-tasks.json"] {
        super::decide::fire_as(&dir, &format!("{C}{fixture}"), "s1", "task-1", &[]);
    }
    // Wait for the stop, as an orchestrator does.
    loop {
        serve.send(json!({"op": "next_event", "session": "task-1", "timeout_ms": 10000}));
        let reply = serve.reply();
        assert_eq!(reply["timed_out"], false, "{reply}");
        if reply["event"]["kind"] == "stop" {
            break;
        }
    }
    serve.send(json!({"op": "decide", "session": "task-1", "question": "stall"}));
    let stall = serve.reply()["decision"].clone();
    assert_eq!(
        (&stall["verdict"], &stall["rule"]),
        (&json!("allow"), &json!("stall-open-todo-item"))
    );
    assert!(stall["nudge_text"].as_str().unwrap().contains("First task"), "{stall}");
    assert!(stall.get("slot").is_none(), "{stall}");
    // stall took nothing: the nudge gets the slot, once.
    serve.send(json!({"op": "decide", "session": "task-1", "question": "nudge"}));
    let nudge = serve.reply()["decision"].clone();
    assert_eq!(
        (&nudge["verdict"], &nudge["rule"]),
        (&json!("allow"), &json!("nudge-at-explicit-idle"))
    );
    assert!(nudge["slot"].is_object(), "{nudge}");
    serve.send(json!({"op": "decide", "session": "task-1", "question": "nudge"}));
    assert_eq!(serve.reply()["decision"]["rule"], "input-slot-refused");
}

/// Writes an event into `dir` as the relay does (the real store: counter, seq, atomic
/// publish), but stamped `ts_ns`: what a relay writes after the clock was stepped.
fn write_stamped(dir: &Path, ts_ns: u64, fixture: &str) {
    use hookline::format::envelope::EnvelopeOut;
    use hookline::format::store::{EventsDir, WriteOptions};
    let mut payload: serde_json::Value =
        serde_json::from_str(&super::watch::fixture(&format!("claude-code/2.1.332/{fixture}")))
            .unwrap();
    payload["session_id"] = "s1".into();
    let payload = serde_json::value::RawValue::from_string(payload.to_string()).unwrap();
    let native = fixture.trim_end_matches(".json");
    let events = EventsDir::create(dir).unwrap();
    let options = WriteOptions::default();
    events
        .write_event(std::process::id(), ts_ns, &options, |seq, unordered| {
            let envelope = EnvelopeOut {
                event: Some(native),
                bytes: payload.get().len() as u64,
                payload: Some(&payload),
                ..EnvelopeOut::this_process(seq, unordered, ts_ns, "claude")
            };
            serde_json::to_vec(&envelope).unwrap()
        })
        .unwrap();
}

#[test]
fn a_stepped_clock_neither_makes_history_live_nor_live_events_history() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    const HOUR: u64 = 3_600_000_000_000;
    // History written while the clock was an hour ahead: stamped after the generation will
    // start, it is history all the same, and never authorizes.
    let now = hookline::format::clock::now_ns();
    write_stamped(&dir, now + HOUR, "UserPromptSubmit.json");
    write_stamped(&dir, now + HOUR + 1, "Stop.json");
    let mut serve = Serve::start(&dir);
    serve.send(json!({"id": 0, "op": "hello"}));
    let started = serve.reply()["started_ns"].as_u64().unwrap();
    serve.send(json!({"id": 1, "op": "decide", "session": "s1", "question": "input"}));
    let replayed = serve.reply();
    assert_eq!(replayed["decision"]["verdict"], "withhold", "{replayed}");
    assert_eq!(replayed["decision"]["evidence"]["view"]["replayed"], true, "{replayed}");

    // The clock was stepped back an hour: new events arrive stamped before the generation.
    write_stamped(&dir, started - HOUR, "UserPromptSubmit.json");
    write_stamped(&dir, started - HOUR + 1_000_000, "Stop.json");
    for kind in ["turn_start", "stop"] {
        serve.send(json!({"op": "next_event", "session": "s1", "timeout_ms": 10000}));
        assert_eq!(serve.reply()["event"]["kind"], kind);
    }
    serve.send(json!({"id": 2, "op": "decide", "session": "s1", "question": "input"}));
    let live = serve.reply();
    let decision = &live["decision"];
    assert_eq!(decision["verdict"], "allow", "{live}");
    assert_eq!(decision["rule"], "input-at-explicit-idle", "{live}");
    assert_eq!(decision["evidence"]["view"]["authoritative"], true, "{live}");
    assert_eq!(decision["slot"]["seq"], 4, "{live}");
    drop(serve.child.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}

#[test]
fn serve_follows_a_live_sessions_transcript_and_an_esc_marker_holds_its_answers() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let transcript = tmp.path().join("s1.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let mut serve = Serve::start(&dir);
    let prompt = json!({
        "session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hi",
        "transcript_path": transcript,
    });
    super::watch::run_relay(&dir, &["--cli", "claude"], prompt.to_string().as_bytes());
    let active = |serve: &mut Serve| {
        serve.send(json!({"id": 1, "op": "state", "session": "s1"}));
        serve.reply()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while active(&mut serve)["view"]["state"] != "active" {
        assert!(std::time::Instant::now() < deadline, "the prompt never arrived");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Esc: Claude writes its marker, and no hook fires.
    let marker = json!({
        "type": "user", "sessionId": "s1",
        "timestamp": hookline::units::rfc3339(hookline::format::clock::now_ns() + 1_000_000),
        "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
    });
    std::fs::write(&transcript, format!("{marker}\n")).unwrap();
    let view = active(&mut serve)["view"].clone();
    assert_eq!(
        (&view["state"], &view["detail"]),
        (&json!("waiting_on_human"), &json!("interrupted")),
        "{view}"
    );
    assert_eq!(view["evidence"]["kind"], "transcript", "{view}");
    serve.send(json!({"id": 2, "op": "decide", "session": "s1", "question": "nudge"}));
    let decision = serve.reply();
    assert_eq!(decision["decision"]["verdict"], "withhold", "{decision}");
    drop(serve.child.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}

/// A line of a Claude transcript saying that its human pressed Esc (no hook fires for it).
pub fn esc_marker(session: &str) -> String {
    serde_json::json!({
        "type": "user", "sessionId": session,
        "timestamp": hookline::units::rfc3339(hookline::format::clock::now_ns() + 1_000_000),
        "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
    })
    .to_string()
}

#[test]
fn a_waiting_next_event_is_told_of_a_transition_only_the_transcript_made() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let transcript = tmp.path().join("s1.jsonl");
    std::fs::write(&transcript, "").unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let mut serve = Serve::start(&dir);
    serve.send(json!({"id": 0, "op": "sessions"}));
    assert_eq!(serve.reply()["sessions"], json!([]));
    let prompt = json!({
        "session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hi",
        "transcript_path": transcript,
    });
    super::watch::run_relay(&dir, &["--cli", "claude"], prompt.to_string().as_bytes());
    serve.send(json!({"id": 1, "op": "next_event", "session": "s1", "timeout_ms": 10000}));
    let first = serve.reply();
    assert_eq!(first["event"]["kind"], "turn_start", "{first}");
    // Waiting, and nothing else asked: only the transcript changes the session.
    serve.send(json!({"id": 2, "op": "next_event", "session": "s1", "timeout_ms": 20000}));
    std::fs::write(&transcript, format!("{}\n", esc_marker("s1"))).unwrap();
    let told = serve.reply();
    assert_eq!((&told["id"], &told["timed_out"]), (&json!(2), &json!(false)), "{told}");
    assert_eq!((&told["event"], &told["transcript"]), (&json!(null), &json!(true)), "{told}");
    let view = &told["view"];
    assert_eq!(
        (&view["state"], &view["detail"], &view["evidence"]["kind"]),
        (&json!("waiting_on_human"), &json!("interrupted"), &json!("transcript")),
        "{told}"
    );
    drop(serve.child.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}

#[test]
fn serve_follows_transcripts_of_sessions_without_hooks_that_never_authorize() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let projects = tmp.path().join("projects");
    std::fs::create_dir_all(projects.join("-work-proj")).unwrap();
    let transcript = projects.join("-work-proj/abc.jsonl");
    let entry = |ts_ns: u64, content: serde_json::Value| {
        json!({
            "type": "user", "sessionId": "abc", "timestamp": hookline::units::rfc3339(ts_ns),
            "message": {"role": "user", "content": content},
        })
        .to_string()
            + "\n"
    };
    let now = hookline::format::clock::now_ns();
    std::fs::write(&transcript, entry(now - 5_000_000_000, json!("an old prompt"))).unwrap();
    let args = [
        std::ffi::OsStr::new("--transcripts"),
        projects.as_os_str(),
        std::ffi::OsStr::new("--transcripts-cli"),
        std::ffi::OsStr::new("claude"),
    ];
    let mut serve = Serve::start_with(&dir, &args);
    let state = |serve: &mut Serve| {
        serve.send(json!({"id": 1, "op": "state", "session": "abc"}));
        serve.reply()["view"].clone()
    };
    let view = state(&mut serve);
    assert_eq!(
        (&view["state"], &view["authoritative"]),
        (&json!("unknown"), &json!(false)),
        "{view}"
    );
    let marker = json!([{"type": "text", "text": "[Request interrupted by user]"}]);
    let later = hookline::format::clock::now_ns() + 1_000_000;
    let mut file = std::fs::OpenOptions::new().append(true).open(&transcript).unwrap();
    std::io::Write::write_all(&mut file, entry(later, marker).as_bytes()).unwrap();
    let view = state(&mut serve);
    assert_eq!(
        (&view["state"], &view["detail"]),
        (&json!("waiting_on_human"), &json!("interrupted")),
        "{view}"
    );
    serve.send(json!({"id": 2, "op": "decide", "session": "abc", "question": "input"}));
    let decision = serve.reply();
    assert_eq!(decision["decision"]["verdict"], "withhold", "{decision}");
    drop(serve.child.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}

/// A process's peak resident memory (`VmHWM`), in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// One GiB of `x`, never a newline, written in 1 MiB pieces; the bytes written until the
/// reader went away or all were.
pub fn endless_line(mut to: impl std::io::Write) -> u64 {
    let piece = vec![b'x'; 1 << 20];
    let mut written = 0u64;
    while written < 1 << 30 {
        if to.write_all(&piece).is_err() {
            break;
        }
        written += piece.len() as u64;
    }
    written
}

#[test]
fn a_gibibyte_without_a_newline_gets_one_error_and_serve_goes_on_in_flat_memory() {
    use serde_json::json;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut serve = Serve::start(&dir);
    serve.send(json!({"id": 1, "op": "hello"}));
    assert_eq!(serve.reply()["id"], 1);
    let before = peak_rss_kib(serve.child.id());
    let written = endless_line(serve.child.stdin.as_mut().unwrap());
    assert_eq!(written, 1 << 30, "serve read all of it");
    // The end of the long line, then a request.
    std::io::Write::write_all(serve.child.stdin.as_mut().unwrap(), b"\n").unwrap();
    serve.send(json!({"id": 2, "op": "hello"}));
    let error = serve.reply();
    assert_eq!((&error["ok"], &error["id"]), (&json!(false), &json!(null)), "{error}");
    assert!(error["error"].as_str().unwrap().contains("longer than 1048576 bytes"), "{error}");
    let hello = serve.reply();
    assert_eq!((&hello["ok"], &hello["id"]), (&json!(true), &json!(2)), "the next line: {hello}");
    let grew = peak_rss_kib(serve.child.id()).saturating_sub(before);
    // A line is held up to 1 MiB (its buffer may double); the rest is read and dropped.
    assert!(grew < 16 << 10, "serve's peak memory grew by {grew} KiB reading the line");
    drop(serve.child.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}
