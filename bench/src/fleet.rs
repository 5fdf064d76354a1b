//! `fleet [--events N] [--latency-events N]`: many machines through one `nats-server`, beside
//! the local directory, in one run.
//!
//! * **Latency**: a writer thread publishes events with the relay's own library, 3 ms apart.
//!   Locally, a `Watcher` on the directory folds them into a `Tracker`; through NATS, a
//!   `Forwarder` follows the directory into JetStream and a `Central` reader folds the durable
//!   consumer's messages into a `Tracker`. Latency is from the moment the event is visible
//!   under its final name to the moment the central (or local) tracker has applied it, so that
//!   a decision asked then sees it.
//! * **Throughput**: `--events` events (10,000 by default) queued in a directory, then read
//!   from a cold start: by a local reader into a tracker, and by one forwarder into the stream
//!   (each event acknowledged by the server before the cursor moves).
//!
//! It needs `nats-server` on the PATH (or in /usr/sbin); it starts one with JetStream on a free
//! loopback port and its own storage directory, and kills it at the end.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hookline::canonical::Event;
use hookline::fleet::central::{Central, CentralOptions};
use hookline::fleet::forward::{ForwardOptions, Forwarder, Retention};
use hookline::fleet::{Connection, FleetNotice};
use hookline::ingest::follow::{
    self, Commit, Delivery, FollowNotice, Sink, SinkError, follow_with,
};
use hookline::ingest::reader::{Reader, ReaderConfig, Start};
use hookline::ingest::watch::{WatchOptions, Watcher};
use hookline::profile::Profiles;
use hookline::state::Tracker;
use hookline_relay::clock::now_ns;
use hookline_relay::store::EventsDir;

use crate::Result;
use crate::stats::{ms, percentile};
use crate::watcher::{counts, publish, write_events};

const USAGE: &str =
    "usage: cargo run --release -p hookline-bench -- fleet [--events N] [--latency-events N]";

