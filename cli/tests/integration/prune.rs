//! `hookline prune`, and the periodic prune of `hookline watch --cursor`: nothing unconsumed
//! is removed.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use super::watch::{fixture, hookline, lines, no_follow, run_relay, seqs, take, watch};

fn relay_events(dir: &Path, n: usize) {
    let payload = fixture("claude-code/2.1.332/PostToolUse.json");
    for _ in 0..n {
        run_relay(dir, &[], payload.as_bytes());
    }
}

/// Makes every event file a month old.
fn age_events(dir: &Path) {
    let month_ago = SystemTime::now() - Duration::from_secs(30 * 86400);
    for file in hookline::ingest::source::list(dir).unwrap().events {
        let path = file.path(dir);
        File::options().write(true).open(path).unwrap().set_modified(month_ago).unwrap();
    }
}

/// The seqs of the event files left, through the library's listing (the top of the directory
/// and its buckets).
fn seqs_left(dir: &Path) -> Vec<u64> {
    let listing = hookline::ingest::source::list(dir).unwrap();
    assert!(listing.foreign.is_empty() && listing.temps.is_empty(), "{listing:?}");
    listing.events.iter().map(|e| e.name.seq).collect()
}

fn prune(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(hookline())
        .arg("prune")
        .arg("--events-dir")
        .arg(dir)
        .args(args)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn prune_never_goes_beyond_the_slowest_cursor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 2);
    assert_eq!(no_follow(&dir, &["--cursor", "slow", "--from-start"]).len(), 2);
    relay_events(&dir, 3);
    assert_eq!(no_follow(&dir, &["--cursor", "fast", "--from-start"]).len(), 5);
    age_events(&dir);
    let out = prune(&dir, &["--max-age", "1d"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("removed 2 events") && stdout.contains("kept 2 old events"),
        "{stdout}"
    );
    assert_eq!(seqs_left(&dir), [3, 4, 5]);
    assert_eq!(
        no_follow(&dir, &["--cursor", "slow", "--from-start"]).len(),
        3,
        "the slow cursor misses nothing"
    );
}

#[test]
fn with_no_cursor_prune_removes_nothing_unless_given_an_age() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 3);
    age_events(&dir);
    let out = prune(&dir, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed 0 events"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-age"), "{out:?}");
    assert_eq!(seqs_left(&dir), [1, 2, 3]);
    prune(&dir, &["--max-age", "1d"]);
    assert_eq!(seqs_left(&dir), [3], "age alone, asked for; the newest is kept");
}

#[test]
fn a_new_watch_cursor_prunes_nothing_it_has_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 3);
    age_events(&dir);
    // It prunes as it starts, with a one-second retention age.
    let mut follower = watch(&dir, &["--cursor", "new", "--from-start", "--retention", "1s"]);
    let rx = lines(follower.stdout.take().unwrap());
    assert_eq!(seqs(&take(&rx, 3)), [1, 2, 3]);
    follower.kill().unwrap();
    follower.wait().unwrap();
}

fn cursors(dir: &Path, args: &[&str]) -> Output {
    Command::new(hookline())
        .arg("cursors")
        .args(args)
        .arg("--events-dir")
        .arg(dir)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap()
}

