use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::value::RawValue;

use super::*;
use crate::format::store::{WriteOptions, write_payload};

/// Writes an event the way the relay does (same library, same protocol).
fn write(dir: &Path, native: &str, session: &str) -> EventFileName {
    write_with(dir, native, session, &WriteOptions::default())
}

fn write_with(dir: &Path, native: &str, session: &str, options: &WriteOptions) -> EventFileName {
    let payload = format!(r#"{{"session_id":"{session}","hook_event_name":"{native}"}}"#);
    let payload = RawValue::from_string(payload).unwrap();
    let events = EventsDir::create(dir).unwrap();
    write_payload(&events, "claude", native, None, &payload, options).unwrap().name
}

/// Where a file written by [`write`] is (in its bucket, or at the top), found by the listing.
fn at(dir: &Path, name: EventFileName) -> PathBuf {
    let listing = source::list(dir).unwrap();
    listing.events.iter().find(|e| e.name == name).expect("listed").path(dir)
}

fn config(dir: &Path, start: Start) -> ReaderConfig {
    ReaderConfig::new(dir, start, Profiles::shipped().unwrap())
}

fn drain(reader: &mut Reader) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let queued = reader.poll().unwrap();
        while let Some(event) = reader.next_event() {
            out.push(event);
        }
        if queued == 0 && !reader.has_pending() {
            return out;
        }
    }
}

fn natives(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| e.native.clone().unwrap_or_else(|| e.kind.name().to_owned())).collect()
}

#[test]
fn events_come_in_seq_order_each_once() {
    let tmp = tempfile::tempdir().unwrap();
    for native in ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"] {
        write(tmp.path(), native, "s1");
    }
    let mut reader = Reader::open(config(tmp.path(), Start::Beginning)).unwrap();
    let events = drain(&mut reader);
    assert_eq!(natives(&events), ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"]);
    assert_eq!(events.iter().map(|e| e.source.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(drain(&mut reader).is_empty(), "nothing is delivered twice");
    write(tmp.path(), "SessionEnd", "s1");
    assert_eq!(natives(&drain(&mut reader)), ["SessionEnd"]);
}

#[test]
fn a_restart_resumes_from_the_cursor_with_no_duplicate_and_no_miss() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..10 {
        write(tmp.path(), if i % 2 == 0 { "PreToolUse" } else { "PostToolUse" }, "s1");
    }
    let mut reader = Reader::open(config(tmp.path(), Start::Cursor("loop".into()))).unwrap();
    reader.poll().unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(reader.next_event().unwrap().source.seq);
    }
    reader.commit().unwrap();
    // A fifth event is handed out but never committed: the consumer died while handling it.
    reader.next_event().unwrap();
    drop(reader);
    for _ in 0..3 {
        write(tmp.path(), "Stop", "s1");
    }
    let mut reader = Reader::open(config(tmp.path(), Start::Cursor("loop".into()))).unwrap();
    let rest: Vec<u64> = drain(&mut reader).iter().map(|e| e.source.seq).collect();
    seen.extend(rest);
    assert_eq!(seen, (1..=13).collect::<Vec<_>>());
}

#[test]
fn a_corrupt_file_is_quarantined_reported_and_does_not_block_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let bad = write(tmp.path(), "PreToolUse", "s1");
    fs::write(at(tmp.path(), bad), b"{\"v\":1,\"seq\":2,\"trunc").unwrap();
    write(tmp.path(), "Stop", "s1");
    let mut reader = Reader::open(config(tmp.path(), Start::Beginning)).unwrap();
    let events = drain(&mut reader);
    assert_eq!(events.len(), 3);
    let Kind::Unknown { reason: Some(reason) } = &events[1].kind else { panic!("{:?}", events[1]) };
    assert!(reason.contains("quarantined"), "{reason}");
    assert_eq!(events[2].native.as_deref(), Some("Stop"));
    let quarantined = tmp.path().join(".quarantine").join(bad.to_string());
    assert!(quarantined.exists());
    let note =
        fs::read_to_string(tmp.path().join(".quarantine").join(format!("{bad}.reason"))).unwrap();
    assert!(note.contains("not a valid envelope"), "{note}");
    assert!(matches!(reader.take_notices()[..], [Notice::Quarantined { .. }]));
}

