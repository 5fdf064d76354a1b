//! `hookline watch` fed by the real relay binary, run as an agent CLI runs it.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

pub fn hookline() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hookline"))
}

/// The relay binary built beside `hookline` (`cargo test --workspace` builds both).
pub fn relay() -> PathBuf {
    let relay = hookline().with_file_name("hookline-relay");
    assert!(relay.exists(), "{} is missing: run `cargo build --workspace` first", relay.display());
    relay
}

pub fn fixture(path: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../watcher/tests/fixtures").join(path),
    )
    .unwrap()
}

/// Runs the relay with `stdin` as its input and asserts it stayed silent.
pub fn run_relay(dir: &Path, args: &[&str], stdin: &[u8]) {
    run_relay_with(dir, args, &[], stdin);
}

/// [`run_relay`] with more variables in the relay's environment (`HOOKLINE_TAG`, ...).
pub fn run_relay_with(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: &[u8]) {
    let mut child = Command::new(relay())
        .args(args)
        .env_clear()
        .env("HOOKLINE_EVENTS_DIR", dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

pub fn watch(dir: &Path, args: &[&str]) -> Child {
    Command::new(hookline())
        .arg("watch")
        .arg("--events-dir")
        .arg(dir)
        .args(args)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Lines of a child's stdout, read on a thread so that reads can time out.
pub fn lines(stdout: ChildStdout) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let value: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
            if tx.send(value).is_err() {
                return;
            }
        }
    });
    rx
}

pub fn take(rx: &mpsc::Receiver<Value>, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            rx.recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("only {i} of {n} lines"))
        })
        .collect()
}

pub fn seqs(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["origin"]["seq"].as_u64().unwrap()).collect()
}

pub fn no_follow(dir: &Path, args: &[&str]) -> Vec<Value> {
    ndjson(watch(dir, &[&["--no-follow"], args].concat()).wait_with_output().unwrap())
}

/// The NDJSON lines of a `watch` that succeeded.
pub fn ndjson(out: std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn sixty_four_relays_at_once_while_watching_are_each_delivered_once_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut watcher = watch(&dir, &["--from-start"]);
    let rx = lines(watcher.stdout.take().unwrap());
    let payload = fixture("claude-code/2.1.332/PreToolUse.json");
    let relays: Vec<_> = (0..64)
        .map(|_| {
            let dir = dir.clone();
            let payload = payload.clone();
            std::thread::spawn(move || run_relay(&dir, &["--cli", "claude"], payload.as_bytes()))
        })
        .collect();
    for relay in relays {
        relay.join().unwrap();
    }
    let events = take(&rx, 64);
    assert_eq!(seqs(&events), (1..=64).collect::<Vec<_>>());
    assert!(events.iter().all(|e| e["kind"] == "tool_start" && e["tool"] == "Bash"));
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "nothing more, nothing twice");
    watcher.kill().unwrap();
    watcher.wait().unwrap();
}

#[test]
fn a_watch_stopped_mid_stream_resumes_from_its_cursor_with_no_duplicate_and_no_miss() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let payload = fixture("claude-code/2.1.332/PostToolUse.json");
    for _ in 0..20 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    let mut seen = seqs(&no_follow(&dir, &["--cursor", "loop", "--from-start"]));
    assert_eq!(seen.len(), 20);
    for _ in 0..10 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    // A following watch, stopped with SIGTERM after five lines: it finishes the line it is
    // writing, saves its cursor and exits; whatever it wrote counts as delivered.
    let mut follower = watch(&dir, &["--cursor", "loop", "--from-start"]);
    let rx = lines(follower.stdout.take().unwrap());
    seen.extend(seqs(&take(&rx, 5)));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(follower.id() as i32, libc::SIGTERM) };
    let status = follower.wait().unwrap();
    assert!(status.success(), "{status}");
    while let Ok(event) = rx.recv_timeout(Duration::from_secs(2)) {
        seen.push(event["origin"]["seq"].as_u64().unwrap());
    }
    for _ in 0..5 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    seen.extend(seqs(&no_follow(&dir, &["--cursor", "loop", "--from-start"])));
    assert_eq!(seen, (1..=35).collect::<Vec<_>>());
}

