//! The follower against real files: appends, partial lines, truncation, replacement,
//! rotation, a sparse multi-GiB file, hostile lines; and the entry readers against the
//! entry shapes the CLIs write.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::*;
use crate::state::Tracker;
use crate::units::parse_rfc3339;
use crate::vocab::{FailureKind, TranscriptFormat};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/transcript");

fn fixture(name: &str) -> String {
    fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap()
}

fn append(path: &Path, text: &str) {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn texts(poll: &Poll) -> Vec<(String, bool)> {
    poll.lines.iter().map(|l| (String::from_utf8_lossy(&l.bytes).into_owned(), l.history)).collect()
}

fn small() -> TailLimits {
    TailLimits { tail_bytes: 64, read_bytes: 1024, max_line: 128 }
}

#[test]
fn lines_present_at_opening_are_history_and_appends_are_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    append(&path, "one\ntwo\n");
    let mut tail = Tail::new(&path, small());
    let first = tail.poll().unwrap();
    assert_eq!(first.change, Change::Opened);
    assert_eq!(texts(&first), [("one".into(), true), ("two".into(), true)]);
    append(&path, "three\n");
    let next = tail.poll().unwrap();
    assert_eq!((next.change, next.grew), (Change::Same, true));
    assert_eq!(texts(&next), [("three".into(), false)]);
    assert!(tail.poll().unwrap().lines.is_empty(), "nothing is read twice");
}

#[test]
fn a_fifo_at_the_path_is_refused_without_waiting_and_the_file_is_read_on_when_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let (file, fifo, link) =
        (dir.path().join("t.jsonl"), dir.path().join("fifo"), dir.path().join("link"));
    append(&file, "one\n");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let point = |to: &Path| {
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(to, &link).unwrap();
    };
    // Never bound to anything but a FIFO: refused, no open waits for a writer.
    point(&fifo);
    let mut tail = Tail::new(&link, small());
    assert!(matches!(tail.poll(), Err(crate::Error::TranscriptNotAFile { .. })));
    point(&file);
    assert_eq!(texts(&tail.poll().unwrap()), [("one".into(), true)]);
    // Swapped for the FIFO while followed, then back: refused meanwhile, then read on from
    // where it was, nothing read twice.
    point(&fifo);
    assert!(matches!(tail.poll(), Err(crate::Error::TranscriptNotAFile { .. })));
    append(&file, "two\n");
    point(&file);
    let next = tail.poll().unwrap();
    assert_eq!((next.change, texts(&next)), (Change::Same, vec![("two".into(), false)]));
}

#[test]
fn a_partial_last_line_waits_for_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    File::create(&path).unwrap();
    let mut tail = Tail::new(&path, small());
    tail.poll().unwrap();
    append(&path, "{\"a\":");
    assert!(tail.poll().unwrap().lines.is_empty());
    append(&path, "1}\n{\"b\"");
    assert_eq!(texts(&tail.poll().unwrap()), [("{\"a\":1}".into(), false)]);
    append(&path, ":2}\n");
    assert_eq!(texts(&tail.poll().unwrap()), [("{\"b\":2}".into(), false)]);
}

#[test]
fn only_the_tail_is_read_on_opening_and_its_cut_first_line_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let body: String = (0..100).map(|i| format!("line-{i:03}\n")).collect();
    append(&path, &body);
    let mut tail = Tail::new(&path, small());
    let poll = tail.poll().unwrap();
    // 64 bytes from the end, 9 bytes a line: 7 whole lines and one cut one.
    let lines = texts(&poll);
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert_eq!(lines.last().unwrap().0, "line-099");
    assert!(lines.iter().all(|(l, history)| l.len() == 8 && *history));
}

#[test]
fn truncation_while_following_rereads_the_tail_as_history_not_as_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    append(&path, "a\nb\nc\n");
    let mut tail = Tail::new(&path, small());
    tail.poll().unwrap();
    fs::write(&path, "x\n").unwrap();
    let poll = tail.poll().unwrap();
    assert_eq!(poll.change, Change::Truncated);
    assert_eq!(texts(&poll), [("x".into(), true)]);
    append(&path, "y\n");
    assert_eq!(texts(&tail.poll().unwrap()), [("y".into(), false)]);
}