#[test]
fn a_corrupt_file_is_reported_to_every_cursor_at_its_position_once_each() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let bad = write(tmp.path(), "PreToolUse", "s1");
    fs::write(at(tmp.path(), bad), b"{\"v\":1,\"seq\":2,\"trunc").unwrap();
    write(tmp.path(), "Stop", "s1");
    let seqs_and_reasons = |events: &[Event]| -> Vec<(u64, bool)> {
        events
            .iter()
            .map(|e| {
                let damaged = matches!(&e.kind, Kind::Unknown { reason: Some(r) }
                    if r.contains("not a valid envelope"));
                (e.source.seq, damaged)
            })
            .collect()
    };
    let expected = [(1, false), (2, true), (3, false)];
    // Two consumers with their own cursors, one after the other: the first one to hit the
    // damaged file must not take it away from the second.
    for name in ["first", "second"] {
        let mut reader = Reader::open(config(tmp.path(), Start::Cursor(name.into()))).unwrap();
        assert_eq!(seqs_and_reasons(&drain(&mut reader)), expected, "{name}");
        assert!(matches!(reader.take_notices()[..], [Notice::Quarantined { .. }]), "{name}");
        reader.commit().unwrap();
    }
    // A one-shot reader (status, decide, serve) sees it too.
    assert_eq!(
        seqs_and_reasons(&read_all(config(tmp.path(), Start::Beginning)).unwrap()),
        expected
    );
    // Once per cursor: a restart does not report it again.
    for name in ["first", "second"] {
        let mut reader = Reader::open(config(tmp.path(), Start::Cursor(name.into()))).unwrap();
        assert!(drain(&mut reader).is_empty(), "{name}");
    }
    assert!(at(tmp.path(), bad).exists(), "the original stays in place");
    let quarantine = tmp.path().join(".quarantine");
    assert_eq!(fs::read(quarantine.join(bad.to_string())).unwrap(), b"{\"v\":1,\"seq\":2,\"trunc");
    let mut names: Vec<String> = fs::read_dir(&quarantine)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [bad.to_string(), format!("{bad}.reason")], "one copy, one note");
}

#[test]
fn a_newer_format_is_reported_but_left_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let name = write(tmp.path(), "SessionStart", "s1");
    fs::write(at(tmp.path(), name), br#"{"v":2,"seq":1}"#).unwrap();
    let events = drain(&mut Reader::open(config(tmp.path(), Start::Beginning)).unwrap());
    let Kind::Unknown { reason: Some(reason) } = &events[0].kind else { panic!() };
    assert!(reason.contains("version 2"), "{reason}");
    assert!(at(tmp.path(), name).exists());
}

#[test]
fn events_above_the_committed_seq_wait_for_their_writers() {
    let tmp = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        write(tmp.path(), "PreToolUse", "s1");
    }
    // As if a relay took seq 3 and has not finished: the counter says 2 for a reader that
    // arrives in between (the relay really holds the lock then; this is the same view).
    let counter = tmp.path().join(".seq");
    fs::write(&counter, format!("{:020}\n", 2)).unwrap();
    let mut reader = Reader::open(config(tmp.path(), Start::Beginning)).unwrap();
    assert_eq!(drain(&mut reader).len(), 2);
    fs::write(&counter, format!("{:020}\n", 3)).unwrap();
    let events = drain(&mut reader);
    assert_eq!(events.iter().map(|e| e.source.seq).collect::<Vec<_>>(), [3]);
}

#[test]
fn a_stuck_counter_lock_holds_ordered_events_but_not_unordered_ones() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let holder = fs::File::options().write(true).open(tmp.path().join(".seq")).unwrap();
    holder.lock().unwrap();
    let quick = WriteOptions { lock_bound: Duration::from_millis(10), fsync: false };
    let unordered = write_with(tmp.path(), "Stop", "s1", &quick);
    assert!(!unordered.is_ordered());
    let mut cfg = config(tmp.path(), Start::Cursor("c".into()));
    cfg.lock_bound = Duration::from_millis(10);
    let mut reader = Reader::open(cfg.clone()).unwrap();
    let events = drain(&mut reader);
    assert_eq!(natives(&events), ["Stop"]);
    assert!(reader.take_notices().contains(&Notice::CounterBusy(tmp.path().to_owned())));
    reader.commit().unwrap();
    holder.unlock().unwrap();
    drop(reader);
    let mut reader = Reader::open(cfg).unwrap();
    assert_eq!(natives(&drain(&mut reader)), ["SessionStart"], "the unordered one is not repeated");
}

