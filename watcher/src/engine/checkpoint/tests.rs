//! Checkpoints over real events directories: a reader that starts from one ends where a full
//! replay ends, and one it cannot trust is set aside with a note.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::checkpoint::header;
use crate::decide::{Ask, Policy};
use crate::format::store::{EventsDir, WriteOptions, write_payload};
use crate::ingest::follow;
use crate::ingest::reader::Start;
use crate::ingest::retention::covered_all;
use crate::paths::CURSORS_DIR;
use crate::profile::Profiles;
use crate::state::{HISTORY, StateKind};
use crate::vocab::{Question, Verdict};

/// A small deterministic generator (xorshift), so that a failure can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Writes one hook call the way the relay does.
fn write(events: &Path, native: &str, payload: serde_json::Value, tag: Option<&str>) {
    let raw = serde_json::value::RawValue::from_string(payload.to_string()).unwrap();
    let dir = EventsDir::create(events).unwrap();
    write_payload(&dir, "claude", native, tag, &raw, &WriteOptions::default()).unwrap();
}

/// Writes one file the way the older Python relay does.
fn write_legacy(legacy: &Path, session: &str, event: &str) {
    let ts_ns = crate::format::clock::now_ns();
    let name = format!("{ts_ns}-task-{session}-{event}.json");
    let body = format!(
        r#"{{"ts":{},"event":"{event}","task_id":"task-{session}","session_id":"{session}","transcript_path":null,"cwd":"/p"}}"#,
        ts_ns as f64 / 1e9
    );
    fs::write(legacy.join(name), body).unwrap();
}

/// One random hook call of one of three sessions, now and then with its legacy copy.
fn random_call(rng: &mut Rng, events: &Path, legacy: &Path) {
    let session = rng.pick(&["s1", "s2", "s3"]);
    let native = rng.pick(&[
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "Notification",
        "Stop",
        "Stop",
        "SessionEnd",
        "PreCompact",
    ]);
    let tool = rng.pick(&["Bash", "Read", "TodoWrite"]);
    let mut payload = serde_json::json!({
        "session_id": session, "hook_event_name": native, "cwd": "/p",
        "tool_name": tool, "tool_input": {"command": rng.pick(&["ls", "make"])},
    });
    match native {
        "SessionStart" => payload["source"] = rng.pick(&["startup", "resume", "clear"]).into(),
        "Notification" => {
            payload["notification_type"] = rng.pick(&["idle_prompt", "permission_prompt"]).into();
        }
        "SessionEnd" => payload["reason"] = rng.pick(&["exit", "clear"]).into(),
        "PreToolUse" if tool == "TodoWrite" => {
            payload["tool_input"] =
                serde_json::json!({"todos": [{"content": "a", "status": "pending"}]});
        }
        _ => {}
    }
    let tag = (rng.next().is_multiple_of(3)).then(|| format!("task-{session}"));
    write(events, native, payload.clone(), tag.as_deref());
    if rng.next().is_multiple_of(4) {
        // The same call again, as a second install of the relay reports it: an echo.
        write(events, native, payload, tag.as_deref());
    }
    if matches!(native, "Stop" | "UserPromptSubmit") && rng.next().is_multiple_of(2) {
        write_legacy(legacy, session, native);
    }
}

fn config(events: &Path, legacy: &Path) -> ReaderConfig {
    let mut config = ReaderConfig::new(events, Start::Beginning, Profiles::shipped().unwrap());
    config.legacy_dirs = vec![legacy.to_owned()];
    config
}

/// What a reader folded: its tracker's sessions, its echo memory and its position, as text.
fn folded(tracker: &Tracker, reader: &Reader) -> String {
    let state = (tracker.to_wire(HISTORY), reader.echoes().to_wire(), reader.position());
    serde_json::to_string_pretty(&state).unwrap()
}

/// Folds a tracker: from the checkpoint when `checkpoint` says so (and saves it), else from
/// the beginning.
fn fold(config: &ReaderConfig, checkpoint: bool) -> (String, Resumed) {
    let mut config = config.clone();
    let mut tracker = Tracker::new(config.profiles.clone(), u64::MAX / 2);
    let resumed =
        if checkpoint { resume_tracker(&mut config, &mut tracker) } else { Resumed::Beginning };
    let (reader, _) = follow::replay(config, |event| {
        tracker.apply(&event);
    })
    .unwrap();
    if checkpoint {
        save_tracker(&reader, &tracker).unwrap();
    }
    (folded(&tracker, &reader), resumed)
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (events, legacy) = (tmp.path().join("events"), tmp.path().join("legacy"));
    fs::create_dir_all(&legacy).unwrap();
    EventsDir::create(&events).unwrap();
    (tmp, events, legacy)
}