#[test]
fn replacement_and_rotation_rebind_to_the_new_file_without_replaying_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    append(&path, "old-1\nold-2\n");
    let mut tail = Tail::new(&path, small());
    tail.poll().unwrap();
    let first = tail.identity().unwrap();
    // Rotation: the file is renamed away, a new one takes its path.
    fs::rename(&path, dir.path().join("t.jsonl.1")).unwrap();
    append(&dir.path().join("t.jsonl.1"), "late-in-old\n");
    assert_eq!(tail.poll().unwrap().change, Change::Missing);
    append(&path, "new-1\n");
    let poll = tail.poll().unwrap();
    assert_eq!(poll.change, Change::Replaced);
    assert_ne!(tail.identity().unwrap(), first);
    assert_eq!(texts(&poll), [("new-1".into(), true)]);
    // Replacement by an atomic rewrite (compaction): same path, new inode, old lines again.
    let tmp = dir.path().join("t.tmp");
    fs::write(&tmp, "new-1\nsummary\n").unwrap();
    fs::rename(&tmp, &path).unwrap();
    let poll = tail.poll().unwrap();
    assert_eq!(poll.change, Change::Replaced);
    assert!(poll.lines.iter().all(|l| l.history), "a rewritten file is history");
    append(&path, "after\n");
    assert_eq!(texts(&tail.poll().unwrap()), [("after".into(), false)]);
}

#[test]
fn hostile_lines_are_dropped_and_reading_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    File::create(&path).unwrap();
    let limits = TailLimits { tail_bytes: 64 * 1024, read_bytes: 1 << 20, max_line: 1024 };
    let mut follower = Follower::new(&path, TranscriptFormat::ClaudeJsonl, None, limits, 1);
    follower.poll(1).unwrap();
    let huge = format!("{{\"type\":\"user\",\"pad\":\"{}\"}}\n", "x".repeat(4000));
    append(&path, &huge);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"\xff\xfe\x00binary\n[1,2]\nnot json at all\n\"a string\"\n").unwrap();
    append(&path, &format!("{}\n", fixture("claude-esc-interrupts.jsonl").lines().nth(2).unwrap()));
    let update = follower.poll(2).unwrap();
    assert_eq!(update.unreadable, 5, "{update:?}");
    assert_eq!(update.entries, 1);
    assert!(follower.reading().interrupted.is_some());
}

#[test]
fn a_sparse_four_gib_transcript_is_read_from_its_tail_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let file = File::create(&path).unwrap();
    file.set_len(4 << 30).unwrap();
    drop(file);
    let marker = fixture("claude-esc-interrupts.jsonl").lines().nth(2).unwrap().to_owned();
    append(&path, &format!("\n{marker}\n"));
    let limits = TailLimits::default();
    let follower = read_tail(&path, TranscriptFormat::ClaudeJsonl, None, limits, 1).unwrap();
    let reading = follower.reading();
    assert_eq!(reading.interrupted.map(|i| i.what), Some(Interrupt::Turn));
    // Growth by more than the tail limit between polls is skipped to the tail, not read.
    let mut follower = follower;
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len((8 << 30) + 10).unwrap();
    drop(f);
    append(&path, &format!("\n{marker}\n"));
    let update = follower.poll(2).unwrap();
    assert!(update.grew);
    assert_eq!(update.entries, 1, "{update:?}");
}