#[test]
fn a_deleted_and_recreated_dir_is_read_from_its_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    write(&dir, "SessionStart", "s1");
    write(&dir, "Stop", "s1");
    let mut reader = Reader::open(config(&dir, Start::Beginning)).unwrap();
    assert_eq!(drain(&mut reader).len(), 2);
    fs::remove_dir_all(&dir).unwrap();
    assert!(drain(&mut reader).is_empty());
    write(&dir, "SessionEnd", "s2");
    let events = drain(&mut reader);
    assert_eq!(natives(&events), ["SessionEnd"]);
    let notices = reader.take_notices();
    assert!(notices.contains(&Notice::DirGone(dir.clone())), "{notices:?}");
}

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.source.seq).collect()
}

/// A named cursor `c` reads and commits three events; then the directory is deleted and
/// recreated with two new ones (seqs 1 and 2), which the reader has not polled yet.
fn read_three_then_recreate_with_two(dir: &Path) -> (ReaderConfig, Reader) {
    for _ in 0..3 {
        write(dir, "PreToolUse", "old");
    }
    let cfg = config(dir, Start::Cursor("c".into()));
    let mut reader = Reader::open(cfg.clone()).unwrap();
    assert_eq!(seqs(&drain(&mut reader)), [1, 2, 3]);
    reader.commit().unwrap();
    fs::remove_dir_all(dir).unwrap();
    write(dir, "SessionStart", "new");
    write(dir, "Stop", "new");
    (cfg, reader)
}

#[test]
fn a_named_cursor_saved_just_after_its_dir_was_recreated_reads_the_new_dir_from_its_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let (cfg, reader) = read_three_then_recreate_with_two(&dir);
    // The consumer commits before a poll noticed: `.cursors/` is gone, and the position it
    // saves (seq 3) is one of the old directory.
    reader.commit().unwrap();
    drop(reader);
    let mut reader = Reader::open(cfg.clone()).unwrap();
    let events = drain(&mut reader);
    assert_eq!(seqs(&events), [1, 2], "nothing of the new directory is skipped");
    assert_eq!(natives(&events), ["SessionStart", "Stop"]);
    assert!(reader.take_notices().contains(&Notice::DirRecreated(dir.clone())));
    reader.commit().unwrap();
    drop(reader);
    let mut reader = Reader::open(cfg.clone()).unwrap();
    assert!(drain(&mut reader).is_empty(), "nothing twice after a restart");
    write(&dir, "SessionEnd", "new");
    assert_eq!(seqs(&drain(&mut reader)), [3]);
}

#[test]
fn a_named_cursor_that_sees_its_dir_recreated_while_running_keeps_it_across_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let (cfg, mut reader) = read_three_then_recreate_with_two(&dir);
    let events = drain(&mut reader);
    assert_eq!(seqs(&events), [1, 2]);
    assert_eq!(natives(&events), ["SessionStart", "Stop"]);
    reader.commit().unwrap();
    let cursor = dir.join(crate::paths::CURSORS_DIR);
    assert_eq!(fs::metadata(&cursor).unwrap().permissions().mode() & 0o777, 0o700);
    drop(reader);
    write(&dir, "SessionEnd", "new");
    let mut reader = Reader::open(cfg).unwrap();
    assert_eq!(seqs(&drain(&mut reader)), [3], "resumed in the new directory, nothing twice");
    assert!(reader.take_notices().is_empty());
}

#[test]
fn a_dir_that_does_not_exist_yet_is_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("later/events");
    let mut reader = Reader::open(config(&dir, Start::Beginning)).unwrap();
    assert!(drain(&mut reader).is_empty());
    assert!(!dir.exists(), "a reader without a cursor never creates the directory");
    write(&dir, "SessionStart", "s1");
    assert_eq!(drain(&mut reader).len(), 1);
}