#[test]
fn a_watch_killed_mid_stream_misses_nothing_and_repeats_at_most_the_line_it_was_saving() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let payload = fixture("claude-code/2.1.332/PostToolUse.json");
    for _ in 0..10 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    let writer = {
        let (dir, payload) = (dir.clone(), payload.clone());
        std::thread::spawn(move || {
            for _ in 0..30 {
                run_relay(&dir, &[], payload.as_bytes());
            }
        })
    };
    // Three runs of a following watch, each killed with SIGKILL (no chance to save its
    // cursor) after some lines, while the relay keeps writing; then one that reads the rest.
    let mut runs: Vec<Vec<u64>> = Vec::new();
    for _ in 0..3 {
        let mut follower = watch(&dir, &["--cursor", "k", "--from-start"]);
        let rx = lines(follower.stdout.take().unwrap());
        let mut run = seqs(&take(&rx, 5));
        follower.kill().unwrap();
        follower.wait().unwrap();
        // Lines already in the pipe were written, so they count as delivered.
        while let Ok(event) = rx.recv_timeout(Duration::from_secs(2)) {
            run.push(event["origin"]["seq"].as_u64().unwrap());
        }
        runs.push(run);
    }
    writer.join().unwrap();
    runs.push(seqs(&no_follow(&dir, &["--cursor", "k", "--from-start"])));
    for pair in runs.windows(2) {
        let (last, next) = (*pair[0].last().unwrap(), pair[1][0]);
        assert!(next == last || next == last + 1, "{last} then {next} after a restart: {runs:?}");
    }
    let seen: Vec<u64> = runs.concat();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "in order: {seen:?}");
    let unique: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(unique, (1..=40).collect(), "no miss: {runs:?}");
    assert!(seen.len() - unique.len() <= 3, "at most one repeat per kill: {runs:?}");
}

#[test]
fn bad_input_and_a_corrupt_file_are_surfaced_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    run_relay(
        &dir,
        &["--cli", "claude"],
        fixture("claude-code/2.1.332/UserPromptSubmit.json").as_bytes(),
    );
    run_relay(&dir, &["--cli", "claude"], b"\xff\xfe binary garbage");
    run_relay(&dir, &["--cli", "claude"], fixture("claude-code/2.1.332/Stop.json").as_bytes());
    let second = hookline::ingest::source::list(&dir)
        .unwrap()
        .events
        .into_iter()
        .find(|e| e.name.seq == 3)
        .unwrap();
    fs::write(second.path(&dir), b"{\"v\":1,\"seq\":3,").unwrap();
    run_relay(
        &dir,
        &["--cli", "claude"],
        fixture("claude-code/2.1.332/SessionEnd-other.json").as_bytes(),
    );
    let out = watch(&dir, &["--from-start", "--no-follow"]).wait_with_output().unwrap();
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["turn_start", "unknown", "unknown", "session_end"]);
    assert!(events[1]["reason"].as_str().unwrap().contains("no event name"), "{}", events[1]);
    assert!(events[2]["reason"].as_str().unwrap().contains("quarantined"), "{}", events[2]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("quarantined"), "{stderr}");
    assert!(dir.join(".quarantine").join(second.name.to_string()).exists());
}