#[test]
fn claude_interrupts_are_read_by_entry_type_never_from_the_request_blob() {
    let text = fixture("claude-esc-interrupts.jsonl");
    let entries: Vec<Entry> = text
        .lines()
        .map(|l| entry::read(TranscriptFormat::ClaudeJsonl, l.as_bytes()).unwrap())
        .collect();
    let said: Vec<&[Observation]> = entries.iter().map(|e| e.observations.as_slice()).collect();
    assert_eq!(said[0], [Observation::TurnStarted]);
    assert_eq!(said[2], [Observation::Interrupted(Interrupt::Turn)]);
    assert_eq!(said[5], [Observation::Interrupted(Interrupt::ToolUse)], "toolDenialKind");
    assert_eq!(said[6], [Observation::Interrupted(Interrupt::ToolUse)]);
    let blob = text.lines().nth(7).unwrap();
    assert!(blob.contains("[Request interrupted by user]"), "the blob repeats the marker");
    assert!(said[7].is_empty(), "an api-request-blob says nothing: {:?}", said[7]);
    assert_eq!(said[8], [Observation::TurnStarted]);
    assert!(
        entries
            .iter()
            .all(|e| e.session_id.as_deref() == Some("6b005208-fecb-4457-88ba-747404f8bc01"))
    );
}

#[test]
fn claude_folds_into_a_reading_per_turn() {
    let mut reading = Reading::default();
    let mut after_first_interrupt = None;
    for (i, line) in fixture("claude-esc-interrupts.jsonl").lines().enumerate() {
        let e = entry::read(TranscriptFormat::ClaudeJsonl, line.as_bytes()).unwrap();
        reading.apply(&e, e.ts_ns.unwrap());
        if i == 2 {
            after_first_interrupt = Some(reading.clone());
        }
    }
    let first = after_first_interrupt.unwrap();
    assert_eq!(first.output_tokens, 12);
    let marker_ns = first.interrupted.unwrap().ts_ns;
    assert_eq!(Some(marker_ns), parse_rfc3339("2026-12-01T10:00:05.000Z"));
    let ev = first.evidence_after(marker_ns - 1);
    assert!(ev.interrupted && !ev.turn_in_progress);
    assert!(!first.evidence_after(marker_ns).interrupted, "an event as new clears it");
    // The last turn: a new prompt cleared the interrupts; one response of two entries
    // counts its tokens once.
    assert_eq!(reading.interrupted, None);
    assert!(reading.finished);
    assert_eq!(reading.output_tokens, 4);
}

#[test]
fn claude_api_errors_are_classed_by_their_fields() {
    let classes: Vec<FailureKind> = fixture("claude-api-errors.jsonl")
        .lines()
        .flat_map(|l| {
            entry::read(TranscriptFormat::ClaudeJsonl, l.as_bytes()).unwrap().observations
        })
        .filter_map(|o| match o {
            Observation::ApiError(class) => Some(class),
            _ => None,
        })
        .collect();
    assert_eq!(classes, [FailureKind::RateLimit, FailureKind::Overloaded]);
    let mut reading = Reading::default();
    for l in fixture("claude-api-errors.jsonl").lines().take(2) {
        let e = entry::read(TranscriptFormat::ClaudeJsonl, l.as_bytes()).unwrap();
        reading.apply(&e, e.ts_ns.unwrap());
    }
    assert!(reading.evidence_after(0).quota_error);
    assert_eq!(reading.output_tokens, 0, "a turn that produced nothing");
}

#[test]
fn codex_turn_aborted_is_an_interrupt_and_the_session_meta_binds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    let text = fixture("codex-turn-aborted.jsonl");
    let mut lines = text.lines();
    append(&path, &format!("{}\n", lines.next().unwrap()));
    let mut follower =
        Follower::new(&path, TranscriptFormat::CodexRollout, None, TailLimits::default(), 1);
    follower.poll(1).unwrap();
    assert_eq!(follower.session_id(), Some("01a22d09-1350-7e72-9796-4834cd74b768"));
    for l in lines {
        append(&path, &format!("{l}\n"));
    }
    let update = follower.poll(2).unwrap();
    assert_eq!(update.entries, 5);
    let reading = follower.reading();
    assert_eq!(reading.interrupted.map(|i| i.what), Some(Interrupt::Turn));
    assert_eq!(reading.output_tokens, 40);
}

#[test]
fn entries_naming_another_session_are_not_folded_in() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    File::create(&path).unwrap();
    let mut follower = Follower::new(
        &path,
        TranscriptFormat::ClaudeJsonl,
        Some("someone-else".into()),
        TailLimits::default(),
        1,
    );
    follower.poll(1).unwrap();
    append(&path, &format!("{}\n", fixture("claude-esc-interrupts.jsonl").lines().nth(2).unwrap()));
    let update = follower.poll(2).unwrap();
    assert_eq!((update.foreign, update.entries), (1, 0));
    assert_eq!(follower.reading().interrupted, None);
}