#[test]
fn start_now_skips_what_is_already_there() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let mut reader = Reader::open(config(tmp.path(), Start::Now)).unwrap();
    assert!(drain(&mut reader).is_empty());
    write(tmp.path(), "Stop", "s1");
    assert_eq!(natives(&drain(&mut reader)), ["Stop"]);
}

#[test]
fn a_new_cursor_from_now_skips_what_is_there_and_then_resumes_like_any_cursor() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    write(tmp.path(), "UserPromptSubmit", "s1");
    let mut reader = Reader::open(config(tmp.path(), Start::CursorFromNow("new".into()))).unwrap();
    assert!(drain(&mut reader).is_empty(), "the history before it is not handed out");
    // Registered at once, at the present: retention may take what came before.
    let saved = crate::ingest::cursor::all(tmp.path()).unwrap();
    assert_eq!((saved[0].0.as_str(), saved[0].1.seq), ("new", 2));
    write(tmp.path(), "Stop", "s1");
    assert_eq!(natives(&drain(&mut reader)), ["Stop"]);
    reader.commit().unwrap();
    drop(reader);
    // Reopened, it is an existing cursor: it resumes where it stopped, with no skip.
    write(tmp.path(), "SessionEnd", "s1");
    let mut reader = Reader::open(config(tmp.path(), Start::CursorFromNow("new".into()))).unwrap();
    assert_eq!(natives(&drain(&mut reader)), ["SessionEnd"]);
}

#[test]
fn legacy_files_are_merged_by_time_delivered_once_and_never_modified() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    let legacy = tmp.path().join("run/events");
    fs::create_dir_all(&legacy).unwrap();
    let legacy_file = |ts: u64, event: &str| {
        let name = format!("{ts}-story-1-dev-1-{event}.json");
        let body = format!(
            r#"{{"ts":{ts},"event":"{event}","task_id":"story-1-dev-1","session_id":"old","transcript_path":null,"cwd":"/p"}}"#
        );
        fs::write(legacy.join(&name), body).unwrap();
        name
    };
    legacy_file(1, "SessionStart");
    write(&events, "UserPromptSubmit", "s1");
    legacy_file(u64::MAX / 2, "Stop");
    fs::write(legacy.join("99-story-1-dev-1-Stop.json.tmp"), "{").unwrap();
    let before: Vec<_> = fs::read_dir(&legacy).unwrap().map(|e| e.unwrap().file_name()).collect();

    let mut cfg = config(&events, Start::Cursor("c".into()));
    cfg.legacy_dirs = vec![legacy.clone()];
    let mut reader = Reader::open(cfg.clone()).unwrap();
    let got = drain(&mut reader);
    assert_eq!(natives(&got), ["SessionStart", "UserPromptSubmit", "Stop"]);
    assert_eq!(got[0].cli, "legacy");
    assert_eq!(got[0].tag.as_deref(), Some("story-1-dev-1"));
    assert!(got[0].source.legacy);
    reader.commit().unwrap();
    drop(reader);
    let mut reader = Reader::open(cfg).unwrap();
    assert!(drain(&mut reader).is_empty(), "legacy files are delivered once per cursor");
    let after: Vec<_> = fs::read_dir(&legacy).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before.len(), after.len());
}

#[test]
fn a_missing_legacy_dir_is_never_created() {
    let tmp = tempfile::tempdir().unwrap();
    let legacy = tmp.path().join("absent");
    let mut cfg = config(&tmp.path().join("events"), Start::Beginning);
    cfg.legacy_dirs = vec![legacy.clone()];
    drain(&mut Reader::open(cfg).unwrap());
    assert!(!legacy.exists());
}

#[test]
fn a_large_backlog_is_read_in_batches() {
    let tmp = tempfile::tempdir().unwrap();
    for _ in 0..25 {
        write(tmp.path(), "PreToolUse", "s1");
    }
    let mut cfg = config(tmp.path(), Start::Beginning);
    cfg.batch = 10;
    let mut reader = Reader::open(cfg).unwrap();
    assert_eq!(reader.poll().unwrap(), 10);
    let events = drain(&mut reader);
    assert_eq!(events.len(), 25);
    assert!(events.windows(2).all(|w| w[0].source.seq < w[1].source.seq));
}

