//! `hookline daemon`: the built binary on a real Unix socket, events written by the real relay,
//! and `hookline decide` / `hookline status` / the library client talking to it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use hookline::daemon::{Client, ClientError};
use hookline::state::{Expect, StateKind};
use serde_json::Value;

use super::decide::fire_as;

const C: &str = "claude-code/2.1.332/";

/// A `hookline daemon` child, started and serving.
struct Daemon {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Daemon {
    /// Starts a daemon on `dir` and waits until it serves.
    fn start(dir: &Path) -> Daemon {
        Daemon::start_with(dir, &[])
    }

    /// Starts a daemon on `dir` with more arguments and waits until it serves.
    fn start_with(dir: &Path, args: &[&str]) -> Daemon {
        let (mut daemon, first) = Daemon::spawn_with(dir, args);
        let line = first.recv_timeout(Duration::from_secs(30)).expect("the daemon says something");
        assert!(line.contains("serving"), "{line}\n{}", daemon.stderr());
        assert!(daemon.child.try_wait().unwrap().is_none(), "{}", daemon.stderr());
        daemon
    }

    /// Spawns a daemon on `dir` with more arguments; the receiver hears its first stderr line.
    fn spawn_with(dir: &Path, args: &[&str]) -> (Daemon, mpsc::Receiver<String>) {
        let mut child = hookline(dir, "daemon", args).stderr(Stdio::piped()).spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (first, heard) = mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        let all = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                all.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = first.send(line);
            }
        });
        (Daemon { child, stderr }, heard)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends `signal` and waits for the exit.
    fn signal(&mut self, signal: libc::c_int) -> std::process::ExitStatus {
        // SAFETY: kill has no memory preconditions; the pid is our own child's.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, signal) }, 0);
        self.child.wait().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hookline SUBCOMMAND --events-dir DIR ARGS...`, with no user profile or policy in the way.
fn hookline(dir: &Path, subcommand: &str, args: &[&str]) -> Command {
    let mut command = super::status::hookline(subcommand, dir, args);
    command.env_remove("HOOKLINE_EVENTS_DIR");
    command
}

fn decide(dir: &Path, args: &[&str]) -> Output {
    hookline(dir, "decide", args).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// One turn of session `session` (tag `tag`), written by the real relay: a prompt, then a stop.
fn turn(dir: &Path, session: &str, tag: &str) {
    fire_as(dir, &format!("{C}UserPromptSubmit.json"), session, tag, &[]);
    fire_as(dir, &format!("{C}Stop.json"), session, tag, &[]);
}

/// With no daemon answering, `decide task-1 input` replays history, withholds, and says on
/// stderr in one line that it fell back.
fn fallback_withholds_input(dir: &Path) {
    let out = decide(dir, &["task-1", "input", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let withheld = json(&out);
    assert_eq!(
        (&withheld["verdict"], &withheld["rule"]),
        (&"withhold".into(), &"input-slot-refused".into())
    );
    assert_eq!(withheld["evidence"]["view"]["replayed"], true, "{withheld}");
    assert!(withheld.get("slot").is_none(), "{withheld}");
    let said = stderr(&out);
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(said.contains("no hookline daemon answers on") && said.contains("replayed"), "{said}");
}

/// A live turn of `session` (tag `tag`), written by the real relay while the daemon runs;
/// returns once the daemon sees the idle it ends in.
fn live_turn(dir: &Path, session: &str, tag: &str) {
    let mut client = Client::connect(dir).unwrap();
    let before = client.state(session).unwrap().map(|v| v.seq);
    turn(dir, session, tag);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let view = client.state(session).unwrap();
        if let Some(v) = &view
            && v.state == StateKind::Idle
            && v.authoritative
            && before.is_none_or(|seq| v.seq > seq)
        {
            return;
        }
        assert!(Instant::now() < deadline, "the daemon never saw the turn end: {view:?}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn socket(dir: &Path) -> PathBuf {
    dir.join(".hookline.sock")
}

#[test]
fn the_socket_is_private_a_second_daemon_is_refused_naming_the_pid_and_sigterm_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut daemon = Daemon::start(&dir);

    let meta = socket(&dir).symlink_metadata().unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let pid_file = std::fs::read_to_string(dir.join(".hookline.pid")).unwrap();
    assert_eq!(pid_file.trim(), daemon.pid().to_string());

    let second = hookline(&dir, "daemon", &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    let said = stderr(&second);
    assert!(said.contains(&format!("another hookline daemon (pid {})", daemon.pid())), "{said}");
    assert!(said.contains(&format!("kill {}", daemon.pid())), "{said}");
    // The refused daemon left the first one's socket and pid file alone.
    assert!(Client::connect(&dir).is_ok());
    assert_eq!(std::fs::read_to_string(dir.join(".hookline.pid")).unwrap(), pid_file);

    let status = daemon.signal(libc::SIGTERM);
    assert!(status.success(), "{status:?}");
    assert!(!socket(&dir).exists(), "a clean shutdown removes the socket");
    assert!(!dir.join(".hookline.pid").exists());
    let err = Client::connect(&dir).unwrap_err();
    assert!(err.is_not_running(), "{err}");
}

#[test]
fn decide_through_the_daemon_allows_input_at_a_live_idle_once_and_the_fallback_never_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    // History: a whole turn before the daemon started.
    turn(&dir, "s1", "task-1");

    // No daemon: the one-shot replay withholds, and says on stderr that it replays.
    fallback_withholds_input(&dir);

    let mut daemon = Daemon::start(&dir);
    // The daemon has seen the turn, as history: it shows it but does not allow on it.
    let out = decide(&dir, &["task-1", "input", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json(&out)["rule"], "input-slot-refused", "{}", json(&out));
    assert_eq!(json(&out)["evidence"]["view"]["replayed"], true);
    assert!(stderr(&out).is_empty(), "a daemon answered: nothing to say: {out:?}");

    // A live turn: the daemon allows input once, and hands the slot to the caller.
    live_turn(&dir, "s1", "task-1");
    let out = decide(&dir, &["task-1", "input", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let allowed = json(&out);
    assert_eq!(allowed["rule"], "input-at-explicit-idle", "{allowed}");
    assert_eq!(allowed["slot"]["tag"], "task-1");
    // A caller's own policy is the fallback's: the daemon's is in force, and it says so.
    let policy = tmp.path().join("policy.toml");
    std::fs::write(&policy, "").unwrap();
    let out = decide(&dir, &["task-1", "input", "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "the slot went to the first caller: {out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("input-slot-refused"), "{out:?}");
    assert!(
        stderr(&out).contains("--policy and --legacy-dir apply only when no daemon"),
        "{out:?}"
    );
    // A bad one is an error all the same.
    std::fs::write(&policy, "[nudge]\nmax-in-row = 2\n").unwrap();
    let out = decide(&dir, &["task-1", "input", "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // status says where its states come from.
    let rows = json(&hookline(&dir, "status", &["--json"]).output().unwrap());
    assert_eq!(rows[0]["authoritative"], true, "{rows}");

    // The same events, replayed once the daemon is gone: never an allow, and it says why.
    live_turn(&dir, "s1", "task-1");
    let status = daemon.signal(libc::SIGKILL);
    assert!(!status.success());
    assert!(socket(&dir).exists(), "a killed daemon leaves its socket behind");
    fallback_withholds_input(&dir);
    let out = hookline(&dir, "status", &["--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)[0]["replayed"], true);
    assert!(stderr(&out).contains("answering from replayed history"), "{out:?}");
}

#[test]
fn a_stale_socket_from_a_dead_daemon_is_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut dead = Daemon::start(&dir);
    let dead_pid = dead.pid();
    dead.signal(libc::SIGKILL);
    assert!(socket(&dir).symlink_metadata().unwrap().file_type().is_socket());
    let err = Client::connect(&dir).unwrap_err();
    assert!(err.is_not_running(), "nobody accepts on a dead daemon's socket: {err}");

    let mut daemon = Daemon::start(&dir);
    assert_ne!(daemon.pid(), dead_pid);
    let client = Client::connect(&dir).expect("the new daemon serves on the same path");
    assert_eq!(client.info().events_dir, dir);
    let pid_file = std::fs::read_to_string(dir.join(".hookline.pid")).unwrap();
    assert_eq!(pid_file.trim(), daemon.pid().to_string());
    // Something that is not a socket in its place is left alone, and refused.
    drop(client);
    daemon.signal(libc::SIGTERM);
    std::fs::write(socket(&dir), "mine").unwrap();
    let out = hookline(&dir, "daemon", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("is not a socket; left alone"), "{out:?}");
    assert_eq!(std::fs::read_to_string(socket(&dir)).unwrap(), "mine");
}

#[test]
fn clients_racing_for_one_idle_get_its_slot_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let _daemon = Daemon::start(&dir);
    const CLIENTS: usize = 6;
    for round in 1..=4 {
        live_turn(&dir, "s1", "task-1");
        // Every client connected first, then all ask at once.
        let barrier = Arc::new(Barrier::new(CLIENTS));
        let racers: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (dir, barrier) = (dir.clone(), Arc::clone(&barrier));
                thread::spawn(move || {
                    let mut client = Client::connect(&dir).unwrap();
                    barrier.wait();
                    if i % 2 == 0 {
                        client.take_input_slot("task-1", Expect::default()).unwrap().is_ok()
                    } else {
                        let ask =
                            hookline::decide::Ask::new("s1", hookline::decide::Question::Input);
                        client.decide(&ask, None).unwrap().slot.is_some()
                    }
                })
            })
            .collect();
        let granted = racers.into_iter().map(|r| r.join().unwrap()).filter(|g| *g).count();
        assert_eq!(granted, 1, "round {round}: {granted} of {CLIENTS} clients got the slot");
    }

    // The same race between `hookline decide` processes: one exits 0, the others 1.
    live_turn(&dir, "s1", "task-1");
    let children: Vec<Child> = (0..4)
        .map(|_| {
            hookline(&dir, "decide", &["task-1", "input"]).stdout(Stdio::null()).spawn().unwrap()
        })
        .collect();
    let mut codes: Vec<i32> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    codes.sort_unstable();
    assert_eq!(codes, [0, 1, 1, 1]);
}

#[test]
fn a_client_gone_mid_wait_harms_no_other_and_one_too_many_is_told_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut daemon = Daemon::start(&dir);
    // A raw connection that asks for a wait, then goes away before its reply.
    {
        let mut raw = UnixStream::connect(socket(&dir)).unwrap();
        writeln!(raw, r#"{{"id": 1, "op": "next_event", "session": "s1", "timeout_ms": 300}}"#)
            .unwrap();
    }
    thread::sleep(Duration::from_millis(600));
    let mut client =
        Client::connect(&dir).expect("the daemon outlived the reply it could not send");
    assert!(client.sessions().unwrap().is_empty());

    // A live event wakes a waiting client.
    let waiter = {
        let dir = dir.clone();
        thread::spawn(move || {
            Client::connect(&dir)
                .unwrap()
                .next_event("task-1", Duration::from_secs(20), None)
                .unwrap()
        })
    };
    fire_as(&dir, &format!("{C}UserPromptSubmit.json"), "s1", "task-1", &[]);
    let next = waiter.join().unwrap();
    assert!(!next.timed_out);
    assert_eq!(next.event.unwrap().kind.name(), "turn_start");

    // Up to 32 connections at once (with `client`); the next is told so, and a client reports
    // it. The waiter's connection ends once the daemon reads its end: until then, try again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let held: Vec<Client> = loop {
        match (0..31).map(|_| Client::connect(&dir)).collect::<Result<Vec<_>, _>>() {
            Ok(held) => break held,
            Err(e) => assert!(Instant::now() < deadline, "31 more connections refused: {e}"),
        }
        thread::sleep(Duration::from_millis(50));
    };
    let err = Client::connect(&dir).unwrap_err();
    let ClientError::Refused { error, .. } = &err else { panic!("{err}") };
    assert!(error.contains("already serves 32 connections"), "{err}");
    drop(held);
    drop(client);

    // SIGINT ends a wait still running with an error rather than leave it hanging.
    let waiter = {
        let dir = dir.clone();
        thread::spawn(move || {
            let mut client = Client::connect(&dir).unwrap();
            let started = Instant::now();
            (client.next_event("s9", Duration::from_secs(300), None), started.elapsed())
        })
    };
    thread::sleep(Duration::from_millis(300));
    assert!(daemon.signal(libc::SIGINT).success());
    let (result, waited) = waiter.join().unwrap();
    assert!(result.is_err(), "{result:?}");
    assert!(waited < Duration::from_secs(30), "{waited:?}");
    assert!(!socket(&dir).exists());
}

#[test]
fn a_directory_that_fails_the_relays_checks_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = hookline(&dir, "daemon", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = stderr(&out);
    assert!(said.contains(&dir.display().to_string()), "{said}");
    assert!(!socket(&dir).exists() && !dir.join(".hookline.lock").exists(), "{said}");

    // A symlink to a good directory is refused too: the socket never lands where it points.
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = hookline(&link, "daemon", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(std::fs::read_dir(&real).unwrap().next().is_none(), "nothing written through it");
}

#[test]
fn a_session_prefix_reaches_the_daemon_as_the_sessions_name_only_where_nothing_is_typed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    turn(&dir, "75a87ff6-e91a-4c2e", "alpha-1");
    turn(&dir, "75a87ff6-f00d-4c2e", "alpha-2");
    let _daemon = Daemon::start(&dir);
    live_turn(&dir, "75a87ff6-e91a-4c2e", "alpha-1");

    // The id as the status table clips it, ellipsis and all, names the session for a question
    // that types nothing.
    let out = decide(&dir, &["75a87ff6-e91…", "crashed", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json(&out)["session"], "75a87ff6-e91a-4c2e");
    assert!(stderr(&out).is_empty(), "a daemon answered: {out:?}");
    // input names it exactly: a prefix is no session's name (no signal, nothing taken), and
    // stderr says which session it starts.
    let out = decide(&dir, &["75a87ff6-e91…", "input", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(json(&out)["state"], Value::Null, "{out:?}");
    let said = stderr(&out);
    assert!(said.contains("is the start of 75a87ff6-e91a-4c2e"), "{said}");
    // The exact tag names it: the live idle allows, once, under a lease.
    let out = decide(&dir, &["alpha-1", "input", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(json(&out)["lease"].as_str().is_some_and(|l| l.starts_with("l-")), "{out:?}");
    let out = decide(&dir, &["75a87ff6-e91a-4c2e", "input", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // A prefix of both sessions names neither: an error listing them, exit 2.
    let out = decide(&dir, &["75a87ff6", "crashed"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = stderr(&out);
    assert!(said.contains("75a87ff6-e91a-4c2e") && said.contains("75a87ff6-f00d-4c2e"), "{said}");
}

#[test]
fn a_classifier_consult_longer_than_the_reply_timeout_is_waited_for_through_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir_all(&dir).unwrap();
    // Longer than the client's REPLY_TIMEOUT (10 s): the client must wait for the consult
    // rather than give up and answer from history.
    let policy = tmp.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[classifier]\ncommand = [\"/bin/sh\", \"-c\", \"cat >/dev/null; sleep 11; echo stalled\"]\n\
         timeout = \"30s\"\n",
    )
    .unwrap();
    let _daemon = Daemon::start_with(&dir, &["--policy", policy.to_str().unwrap()]);
    live_turn(&dir, "s1", "task-1");
    let out = decide(&dir, &["task-1", "stall", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!stderr(&out).contains("replayed history"), "{}", stderr(&out));
    let d = json(&out);
    assert_eq!(
        (&d["signal"], &d["rule"]),
        (&"classifier".into(), &"stall-classifier-stalled".into())
    );
    assert_eq!(d["evidence"]["view"]["replayed"], false, "{d}");
}

#[test]
fn an_endless_request_line_gets_one_error_and_a_disconnect_in_flat_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let daemon = Daemon::start(&dir);
    let before = super::serve::peak_rss_kib(daemon.pid());
    let stream = UnixStream::connect(socket(&dir)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // A client that sets out to send a GiB without a newline.
    let writer = stream.try_clone().unwrap();
    let sending = thread::spawn(move || super::serve::endless_line(writer));
    let mut replies = BufReader::new(stream);
    let mut line = String::new();
    replies.read_line(&mut line).unwrap();
    let error: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(error["ok"], false, "{error}");
    assert!(error["error"].as_str().unwrap().contains("longer than 1048576 bytes"), "{error}");
    line.clear();
    // Disconnected: an end of file, or a reset when the daemon closed with the client's
    // bytes still unread (Linux then sends RST instead of FIN).
    match replies.read_line(&mut line) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("not disconnected after one reply: {other:?} {line}"),
    }
    let sent = sending.join().unwrap();
    assert!(sent < 64 << 20, "the daemon stopped reading: only {sent} bytes went");
    // It serves on, and held no more than a line's worth meanwhile.
    let mut client = Client::connect(&dir).unwrap();
    assert!(client.sessions().unwrap().is_empty());
    let grew = super::serve::peak_rss_kib(daemon.pid()).saturating_sub(before);
    assert!(grew < 16 << 10, "the daemon's peak memory grew by {grew} KiB");
}

/// A relay event of session `session` (tag `tag`) whose payload names `transcript`.
fn fire_with_transcript(dir: &Path, fixture: &str, session: &str, transcript: &Path) {
    let transcript = transcript.to_str().unwrap();
    fire_as(dir, &format!("{C}{fixture}"), session, "task-1", &[("transcript_path", transcript)]);
}

#[test]
fn a_transcript_swapped_for_a_fifo_blocks_no_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    // The transcript is a link, swapped again and again between two files and a FIFO: a
    // reader that looks at the path, then opens it, sooner or later opens the FIFO.
    let (a, b, fifo) =
        (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"), tmp.path().join("fifo"));
    std::fs::write(&a, "{}\n").unwrap();
    std::fs::write(&b, "{}\n{}\n").unwrap();
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = tmp.path().join("transcript.jsonl");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let _daemon = Daemon::start(&dir);
    fire_with_transcript(&dir, "UserPromptSubmit.json", "s1", &link);
    fire_with_transcript(&dir, "Stop.json", "s1", &link);
    let mut client = Client::connect(&dir).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.state("s1").unwrap().is_none_or(|v| v.state != StateKind::Idle) {
        assert!(Instant::now() < deadline, "the daemon never saw the turn");
        thread::sleep(Duration::from_millis(20));
    }
    let flipping = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flipper = {
        let (flipping, link) = (Arc::clone(&flipping), link.clone());
        let temp = tmp.path().join("transcript.tmp");
        thread::spawn(move || {
            for target in [&a, &fifo, &b, &fifo].into_iter().cycle() {
                if !flipping.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let _ = std::fs::remove_file(&temp);
                std::os::unix::fs::symlink(target, &temp).unwrap();
                std::fs::rename(&temp, &link).unwrap();
            }
        })
    };
    // Every answer reads the transcript: each must come (a client gives up after 10 s).
    let asked = Instant::now();
    let mut answers = 0;
    while asked.elapsed() < Duration::from_secs(2) {
        client.state("s1").expect("the daemon answers while the transcript is swapped");
        answers += 1;
    }
    flipping.store(false, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(answers > 10, "{answers} answers");
    // Left a FIFO: hello and decide answer.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("fifo"), &link).unwrap();
    let mut fresh = Client::connect(&dir).expect("hello is answered");
    fresh
        .decide(&hookline::decide::Ask::new("task-1", hookline::decide::Question::Input), None)
        .unwrap();
    let out = decide(&dir, &["task-1", "input", "--json"]);
    assert!(!stderr(&out).contains("replayed"), "the daemon answered: {out:?}");
}

/// Whether `pid` still runs (neither gone nor a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

#[test]
fn sigterm_ends_the_daemon_within_a_second_whatever_its_requests_are_doing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir_all(&dir).unwrap();
    // A consult that would run for minutes, and a process it sends off to a session of its
    // own: neither may hold the daemon, nor outlive it.
    let (shell, detached) = (tmp.path().join("shell.pid"), tmp.path().join("detached.pid"));
    let script = format!(
        "echo $$ > {shell}; setsid sh -c 'echo $$ > {detached}; exec sleep 300' \
         </dev/null >/dev/null 2>&1 & cat >/dev/null; sleep 300",
        shell = shell.display(),
        detached = detached.display()
    );
    let policy = tmp.path().join("policy.toml");
    let command = serde_json::to_string(&["/bin/sh", "-c", &script]).unwrap();
    std::fs::write(&policy, format!("[classifier]\ncommand = {command}\ntimeout = \"240s\"\n"))
        .unwrap();
    let mut daemon = Daemon::start_with(&dir, &["--policy", policy.to_str().unwrap()]);
    live_turn(&dir, "s1", "task-1");
    let consulting = {
        let dir = dir.clone();
        thread::spawn(move || decide(&dir, &["task-1", "stall", "--json"]))
    };
    let pid_of = |file: &Path| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(pid) =
                std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok())
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "the consult never started");
            thread::sleep(Duration::from_millis(20));
        }
    };
    let (shell, detached): (i32, i32) = (pid_of(&shell), pid_of(&detached));
    // A client in the middle of a line, and one waiting for an event.
    let mut half = UnixStream::connect(socket(&dir)).unwrap();
    half.write_all(&[b'x'; 4096]).unwrap();
    let waiter = {
        let dir = dir.clone();
        thread::spawn(move || {
            Client::connect(&dir).unwrap().next_event("s9", Duration::from_secs(300), None)
        })
    };
    thread::sleep(Duration::from_millis(300));

    let signalled = Instant::now();
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(daemon.pid() as libc::pid_t, libc::SIGTERM) }, 0);
    let status = loop {
        if let Some(status) = daemon.child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < Duration::from_secs(10), "SIGTERM did not end the daemon");
        thread::sleep(Duration::from_millis(5));
    };
    let took = signalled.elapsed();
    assert!(status.success(), "{status:?}\n{}", daemon.stderr());
    assert!(took < Duration::from_secs(1), "the daemon took {took:?} to stop");
    assert!(!socket(&dir).exists());
    // Nothing the consult started outlives the daemon.
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(shell) || running(detached) {
        assert!(Instant::now() < deadline, "the consult's processes outlived the daemon");
        thread::sleep(Duration::from_millis(20));
    }
    assert!(waiter.join().unwrap().is_err());
    let consulted = consulting.join().unwrap();
    assert_ne!(consulted.status.code(), Some(0), "no allow from a daemon gone: {consulted:?}");
    drop(half);
}

#[test]
fn a_waiting_next_event_is_told_of_a_transition_only_the_transcript_made() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let transcript = tmp.path().join("s1.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let _daemon = Daemon::start(&dir);
    let mut client = Client::connect(&dir).unwrap();
    fire_with_transcript(&dir, "UserPromptSubmit.json", "s1", &transcript);
    let first = client.next_event("task-1", Duration::from_secs(10), None).unwrap();
    assert_eq!(first.event.map(|e| e.kind), Some(hookline::canonical::Kind::TurnStart));
    // A second client waits; nothing else is asked: only the transcript changes the session.
    let waiter = thread::spawn({
        let dir = dir.clone();
        move || {
            let mut waiting = Client::connect(&dir).unwrap();
            waiting.next_event("task-1", Duration::from_secs(20), None).unwrap()
        }
    });
    // Whether the wait starts before or after the transcript changes, the transition is the
    // session's next item, as an event would be.
    std::fs::write(&transcript, format!("{}\n", super::serve::esc_marker("s1"))).unwrap();
    let told = waiter.join().unwrap();
    assert!(!told.timed_out && told.transcript && told.event.is_none(), "{told:?}");
    let view = told.view.expect("the session's view");
    assert_eq!(view.state, StateKind::WaitingOnHuman, "{view:?}");
    assert_eq!(view.evidence.kind, "transcript", "{view:?}");
}

#[test]
fn two_concurrent_consults_of_one_session_cannot_both_pass_a_cap_of_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    std::fs::create_dir_all(&dir).unwrap();
    let runs = tmp.path().join("runs");
    let policy = tmp.path().join("policy.toml");
    let classifier =
        format!("cat >/dev/null; echo run >> '{}'; sleep 1; echo stalled", runs.display());
    std::fs::write(
        &policy,
        format!(
            "[classifier]\ncommand = [\"/bin/sh\", \"-c\", {classifier:?}]\n\
             max-per-session = 1\ntimeout = \"20s\"\n"
        ),
    )
    .unwrap();
    let _daemon = Daemon::start_with(&dir, &["--policy", policy.to_str().unwrap()]);
    // A turn that ends on a last message and no task list: stall's consult point.
    live_turn(&dir, "s1", "task-1");
    let barrier = Arc::new(Barrier::new(2));
    let asks: Vec<_> = (0..2)
        .map(|_| {
            let (dir, barrier) = (dir.clone(), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                decide(&dir, &["task-1", "stall", "--json"])
            })
        })
        .collect();
    let answers: Vec<Value> = asks.into_iter().map(|a| json(&a.join().unwrap())).collect();
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n", "one consult ran: {answers:?}");
    let mut outcomes: Vec<String> = answers
        .iter()
        .map(|d| d["evidence"]["classifier"]["outcome"].as_str().unwrap_or("none").to_owned())
        .collect();
    outcomes.sort();
    assert_eq!(outcomes, ["answered", "session_cap"], "{answers:?}");
}