/// Every line of a captured transcript (`watcher/tests/transcript/<cli>/<version>/<name>`),
/// read: its observations, by 1-based line number.
fn captured(path: &str, format: TranscriptFormat) -> Vec<(usize, Entry)> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcript").join(path);
    let text = fs::read_to_string(&file).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let entry = entry::read(format, l.as_bytes())
                .unwrap_or_else(|e| panic!("{path}:{}: {e:?}", i + 1));
            (i + 1, entry)
        })
        .collect()
}

fn lines_saying(entries: &[(usize, Entry)], what: &Observation) -> Vec<usize> {
    entries.iter().filter(|(_, e)| e.observations.contains(what)).map(|(n, _)| *n).collect()
}

/// Folds a captured transcript through a real follower, as `serve` would read it appended
/// line by line.
fn follow_captured(path: &str, format: TranscriptFormat) -> (Reading, Update) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcript").join(path);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.jsonl");
    File::create(&file).unwrap();
    let mut follower = Follower::new(&file, format, None, TailLimits::default(), 1);
    follower.poll(1).unwrap();
    let mut total =
        Update { change: Change::Same, grew: false, entries: 0, unreadable: 0, foreign: 0 };
    for line in fs::read_to_string(src).unwrap().lines() {
        append(&file, &format!("{line}\n"));
        let u = follower.poll(2).unwrap();
        total.entries += u.entries;
        total.unreadable += u.unreadable;
        total.foreign += u.foreign;
    }
    (follower.reading().clone(), total)
}

#[test]
fn captured_claude_transcripts_say_what_the_readme_says_they_do() {
    let f = TranscriptFormat::ClaudeJsonl;
    let turn = Observation::Interrupted(Interrupt::Turn);
    let tool = Observation::Interrupted(Interrupt::ToolUse);
    let streaming = captured("claude/2.1.332/esc-while-streaming.jsonl", f);
    assert_eq!(lines_saying(&streaming, &turn), [24]);
    assert!(lines_saying(&streaming, &tool).is_empty());
    let dialog = captured("claude/2.1.332/esc-at-permission-dialog.jsonl", f);
    assert_eq!(lines_saying(&dialog, &tool), [25, 27]);
    assert!(lines_saying(&dialog, &turn).is_empty(), "the blob repeating the marker says nothing");
    let both = captured("claude/2.1.332/interactive-approve-deny-compact.jsonl", f);
    assert_eq!(lines_saying(&both, &tool), [40, 41]);
    let errors = captured("claude/2.1.332/api-errors.jsonl", f);
    assert_eq!(lines_saying(&errors, &Observation::ApiError(FailureKind::Overloaded)), [19]);
    assert_eq!(lines_saying(&errors, &Observation::ApiError(FailureKind::RateLimit)), [28]);
    for (name, _) in [("esc-while-streaming", 0), ("esc-at-permission-dialog", 0)] {
        let (reading, update) = follow_captured(&format!("claude/2.1.332/{name}.jsonl"), f);
        assert_eq!((update.unreadable, update.foreign), (0, 0), "{name}");
        // Each ends on a next prompt answered normally: the interrupt is the turn before's.
        assert_eq!(reading.interrupted, None, "{name}");
        assert!(reading.finished && reading.output_tokens > 0, "{name}: {reading:?}");
    }
}

