//! The committed JSON Schemas (`schemas/*.schema.json`) against what the real binaries write:
//! event files from the relay, `watch --no-follow`, `status --json`, `decide --json`, and
//! `serve` requests and replies.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::watch::{hookline, relay, run_relay};

/// The committed schema `schemas/<name>.schema.json`, compiled.
fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../schemas/{name}.schema.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails with every error, naming what was checked.
fn assert_valid(validator: &jsonschema::Validator, what: &str, instance: &Value) {
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}\n{instance:#}",
        errors.join("\n")
    );
}

/// The real payloads captured from `cli_dir` (one JSON object per file), with the profile
/// name and whether the relay is told the event's name (`--event`, OpenCode's plugin).
fn payloads(cli_dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../watcher/tests/fixtures").join(cli_dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('_'))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), fs::read(&p).unwrap()))
        .collect()
}

/// An events directory filled by the real relay: every captured payload of Claude Code,
/// Codex, Gemini CLI and OpenCode, tagged, and input that is not a usable payload (invalid
/// JSON, bytes that are not UTF-8, nothing).
fn fill(dir: &Path) -> usize {
    let mut written = 0;
    for (cli, fixtures) in [
        ("claude", "claude-code/2.1.332"),
        ("codex", "codex/0.171.0"),
        ("gemini", "gemini/0.61.0"),
        ("opencode", "opencode/1.18.33"),
    ] {
        for (name, payload) in payloads(fixtures) {
            let mut args = vec!["--cli", cli];
            // OpenCode's plugin names the event; the file name is the event's.
            let event = name.split('-').next().unwrap().to_owned();
            if cli == "opencode" {
                args.extend(["--event", &event]);
            }
            let mut child = Command::new(relay())
                .args(&args)
                .env_clear()
                .env("HOOKLINE_EVENTS_DIR", dir)
                .env("HOOKLINE_TAG", format!("task-{cli}"))
                .stdin(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(&payload).unwrap();
            assert!(child.wait().unwrap().success());
            written += 1;
        }
    }
    for odd in
        [&b"{\"session_id\": \"s9\", \"hook_event_name\": \"Stop\""[..], b"\xff\xfe\x00", b""]
    {
        run_relay(dir, &["--cli", "claude"], odd);
        written += 1;
    }
    written
}

/// The event files of a directory (its top and its buckets, through the library's listing),
/// parsed, in seq order.
fn event_files(dir: &Path) -> Vec<(String, Value)> {
    hookline::ingest::source::list(dir)
        .unwrap()
        .events
        .iter()
        .map(|file| {
            let value = serde_json::from_slice(&fs::read(file.path(dir)).unwrap()).unwrap();
            (file.name.to_string(), value)
        })
        .collect()
}

/// `hookline SUBCOMMAND --events-dir DIR ARGS...` with no user profile or policy in the way.
fn run(subcommand: &str, dir: &Path, args: &[&str]) -> Output {
    super::status::hookline(subcommand, dir, args).output().unwrap()
}

/// What a command printed as JSON (`decide` exits with its verdict, so the status is not
/// looked at here).
fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e} ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn what_the_relay_and_hookline_write_matches_the_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let written = fill(&dir);

    let envelope = validator("envelope");
    let files = event_files(&dir);
    assert_eq!(files.len(), written, "one event file per relay run");
    for (name, file) in &files {
        assert_valid(&envelope, name, file);
    }
    assert!(files.iter().any(|(_, f)| f["raw_encoding"] == "base64"), "a base64 raw was checked");
    assert!(files.iter().any(|(_, f)| f["error"].is_string()), "an unusable input was checked");

    let event = validator("event");
    let out = run("watch", &dir, &["--from-start", "--no-follow"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), written, "one canonical event per event file");
    for line in &lines {
        assert_valid(&event, &format!("the watch line of {}", line["origin"]["file"]), line);
    }

    let mut bogus = lines[0].clone();
    bogus["kind"] = "bogus".into();
    assert!(!event.is_valid(&bogus), "the event schema takes an unknown kind: {bogus}");

    let status = stdout_json(&run("status", &dir, &["--json"]));
    assert!(status.as_array().is_some_and(|views| views.len() >= 4), "{status:#}");
    let status_schema = validator("status");
    assert_valid(&status_schema, "status --json", &status);
    let mut bogus = status.clone();
    bogus[0]["state"] = "busy".into();
    assert!(!status_schema.is_valid(&bogus), "the status schema takes a state `busy`");

    let decision = validator("decision");
    for session in ["task-claude", "task-codex", "task-gemini", "task-opencode", "nobody"] {
        for question in hookline::decide::Question::WORDS {
            let out = run("decide", &dir, &[session, question, "--json"]);
            let what = format!("decide {session} {question} --json");
            let answer = stdout_json(&out);
            assert_valid(&decision, &what, &answer);
            let mut bogus = answer;
            bogus.as_object_mut().unwrap().remove("verdict");
            assert!(!decision.is_valid(&bogus), "the decision schema takes one without a verdict");
        }
    }
}

#[test]
fn serve_requests_and_replies_match_the_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fill(&dir);
    let requests = [
        json!({"id": 1, "op": "hello"}),
        json!({"id": "two", "op": "sessions"}),
        json!({"op": "state", "session": "task-claude"}),
        json!({"id": 4, "op": "state", "session": "nobody"}),
        json!({"id": 5, "op": "decide", "session": "task-claude", "question": "input",
               "pane": {"spinner": true}, "transcript": {"interrupted": false},
               "window_dead": false, "expect": {"generation": 1}}),
        json!({"id": 6, "op": "decide", "session": "task-gemini", "question": "crashed"}),
        json!({"id": 7, "op": "take_input_slot", "session": "task-codex"}),
        json!({"id": 8, "op": "take_input_slot", "session": "task-opencode",
               "expect": {"generation": 0, "epoch": 0}}),
        json!({"id": 9, "op": "next_event", "session": "task-claude"}),
        json!({"id": 10, "op": "next_event", "session": "nobody", "timeout_ms": 10}),
    ];
    // Requests serve refuses; the schema must refuse them too.
    let refused = [
        json!({"id": 11, "op": "state", "sesion": "task-claude"}),
        json!({"id": 12, "op": "decide", "session": "task-claude", "question": "idle"}),
        json!({"id": 13, "op": "reboot"}),
        json!({"id": 14}),
    ];
    let request = validator("serve-request");
    for r in &requests {
        assert_valid(&request, &format!("the request {r}"), r);
    }
    for r in &refused {
        assert!(!request.is_valid(r), "the schema takes {r}, which serve refuses");
    }

    let mut child = Command::new(hookline())
        .args(["serve", "--events-dir"])
        .arg(&dir)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for r in requests.iter().chain(&refused) {
        writeln!(stdin, "{r}").unwrap();
    }
    writeln!(stdin, "not json").unwrap();
    drop(stdin);
    let replies: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(replies.len(), requests.len() + refused.len() + 1, "{replies:#?}");
    let reply = validator("serve-reply");
    for r in &replies {
        assert_valid(&reply, &format!("the reply {r}"), r);
    }
    let ok = replies.iter().filter(|r| r["ok"] == true).count();
    assert_eq!(ok, requests.len(), "{replies:#?}");
}
