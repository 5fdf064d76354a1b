use std::fs;
use std::path::Path;

use super::*;
use crate::ingest::reader::{ReaderConfig, Start};
use crate::profile::Profiles;

fn write(dir: &Path, native: &str) {
    write_for(dir, native, "s", None);
}

/// Writes an event the way the relay does, for a session and an orchestrator tag.
fn write_for(dir: &Path, native: &str, session: &str, tag: Option<&str>) {
    crate::testing::write_event(dir, native, session, tag);
}

fn cursor_watcher(dir: &Path) -> Watcher {
    let config = ReaderConfig::new(dir, Start::Cursor("c".into()), Profiles::shipped().unwrap());
    Watcher::new(Reader::open(config).unwrap(), WatchOptions::default()).unwrap()
}

fn watcher(dir: &Path, options: WatchOptions) -> Watcher {
    let reader =
        Reader::open(ReaderConfig::new(dir, Start::Beginning, Profiles::shipped().unwrap()))
            .unwrap();
    Watcher::new(reader, options).unwrap()
}

fn next(w: &mut Watcher) -> Option<String> {
    w.next_timeout(Duration::from_secs(5)).unwrap().and_then(|e| e.native)
}

#[test]
fn notifications_deliver_new_events_without_waiting_for_a_rescan() {
    let tmp = tempfile::tempdir().unwrap();
    let options =
        WatchOptions { rescan_interval: Duration::from_secs(3600), ..WatchOptions::default() };
    let mut w = watcher(tmp.path(), options);
    assert_eq!(w.next_timeout(Duration::from_millis(50)).unwrap(), None);
    write(tmp.path(), "Stop");
    let start = Instant::now();
    assert_eq!(next(&mut w).as_deref(), Some("Stop"));
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "woken by the notification, not the hourly rescan"
    );
    assert_eq!(w.mode(), Mode::Notify);
}

#[test]
fn dropped_notifications_are_covered_by_the_rescan() {
    let tmp = tempfile::tempdir().unwrap();
    let options =
        WatchOptions { rescan_interval: Duration::from_millis(100), ..WatchOptions::default() };
    let mut w = watcher(tmp.path(), options);
    w.deaf = true;
    assert_eq!(w.next_timeout(Duration::from_millis(20)).unwrap(), None);
    write(tmp.path(), "PreToolUse");
    write(tmp.path(), "PostToolUse");
    assert_eq!(next(&mut w).as_deref(), Some("PreToolUse"));
    assert_eq!(next(&mut w).as_deref(), Some("PostToolUse"));
}

#[test]
fn polling_mode_needs_no_notifications() {
    let tmp = tempfile::tempdir().unwrap();
    let options = WatchOptions {
        mode: Mode::Poll,
        poll_interval: Duration::from_millis(20),
        ..WatchOptions::default()
    };
    let mut w = watcher(tmp.path(), options);
    assert!(w.watched.is_empty());
    write(tmp.path(), "Stop");
    assert_eq!(next(&mut w).as_deref(), Some("Stop"));
}

#[test]
fn a_dir_created_after_the_watch_began_and_recreated_later_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let options =
        WatchOptions { rescan_interval: Duration::from_secs(3600), ..WatchOptions::default() };
    let mut w = watcher(&dir, options);
    assert_eq!(w.next_timeout(Duration::from_millis(20)).unwrap(), None);
    write(&dir, "SessionStart");
    assert_eq!(next(&mut w).as_deref(), Some("SessionStart"), "seen through the parent's watch");
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(w.next_timeout(Duration::from_millis(50)).unwrap(), None);
    write(&dir, "SessionEnd");
    assert_eq!(next(&mut w).as_deref(), Some("SessionEnd"));
    let notices = w.take_notices();
    assert!(
        notices.iter().any(|n| matches!(n, Notice::DirGone(_) | Notice::DirRecreated(_))),
        "{notices:?}"
    );
}