#[test]
fn captured_codex_rollouts_say_what_the_readme_says_they_do() {
    let f = TranscriptFormat::CodexRollout;
    let turn = Observation::Interrupted(Interrupt::Turn);
    let dialog = captured("codex/0.171.0/esc-at-approval-dialog.jsonl", f);
    assert_eq!(lines_saying(&dialog, &turn).len(), 1);
    let run = captured("codex/0.171.0/esc-while-streaming-then-api-errors.jsonl", f);
    assert_eq!(lines_saying(&run, &turn).len(), 1);
    assert_eq!(lines_saying(&run, &Observation::ApiError(FailureKind::Overloaded)), [28]);
    assert_eq!(lines_saying(&run, &Observation::ApiError(FailureKind::RateLimit)), [34]);
    let (reading, update) = follow_captured("codex/0.171.0/interactive-approved.jsonl", f);
    assert_eq!((update.unreadable, update.foreign), (0, 0));
    assert!(reading.finished, "{reading:?}");
    let (reading, _) =
        follow_captured("codex/0.171.0/esc-while-streaming-then-api-errors.jsonl", f);
    assert_eq!(reading.api_error.map(|e| e.what), Some(FailureKind::RateLimit));
}

#[test]
fn captured_gemini_chats_say_what_the_readme_says_they_do() {
    let f = TranscriptFormat::GeminiChats;
    let run = captured("gemini/0.61.0/esc-while-streaming-then-api-errors.jsonl", f);
    assert_eq!(lines_saying(&run, &Observation::Interrupted(Interrupt::Turn)), [5, 14, 19]);
    let (reading, update) = follow_captured("gemini/0.61.0/interactive-approved.jsonl", f);
    assert_eq!((update.unreadable, update.foreign), (0, 0));
    assert!(reading.output_tokens > 0, "{reading:?}");
    assert_eq!(reading.interrupted, None);
}

#[test]
fn captured_qwen_chats_say_what_the_readme_says_they_do() {
    let f = TranscriptFormat::QwenChats;
    let errors = captured("qwen/0.24.4/api-errors.jsonl", f);
    assert_eq!(lines_saying(&errors, &Observation::TurnStarted), [1, 5]);
    assert_eq!(lines_saying(&errors, &Observation::ApiError(FailureKind::Other)), [4]);
    assert_eq!(lines_saying(&errors, &Observation::ApiError(FailureKind::Overloaded)), [8]);
    let (reading, update) = follow_captured("qwen/0.24.4/api-errors.jsonl", f);
    assert_eq!((update.unreadable, update.foreign), (0, 0));
    assert_eq!(reading.api_error.map(|e| e.what), Some(FailureKind::Overloaded));
    let approved = captured("qwen/0.24.4/interactive-approved.jsonl", f);
    assert_eq!(lines_saying(&approved, &Observation::TurnInProgress), [5, 7, 9]);
    assert_eq!(lines_saying(&approved, &Observation::ResponseArrived), [4, 8]);
    let tokens = Observation::OutputTokens { message: None, tokens: 10 };
    assert_eq!(lines_saying(&approved, &tokens), [4, 8]);
    let (reading, update) = follow_captured("qwen/0.24.4/interactive-approved.jsonl", f);
    assert_eq!((update.unreadable, update.foreign), (0, 0));
    assert_eq!((reading.api_error, reading.interrupted, reading.output_tokens), (None, None, 20));
}