/// Writes a flat file as the older relay does, for session `s1` of task `task-1`.
fn older_relay_file(legacy: &Path, ts_ns: u64, event: &str) -> String {
    let name = format!("{ts_ns}-task-1-{event}.json");
    let body = format!(
        r#"{{"ts":{},"event":"{event}","task_id":"task-1","session_id":"s1","transcript_path":null,"cwd":"/p"}}"#,
        ts_ns as f64 / 1e9
    );
    fs::write(legacy.join(&name), body).unwrap();
    name
}

fn with_legacy(events: &Path, legacy: &Path) -> ReaderConfig {
    let mut cfg = config(events, Start::Beginning);
    cfg.legacy_dirs = vec![legacy.to_owned()];
    cfg
}

#[test]
fn the_older_relays_copy_of_a_relayed_stop_is_handed_out_marked_as_its_echo() {
    let tmp = tempfile::tempdir().unwrap();
    let (events, legacy) = (tmp.path().join("events"), tmp.path().join("run/events"));
    fs::create_dir_all(&legacy).unwrap();
    write(&events, "UserPromptSubmit", "s1");
    let stop = write(&events, "Stop", "s1").to_string();
    let mut reader = Reader::open(with_legacy(&events, &legacy)).unwrap();
    let first = drain(&mut reader);
    assert_eq!(natives(&first), ["UserPromptSubmit", "Stop"]);
    assert!(first.iter().all(|e| e.echo_of.is_none()));
    // Written a little later, as a Python interpreter starts slower than the relay.
    let copy = older_relay_file(&legacy, first[1].ts_ns + 40_000_000, "Stop");
    let echo = drain(&mut reader);
    assert_eq!(echo.len(), 1);
    assert_eq!((echo[0].source.file.as_str(), echo[0].source.legacy), (copy.as_str(), true));
    assert_eq!(echo[0].echo_of.as_ref().map(|o| o.file.as_str()), Some(stop.as_str()));
    // A reader that sees both at once hands out the earlier copy first, and the same mark.
    let again = drain(&mut Reader::open(with_legacy(&events, &legacy)).unwrap());
    assert_eq!(natives(&again), ["UserPromptSubmit", "Stop", "Stop"]);
    assert_eq!(again[2].echo_of.as_ref().map(|o| o.file.as_str()), Some(stop.as_str()));
}

#[test]
fn a_legacy_file_waits_for_the_primary_backlog_older_than_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (events, legacy) = (tmp.path().join("events"), tmp.path().join("run/events"));
    fs::create_dir_all(&legacy).unwrap();
    for _ in 0..12 {
        write(&events, "PreToolUse", "s1");
    }
    let middle = crate::format::clock::now_ns();
    older_relay_file(&legacy, middle, "PreCompact");
    for _ in 0..12 {
        write(&events, "PostToolUse", "s1");
    }
    let mut cfg = with_legacy(&events, &legacy);
    cfg.batch = 5;
    let got = drain(&mut Reader::open(cfg).unwrap());
    assert_eq!(got.len(), 25);
    let at = got.iter().position(|e| e.source.legacy).unwrap();
    assert_eq!(at, 12, "between the events written before and after it: {:?}", natives(&got));
    assert!(got.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
}

/// Sets a directory's modification time an hour back, so that its stamp differs from any
/// taken before, whatever the filesystem's clock granularity.
fn age_dir(dir: &Path) {
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let now = SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let old = libc::timespec { tv_sec: now as libc::time_t - 3600, tv_nsec: 0 };
    // SAFETY: a valid C string and two valid timespecs.
    let ret = unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), [old, old].as_ptr(), 0) };
    assert_eq!(ret, 0, "utimensat {}", dir.display());
}

#[test]
fn a_settled_directory_that_did_not_change_is_not_listed_again() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let mut cfg = config(tmp.path(), Start::Beginning);
    cfg.stamp_settled = Duration::ZERO;
    let mut reader = Reader::open(cfg).unwrap();
    assert_eq!(natives(&drain(&mut reader)), ["SessionStart"]);
    let listed = reader.listings;
    for _ in 0..3 {
        assert_eq!(reader.poll().unwrap(), 0);
    }
    assert_eq!(reader.listings, listed, "nothing changed: no listing");
    // An ordered event moves the committed seq, whatever the directory's times say.
    write(tmp.path(), "Stop", "s1");
    assert_eq!(natives(&drain(&mut reader)), ["Stop"]);
    assert_eq!(reader.listings, listed + 1);
}

