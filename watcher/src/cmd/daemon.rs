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
    let (shared, watcher) = serve::hub(&args.source, &args.policy, Mode::Notify)?;
    let listening = claim.listen().map_err(with_fix)?;
    eprintln!(
        "hookline: daemon (pid {}) serving {}",
        std::process::id(),
        listening.socket().display()
    );
    listening.serve(&shared, watcher, now_ns, serve::tell, &stopping)?;
    eprintln!("hookline: daemon stopped");
    Ok(ExitCode::SUCCESS)
}