#[test]
fn events_passed_over_by_a_filter_wait_in_order_and_commits_never_skip_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for native in ["SessionStart", "UserPromptSubmit", "Stop"] {
        write(&dir, native);
    }
    let config = ReaderConfig::new(&dir, Start::Cursor("c".into()), Profiles::shipped().unwrap());
    let mut w =
        Watcher::new(Reader::open(config.clone()).unwrap(), WatchOptions::default()).unwrap();
    let stop =
        w.next_matching(|e| e.native.as_deref() == Some("Stop"), Duration::from_secs(5)).unwrap();
    assert_eq!(stop.unwrap().source.seq, 3);
    w.commit().unwrap();
    drop(w);
    // The two passed-over events come back after a restart (never lost); Stop does not
    // (never twice).
    let mut w =
        Watcher::new(Reader::open(config.clone()).unwrap(), WatchOptions::default()).unwrap();
    assert_eq!(next(&mut w).as_deref(), Some("SessionStart"));
    w.commit().unwrap();
    assert_eq!(next(&mut w).as_deref(), Some("UserPromptSubmit"));
    assert_eq!(w.next_timeout(Duration::from_millis(100)).unwrap(), None);
    w.commit().unwrap();
    write(&dir, "SessionEnd");
    assert_eq!(next(&mut w).as_deref(), Some("SessionEnd"));
    w.commit().unwrap();
    drop(w);
    let mut w = Watcher::new(Reader::open(config).unwrap(), WatchOptions::default()).unwrap();
    assert_eq!(w.next_timeout(Duration::from_millis(100)).unwrap(), None, "nothing twice");
}

#[test]
fn a_spawned_watcher_hands_events_over_a_channel() {
    let tmp = tempfile::tempdir().unwrap();
    let w = watcher(tmp.path(), WatchOptions::default());
    let subscription = w.spawn();
    write(tmp.path(), "Stop");
    let event = subscription.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(event.native.as_deref(), Some("Stop"));
    subscription.stop().unwrap();
}

#[test]
fn the_watchers_own_listing_does_not_wake_it() {
    // inotify reports IN_OPEN when a scan opens the directory; waking on it rescanned in a
    // loop and kept a core busy while idle.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    write(&dir, "Stop");
    let options =
        WatchOptions { rescan_interval: Duration::from_secs(3600), ..WatchOptions::default() };
    let mut w = watcher(&dir, options);
    assert_eq!(next(&mut w).as_deref(), Some("Stop"));
    let before = w.scans;
    assert!(w.next_timeout(Duration::from_millis(500)).unwrap().is_none());
    assert!(w.scans - before <= 2, "{} listings in half a second of quiet", w.scans - before);
    write(&dir, "UserPromptSubmit");
    assert_eq!(next(&mut w).as_deref(), Some("UserPromptSubmit"));
}

#[test]
fn next_for_session_waits_for_that_session_by_id_or_tag_and_keeps_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    write_for(&dir, "SessionStart", "a", None);
    write_for(&dir, "SessionStart", "b", Some("task-b"));
    let mut w = cursor_watcher(&dir);
    let b = w.next_for_session("b", Duration::from_secs(5)).unwrap().unwrap();
    assert_eq!((b.session_id.as_deref(), b.source.seq), (Some("b"), 2));
    // Nothing more for b: it times out, after about the timeout, with None.
    let start = Instant::now();
    assert_eq!(w.next_for_session("task-b", Duration::from_millis(300)).unwrap(), None);
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(5), "{waited:?}");
    // An event that arrives while it waits is handed out as soon as it is seen, by tag.
    let writer = {
        let dir = dir.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(200));
            write_for(&dir, "Stop", "a", None);
            write_for(&dir, "Stop", "b", Some("task-b"));
        })
    };
    let stop = w.next_for_session("task-b", Duration::from_secs(5)).unwrap().unwrap();
    writer.join().unwrap();
    assert_eq!((stop.native.as_deref(), stop.source.seq), (Some("Stop"), 4));
    // The passed-over events of session a come next, in order, each once.
    let rest: Vec<u64> = std::iter::from_fn(|| w.next_timeout(Duration::from_millis(200)).unwrap())
        .map(|e| e.source.seq)
        .collect();
    assert_eq!(rest, [1, 3]);
}