/// `fleet [--events N] [--latency-events N]`.
pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let (events, latency_events) = counts(args, (10_000, 1000), USAGE)?;
    let profiles = Profiles::shipped()?;
    let tmp = std::env::temp_dir().join(format!("hookline-bench-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let server = NatsServer::start(&tmp.join("store"))?;

    println!("### Many machines: relay → central tracker latency\n");
    println!(
        "{latency_events} events, published 3 ms apart with the relay's own library; latency \
         from the moment an event is visible under its final name to the moment the tracker \
         has applied it. One `nats-server` {} on loopback, file storage.\n",
        server.version
    );
    println!("| Path | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|");
    let local = latency_local(&tmp.join("local"), &profiles, latency_events)?;
    row("local directory (inotify watcher)", &local);
    let nats = latency_nats(&tmp.join("nats"), &profiles, &server, latency_events)?;
    row("forwarder → JetStream → central consumer", &nats);

    println!("\n### Many machines: sustained throughput\n");
    println!("{events} queued events read from a cold start.\n");
    println!("| Path | Events/s |\n|---|---:|");
    let dir = tmp.join("backlog");
    write_events(&dir, 0, events)?;
    let start = Instant::now();
    let mut tracker = Tracker::new(profiles.clone(), now_ns());
    let reader = Reader::open(ReaderConfig::new(&dir, Start::Beginning, profiles.clone()))?;
    let mut reader = reader;
    let mut sink = follow::Apply::new(|event: Event| drop(tracker.apply(&event)));
    follow::drain(&mut reader, &mut sink, &|| false)?;
    println!(
        "| local reader into a tracker | {:.0} |",
        events as f64 / start.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    let mut reader =
        Reader::open(ReaderConfig::new(&dir, Start::Cursor("local".into()), profiles.clone()))?;
    let mut sink = follow::Apply::new(drop);
    follow::drain(&mut reader, &mut sink, &|| false)?;
    println!(
        "| local reader, durable cursor saved per event | {:.0} |",
        events as f64 / start.elapsed().as_secs_f64()
    );
    let rate = through_nats(&dir, &profiles, &server, events)?;
    println!("| one forwarder → JetStream → central consumer into a tracker | {rate:.0} |");
    drop(server);
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}

fn row(label: &str, latencies: &[Duration]) {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    println!(
        "| {label} | {} | {} | {} | {} |",
        ms(percentile(&sorted, 50.0)),
        ms(percentile(&sorted, 90.0)),
        ms(percentile(&sorted, 99.0)),
        ms(*sorted.last().unwrap_or(&Duration::ZERO)),
    );
}

struct NatsServer {
    child: Child,
    url: String,
    version: String,
}

impl NatsServer {
    fn start(store: &Path) -> Result<NatsServer> {
        let binary = ["/usr/sbin/nats-server", "/usr/local/bin/nats-server"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .unwrap_or_else(|| "nats-server".into());
        let version = Command::new(&binary)
            .arg("--version")
            .output()
            .map_err(|e| format!("nats-server is needed (apt-get install nats-server): {e}"))?;
        let version = String::from_utf8_lossy(&version.stdout);
        let version = version.trim().trim_start_matches("nats-server: ").to_owned();
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = Command::new(&binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("nats-server did not start".into());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(NatsServer { child, url: format!("nats://127.0.0.1:{port}"), version })
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn connection(server: &NatsServer) -> Connection {
    Connection { url: server.url.clone(), ..Connection::default() }
}

fn quiet() -> Arc<dyn Fn(FleetNotice) + Send + Sync> {
    Arc::new(|notice: FleetNotice| {
        if notice.is_warning() {
            eprintln!("hookline-bench: {notice}");
        }
    })
}

fn forwarder(server: &NatsServer, dir: &Path, stream: &str) -> Result<Forwarder> {
    let options = ForwardOptions {
        connection: connection(server),
        events_dir: dir.to_owned(),
        stream: stream.into(),
        prefix: stream.to_lowercase(),
        host: "bench".into(),
        raw: false,
        retention: Retention::Limits,
        replicas: 1,
        max_age: Duration::ZERO,
    };
    Ok(Forwarder::connect(options, quiet(), Box::new(|| false))?.ok_or("stopped")?)
}

type Stamps = Arc<Mutex<Vec<Option<Instant>>>>;

/// Writes `n` events 3 ms apart; returns when each became visible, by seq.
fn writer(dir: &Path, n: usize) -> Result<thread::JoinHandle<std::result::Result<Stamps, String>>> {
    let events = EventsDir::create(dir)?;
    Ok(thread::spawn(move || {
        let visible: Stamps = Arc::new(Mutex::new(vec![None; n + 1]));
        for index in 0..n {
            let seq = publish(&events, index).map_err(|e| e.to_string())? as usize;
            let at = Instant::now();
            if let Some(slot) = visible.lock().map_err(|e| e.to_string())?.get_mut(seq) {
                *slot = Some(at);
            }
            thread::sleep(Duration::from_millis(3));
        }
        Ok(visible)
    }))
}

fn latencies(visible: &Stamps, applied: &[Option<Instant>], n: usize) -> Vec<Duration> {
    let visible = visible.lock().unwrap_or_else(|p| p.into_inner());
    (1..=n).filter_map(|seq| Some(applied[seq]?.saturating_duration_since(visible[seq]?))).collect()
}

fn latency_local(dir: &Path, profiles: &Profiles, n: usize) -> Result<Vec<Duration>> {
    EventsDir::create(dir)?;
    let reader = Reader::open(ReaderConfig::new(dir, Start::Now, profiles.clone()))?;
    let mut watcher = Watcher::new(reader, WatchOptions::default())?;
    watcher.next_timeout(Duration::from_millis(50))?;
    let mut tracker = Tracker::new(profiles.clone(), now_ns());
    let writer = writer(dir, n)?;
    let mut applied = vec![None; n + 1];
    for _ in 0..n {
        let event =
            watcher.next_timeout(Duration::from_secs(10))?.ok_or("an event never arrived")?;
        tracker.apply(&event);
        if let Some(slot) = applied.get_mut(event.source.seq as usize) {
            *slot = Some(Instant::now());
        }
    }
    let visible = writer.join().map_err(|_| "the writer panicked")??;
    Ok(latencies(&visible, &applied, n))
}

/// The central tracker: applies, then stamps.
struct Stamp {
    tracker: Tracker,
    applied: Vec<Option<Instant>>,
    left: usize,
}

impl Sink for Stamp {
    fn deliver(&mut self, event: Event) -> std::result::Result<Delivery, SinkError> {
        self.tracker.apply(&event);
        if let Some(slot) = self.applied.get_mut(event.source.seq as usize) {
            *slot = Some(Instant::now());
        }
        self.left -= 1;
        Ok(if self.left == 0 { Delivery::Last } else { Delivery::Delivered })
    }

    fn notice(&mut self, _: FollowNotice) {}
}

/// Forwards the queued events of `dir` and reads them centrally; events/s end to end.
fn through_nats(dir: &Path, profiles: &Profiles, server: &NatsServer, n: usize) -> Result<f64> {
    let options = CentralOptions {
        connection: connection(server),
        stream: "BENCH".into(),
        consumer: "bench".into(),
        filter: None,
        history_before_ns: None,
        follow: true,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut forwarder = forwarder(server, dir, "BENCH")?;
    let mut central = Central::open(options, quiet(), &|| false)?.ok_or("stopped")?;
    let start = Instant::now();
    let reading = {
        let (stop, profiles) = (Arc::clone(&stop), profiles.clone());
        thread::spawn(move || {
            let tracker = Tracker::new(profiles, now_ns());
            let mut sink = Stamp { tracker, applied: vec![None; n + 1], left: n };
            let ended = follow_with(&mut central, &mut sink, Commit::EachEvent, None, &|| false)
                .map_err(|e| e.to_string());
            stop.store(true, Ordering::Relaxed);
            ended.map(drop)
        })
    };
    let reader = Reader::open(ReaderConfig::new(
        dir,
        Start::Cursor("forward-BENCH".into()),
        profiles.clone(),
    ))?;
    let mut watcher = Watcher::new(reader, WatchOptions::default())?;
    forwarder.follow(&mut watcher, None, &|| stop.load(Ordering::Relaxed))?;
    reading.join().map_err(|_| "the central reader panicked")??;
    let rate = n as f64 / start.elapsed().as_secs_f64();
    if forwarder.published() != n as u64 {
        return Err(format!("published {} of {n}", forwarder.published()).into());
    }
    Ok(rate)
}

fn latency_nats(
    dir: &Path,
    profiles: &Profiles,
    server: &NatsServer,
    n: usize,
) -> Result<Vec<Duration>> {
    EventsDir::create(dir)?;
    let stop = Arc::new(AtomicBool::new(false));
    let reader = Reader::open(ReaderConfig::new(
        dir,
        Start::Cursor("forward-LAT".into()),
        profiles.clone(),
    ))?;
    let mut watcher = Watcher::new(reader, WatchOptions::default())?;
    let mut forwarder = forwarder(server, dir, "LAT")?;
    let forwarding = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            forwarder
                .follow(&mut watcher, None, &|| stop.load(Ordering::Relaxed))
                .map(drop)
                .map_err(|e| e.to_string())
        })
    };
    let options = CentralOptions {
        connection: connection(server),
        stream: "LAT".into(),
        consumer: "bench".into(),
        filter: None,
        history_before_ns: None,
        follow: true,
    };
    let mut central = Central::open(options, quiet(), &|| false)?.ok_or("stopped")?;
    let mut sink = Stamp {
        tracker: Tracker::new(profiles.clone(), now_ns()),
        applied: vec![None; n + 1],
        left: n,
    };
    let writer = writer(dir, n)?;
    follow_with(&mut central, &mut sink, Commit::EachEvent, None, &|| false)?;
    stop.store(true, Ordering::Relaxed);
    forwarding.join().map_err(|_| "the forwarder panicked")??;
    let visible = writer.join().map_err(|_| "the writer panicked")??;
    Ok(latencies(&visible, &sink.applied, n))
}