#[test]
fn an_unordered_event_in_a_settled_directory_is_seen_by_its_changed_stamp() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("events");
    write(&events, "SessionStart", "s1");
    let mut cfg = config(&events, Start::Beginning);
    cfg.stamp_settled = Duration::ZERO;
    cfg.lock_bound = Duration::from_millis(10);
    let mut reader = Reader::open(cfg).unwrap();
    assert_eq!(natives(&drain(&mut reader)), ["SessionStart"]);
    // Written elsewhere while the counter is held (so it is unordered and the seq does not
    // move), then moved in: only the directory's stamp tells.
    let other = tmp.path().join("other");
    write(&other, "SessionStart", "s0");
    let holder = fs::File::options().write(true).open(other.join(".seq")).unwrap();
    holder.lock().unwrap();
    let quick = WriteOptions { lock_bound: Duration::from_millis(10), fsync: false };
    let unordered = write_with(&other, "Stop", "s1", &quick);
    assert!(!unordered.is_ordered());
    fs::rename(other.join(unordered.to_string()), events.join(unordered.to_string())).unwrap();
    age_dir(&events);
    assert_eq!(natives(&drain(&mut reader)), ["Stop"]);
}

#[test]
fn a_directory_that_changed_moments_ago_is_listed_on_every_poll() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "SessionStart", "s1");
    let mut reader = Reader::open(config(tmp.path(), Start::Beginning)).unwrap();
    assert_eq!(natives(&drain(&mut reader)), ["SessionStart"]);
    let listed = reader.listings;
    reader.poll().unwrap();
    reader.poll().unwrap();
    assert_eq!(reader.listings, listed + 2, "a stamp younger than STAMP_SETTLED is not trusted");
}

/// Sets the counter (without its witness: the next writer checks it against the files and
/// continues after the higher of the two).
fn set_counter(dir: &Path, seq: u64) {
    fs::write(dir.join(crate::format::filename::COUNTER_FILE), format!("{seq:020}\n")).unwrap();
}

/// Moves every bucketed event to the top and removes the buckets: the flat layout of an
/// older relay.
fn flatten(dir: &Path) {
    for file in source::list(dir).unwrap().events {
        fs::rename(file.path(dir), dir.join(file.name.to_string())).unwrap();
    }
    for first in source::list(dir).unwrap().buckets {
        fs::remove_dir(dir.join(bucket_name(first))).unwrap();
    }
}

#[test]
fn a_flat_directory_of_an_older_relay_is_read_with_the_buckets_in_seq_order_and_a_cursor_of_it_resumes()
 {
    use crate::format::filename::BUCKET_SPAN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for native in ["SessionStart", "UserPromptSubmit", "PreToolUse"] {
        write(dir, native, "s1");
    }
    flatten(dir);
    assert!(source::list(dir).unwrap().events.iter().all(|e| e.place == source::Place::Top));
    // A consumer of the older layout read it all and saved its cursor.
    let mut old = Reader::open(config(dir, Start::Cursor("old".into()))).unwrap();
    assert_eq!(seqs(&drain(&mut old)), [1, 2, 3]);
    old.commit().unwrap();
    drop(old);
    // The new relay continues in buckets, across a boundary.
    set_counter(dir, BUCKET_SPAN - 2);
    for native in ["PostToolUse", "PreToolUse", "PostToolUse", "Stop"] {
        write(dir, native, "s1");
    }
    let bucketed = [BUCKET_SPAN - 1, BUCKET_SPAN, BUCKET_SPAN + 1, BUCKET_SPAN + 2];
    let listing = source::list(dir).unwrap();
    assert_eq!(listing.buckets, [0, BUCKET_SPAN]);
    let mut all = vec![1, 2, 3];
    all.extend(bucketed);
    assert_eq!(seqs(&drain(&mut Reader::open(config(dir, Start::Beginning)).unwrap())), all);
    let mut old = Reader::open(config(dir, Start::Cursor("old".into()))).unwrap();
    old.poll().unwrap();
    let mut seen = vec![old.next_event().unwrap().source.seq, old.next_event().unwrap().source.seq];
    old.commit().unwrap();
    drop(old);
    write(dir, "SessionEnd", "s1");
    let mut old = Reader::open(config(dir, Start::Cursor("old".into()))).unwrap();
    seen.extend(seqs(&drain(&mut old)));
    let mut expected = bucketed.to_vec();
    expected.push(BUCKET_SPAN + 3);
    assert_eq!(seen, expected, "resumed across the boundary, none missed, none twice");
}