#[test]
fn a_checkpoint_taken_at_every_cut_and_replayed_on_ends_as_the_full_replay() {
    for seed in [1u64, 7, 42, 2026] {
        let (_tmp, events, legacy) = dirs();
        let config = config(&events, &legacy);
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut resumed_from = 0;
        for call in 0..40 {
            random_call(&mut rng, &events, &legacy);
            let (from_checkpoint, resumed) = fold(&config, true);
            let (full, _) = fold(&config, false);
            assert_eq!(from_checkpoint, full, "seed {seed}, after call {call} ({resumed:?})");
            assert!(resumed.note().is_none(), "seed {seed}: {resumed:?}");
            if matches!(resumed, Resumed::Checkpoint { .. }) {
                resumed_from += 1;
            }
        }
        assert_eq!(resumed_from, 39, "every fold but the first starts from the checkpoint");
        // The sequences hold what the reader's memory is for: echoes, and legacy copies.
        let (full, _) = fold(&config, false);
        let state: serde_json::Value = serde_json::from_str(&full).unwrap();
        let echoes = state[1]["by_id"].as_object().unwrap().values().flat_map(|c| {
            c.as_array().unwrap().iter().filter(|c| !c["original"].is_null()).cloned()
        });
        assert!(echoes.count() > 0, "seed {seed}: no echo");
        assert!(!state[2]["legacy"].as_object().unwrap().is_empty(), "seed {seed}");
    }
}

/// Saves a checkpoint of what is in `events` now.
fn checkpoint_now(config: &ReaderConfig) {
    let (_, resumed) = fold(config, true);
    assert!(resumed.note().is_none(), "{resumed:?}");
    assert!(path(&config.events_dir, Folder::Tracker).is_file());
}

fn a_few_calls(events: &Path, legacy: &Path) {
    let mut rng = Rng(99);
    for _ in 0..6 {
        random_call(&mut rng, events, legacy);
    }
}

/// Folds from the checkpoint after `spoil` did something to it: the note said, and the state
/// that of the full replay.
fn ignored_after(spoil: impl FnOnce(&Path, &mut ReaderConfig)) -> CheckpointProblem {
    note_after(spoil).why
}

/// [`ignored_after`], the whole note.
fn note_after(spoil: impl FnOnce(&Path, &mut ReaderConfig)) -> CheckpointIgnored {
    let (_tmp, events, legacy) = dirs();
    let mut config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    checkpoint_now(&config);
    write(&events, "Stop", serde_json::json!({"session_id": "s9"}), None);
    spoil(&path(&events, Folder::Tracker), &mut config);
    let (from_checkpoint, resumed) = fold(&config, true);
    let (full, _) = fold(&config, false);
    assert_eq!(from_checkpoint, full);
    let note = resumed.note().cloned().expect("a note");
    assert!(note.to_string().contains("tracker.checkpoint"), "{note}");
    // The note said, the checkpoint was saved again: the next reader starts from it.
    assert!(matches!(fold(&config, true).1, Resumed::Checkpoint { .. }));
    note
}

#[test]
fn a_truncated_checkpoint_is_ignored_with_a_note() {
    let why = ignored_after(|path, _| {
        let bytes = fs::read(path).unwrap();
        fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
    });
    assert!(matches!(why, CheckpointProblem::Truncated { .. }), "{why:?}");
}

#[test]
fn a_damaged_checkpoint_is_ignored_with_a_note() {
    let why = ignored_after(|path, _| {
        let mut bytes = fs::read(path).unwrap();
        let at = bytes.len() - 10;
        bytes[at] ^= 0x01;
        fs::write(path, bytes).unwrap();
    });
    assert!(matches!(why, CheckpointProblem::Damaged { .. }), "{why:?}");
}

#[test]
fn a_checkpoint_whose_body_is_not_json_keeps_the_decoder_error_as_its_source() {
    let note = note_after(|path, _| {
        let body = "{\"format\": 1, cut";
        let header = header(body.len() as u64, digest(0, body.as_bytes()));
        fs::write(path, header + body).unwrap();
    });
    let CheckpointProblem::Damaged { why: "cannot be read back", .. } = &note.why else {
        panic!("{:?}", note.why)
    };
    let message = note.to_string();
    assert!(message.contains("tracker.checkpoint") && message.contains("damaged"), "{message}");
    let cause = std::error::Error::source(&note).expect("the decoder's error");
    let json = cause.downcast_ref::<serde_json::Error>().expect("a serde_json error");
    assert_eq!(json.line(), 1, "{json}");
    assert!(!message.contains(&json.to_string()), "the message does not repeat its cause");
}

