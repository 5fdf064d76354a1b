//! `hookline daemon`: `serve`'s hub on a Unix socket in the events directory, for every client
//! of the user at once (see `hookline::daemon`). SIGTERM or SIGINT ends it, removing the socket.

use std::process::ExitCode;

use hookline::daemon::Claim;
use hookline::format::clock::now_ns;
use hookline::ingest::watch::Mode;

use super::{Outcome, Reading, catch_signals, events_dir, serve, stopping, with_fix};
use crate::cli::DaemonArgs;

pub fn run(args: DaemonArgs) -> Outcome {
    catch_signals();
    // Claimed before the replay, so that a second daemon is refused at once.
    let claim = Claim::take(&events_dir(&args.source.dir, Reading::Claiming)?).map_err(with_fix)?;
    if let Some(url) = &args.nats.nats {
        return from_nats(url, &args, claim);
    }
    let (shared, watcher) = serve::hub(&args.source, &args.policy, Mode::Notify)?;
    if let Some(producer) = super::unhooked(&super::profiles()?, &args.transcripts)? {
        shared.follow_unhooked(producer, now_ns());
    }
    let listening = claim.listen().map_err(with_fix)?;
    serving(&listening);
    listening.serve(&shared, watcher, now_ns, serve::tell, &stopping)?;
    eprintln!("hookline: daemon stopped");
    Ok(ExitCode::SUCCESS)
}

fn serving(listening: &hookline::daemon::Listening) {
    eprintln!(
        "hookline: daemon (pid {}) serving {}",
        std::process::id(),
        listening.socket().display()
    );
}

/// `daemon --nats`: the socket of the events directory, answering from a durable JetStream
/// consumer (the events of many machines) instead of the directory's own events.
#[cfg(feature = "nats")]
fn from_nats(url: &str, args: &DaemonArgs, claim: Claim) -> Outcome {
    let (shared, feed) = serve::nats_hub(url, &args.nats, &args.source, &args.policy)?;
    let listening = claim.listen().map_err(with_fix)?;
    serving(&listening);
    listening.serve_fed(&shared, feed, now_ns, serve::tell, &stopping)?;
    eprintln!("hookline: daemon stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "nats"))]
fn from_nats(_: &str, _: &DaemonArgs, _: Claim) -> Outcome {
    Err(super::forward::without_nats().into())
}