#[test]
fn an_event_at_the_top_beside_its_bucket_is_read_in_its_place() {
    use crate::format::filename::BUCKET_SPAN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    EventsDir::create(dir).unwrap();
    set_counter(dir, BUCKET_SPAN + 1);
    write(dir, "SessionStart", "s1");
    // A bucket the relay cannot use (here, a file in its place): the events go to the top.
    let blocker = dir.join(bucket_name(2 * BUCKET_SPAN));
    fs::write(&blocker, "not a bucket").unwrap();
    set_counter(dir, 2 * BUCKET_SPAN - 1);
    for native in ["UserPromptSubmit", "Stop"] {
        write(dir, native, "s1");
    }
    let listing = source::list(dir).unwrap();
    let places: Vec<_> = listing.events.iter().map(|e| (e.name.seq, e.place)).collect();
    assert_eq!(
        places,
        [
            (BUCKET_SPAN + 2, source::Place::Bucket),
            (2 * BUCKET_SPAN, source::Place::Top),
            (2 * BUCKET_SPAN + 1, source::Place::Top),
        ]
    );
    let events = drain(&mut Reader::open(config(dir, Start::Beginning)).unwrap());
    assert_eq!(natives(&events), ["SessionStart", "UserPromptSubmit", "Stop"]);
    assert_eq!(fs::read_to_string(&blocker).unwrap(), "not a bucket");
    for event in &events {
        assert!(source::event_path(&event.source).is_file(), "{:?}", event.source);
    }
}

#[test]
fn a_hostile_bucket_is_never_read_nor_watched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let elsewhere = tmp.path().join("elsewhere");
    write(&elsewhere, "Stop", "planted");
    let planted = source::list(&elsewhere).unwrap().events[0];
    fs::rename(planted.path(&elsewhere), elsewhere.join(planted.name.to_string())).unwrap();
    EventsDir::create(&dir).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join(bucket_name(0))).unwrap();
    let mut reader = Reader::open(config(&dir, Start::Beginning)).unwrap();
    assert!(drain(&mut reader).is_empty(), "nothing read through the link");
    assert_eq!(reader.current_bucket(), None, "never watched");
    // The relay writes beside it, at the top, and that is read.
    write(&dir, "SessionStart", "s1");
    let events = drain(&mut reader);
    assert_eq!(natives(&events), ["SessionStart"]);
    assert_eq!(source::event_path(&events[0].source), dir.join(events[0].source.file.as_str()));
}

#[test]
fn a_history_of_more_buckets_than_one_listing_takes_is_read_whole_in_order_a_few_buckets_at_a_time()
{
    use crate::format::filename::BUCKET_SPAN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    EventsDir::create(dir).unwrap();
    // Two events in each of five buckets, one older relay's flat file between buckets 3 and
    // 4 (beyond what the first listing takes).
    let mut want = Vec::new();
    for bucket in 0..5u64 {
        set_counter(dir, bucket * BUCKET_SPAN + 10);
        want.push(write(dir, "PreToolUse", "s1").seq);
        want.push(write(dir, "PostToolUse", "s1").seq);
        if bucket == 3 {
            let name = write(dir, "PreToolUse", "s1");
            let file = source::list(dir).unwrap().events.into_iter().find(|e| e.name == name);
            let file = file.unwrap();
            fs::rename(file.path(dir), dir.join(name.to_string())).unwrap();
            want.push(name.seq);
        }
    }
    assert_eq!(source::list(dir).unwrap().buckets.len(), 5);
    let first = source::list_some(dir, 0, LISTED_BUCKETS).unwrap();
    assert!(first.up_to.is_some(), "one listing does not take every bucket");
    assert!(first.events.iter().all(|e| e.name.seq <= first.up_to.unwrap()));
    // Replayed, a reader from the beginning: everything, once, in seq order.
    let mut reader = Reader::open(config(dir, Start::Beginning)).unwrap();
    assert_eq!(seqs(&drain(&mut reader)), want);
    assert!(!reader.has_pending());
    // Through follow's replay too, which stops when nothing is pending.
    let mut got = Vec::new();
    crate::ingest::follow::replay(config(dir, Start::Beginning), |e| got.push(e.source.seq))
        .unwrap();
    assert_eq!(got, want, "replay stops only once every bucket is listed");
    // A named cursor stopped in the second bucket resumes there, none missed nor twice.
    let mut c = Reader::open(config(dir, Start::Cursor("c".into()))).unwrap();
    c.poll().unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(c.next_event().unwrap().source.seq);
    }
    c.commit().unwrap();
    drop(c);
    let mut c = Reader::open(config(dir, Start::Cursor("c".into()))).unwrap();
    seen.extend(seqs(&drain(&mut c)));
    assert_eq!(seen, want);
}