#[test]
fn an_unreadable_checkpoint_keeps_the_io_error_as_its_source() {
    let (_tmp, events, _) = dirs();
    let path = path(&events, Folder::Tracker);
    fs::create_dir_all(&path).unwrap();
    let why = read(&path).expect_err("a directory is not a checkpoint");
    let note = CheckpointIgnored { path, why };
    assert!(matches!(note.why, CheckpointProblem::Unreadable(_)), "{:?}", note.why);
    assert!(note.to_string().contains("tracker.checkpoint"), "{note}");
    let cause = std::error::Error::source(&note).expect("the I/O error");
    assert!(cause.downcast_ref::<std::io::Error>().is_some(), "{cause:?}");
}

#[test]
fn a_foreign_file_in_place_of_a_checkpoint_is_ignored_with_a_note() {
    let why = ignored_after(|path, _| fs::write(path, "{\"seq\": 3}\n").unwrap());
    assert!(matches!(why, CheckpointProblem::Foreign(_)), "{why:?}");
}

#[test]
fn a_checkpoint_built_with_other_profiles_is_ignored_with_a_note() {
    let why = ignored_after(|_, config| {
        let overlay = tempfile::tempdir().unwrap();
        let file = overlay.path().join("claude.toml");
        fs::write(&file, "[stale-after]\n").ok();
        let mut profiles = Profiles::shipped().unwrap();
        // Any overlay read, even one changing nothing that matters, changes the digest.
        fs::write(&file, "").unwrap();
        profiles.overlay_file(&file).unwrap();
        config.profiles = profiles;
    });
    assert!(
        matches!(why, CheckpointProblem::Mismatch { what: "profiles (digest)", .. }),
        "{why:?}"
    );
}

#[test]
fn a_checkpoint_of_other_legacy_directories_is_ignored_with_a_note() {
    let why = ignored_after(|_, config| config.legacy_dirs.clear());
    assert!(matches!(why, CheckpointProblem::Mismatch { what: "other", .. }), "{why:?}");
}

#[test]
fn a_checkpoint_of_another_state_format_is_ignored_with_a_note() {
    let why = ignored_after(|path, _| {
        let text = fs::read_to_string(path).unwrap();
        let (_, body) = text.split_once('\n').unwrap();
        let body = body.replacen(&format!("\"format\":{FORMAT}"), "\"format\":999", 1);
        let header = header(body.len() as u64, digest(0, body.as_bytes()));
        fs::write(path, header + &body).unwrap();
    });
    assert!(matches!(why, CheckpointProblem::Mismatch { what: "state format", .. }), "{why:?}");
}

#[test]
fn a_checkpoint_of_a_directory_since_recreated_is_ignored_with_a_note() {
    let (_tmp, events, legacy) = dirs();
    let config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    checkpoint_now(&config);
    let saved = fs::read(path(&events, Folder::Tracker)).unwrap();
    // Deleted and created again while the old one is still there: another inode.
    let keep = events.with_file_name("old-events");
    fs::rename(&events, &keep).unwrap();
    EventsDir::create(&events).unwrap();
    write(&events, "UserPromptSubmit", serde_json::json!({"session_id": "new"}), None);
    fs::create_dir_all(events.join(CURSORS_DIR)).unwrap();
    fs::write(path(&events, Folder::Tracker), saved).unwrap();
    let (from_checkpoint, resumed) = fold(&config, true);
    assert_eq!(from_checkpoint, fold(&config, false).0);
    let why = resumed.note().map(|n| n.why.clone());
    assert!(matches!(why, Some(CheckpointProblem::OtherDirectory(_))), "{why:?}");
}

#[test]
fn a_reader_that_cannot_write_its_checkpoint_still_answers() {
    let (_tmp, events, legacy) = dirs();
    let config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    // Something in the way that not even root can rename a file over: a directory, not empty.
    let file = path(&events, Folder::Tracker);
    fs::create_dir_all(file.join("in-the-way")).unwrap();
    let mut tracker = Tracker::new(config.profiles.clone(), u64::MAX / 2);
    let (reader, _) = follow::replay(config.clone(), |event| {
        tracker.apply(&event);
    })
    .unwrap();
    let error = save_tracker(&reader, &tracker).unwrap_err();
    assert!(error.to_string().contains("tracker.checkpoint"), "{error}");
    assert!(!tracker.is_empty(), "the state is there all the same");
    // And the next reader, finding no checkpoint it can read, replays it all.
    let (from_checkpoint, resumed) = fold(&config, false);
    let mut again = config.clone();
    let mut fresh = Tracker::new(config.profiles.clone(), u64::MAX / 2);
    let note = resume_tracker(&mut again, &mut fresh);
    assert!(note.note().is_some(), "{note:?}");
    assert_eq!(from_checkpoint, folded(&tracker, &reader));
    assert!(matches!(resumed, Resumed::Beginning), "{resumed:?}");
}

