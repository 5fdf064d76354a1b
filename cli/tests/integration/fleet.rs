//! Many machines through a real `nats-server` (JetStream): `hookline forward` on each host's
//! events directory, `hookline watch --nats` / `serve --nats` centrally. Each test starts its
//! own servers on loopback, on free ports, with their own storage directories, and kills them
//! at the end. Without `nats-server` the tests are skipped loudly, except under CI=true,
//! where they fail.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::watch::{fixture, hookline, lines, ndjson, no_follow, run_relay, seqs, take};

/// The `nats-server` binary, or `None` (after a loud message) when it is missing outside CI.
fn nats_server() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file());
    if found.is_none() {
        let why = "nats-server is missing: install it (apt-get install nats-server) to run the \
                   fleet tests";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("\n*** SKIPPED: {why} ***\n");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One `nats-server -js`, killed when dropped.
struct Server {
    binary: PathBuf,
    args: Vec<String>,
    port: u16,
    child: Option<Child>,
}

impl Server {
    fn start(binary: &Path, store: &Path, port: u16, extra: &[String]) -> Server {
        let mut args: Vec<String> =
            ["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"].map(String::from).to_vec();
        args.push(store.display().to_string());
        args.extend_from_slice(extra);
        let mut server = Server { binary: binary.to_owned(), args, port, child: None };
        server.restart();
        server
    }

    fn restart(&mut self) {
        let child = Command::new(&self.binary)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen on {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A `hookline forward` child, killed when dropped; its stderr lines on a channel.
struct Forward {
    child: Child,
    stderr: mpsc::Receiver<String>,
}

impl Forward {
    fn start(url: &str, dir: &Path, host: &str, extra: &[&str]) -> Forward {
        let mut child = Command::new(hookline())
            .args(["forward", "--nats", url, "--host", host, "--poll", "--events-dir"])
            .arg(dir)
            .args(extra)
            .env("XDG_CONFIG_HOME", dir.join("no-config"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = stderr_lines(child.stderr.take().unwrap());
        Forward { child, stderr }
    }

    /// SIGTERM, then everything it said.
    fn stop(mut self) -> Vec<String> {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert!(self.child.wait().unwrap().success());
        self.stderr.try_iter().collect()
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a line containing `text`; returns it.
fn wait_line(lines: &mpsc::Receiver<String>, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if line.contains(text) {
            return line;
        }
        seen.push(line);
    }
    panic!("no line with {text:?} in {seen:?}");
}

fn stderr_lines(stderr: ChildStderr) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Fires one Claude fixture into `dir` as session `session`.
fn fire(dir: &Path, name: &str, session: &str) {
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    payload["session_id"] = json!(session);
    run_relay(dir, &["--cli", "claude"], payload.to_string().as_bytes());
}

const PROMPT: &str = "claude-code/2.1.332/UserPromptSubmit.json";
const STOP: &str = "claude-code/2.1.332/Stop.json";
const TOOL: &str = "claude-code/2.1.332/PreToolUse.json";

/// The seq the forwarder's cursor has reached.
fn forwarded(dir: &Path) -> u64 {
    let path = dir.join(".cursors/forward-HOOKLINE.json");
    let Ok(text) = std::fs::read_to_string(path) else { return 0 };
    serde_json::from_str::<Value>(&text).map_or(0, |v| v["seq"].as_u64().unwrap_or(0))
}

fn wait_forwarded(dir: &Path, seq: u64, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while forwarded(dir) < seq {
        assert!(Instant::now() < deadline, "forwarded only to {} of {seq}", forwarded(dir));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Everything consumer `consumer` has not yet acknowledged, read once.
fn central(url: &str, consumer: &str) -> Vec<Value> {
    let out = Command::new(hookline())
        .args(["watch", "--no-follow", "--nats", url, "--consumer", consumer])
        .output()
        .unwrap();
    ndjson(out)
}

fn watch_nats(url: &str, consumer: &str) -> (Child, mpsc::Receiver<Value>) {
    let mut child = Command::new(hookline())
        .args(["watch", "--nats", url, "--consumer", consumer])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rx = lines(child.stdout.take().unwrap());
    (child, rx)
}

/// A `hookline serve --nats` child.
struct Serve {
    child: Child,
    replies: mpsc::Receiver<Value>,
}

impl Serve {
    fn start(url: &str, consumer: &str, home: &Path) -> Serve {
        let mut child = Command::new(hookline())
            .args(["serve", "--nats", url, "--consumer", consumer, "--events-dir"])
            .arg(home.join("central-events"))
            .env("XDG_CONFIG_HOME", home.join("no-config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let replies = lines(child.stdout.take().unwrap());
        let stderr = stderr_lines(child.stderr.take().unwrap());
        // Live from here: what was in the stream before is history.
        wait_line(&stderr, "following live");
        Serve { child, replies }
    }

    fn ask(&mut self, request: Value) -> Value {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        self.replies.recv_timeout(Duration::from_secs(30)).expect("a reply")
    }

    /// The session's view once its state is `state`.
    fn wait_state(&mut self, session: &str, state: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let reply = self.ask(json!({"op": "state", "session": session}));
            if reply["view"]["state"] == state {
                return reply["view"].clone();
            }
            assert!(Instant::now() < deadline, "{session} never became {state}: {reply}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn verdict(&mut self, session: &str) -> Value {
        let reply = self.ask(json!({"op": "decide", "session": session, "question": "input"}));
        reply["decision"]["verdict"].clone()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn two_hosts_feed_one_central_serve_and_its_decisions_are_right_for_both() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let (a, b) = (tmp.path().join("host-a"), tmp.path().join("host-b"));
    let _fa = Forward::start(&server.url(), &a, "host-a", &[]);
    // History: a whole turn on host A before the central serve starts.
    fire(&a, PROMPT, "hist");
    fire(&a, STOP, "hist");
    wait_forwarded(&a, 2, 20);
    let mut serve = Serve::start(&server.url(), "central", tmp.path());
    let _fb = Forward::start(&server.url(), &b, "host-b", &[]);
    // Live: host A's session goes idle, host B's stays busy in a tool.
    fire(&a, PROMPT, "sa");
    fire(&a, STOP, "sa");
    fire(&b, PROMPT, "sb");
    fire(&b, TOOL, "sb");
    let idle = serve.wait_state("sa", "idle");
    assert!(!idle["replayed"].as_bool().unwrap(), "{idle}");
    serve.wait_state("sb", "child_command");
    let hist = serve.wait_state("hist", "idle");
    assert!(hist["replayed"].as_bool().unwrap(), "history is replayed: {hist}");
    assert_eq!(serve.verdict("sa"), "allow", "a live idle on host A allows input");
    assert_eq!(serve.verdict("sb"), "withhold", "host B's session is busy");
    assert_eq!(serve.verdict("hist"), "withhold", "history never authorizes input");
    for (session, host) in [("sa", "host-a:"), ("sb", "host-b:")] {
        let next = serve.ask(json!({"op": "next_event", "session": session}));
        let origin = next["event"]["origin"]["dir"].as_str().unwrap_or_default().to_owned();
        assert!(origin.starts_with(host), "the origin names the host: {next}");
    }
}

#[test]
fn a_server_killed_and_restarted_mid_stream_loses_nothing_and_repeats_nothing() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let dir = tmp.path().join("events");
    let forward = Forward::start(&server.url(), &dir, "h", &[]);
    let (mut watch, rx) = watch_nats(&server.url(), "central");
    for i in 0..30 {
        fire(&dir, TOOL, &format!("s{}", i % 3));
    }
    wait_forwarded(&dir, 10, 20);
    server.kill();
    // The relay does not care: it writes locally and returns at once.
    for i in 30..60 {
        fire(&dir, TOOL, &format!("s{}", i % 3));
    }
    // The forwarder waits, and says how far behind it is.
    let behind = wait_line(&forward.stderr, "events behind");
    assert!(behind.starts_with("hookline: ") && !behind.contains(" 0 events"), "{behind}");
    server.restart();
    for i in 60..90 {
        fire(&dir, TOOL, &format!("s{}", i % 3));
    }
    let events = take(&rx, 90);
    assert_eq!(seqs(&events), (1..=90).collect::<Vec<_>>());
    assert!(rx.recv_timeout(Duration::from_millis(500)).is_err(), "nothing twice");
    watch.kill().unwrap();
    watch.wait().unwrap();
}

#[test]
fn a_forwarder_killed_mid_publish_resumes_and_the_server_drops_the_republish() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let dir = tmp.path().join("events");
    for i in 0..300 {
        fire(&dir, TOOL, &format!("s{}", i % 5));
    }
    let mut first = Forward::start(&server.url(), &dir, "h", &[]);
    wait_forwarded(&dir, 20, 20);
    first.child.kill().unwrap(); // SIGKILL, mid-stream
    first.child.wait().unwrap();
    assert!(forwarded(&dir) < 300, "killed before the end");
    let second = Forward::start(&server.url(), &dir, "h", &[]);
    wait_forwarded(&dir, 300, 60);
    second.stop();
    // A crash between the ack and the cursor, at its worst: the cursor lost entirely.
    std::fs::remove_file(dir.join(".cursors/forward-HOOKLINE.json")).unwrap();
    let third = Forward::start(&server.url(), &dir, "h", &[]);
    wait_forwarded(&dir, 300, 60);
    let said = third.stop();
    let dropped: u64 = said
        .iter()
        .filter_map(|l| l.strip_prefix("hookline: the server dropped "))
        .map(|rest| rest.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(dropped, 300, "{said:?}");
    let events = central(&server.url(), "central");
    assert_eq!(seqs(&events), (1..=300).collect::<Vec<_>>(), "each event in the stream once");
}

/// The server that leads the stream's replicas, asked through the official client.
fn stream_leader(urls: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let servers: Vec<&str> = urls.split(',').collect();
        let client = async_nats::connect(servers).await.unwrap();
        let mut stream = async_nats::jetstream::new(client).get_stream("HOOKLINE").await.unwrap();
        let info = stream.info().await.unwrap();
        info.cluster.as_ref().and_then(|c| c.leader.clone()).expect("a leader")
    })
}

#[test]
fn a_replicated_stream_goes_on_when_one_node_of_three_dies() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let routes: Vec<String> = ports.iter().map(|(_, c)| format!("nats://127.0.0.1:{c}")).collect();
    let mut nodes: Vec<Server> = ports
        .iter()
        .enumerate()
        .map(|(i, (port, cluster))| {
            let extra = [
                "-n".into(),
                format!("node-{i}"),
                "--cluster_name".into(),
                "hookline".into(),
                "--cluster".into(),
                format!("nats://127.0.0.1:{cluster}"),
                "--routes".into(),
                routes.join(","),
            ];
            Server::start(&binary, &tmp.path().join(format!("store-{i}")), *port, &extra)
        })
        .collect();
    let urls = nodes.iter().map(Server::url).collect::<Vec<_>>().join(",");
    let dir = tmp.path().join("events");
    let _forward = Forward::start(&urls, &dir, "h", &["--replicas", "3"]);
    for i in 0..20 {
        fire(&dir, TOOL, &format!("s{}", i % 2));
    }
    wait_forwarded(&dir, 20, 60);
    // The worst node to lose: the stream's leader.
    let leader = stream_leader(&urls);
    let index: usize = leader.strip_prefix("node-").and_then(|i| i.parse().ok()).unwrap();
    nodes[index].kill();
    for i in 20..40 {
        fire(&dir, TOOL, &format!("s{}", i % 2));
    }
    wait_forwarded(&dir, 40, 60);
    let survivors: Vec<String> =
        nodes.iter().enumerate().filter(|(i, _)| *i != index).map(|(_, n)| n.url()).collect();
    let survivors = survivors.join(",");
    assert_ne!(stream_leader(&survivors), leader, "another node leads the stream");
    let events = central(&survivors, "central");
    assert_eq!(seqs(&events), (1..=40).collect::<Vec<_>>());
}

#[test]
fn a_server_unreachable_at_start_makes_the_forwarder_wait_and_nobody_else() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let dir = tmp.path().join("events");
    let mut forward = Forward::start(&url, &dir, "h", &[]);
    for i in 0..5 {
        fire(&dir, PROMPT, &format!("s{i}"));
    }
    // The local watcher reads the directory as ever.
    assert_eq!(seqs(&no_follow(&dir, &["--from-start"])), [1, 2, 3, 4, 5]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(forwarded(&dir), 0, "nothing is forwarded while the server is down");
    assert!(forward.child.try_wait().unwrap().is_none(), "the forwarder waits");
    let waiting = wait_line(&forward.stderr, "cannot reach stream HOOKLINE");
    assert!(waiting.starts_with("hookline: warning: "), "{waiting}");
    let _server = Server::start(&binary, &tmp.path().join("store"), port, &[]);
    wait_forwarded(&dir, 5, 30);
    assert_eq!(seqs(&central(&url, "central")), [1, 2, 3, 4, 5]);
}

#[test]
fn a_second_reader_of_one_consumer_is_refused() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let dir = tmp.path().join("events");
    let _forward = Forward::start(&server.url(), &dir, "h", &[]);
    fire(&dir, PROMPT, "s");
    wait_forwarded(&dir, 1, 20);
    let (mut first, rx) = watch_nats(&server.url(), "central");
    assert_eq!(seqs(&take(&rx, 1)), [1]);
    let out = Command::new(hookline())
        .args(["watch", "--nats", &server.url(), "--consumer", "central"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("consumer central is being read by pid"), "{stderr}");
    first.kill().unwrap();
    first.wait().unwrap();
}

#[test]
fn raw_envelopes_go_on_their_own_prefix_and_the_central_reader_skips_them() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let dir = tmp.path().join("events");
    let _forward = Forward::start(&server.url(), &dir, "h", &["--raw"]);
    fire(&dir, PROMPT, "s");
    fire(&dir, STOP, "s");
    wait_forwarded(&dir, 2, 20);
    let file = hookline::ingest::source::list(&dir).unwrap().events.last().unwrap().path(&dir);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let raw = runtime.block_on(async {
        let client = async_nats::connect(server.url()).await.unwrap();
        let stream = async_nats::jetstream::new(client).get_stream("HOOKLINE").await.unwrap();
        stream.get_last_raw_message_by_subject("hookline_raw.h.claude.s").await.unwrap()
    });
    assert_eq!(raw.payload.as_ref(), std::fs::read(&file).unwrap(), "the envelope, byte for byte");
    let out = Command::new(hookline())
        .args(["watch", "--no-follow", "--nats", &server.url(), "--consumer", "all"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let events = ndjson(out);
    assert_eq!(seqs(&events), [1, 2], "each canonical event once");
    assert!(stderr.contains("skipped 2 messages"), "the raw ones: {stderr}");
}

#[test]
fn a_daemon_fed_by_a_consumer_answers_decide_for_a_remote_host() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let (host, central) = (tmp.path().join("host-a"), tmp.path().join("central"));
    let _forward = Forward::start(&server.url(), &host, "host-a", &[]);
    fire(&host, PROMPT, "hist");
    fire(&host, STOP, "hist");
    wait_forwarded(&host, 2, 20);
    let mut daemon = Command::new(hookline())
        .args(["daemon", "--nats", &server.url(), "--consumer", "daemon", "--events-dir"])
        .arg(&central)
        .env("HOME", tmp.path())
        .env_remove("XDG_CONFIG_HOME")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = stderr_lines(daemon.stderr.take().unwrap());
    wait_line(&stderr, "following live");
    fire(&host, PROMPT, "sa");
    fire(&host, STOP, "sa");
    let decide = |session: &str| {
        Command::new(hookline())
            .args(["decide", session, "input", "--json", "--events-dir"])
            .arg(&central)
            .env("HOME", tmp.path())
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let allowed = loop {
        let out = decide("sa");
        if out.status.code() == Some(0) || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = String::from_utf8_lossy(&allowed.stdout);
    assert_eq!(
        allowed.status.code(),
        Some(0),
        "a live idle on host A, through the daemon: {stdout}"
    );
    assert_eq!(decide("hist").status.code(), Some(1), "history never authorizes input");
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(daemon.id() as libc::pid_t, libc::SIGTERM) };
    assert!(daemon.wait().unwrap().success());
}

/// A user key: its public key, and its seed in a 0600 file under `dir`.
pub fn user_key(dir: &Path, name: &str) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let key = nkeys::KeyPair::new_user();
    let path = dir.join(format!("{name}.nk"));
    std::fs::write(&path, key.seed().unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    (key.public_key(), path)
}

/// The permissions docs/fleet.md gives a forwarder of `host` (`create`: it may create the
/// stream), in nats-server's configuration syntax.
pub fn forwarder_permissions(host: &str, create: bool) -> String {
    let mut publish = vec![format!("hookline.{host}.>"), "$JS.API.STREAM.INFO.HOOKLINE".into()];
    if create {
        publish.push("$JS.API.STREAM.CREATE.HOOKLINE".into());
    }
    let publish: Vec<String> = publish.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "{{ publish: {{ allow: [{}] }}, subscribe: {{ allow: [\"_INBOX.{host}.>\"] }} }}",
        publish.join(", ")
    )
}

/// A `hookline daemon --nats` child over `central` (its local events directory), live once
/// it returns; its stderr lines on a channel.
pub struct Central {
    pub child: Child,
    pub stderr: mpsc::Receiver<String>,
    pub dir: PathBuf,
}

impl Central {
    pub fn start(url: &str, home: &Path, extra: &[&str]) -> Central {
        let dir = home.join("central");
        let mut child = Command::new(hookline())
            .args(["daemon", "--nats", url, "--consumer", "daemon", "--events-dir"])
            .arg(&dir)
            .args(extra)
            .env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = stderr_lines(child.stderr.take().unwrap());
        wait_line(&stderr, "following live");
        Central { child, stderr, dir }
    }

    /// `hookline ARGS --events-dir <central>` run against the daemon.
    pub fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(hookline())
            .args(args)
            .arg("--events-dir")
            .arg(&self.dir)
            .env("HOME", self.dir.parent().unwrap())
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    }

    /// `status --json` through the daemon.
    pub fn views(&self) -> Vec<Value> {
        let out = self.run(&["status", "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The view of the session `id` on `host` once `ready` holds for it.
    pub fn wait_view(&self, id: &str, host: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let views = self.views();
            let found = views.iter().find(|v| v["session_id"] == id && v["host"] == host);
            if let Some(view) = found.filter(|v| ready(v)) {
                return view.clone();
            }
            assert!(Instant::now() < deadline, "{id}@{host} never got there: {views:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn stop(mut self) -> Vec<String> {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert!(self.child.wait().unwrap().success());
        self.stderr.try_iter().collect()
    }
}

impl Drop for Central {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_forwarder_confined_to_its_subjects_cannot_speak_for_another_host() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a_key, a_seed) = user_key(tmp.path(), "host-a");
    let (b_key, b_seed) = user_key(tmp.path(), "build-2");
    let (c_key, c_seed) = user_key(tmp.path(), "central");
    let config = tmp.path().join("nats.conf");
    // host-a may not create the stream: the documented set without STREAM.CREATE suffices
    // once it exists.
    std::fs::write(
        &config,
        format!(
            "authorization {{ users = [\n  {{ nkey: {a_key:?}, permissions: {} }}\n  \
             {{ nkey: {b_key:?}, permissions: {} }}\n  {{ nkey: {c_key:?} }}\n] }}\n",
            forwarder_permissions("host-a", false),
            forwarder_permissions("build-2", true),
        ),
    )
    .unwrap();
    let conf = ["-c".to_owned(), config.display().to_string()];
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &conf);
    let url = server.url();
    let seed = |p: &Path| p.display().to_string();
    let (a, b, forger) =
        (tmp.path().join("host-a"), tmp.path().join("build-2"), tmp.path().join("forger"));
    let _fb = Forward::start(&url, &b, "build-2", &["--nkey", &seed(&b_seed)]);
    fire(&b, PROMPT, "job-b2");
    wait_forwarded(&b, 1, 20);
    let central = Central::start(&url, tmp.path(), &["--nkey", &seed(&c_seed)]);
    let _fa = Forward::start(&url, &a, "host-a", &["--nkey", &seed(&a_seed)]);
    // build-2's job goes mid-turn, live; host-a's own session works with host-a's permissions.
    fire(&b, TOOL, "job-b2");
    fire(&a, PROMPT, "sa");
    fire(&a, STOP, "sa");
    central.wait_view("sa", "host-a", |v| v["state"] == "idle");
    central.wait_view("job-b2", "build-2", |v| v["state"] == "child_command");

    // 1. On another host's subject: host-a's key posing as build-2. The server refuses it
    // (build-2's replies are not host-a's to read, nor its subjects to publish on); nothing
    // reaches the stream, the forwarder's cursor never moves.
    let posing = Forward::start(&url, &forger, "build-2", &["--nkey", &seed(&a_seed)]);
    fire(&forger, STOP, "job-b2");
    let refused = wait_line(&posing.stderr, "Permissions Violation");
    assert!(refused.contains("_INBOX.build-2."), "{refused}");
    wait_line(&posing.stderr, "warning: cannot reach stream HOOKLINE");
    assert_eq!(forwarded(&forger), 0, "the server acknowledged nothing");
    drop(posing);

    // 2. On its own subject, naming build-2: by header, by body, by message id. The central
    // refuses each one, acknowledged and logged with its id and subject.
    let stop = no_follow(&forger, &["--from-start"]).pop().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = async_nats::ConnectOptions::with_nkey(
            std::fs::read_to_string(&a_seed).unwrap().trim().to_owned(),
        )
        .custom_inbox_prefix("_INBOX.host-a")
        .connect(url.as_str())
        .await
        .unwrap();
        let mut js = async_nats::jetstream::new(client);
        js.set_timeout(Duration::from_secs(1));
        // With its own replies: the server refuses the publish on build-2's subject.
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", "build-2.forged.0");
        let payload = serde_json::to_vec(&stop).unwrap().into();
        let denied = js.publish_with_headers("hookline.build-2.claude.job-b2", headers, payload);
        assert!(denied.await.unwrap().await.is_err(), "no ack on another host's subject");
        let subject = "hookline.host-a.claude.job-b2";
        let mut body_naming = stop.clone();
        body_naming["host"] = json!("build-2");
        for (i, (host, id, body)) in [
            (Some("build-2"), "host-a.forged.1", &stop),
            (None, "host-a.forged.2", &body_naming),
            (Some("host-a"), "build-2.forged.3", &stop),
        ]
        .into_iter()
        .enumerate()
        {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", id);
            if let Some(host) = host {
                headers.insert("Hookline-Host", host);
            }
            let payload = serde_json::to_vec(body).unwrap().into();
            let ack = js.publish_with_headers(subject, headers, payload).await.unwrap().await;
            assert!(ack.is_ok(), "message {i}: the server let host-a publish on its own subject");
        }
    });
    for (n, id) in ["host-a.forged.1", "host-a.forged.2", "build-2.forged.3"].iter().enumerate() {
        let line = wait_line(&central.stderr, id);
        assert!(
            line.starts_with("hookline: warning: refused message ")
                && line.contains("on hookline.host-a.claude.job-b2")
                && line.contains("build-2")
                && line.contains(&format!("{} refused so far", n + 1)),
            "{line}"
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let views = central.views();
    let job: Vec<&Value> = views.iter().filter(|v| v["session_id"] == "job-b2").collect();
    assert_eq!(job.len(), 1, "no session of host-a's by that name either: {views:?}");
    assert_eq!((&job[0]["host"], &job[0]["state"]), (&json!("build-2"), &json!("child_command")));
    let decide = central.run(&["decide", "job-b2@build-2", "input", "--json"]);
    assert_eq!(decide.status.code(), Some(1), "{}", String::from_utf8_lossy(&decide.stdout));
    central.stop();
}

/// A private tmux server, killed when dropped.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// Waits until `probe` gives something `ready` holds for; returns it and how long it took.
fn within<T: std::fmt::Debug>(
    what: &str,
    probe: impl Fn() -> T,
    ready: impl Fn(&T) -> bool,
) -> (T, Duration) {
    let started = Instant::now();
    loop {
        let value = probe();
        if ready(&value) {
            return (value, started.elapsed());
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{what}: never: {value:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn top_notify_and_tmux_at_a_central_follow_two_other_hosts() {
    let Some(binary) = nats_server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&binary, &tmp.path().join("store"), free_port(), &[]);
    let url = server.url();
    let (a, b) = (tmp.path().join("host-a"), tmp.path().join("host-b"));
    let fa = Forward::start(&url, &a, "host-a", &[]);
    let _fb = Forward::start(&url, &b, "host-b", &[]);
    wait_line(&fa.stderr, "connected");
    let central = Central::start(&url, tmp.path(), &[]);
    let socket = central.dir.join(".hookline.sock");
    // The person's notify command: one line per firing, with the host.
    let (config, fired) = (tmp.path().join("notify.toml"), tmp.path().join("fired"));
    std::fs::write(
        &config,
        format!(
            "version = 1\n[[notify]]\nname = \"dialog\"\non = [\"waiting_on_human.permission\"]\n\
             shell = true\nrun = 'echo \"$HOOKLINE_HOST $HOOKLINE_SESSION $HOOKLINE_REASON\" >> {}'\n",
            fired.display()
        ),
    )
    .unwrap();
    let notify = |tmp: &Path| {
        let mut child = Command::new(hookline())
            .args(["notify", "--config"])
            .arg(&config)
            .arg("--daemon")
            .arg(&socket)
            .env("HOME", tmp)
            .env_remove("XDG_CONFIG_HOME")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = stderr_lines(child.stderr.take().unwrap());
        wait_line(&stderr, "following the daemon");
        (child, stderr)
    };
    let (mut notifier, _said) = notify(tmp.path());
    let fired_lines = || std::fs::read_to_string(&fired).unwrap_or_default();
    // top, on a terminal: a private tmux server's pane.
    let tmux = Tmux { socket: tmp.path().join("tmux.sock") };
    let top = format!("{} top --daemon {}", hookline().display(), socket.display());
    tmux.run(&["new-session", "-d", "-x", "160", "-y", "30", &top]);
    let screen = || tmux.run(&["capture-pane", "-p"]);
    within("top's first screen", screen, |s| s.contains("hookline top: 0 sessions"));

    fire(&b, PROMPT, "rb");
    fire(&b, TOOL, "rb");
    fire(&a, PROMPT, "ra");
    let (_, took) =
        within("host-b's row", screen, |s| s.contains("host-b") && s.contains("child_command"));
    eprintln!("top: host-b's tool on screen {} ms after its event", took.as_millis());
    // A permission dialog on host-a: the notify command fires, top shows it first.
    fire(&a, "claude-code/2.1.332/PermissionRequest.json", "ra");
    let (_, notified) = within("the notify command", fired_lines, |l| !l.is_empty());
    let (shown, top_took) = within("top", screen, |s| {
        s.contains("waiting_on_human permis") && s.contains("1 need you")
    });
    eprintln!(
        "a permission dialog on host-a: notified in {} ms, on top's screen in {} ms",
        notified.as_millis(),
        top_took.as_millis()
    );
    assert_eq!(fired_lines(), "host-a ra waiting_on_human.permission\n");
    let rows: Vec<&str> = shown.lines().filter(|l| l.contains("host-")).collect();
    assert!(rows[0].contains("waiting_on_human") && rows[0].contains("host-a"), "{shown}");
    assert!(shown.contains("1 need you"), "{shown}");
    // tmux's summary counts the remote sessions (no local pane holds them).
    let summary = Command::new(hookline())
        .args(["tmux", "--daemon"])
        .arg(&socket)
        .arg("--tmux-socket")
        .arg(&tmux.socket)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&summary.stdout), "1 need you\n");
    // A restarted notifier does not fire the same dialog again; a new one fires once.
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(notifier.id() as libc::pid_t, libc::SIGTERM) };
    assert!(notifier.wait().unwrap().success());
    fire(&a, TOOL, "ra");
    let (mut notifier, _said) = notify(tmp.path());
    fire(&b, "claude-code/2.1.332/PermissionRequest.json", "rb");
    within("the second dialog", fired_lines, |l| l.lines().count() == 2);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        fired_lines(),
        "host-a ra waiting_on_human.permission\nhost-b rb waiting_on_human.permission\n"
    );
    unsafe { libc::kill(notifier.id() as libc::pid_t, libc::SIGTERM) };
    assert!(notifier.wait().unwrap().success());
    // status --json names each session's host.
    let views = central.views();
    let hosts: Vec<&str> = views.iter().filter_map(|v| v["host"].as_str()).collect();
    assert!(hosts.contains(&"host-a") && hosts.contains(&"host-b"), "{views:?}");
}
