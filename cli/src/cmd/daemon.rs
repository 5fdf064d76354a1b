//! `hookline daemon`: a running engine on a Unix socket in the events directory, for every
//! client of the user at once (see `hookline::daemon`). SIGTERM or SIGINT ends it, removing the
//! socket; SIGHUP (or `hookline daemon --reload`) reads its policy and profiles again, keeping
//! its live generation.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hookline::daemon::{Claim, Client};
use hookline::ingest::watch::Mode;

use super::{Outcome, Reading, catch_signals, events_dir, serve, stopping};
use crate::cli::DaemonArgs;

static RELOAD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_hangup(_: libc::c_int) {
    RELOAD.store(true, Ordering::Relaxed);
}

pub fn run(args: DaemonArgs) -> Outcome {
    if args.reload {
        return reload(&args);
    }
    catch_signals();
    let handler = on_hangup as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGHUP, handler);
    }
    // Claimed before the replay, so that a second daemon is refused at once.
    let claim = Claim::take(&events_dir(&args.source.dir, Reading::Claiming)?)
        .map_err(hookline::Error::from)?;
    let engine =
        serve::engine(&args.source, &args.policy, &args.transcripts, &args.nats, Mode::Notify)?;
    let running = Arc::new(serve::start(engine));
    let listening = claim.listen().map_err(hookline::Error::from)?;
    eprintln!(
        "hookline: daemon (pid {}) serving {}",
        std::process::id(),
        listening.socket().display()
    );
    let reloader = serve::reloader(&args.policy);
    let stop = || {
        if RELOAD.swap(false, Ordering::Relaxed) {
            match reloader(&running) {
                Ok(done) => eprintln!(
                    "hookline: daemon: policy and profiles reloaded ({} profiles); the live \
                     generation goes on",
                    done.profiles.len()
                ),
                Err(e) => eprintln!("hookline: warning: daemon: {e}; keeping what it had"),
            }
        }
        stopping()
    };
    let notes = Arc::new(serve::tell);
    listening.serve(&running, Some(reloader.clone()), notes, &stop)?;
    drop(running);
    eprintln!("hookline: daemon stopped");
    Ok(ExitCode::SUCCESS)
}

/// `daemon --reload`: asks the running daemon to read its policy and profiles again.
fn reload(args: &DaemonArgs) -> Outcome {
    let dir = events_dir(&args.source.dir, Reading::Once)?;
    let mut daemon = Client::connect(&dir).map_err(|e| format!("{e}; nothing to reload"))?;
    let done = daemon.reload()?;
    for warning in &done.warnings {
        eprintln!("hookline: warning: {warning}");
    }
    println!(
        "reloaded: {} profiles ({}); the daemon's live generation goes on",
        done.profiles.len(),
        done.profiles.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