#[test]
fn run_calls_back_in_order_and_commits_each_event_it_handled() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for native in ["SessionStart", "UserPromptSubmit", "Stop"] {
        write(&dir, native);
    }
    let mut seen = Vec::new();
    cursor_watcher(&dir)
        .run(|event| {
            seen.push(event.native.clone().unwrap());
            if seen.len() == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
    assert_eq!(seen, ["SessionStart", "UserPromptSubmit"]);
    // The event it broke on was handled, so it is committed too; a restart resumes after it,
    // and `run` waits for events that arrive later.
    let writer = {
        let dir = dir.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(200));
            write(&dir, "SessionEnd");
        })
    };
    let mut seen = Vec::new();
    cursor_watcher(&dir)
        .run(|event| {
            seen.push(event.source.seq);
            if seen.len() == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
    writer.join().unwrap();
    assert_eq!(seen, [3, 4]);
    let mut w = cursor_watcher(&dir);
    assert_eq!(w.next_timeout(Duration::from_millis(200)).unwrap(), None, "nothing twice");
}

/// Sets the counter so that the next events cross into a new bucket.
fn just_before_a_bucket_boundary(dir: &Path) {
    crate::format::store::EventsDir::create(dir).unwrap();
    let seq = crate::format::filename::BUCKET_SPAN - 2;
    fs::write(dir.join(crate::format::filename::COUNTER_FILE), format!("{seq:020}\n")).unwrap();
}

#[test]
fn notifications_follow_the_events_into_each_new_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    just_before_a_bucket_boundary(tmp.path());
    let options =
        WatchOptions { rescan_interval: Duration::from_secs(3600), ..WatchOptions::default() };
    let mut w = watcher(tmp.path(), options);
    assert_eq!(w.next_timeout(Duration::from_millis(50)).unwrap(), None);
    let start = Instant::now();
    for native in ["PreToolUse", "PostToolUse", "Stop", "UserPromptSubmit"] {
        write(tmp.path(), native);
        assert_eq!(next(&mut w).as_deref(), Some(native));
    }
    assert!(start.elapsed() < Duration::from_secs(60), "woken by notifications alone");
    let bucket =
        tmp.path().join(crate::format::filename::bucket_name(crate::format::filename::BUCKET_SPAN));
    assert!(w.watched.contains(&bucket), "{:?}", w.watched);
}

#[test]
fn dropped_notifications_across_a_bucket_boundary_are_covered_by_the_rescan() {
    for mode in [Mode::Notify, Mode::Poll] {
        let tmp = tempfile::tempdir().unwrap();
        just_before_a_bucket_boundary(tmp.path());
        let options = WatchOptions {
            mode,
            rescan_interval: Duration::from_millis(100),
            poll_interval: Duration::from_millis(100),
        };
        let mut w = watcher(tmp.path(), options);
        w.deaf = true;
        assert_eq!(w.next_timeout(Duration::from_millis(20)).unwrap(), None);
        let natives = ["PreToolUse", "PostToolUse", "Stop", "UserPromptSubmit"];
        for native in natives {
            write(tmp.path(), native);
        }
        let got: Vec<String> = (0..natives.len()).filter_map(|_| next(&mut w)).collect();
        assert_eq!(got, natives, "{mode:?}");
        // One at a time too: each found by the next rescan.
        write(tmp.path(), "Stop");
        assert_eq!(next(&mut w).as_deref(), Some("Stop"), "{mode:?}");
    }
}