#[test]
fn legacy_files_are_merged_with_the_primary_dir_by_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let legacy = tmp.path().join("run/events");
    fs::create_dir_all(&legacy).unwrap();
    fs::write(
        legacy.join("1000-story-3-dev-1-SessionStart.json"),
        r#"{"ts": 1000, "event": "SessionStart", "task_id": "story-3-dev-1", "session_id": "old-1", "transcript_path": null, "cwd": "/p"}"#,
    )
    .unwrap();
    run_relay(
        &dir,
        &["--cli", "claude"],
        fixture("claude-code/2.1.332/UserPromptSubmit.json").as_bytes(),
    );
    let legacy_arg = legacy.to_str().unwrap();
    let events = no_follow(&dir, &["--cursor", "c", "--from-start", "--legacy-dir", legacy_arg]);
    let natives: Vec<&str> = events.iter().map(|e| e["native"].as_str().unwrap()).collect();
    assert_eq!(natives, ["SessionStart", "UserPromptSubmit"]);
    assert_eq!(events[0]["tag"], "story-3-dev-1");
    assert_eq!(events[0]["origin"]["legacy"], true);
    assert!(
        no_follow(&dir, &["--cursor", "c", "--from-start", "--legacy-dir", legacy_arg]).is_empty()
    );
    let names: BTreeSet<_> =
        fs::read_dir(&legacy).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "the legacy dir is never modified");
}

#[test]
fn the_largest_event_the_relay_writes_is_read_back_not_quarantined() {
    // Worst case for the size of `raw`: a full input cap of control bytes, valid UTF-8 that
    // JSON escapes to six bytes per byte (`\u0001`).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let input: Vec<u8> = (0u8..0x20)
        .filter(|b| !b"\x08\t\n\x0c\r".contains(b))
        .cycle()
        .take(hookline::format::envelope::MAX_INPUT_BYTES)
        .collect();
    run_relay(&dir, &["--cli", "claude"], &input);
    let listing = hookline::ingest::source::list(&dir).unwrap();
    assert_eq!(listing.events.len(), 1);
    let file = listing.events[0].path(&dir);
    let size = fs::metadata(&file).unwrap().len();
    assert!(size <= hookline::ingest::source::MAX_FILE_BYTES, "{size} bytes");
    let envelope = hookline::ingest::source::read_event(&dir, &listing.events[0]).unwrap().unwrap();
    assert!(!envelope.truncated);
    assert_eq!(envelope.raw_encoding, Some(hookline::format::envelope::RawEncoding::Base64));
    assert!(envelope.raw_bytes().unwrap() == input, "every byte round-trips");
}

/// `hookline ARGS...` with no events directory chosen but `env`'s.
fn hookline_with(args: &[&str], env: Option<&str>, home: &Path) -> Command {
    let mut command = Command::new(hookline());
    command.args(args).current_dir(home).env("HOME", home).env_remove("XDG_CONFIG_HOME");
    command.env_remove("XDG_STATE_HOME").env_remove("HOOKLINE_EVENTS_DIR");
    if let Some(dir) = env {
        command.env("HOOKLINE_EVENTS_DIR", dir);
    }
    command
}