/// A cursor nobody reads any more (the README's `mine`, tried once) holds `prune` back: prune
/// names it, `cursors` lists it, `cursors remove` takes it away; one in use cannot be removed.
#[test]
fn prune_names_the_cursor_holding_it_back_and_cursors_lists_and_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 2);
    assert_eq!(no_follow(&dir, &["--cursor", "mine", "--from-start"]).len(), 2);
    relay_events(&dir, 3);
    assert_eq!(no_follow(&dir, &["--cursor", "loop", "--from-start"]).len(), 5);
    age_events(&dir);
    let out = prune(&dir, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("kept 2 old events"), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("hookline: cursor mine (at seq 2, saved ")
            && stderr.ends_with(
                " ago) has not read 2 of them; if nothing reads it any more: hookline cursors remove mine\n"
            ),
        "{stderr}"
    );

    let out = cursors(&dir, &["--json"]);
    assert!(out.status.success(), "{out:?}");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(&str, u64, u64, bool)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap();
            (name, c["seq"].as_u64().unwrap(), c["unread"].as_u64().unwrap(), c["in_use"] == true)
        })
        .collect();
    assert_eq!(rows, [("loop", 5, 0, false), ("mine", 2, 3, false)]);
    let table = String::from_utf8(cursors(&dir, &[]).stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("cursor ") && lines[0].ends_with("unread  in use"), "{table}");
    assert!(lines[2].starts_with("mine ") && lines[2].ends_with("         3  no"), "{table}");

    // In use by a follower: refused, and it stays.
    let mut follower = watch(&dir, &["--cursor", "loop"]);
    let listed = || String::from_utf8(cursors(&dir, &[]).stdout).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !listed().lines().any(|l| l.starts_with("loop ") && l.ends_with("yes")) {
        assert!(std::time::Instant::now() < deadline, "{}", listed());
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = cursors(&dir, &["remove", "loop"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is open in another process"), "{out:?}");
    follower.kill().unwrap();
    follower.wait().unwrap();

    let out = cursors(&dir, &["remove", "mine"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("removed cursor mine of {}\n", dir.display())
    );
    let out = cursors(&dir, &["remove", "mine"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "hookline: no cursor named \"mine\" (cursors: loop)\n"
    );
    // Nothing holds it back now: the old events loop read go (3 and 4; the newest stays).
    let out = prune(&dir, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed 2 events"), "{out:?}");
    assert_eq!(seqs_left(&dir), [5]);
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// A new cursor starts with the events that arrive from now on, as `--help` says; with
/// `--from-start`, from the oldest present; once saved, it resumes either way.
#[test]
fn a_new_watch_cursor_starts_now_unless_from_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 3);
    assert!(no_follow(&dir, &["--cursor", "new"]).is_empty(), "the history is not replayed");
    relay_events(&dir, 1);
    assert_eq!(seqs(&no_follow(&dir, &["--cursor", "new"])), [4]);
    assert_eq!(seqs(&no_follow(&dir, &["--cursor", "all", "--from-start"])), [1, 2, 3, 4]);
    relay_events(&dir, 1);
    assert_eq!(seqs(&no_follow(&dir, &["--cursor", "all", "--from-start"])), [5]);
    assert_eq!(seqs(&no_follow(&dir, &["--cursor", "new"])), [5]);
}

#[test]
fn a_quarantine_symlinked_elsewhere_is_never_followed_by_a_reader_watch_or_prune() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    relay_events(&dir, 3);
    age_events(&dir);
    // A folder of documents, a month old, that `.quarantine` points to.
    let documents = tmp.path().join("documents");
    std::fs::create_dir(&documents).unwrap();
    let month_ago = SystemTime::now() - Duration::from_secs(30 * 86400);
    for name in ["thesis.odt", "taxes.pdf"] {
        std::fs::write(documents.join(name), name).unwrap();
        File::options()
            .write(true)
            .open(documents.join(name))
            .unwrap()
            .set_modified(month_ago)
            .unwrap();
    }
    std::os::unix::fs::symlink(&documents, dir.join(".quarantine")).unwrap();
    // A damaged event, which a reader would quarantine a copy of.
    let damaged = hookline::ingest::source::list(&dir).unwrap().events[1].path(&dir);
    std::fs::write(&damaged, "{").unwrap();
    let untouched = |when: &str| {
        let mut names: Vec<_> = std::fs::read_dir(&documents)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["taxes.pdf", "thesis.odt"], "{when}");
        assert_eq!(std::fs::read_to_string(documents.join("taxes.pdf")).unwrap(), "taxes.pdf");
    };

    // `watch --cursor` prunes as it starts, then reads the damaged event: it is delivered as
    // `unknown`, the events behind it too, and nothing is written behind the link.
    let mut follower = watch(&dir, &["--cursor", "c", "--from-start", "--retention", "1s"]);
    let events = take(&lines(follower.stdout.take().unwrap()), 3);
    follower.kill().unwrap();
    follower.wait().unwrap();
    assert_eq!(seqs(&events), [1, 2, 3]);
    assert_eq!(events[1]["kind"], "unknown", "{}", events[1]);
    let reason = events[1]["reason"].as_str().unwrap();
    assert!(reason.contains("no copy quarantined"), "{reason}");
    untouched("after watch --cursor");

    let out = prune(&dir, &["--max-age", "1d"]);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("0 quarantined files"), "{stdout}");
    assert!(
        stderr.contains(".quarantine is not a directory") && stderr.contains("left alone"),
        "{stderr}"
    );
    untouched("after prune");
    assert!(dir.join(".quarantine").symlink_metadata().unwrap().file_type().is_symlink());
}