#[test]
fn workers_reading_ahead_across_buckets_while_the_next_is_listed_hand_out_everything_once() {
    use crate::format::filename::BUCKET_SPAN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    EventsDir::create(dir).unwrap();
    // 150 events in each of five buckets, and one older relay's flat file among them.
    let mut want = Vec::new();
    for bucket in 0..5u64 {
        set_counter(dir, bucket * BUCKET_SPAN + 10);
        for i in 0..150 {
            want.push(write(dir, if i % 2 == 0 { "PreToolUse" } else { "PostToolUse" }, "s1").seq);
        }
        if bucket == 2 {
            let name = write(dir, "Stop", "s1");
            let file = source::list(dir).unwrap().events.into_iter().find(|e| e.name == name);
            fs::rename(file.unwrap().path(dir), dir.join(name.to_string())).unwrap();
            want.push(name.seq);
        }
    }
    let cfg = ReaderConfig {
        batch: 40,
        read_ahead: 100,
        read_ahead_threads: 2,
        ..config(dir, Start::Cursor("c".into()))
    };
    let mut reader = Reader::open(cfg.clone()).unwrap();
    reader.ahead_from = 1;
    // Stopped halfway (the workers ahead, the next buckets listed early), then resumed.
    let mut got = Vec::new();
    while got.len() < 380 {
        reader.poll().unwrap();
        while got.len() < 380
            && let Some(event) = reader.next_event()
        {
            got.push(event);
        }
    }
    assert!(reader.ahead.is_some(), "the workers read ahead");
    let listings = reader.listings;
    reader.commit().unwrap();
    drop(reader);
    let mut reader = Reader::open(cfg).unwrap();
    reader.ahead_from = 1;
    got.extend(drain(&mut reader));
    assert_eq!(seqs(&got), want, "everything, once, in seq order");
    assert!(listings >= 3, "listed a few buckets at a time: {listings}");
    assert!(!reader.has_pending());
}

#[test]
fn an_event_still_being_written_at_the_end_of_a_listing_is_read_when_its_writer_is_done() {
    use crate::format::filename::BUCKET_SPAN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    EventsDir::create(dir).unwrap();
    // The last two seqs of each of four buckets: a listing of two buckets ends at 19,999.
    let mut want = Vec::new();
    for bucket in 0..4u64 {
        set_counter(dir, bucket * BUCKET_SPAN + BUCKET_SPAN - 3);
        want.push(write(dir, "PreToolUse", "s1").seq);
        want.push(write(dir, "PostToolUse", "s1").seq);
    }
    assert_eq!(want[3], 2 * BUCKET_SPAN - 1);
    // The writer of 19,999 has not finished: the counter says 19,998.
    set_counter(dir, 2 * BUCKET_SPAN - 2);
    let mut reader = Reader::open(config(dir, Start::Beginning)).unwrap();
    reader.poll().unwrap();
    let mut got = Vec::new();
    while let Some(event) = reader.next_event() {
        got.push(event);
    }
    assert_eq!(seqs(&got), want[..3], "up to the committed seq");
    // Done: the next listing looks in 19,999's bucket again, and goes on after it.
    set_counter(dir, 4 * BUCKET_SPAN - 1);
    got.extend(drain(&mut reader));
    assert_eq!(seqs(&got), want, "everything, once, in seq order");
}
