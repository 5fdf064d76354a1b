//! hookline's benchmarks, each printing markdown tables with its baselines beside:
//!
//! * `cargo run --release -p hookline-bench -- relay [--samples N] [--baseline BIN]...`: the
//!   cost of one hook call, against two static floors (an empty program, a stdin-to-file copy),
//!   beside the Python relay and optionally other relay builds;
//! * `cargo run --release -p hookline-bench -- watcher [--events N] [--latency-events N]
//!   [--backlog N] [--runs N] [--dir DIR] [--backlog-only]`: rename-to-delivery latency,
//!   backlog throughput (with and without the read-ahead worker) and memory of the watcher;
//! * `cargo run --release -p hookline-bench -- cursor [--saves N] [--dir DIR]`: the cost of
//!   one durable cursor save, against an atomic one that does not sync;
//! * `cargo run -p hookline-bench -- deliver [--runs N]`: request-to-confirmed latency of
//!   `hookline deliver` into the real Claude Code TUI, against a fixed-delay verify;
//! * `cargo run --release -p hookline-bench -- fleet [--events N] [--latency-events N]`: relay →
//!   central tracker latency and forwarder throughput through one `nats-server`, beside the
//!   local directory;
//! * `cargo run --release -p hookline-bench -- history [--events N] [--sessions M] [--baseline
//!   PATH] [--baseline-layout flat|buckets]`: `status` time and memory, and a following
//!   `watch`'s idle CPU, over a long history;
//! * `cargo run --release -p hookline-bench -- transcript [--gib N] [--runs N]`: reading a
//!   multi-GiB transcript's tail in bounded time and memory;
//! * `cargo run --release -p hookline-bench -- conformance [--quick] [--cli NAME]
//!   [--scenario NAME] [--json PATH]`: how often, how fast and how safely hookline tells the
//!   truth about the real agent CLIs, scenario by scenario.

mod conformance;
mod cursor;
mod deliver;
mod fleet;
mod history;
mod relay;
mod stats;
mod transcript;
mod watcher;

use std::error::Error;

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

const USAGE: &str = "usage: cargo run --release -p hookline-bench -- relay [--samples N] [--baseline BIN]...\n       \
                     cargo run --release -p hookline-bench -- watcher [--events N] [--latency-events N] [--backlog N] [--runs N] [--dir DIR] [--backlog-only]\n       \
                     cargo run --release -p hookline-bench -- cursor [--saves N] [--dir DIR]\n       \
                     cargo run -p hookline-bench -- deliver [--runs N]
       \
                     cargo run --release -p hookline-bench -- fleet [--events N] [--latency-events N]
       \
                     cargo run --release -p hookline-bench -- history [--events N] [--sessions M] [--baseline PATH] [--baseline-layout flat|buckets]
       \
                     cargo run --release -p hookline-bench -- transcript [--gib N] [--runs N]
       \
                     cargo run --release -p hookline-bench -- conformance [--quick] [--cli NAME]... [--scenario NAME]... [--json PATH] [--markdown PATH]";

fn main() {
    let mut args = std::env::args_os().skip(1);
    let command = args.next().map(|a| a.to_string_lossy().into_owned());
    let rest = args.map(|a| a.to_string_lossy().into_owned());
    let result = match command.as_deref() {
        Some("relay") => relay::run(rest),
        Some("watcher") => watcher::run(rest),
        Some("cursor") => cursor::run(rest),
        Some("deliver") => deliver::run(rest),
        Some("fleet") => fleet::run(rest),
        Some("history") => history::run(rest),
        Some("transcript") => transcript::run(rest),
        Some("conformance") => conformance::run(rest),
        Some("__stamp") => conformance::stamp(rest),
        Some("__rss") => relay::rss_launcher(std::env::args_os().skip(2).collect()),
        _ => Err(USAGE.into()),
    };
    if let Err(e) = result {
        eprintln!("hookline-bench: {e}");
        std::process::exit(2);
    }
}