#[test]
fn explain_which_keeps_every_transition_of_a_session_never_starts_from_a_checkpoint() {
    let (_tmp, events, legacy) = dirs();
    let mut config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    checkpoint_now(&config);
    let mut tracker =
        Tracker::new(config.profiles.clone(), u64::MAX / 2).with_full_history_of("s1");
    let resumed = resume_tracker(&mut config, &mut tracker);
    assert!(matches!(resumed.note().map(|n| &n.why), Some(CheckpointProblem::NeedsFullHistory)));
    assert!(tracker.is_empty() && config.resume.is_none());
}

/// A decider of replayed history, from the checkpoint when there is one, saving it.
fn decide_input(config: &ReaderConfig, session: &str) -> (crate::decide::Decision, Resumed) {
    let mut config = config.clone();
    let now = crate::format::clock::now_ns();
    let tracker = Tracker::new(config.profiles.clone(), now);
    let mut decider = Decider::new(tracker, Policy::default()).one_shot();
    let resumed = resume_decider(&mut config, &mut decider);
    let (reader, _) = follow::replay(config, |event| {
        decider.apply(&event);
    })
    .unwrap();
    save_decider(&reader, &decider).unwrap();
    let decision = decider.decide(&Ask::new(session, Question::Input), now);
    (decision, resumed)
}

#[test]
fn a_checkpoint_of_an_idle_session_and_no_new_event_withholds_input_as_a_full_replay_does() {
    let (_tmp, events, legacy) = dirs();
    let config = config(&events, &legacy);
    write(&events, "UserPromptSubmit", serde_json::json!({"session_id": "s1"}), None);
    write(&events, "Stop", serde_json::json!({"session_id": "s1"}), None);
    let (full, resumed) = decide_input(&config, "s1");
    assert!(matches!(resumed, Resumed::Beginning), "{resumed:?}");
    let (from_checkpoint, resumed) = decide_input(&config, "s1");
    assert!(matches!(resumed, Resumed::Checkpoint { .. }), "{resumed:?}");
    assert_eq!(full.verdict, Verdict::Withhold);
    let said = |d: &crate::decide::Decision| {
        (d.verdict, d.action, d.rule, d.reason.clone(), d.state, d.slot.is_some())
    };
    assert_eq!(said(&from_checkpoint), said(&full));
    assert_eq!(from_checkpoint.state, Some(StateKind::Idle));
}

#[test]
fn retention_removes_a_checkpoint_before_an_event_after_its_cut() {
    use crate::ingest::retention::{RetentionPolicy, prune};
    let (_tmp, events, legacy) = dirs();
    let config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    checkpoint_now(&config);
    let file = path(&events, Folder::Tracker);
    let policy =
        RetentionPolicy { max_age: Duration::ZERO, without_cursors: true, ..Default::default() };
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    // Everything it covers may go: it stays.
    prune(&events, &policy, later).unwrap();
    assert!(file.is_file(), "a checkpoint needs nothing behind its cut");
    checkpoint_now(&config);
    write(&events, "Stop", serde_json::json!({"session_id": "s1"}), None);
    write(&events, "Stop", serde_json::json!({"session_id": "s2"}), None);
    // The first of these is after the cut and goes: the checkpoint goes first.
    prune(&events, &policy, later).unwrap();
    assert!(!file.exists(), "a checkpoint that would miss an event is removed");
    let (_, resumed) = fold(&config, true);
    assert!(matches!(resumed, Resumed::Beginning), "{resumed:?}");
}

#[test]
fn a_checkpoint_past_a_consumers_cursor_is_not_taken_in_by_it() {
    let (_tmp, events, legacy) = dirs();
    let config = config(&events, &legacy);
    a_few_calls(&events, &legacy);
    checkpoint_now(&config);
    let covers = covered_all(&events).remove(0).1;
    let resume = |limit: &Position| {
        let mut config = config.clone();
        let mut tracker = Tracker::new(config.profiles.clone(), u64::MAX / 2);
        resume_tracker_within(&mut config, &mut tracker, limit)
    };
    assert!(matches!(resume(&covers), Resumed::Checkpoint { .. }));
    let behind = Position { seq: covers.seq - 1, ..covers.clone() };
    assert!(matches!(resume(&behind), Resumed::Beginning));
    let mut legacy_behind = covers.clone();
    legacy_behind.legacy.clear();
    assert!(matches!(resume(&legacy_behind), Resumed::Beginning));
}