#[test]
fn a_missing_or_relative_events_dir_is_an_error_naming_it_except_when_following() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nonexistent/events");
    let missing_arg = missing.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["watch", "--no-follow"],
        &["status", "--json"],
        &["explain", "s1"],
        &["decide", "s1", "nudge"],
        &["prune"],
    ];
    for command in commands {
        let cases = [
            (Some(missing_arg), None, format!("--events-dir {missing_arg}: no such directory")),
            (Some("rel/events"), None, "--events-dir rel/events: not an absolute path".into()),
            (
                None,
                Some(missing_arg),
                format!("HOOKLINE_EVENTS_DIR {missing_arg}: no such directory"),
            ),
            (None, Some("rel"), "HOOKLINE_EVENTS_DIR rel: not an absolute path".into()),
        ];
        for (flag, env, message) in cases {
            let flag: Vec<&str> = flag.map(|f| vec!["--events-dir", f]).unwrap_or_default();
            let out = hookline_with(&[command, &flag].concat(), env, tmp.path()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {flag:?} {env:?}: {out:?}");
            assert!(stderr.contains(&message), "{command:?}: {message:?} missing from {stderr}");
            assert!(out.stdout.is_empty(), "{command:?}: {out:?}");
        }
    }
    assert!(!tmp.path().join("nonexistent").exists(), "nothing was created");

    // Following waits for the directory, says so once, and creates nothing meanwhile, even
    // with a cursor to keep there.
    let mut follower = Command::new(hookline())
        .args(["watch", "--cursor", "c", "--events-dir", missing_arg])
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(follower.stdout.take().unwrap());
    std::thread::sleep(Duration::from_millis(500));
    assert!(follower.try_wait().unwrap().is_none(), "still waiting");
    assert!(!missing.exists(), "a cursor does not create the directory it waits for");
    run_relay(&missing, &["--cli", "claude"], fixture("claude-code/2.1.332/Stop.json").as_bytes());
    assert_eq!(seqs(&take(&rx, 1)), [1]);
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(follower.id() as i32, libc::SIGTERM) };
    let out = follower.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let waiting = format!("hookline: waiting for {missing_arg} to appear (it does not exist yet)");
    assert_eq!(stderr.matches(&waiting).count(), 1, "{stderr}");
}

/// A small tmpfs of our own, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts one at `at`, or says why it cannot (not root, no mount namespace rights).
    fn mount(at: &Path, size: &str) -> Result<Tmpfs, String> {
        fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "hookline-test"])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Tmpfs(at.to_owned()))
    }

    /// Fills it: a file grown until the disk says it is full.
    fn fill(&self) -> PathBuf {
        let path = self.0.join("filler");
        let mut file = fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        loop {
            match file.write_all(&chunk) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_cursor_that_cannot_be_saved_on_a_full_disk_is_retried_while_the_feed_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let disk = match Tmpfs::mount(&tmp.path().join("disk"), "1m") {
        Ok(disk) => disk,
        Err(why) => {
            println!("skipped: cannot mount a small tmpfs to fill ({why}); run as root to test");
            return;
        }
    };
    let dir = disk.0.join("events");
    let payload = fixture("claude-code/2.1.332/PostToolUse.json");
    for _ in 0..3 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    assert_eq!(seqs(&no_follow(&dir, &["--cursor", "full", "--from-start"])), [1, 2, 3]);
    for _ in 0..3 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    let filler = disk.fill();
    assert!(fs::write(dir.join(".cursors/probe"), [0u8; 4096]).is_err(), "the disk is full");

    let mut follower = watch(&dir, &["--cursor", "full", "--from-start"]);
    let rx = lines(follower.stdout.take().unwrap());
    let stderr = {
        let (tx, rx) = mpsc::channel();
        let pipe = follower.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        rx
    };
    let wait_for = |words: &str| {
        let line = stderr
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no stderr line saying {words:?}"));
        assert!(line.contains(words), "{words:?} missing from {line}");
        line
    };
    // The lines come although none of their saves works; the failure is reported.
    assert_eq!(seqs(&take(&rx, 3)), [4, 5, 6]);
    let report = wait_for("the feed goes on");
    assert!(report.starts_with("hookline: warning: cannot "), "{report}");
    assert!(report.contains("No space left on device"), "{report}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(follower.try_wait().unwrap().is_none(), "the feed did not stop");

    // Room again: new lines flow, and the cursor is saved at the next retry.
    fs::remove_file(filler).unwrap();
    for _ in 0..2 {
        run_relay(&dir, &[], payload.as_bytes());
    }
    assert_eq!(seqs(&take(&rx, 2)), [7, 8]);
    while !wait_for("hookline: ").contains("the cursor is saved again") {}
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(follower.id() as i32, libc::SIGTERM) };
    assert!(follower.wait().unwrap().success());
    assert!(
        no_follow(&dir, &["--cursor", "full", "--from-start"]).is_empty(),
        "every line was saved"
    );
}
