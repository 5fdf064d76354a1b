//! `hookline decide`: one question answered from history, with documented exit codes.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fire(dir: &Path, fixture: &str, extra: &[(&str, &str)]) {
    fire_as(dir, fixture, "s1", "task-1", extra);
}

/// Runs the real relay as Claude Code would, with a captured payload for session `session`,
/// tagged `tag`.
pub fn fire_as(dir: &Path, fixture: &str, session: &str, tag: &str, extra: &[(&str, &str)]) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../watcher/tests/fixtures").join(fixture);
    let mut payload: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    payload["session_id"] = session.into();
    for (key, value) in extra {
        payload[*key] = (*value).into();
    }
    let mut child = Command::new(super::watch::relay())
        .args(["--cli", "claude"])
        .env_clear()
        .env("HOOKLINE_EVENTS_DIR", dir)
        .env("HOOKLINE_TAG", tag)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

fn decide(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookline"))
        .arg("decide")
        .arg("--events-dir")
        .arg(dir)
        .args(args)
        .env("HOME", dir.parent().unwrap())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

const C: &str = "claude-code/2.1.332/";

#[test]
fn a_one_shot_never_authorizes_input_and_exits_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    fire(&dir, &format!("{C}Stop.json"), &[]);

    let out = decide(&dir, &["task-1", "input", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let d = json(&out);
    assert_eq!(d["verdict"], "withhold");
    assert_eq!(d["question"], "input");
    assert!(d["reason"].as_str().unwrap().contains("can never authorize input"), "{d}");
    assert_eq!(d["evidence"]["view"]["state"], "idle");

    let out = decide(&dir, &["s1", "env-fault", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json(&out)["verdict"], "allow");
    assert_eq!(json(&out)["rule"], "no-env-fault-evidence");
    // An env-fault allow must not read as "there is a fault": the text says what it allows.
    let out = decide(&dir, &["s1", "env-fault"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("env-fault s1: allow (no env fault stands: carry on"), "{text}");

    let out = decide(&dir, &["nobody", "crashed"]);
    assert_eq!(out.status.code(), Some(3), "no structured signal: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("withhold (fall_back)") && text.contains("no structured signal"),
        "{text}"
    );

    // The withheld verdicts are journaled beside the events directory.
    let journal = fs::read_to_string(tmp.path().join("events.decisions.ndjson")).unwrap();
    assert_eq!(journal.lines().count(), 2, "{journal}");
}

#[test]
fn caller_evidence_and_policy_errors_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    fire(&dir, &format!("{C}SessionEnd-other.json"), &[]);

    // A session end is durable evidence: replayed, it still allows crashed (the view says
    // replayed), as a live generation would.
    let out = decide(&dir, &["s1", "crashed", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json(&out)["rule"], "session-ended");
    assert_eq!(json(&out)["evidence"]["view"]["replayed"], true);
    let out = decide(&dir, &["s1", "crashed"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("crashed s1: allow (the session is over"), "{text}");
    let out =
        decide(&dir, &["s1", "crashed", "--json", "--evidence", r#"{"pane": {"spinner": true}}"#]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json(&out)["signal"], "pane");

    let out = decide(&dir, &["s1", "crashed", "--evidence", r#"{"pane": {"spiner": true}}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("spiner"), "{out:?}");

    let policy = tmp.path().join("policy.toml");
    fs::write(&policy, "[nudge]\nmax-in-row = 2\n").unwrap();
    let out = decide(&dir, &["s1", "nudge", "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nudge.max-in-row") && stderr.contains("did you mean"), "{stderr}");

    let out = decide(&dir, &["s1", "idle"]);
    assert_eq!(out.status.code(), Some(2), "a question that does not exist is a usage error");
}

#[test]
fn a_policy_stale_window_shortens_the_profiles_and_is_checked_against_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    let out = decide(&dir, &["s1", "nudge", "--json"]);
    assert_eq!(json(&out)["state"], "active", "{out:?}");

    let policy = tmp.path().join("policy.toml");
    fs::write(&policy, "[stale]\nclaude.active = \"1ms\"\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let out = decide(&dir, &["s1", "nudge", "--json", "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "no structured signal: {out:?}");
    let stale = &json(&out)["evidence"]["view"]["stale"];
    assert_eq!(
        (stale["was"].as_str(), stale["set_by"].as_str()),
        (Some("active"), Some("stale.claude.active"))
    );

    fs::write(&policy, "[stale]\nclaud.active = \"1m\"\n").unwrap();
    let out = decide(&dir, &["s1", "nudge", "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stale.claud: no profile is named claud"), "{stderr}");
}

#[test]
fn a_one_shot_answers_stall_like_a_live_generation_and_journals_a_withheld_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    fire(&dir, &format!("{C}TaskCreated.json"), &[]);
    fire(&dir, &format!("{C}Stop-after-tasks.json"), &[]);

    let out = decide(&dir, &["task-1", "stall", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let d = json(&out);
    assert_eq!((&d["verdict"], &d["rule"]), (&"allow".into(), &"stall-open-todo-item".into()));
    assert!(d["nudge_text"].as_str().unwrap().contains("\"First task\" is still pending"), "{d}");
    assert!(d.get("slot").is_none(), "stall takes no slot: {d}");
    assert_eq!(d["evidence"]["view"]["open_todos"][0]["subject"], "First task");
    let text = String::from_utf8_lossy(&decide(&dir, &["task-1", "stall"]).stdout).into_owned();
    assert!(text.starts_with("stall task-1: allow (a nudge is wanted"), "{text}");
    assert!(
        text.contains("  nudge text: You ended your turn on \"one of two tasks done\""),
        "{text}"
    );
    // The nudge itself is input: a one-shot never authorizes it.
    assert_eq!(decide(&dir, &["task-1", "nudge"]).status.code(), Some(1));

    // The next turn starts a background command and stops with it running: withheld, named.
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    fire(&dir, &format!("{C}Stop-background_task-running.json"), &[]);
    let out = decide(&dir, &["task-1", "stall", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let d = json(&out);
    assert_eq!(d["rule"], "stall-withheld-pending-wake");
    assert!(d["reason"].as_str().unwrap().contains("task b7tsjx0vs \"wait\""), "{d}");
    assert_eq!(d["evidence"]["pending_wakes"][0]["id"], "b7tsjx0vs");
    assert_eq!(d["evidence"]["pending_wakes"][0]["gates"], true);
    let journal = fs::read_to_string(tmp.path().join("events.decisions.ndjson")).unwrap();
    let last: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["question"], &last["rule"]),
        (&"stall".into(), &"stall-withheld-pending-wake".into())
    );
}

#[test]
fn polling_a_one_shot_nudge_never_escalates_a_session_unless_asked_to_count() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    fire(&dir, &format!("{C}Stop.json"), &[]);

    // A shell polling its stall timer: more than escalate.withheld-in-a-row (10) one-shot
    // nudges, each withheld by design, each saying so about a nudge.
    for _ in 0..12 {
        let out = decide(&dir, &["task-1", "nudge", "--json"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let reason = json(&out)["reason"].as_str().unwrap().to_owned();
        assert!(reason.contains("can never authorize a nudge"), "{reason}");
        assert!(reason.contains("no slot for a nudge"), "{reason}");
        assert!(!reason.contains("authorize input"), "the question was nudge: {reason}");
    }
    let out = decide(&dir, &["task-1", "escalate", "--json"]);
    assert_eq!(out.status.code(), Some(0), "a healthy idle session: {out:?}");
    assert_eq!(json(&out)["rule"], "nothing-to-escalate");
    assert_eq!(json(&out)["evidence"]["counters"]["withheld_in_a_row"], 0);
    // The verdicts are journaled all the same, marked as not counted.
    let journal = fs::read_to_string(tmp.path().join("events.decisions.ndjson")).unwrap();
    let records: Vec<Value> = journal.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 12);
    assert!(records.iter().all(|r| r["counted"] == false), "{journal}");

    // A caller that asks its withheld verdicts to count gets the escalation it asked for.
    for n in 1..=10 {
        let out = decide(&dir, &["task-1", "nudge", "--count", "--json"]);
        assert_eq!(json(&out)["evidence"]["counters"]["withheld_in_a_row"], n);
    }
    let out = decide(&dir, &["task-1", "escalate", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json(&out)["rule"], "withheld-in-a-row");
}

#[test]
fn a_one_shot_consults_the_classifier_at_stalls_fall_back_and_explain_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    let trailing = "I read the module. Next I will update the renderer.";
    fire(&dir, &format!("{C}Stop.json"), &[("last_assistant_message", trailing)]);
    // A stub classifier: it checks it was given hookline's instruction and the message.
    let policy = tmp.path().join("policy.toml");
    fs::write(
        &policy,
        "[classifier]\ncommand = [\"/bin/sh\", \"-c\", 'in=$(cat); case \"$in\" in \
         *\"hookline classifier\"*\"update the renderer\"*) echo stalled;; esac']\n\
         timeout = \"10s\"\n",
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    let out = decide(&dir, &["task-1", "stall", "--json", "--policy", policy]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let d = json(&out);
    assert_eq!(
        (&d["signal"], &d["rule"]),
        (&"classifier".into(), &"stall-classifier-stalled".into())
    );
    assert!(d.get("slot").is_none(), "{d}");
    let c = &d["evidence"]["classifier"];
    assert_eq!(
        (&c["verdict"], &c["outcome"], &c["changed"]),
        (&"stalled".into(), &"answered".into(), &true.into())
    );
    assert_eq!(c["deterministic"], "fall_back");
    assert_eq!(c["input_sha256"].as_str().unwrap().len(), 64);
    assert!(d["nudge_text"].as_str().unwrap().contains("Next I will update the renderer"), "{d}");
    // Without the policy: today's deterministic answer.
    let plain = decide(&dir, &["task-1", "stall", "--json"]);
    assert_eq!(plain.status.code(), Some(3), "{plain:?}");
    assert!(json(&plain)["evidence"].get("classifier").is_none());

    let text =
        String::from_utf8_lossy(&decide(&dir, &["task-1", "stall", "--policy", policy]).stdout)
            .into_owned();
    assert!(text.contains("  classifier: stalled (answered, "), "{text}");
    assert!(text.contains("changed the decision from fall_back; answered \"stalled\""), "{text}");
    let explain = Command::new(env!("CARGO_BIN_EXE_hookline"))
        .args(["explain", "--events-dir"])
        .arg(&dir)
        .arg("task-1")
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let explained = String::from_utf8_lossy(&explain.stdout);
    assert_eq!(explained.matches("    classifier: stalled (answered").count(), 2, "{explained}");
    assert!(
        explained.contains("stall allow (proceed)  rule stall-classifier-stalled"),
        "{explained}"
    );
}

#[test]
fn a_one_shot_crashed_consults_on_the_screen_the_caller_gives_and_a_hanging_classifier_changes_nothing()
 {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    fire(&dir, &format!("{C}UserPromptSubmit.json"), &[]);
    let policy = tmp.path().join("policy.toml");
    let write = |script: &str, timeout: &str| {
        fs::write(
            &policy,
            format!("[classifier]\ncommand = [\"/bin/sh\", \"-c\", {script:?}]\ntimeout = \"{timeout}\"\n"),
        )
        .unwrap();
    };
    let evidence = r#"{"pane": {"screen": "Do you want to proceed?\n> 1. Yes\n  2. No"}}"#;
    let ask = |policy: &Path| {
        json(&decide(
            &dir,
            &[
                "task-1",
                "crashed",
                "--json",
                "--policy",
                policy.to_str().unwrap(),
                "--evidence",
                evidence,
            ],
        ))
    };
    write("grep -q 'Do you want to proceed' && echo wedged", "10s");
    let d = ask(&policy);
    assert_eq!(
        (&d["action"], &d["rule"]),
        (&"escalate".into(), &"crashed-classifier-wedged".into())
    );
    write("sleep 300 & echo working; sleep 300", "300ms");
    let d = ask(&policy);
    assert_eq!((&d["action"], &d["rule"]), (&"hold".into(), &"no-completion-signal".into()));
    assert_eq!(d["evidence"]["classifier"]["outcome"], "timed_out");
    assert_eq!(d["evidence"]["classifier"]["verdict"], "unknown");
}