#[test]
fn a_qwen_retry_that_goes_through_clears_the_api_error() {
    let session = "7c4292d6-8ce7-4860-bec7-c1697a26d06b";
    let line = |record: serde_json::Value| serde_json::to_vec(&record).unwrap();
    let telemetry = |name: &str, extra: serde_json::Value| {
        let mut event = serde_json::json!({"event.name": name});
        event.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        line(serde_json::json!({"sessionId": session, "type": "system",
            "subtype": "ui_telemetry", "systemPayload": {"uiEvent": event}}))
    };
    let read = |bytes: Vec<u8>| entry::read(TranscriptFormat::QwenChats, &bytes).unwrap();
    let error = read(telemetry(qwen::API_ERROR, serde_json::json!({"status_code": 429})));
    assert_eq!(error.observations, [Observation::ApiError(FailureKind::RateLimit)]);
    assert_eq!(error.session_id.as_deref(), Some(session));
    let no_status = read(telemetry(qwen::API_ERROR, serde_json::json!({})));
    assert_eq!(no_status.observations, [Observation::ApiError(FailureKind::Other)]);
    let response = read(telemetry(
        qwen::API_RESPONSE,
        serde_json::json!({"status_code": 200, "output_token_count": 7}),
    ));
    let mut reading = Reading::default();
    reading.apply(&error, 1);
    assert!(reading.api_error.is_some());
    reading.apply(&response, 2);
    assert_eq!((reading.api_error, reading.output_tokens), (None, 7));
    // The response's telemetry, written about a second after the turn's Stop (the session's
    // last hook, at 10): the turn does not read as going on again, so input is not refused.
    let assistant = read(line(serde_json::json!({"sessionId": session, "type": "assistant",
        "message": {"role": "model", "parts": [{"text": "done"}]}})));
    let mut reading = Reading::default();
    reading.apply(&assistant, 5);
    assert!(reading.evidence_after(4).turn_in_progress, "output after the last hook: mid-turn");
    reading.apply(&response, 11);
    assert!(!reading.evidence_after(10).turn_in_progress, "{reading:?}");
    assert_eq!(reading.output_tokens, 7);
    // Other telemetry and bookkeeping say nothing; neither does an error's text anywhere else.
    let tool = read(telemetry("qwen-code.tool_call", serde_json::json!({"status_code": 500})));
    assert!(tool.observations.is_empty());
    let snapshot = read(line(serde_json::json!({"sessionId": session, "type": "system",
        "subtype": "file_history_snapshot", "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_error"}}})));
    assert!(snapshot.observations.is_empty());
}

#[test]
fn the_fallback_producer_starts_unknown_moves_only_on_new_lines_and_never_to_idle() {
    use crate::profile::Profiles;
    use crate::state::{StateKind, Tracker};
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("-work-proj");
    fs::create_dir_all(&sub).unwrap();
    let file = sub.join("6b005208-fecb-4457-88ba-747404f8bc01.jsonl");
    let lines = fixture("claude-esc-interrupts.jsonl");
    let line = |n: usize| format!("{}\n", lines.lines().nth(n - 1).unwrap());
    // History: a whole interrupted turn is already there.
    append(&file, &(line(1) + &line(2) + &line(3)));
    let profiles = Profiles::shipped().unwrap();
    let spec = profiles.get("claude").unwrap().transcript.clone().unwrap();
    let start = parse_rfc3339("2026-12-01T10:00:06.000Z").unwrap();
    let mut tracker = Tracker::new(profiles, start);
    let mut producer = Unhooked::new("claude", dir.path(), spec);
    assert!(poll(&mut producer, &mut tracker, start).is_empty());
    let id = "6b005208-fecb-4457-88ba-747404f8bc01";
    let view = tracker.view(id, start).unwrap();
    assert_eq!(view.state, StateKind::Unknown, "history never hydrates: {view:?}");
    assert!(!view.authoritative);
    // New lines move it: a prompt and a tool call (active), then the denial.
    append(&file, &(line(4) + &line(5)));
    poll(&mut producer, &mut tracker, start + 1);
    assert_eq!(tracker.view(id, start + 1).unwrap().state, StateKind::Active);
    append(&file, &(line(6) + &line(7)));
    poll(&mut producer, &mut tracker, start + 2);
    let view = tracker.view(id, start + 2).unwrap();
    assert_eq!(
        (view.state, view.detail.as_deref()),
        (StateKind::WaitingOnHuman, Some("interrupted"))
    );
    // A turn that finishes is not idle: only an explicit event is.
    append(&file, &(line(9) + &line(10) + &line(11)));
    poll(&mut producer, &mut tracker, start + 3);
    let view = tracker.view(id, start + 3).unwrap();
    assert_ne!(view.state, StateKind::Idle, "{view:?}");
    assert!(tracker.take_input_slot(id, start + 3).is_err());
    assert_eq!(view.epoch, 0, "the fallback has its own epoch, before any event's");
}

/// Reads what the producer's transcripts gained and hands it to `tracker`, as an engine does.
fn poll(producer: &mut Unhooked, tracker: &mut Tracker, now_ns: u64) -> Vec<crate::Error> {
    let (found, errors) = producer.read(now_ns);
    for (id, facts, since) in found {
        tracker.observe_unhooked_transcript(producer.cli(), &id, facts, since);
    }
    errors
}
