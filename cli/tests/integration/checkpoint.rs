//! Checkpoints through the real binary: `status` and `decide` save one, the next run starts
//! from it and answers the same, and one it cannot use is set aside with a note.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::decide::fire_as;
use super::status::hookline;

const C: &str = "claude-code/2.1.332/";

/// What does not depend on when the command ran.
fn settled(out: &Output) -> Vec<Value> {
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let mut rows: Vec<Value> = rows
        .into_iter()
        .map(|mut row| {
            for key in ["age_ms", "age", "unknown_for_ms", "generation"] {
                row.as_object_mut().unwrap().remove(key);
            }
            row
        })
        .collect();
    rows.sort_by_key(|row| row["session_id"].to_string());
    rows
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sessions(dir: &Path) {
    for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"] {
        fire_as(dir, &format!("{C}{fixture}"), "s1", "task-1", &[]);
    }
    fire_as(dir, &format!("{C}UserPromptSubmit.json"), "s2", "task-2", &[]);
    fire_as(dir, &format!("{C}Stop.json"), "s2", "task-2", &[]);
}

#[test]
fn status_saves_a_checkpoint_and_the_next_status_answers_the_same_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    sessions(&dir);
    let checkpoint = dir.join(".cursors/tracker.checkpoint");
    let first = hookline("status", &dir, &["--json"]).output().unwrap();
    assert!(first.status.success(), "{first:?}");
    assert!(checkpoint.is_file(), "status saved its checkpoint");
    let saved = std::fs::read(&checkpoint).unwrap();
    assert!(saved.starts_with(b"hookline-checkpoint 1 "));
    let second = hookline("status", &dir, &["--json"]).output().unwrap();
    assert_eq!(settled(&second), settled(&first));
    assert!(!stderr(&second).contains("checkpoint"), "{}", stderr(&second));
    // A later event is replayed on top of it.
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s2", "task-2", &[]);
    let third = settled(&hookline("status", &dir, &["--json"]).output().unwrap());
    let s2 = third.iter().find(|r| r["session_id"] == "s2").unwrap();
    assert_eq!(s2["state"], "active");
    assert_eq!(s2["authoritative"], false);
}

#[test]
fn a_damaged_checkpoint_is_set_aside_with_a_note_and_the_answer_is_the_full_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    sessions(&dir);
    let first = hookline("status", &dir, &["--json"]).output().unwrap();
    let checkpoint = dir.join(".cursors/tracker.checkpoint");
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    bytes.truncate(bytes.len() - 7);
    std::fs::write(&checkpoint, bytes).unwrap();
    let again = hookline("status", &dir, &["--json"]).output().unwrap();
    assert_eq!(settled(&again), settled(&first));
    let note = stderr(&again);
    assert!(note.contains("tracker.checkpoint not used: truncated"), "{note}");
    assert!(note.contains("replaying the whole history"), "{note}");
}

#[test]
fn decide_input_over_a_checkpoint_of_an_idle_session_withholds_as_a_full_replay_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    sessions(&dir);
    let decide = || hookline("decide", &dir, &["s2", "input", "--json"]).output().unwrap();
    let verdict = |out: &Output| {
        let d: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), d["verdict"].clone(), d["rule"].clone(), d["state"].clone())
    };
    let full = decide();
    assert!(dir.join(".cursors/decider.checkpoint").is_file());
    let from_checkpoint = decide();
    assert!(!stderr(&from_checkpoint).contains("not used"), "{}", stderr(&from_checkpoint));
    assert_eq!(verdict(&full).1, "withhold");
    assert_eq!(verdict(&from_checkpoint), verdict(&full));
    assert_eq!(verdict(&full).3, "idle");
}
