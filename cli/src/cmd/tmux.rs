//! `hookline tmux [--follow] [--tmux-socket PATH]`: marks each pane with its session's state
//! and prints the summary for `status-right`.

use std::process::ExitCode;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use crate::marks;
use hookline::pane::Server;

use hookline::daemon::Client;
use hookline::daemon::follow::Follower;
use hookline::engine::History;
use hookline::state::View;

use super::{Live, Outcome, Update, catch_signals, replay, report, stopping};
use crate::cli::TmuxArgs;

/// How often `--follow` marks again without an event: new panes, states gone stale.
const REFRESH: Duration = Duration::from_secs(2);

pub fn run(args: &TmuxArgs) -> Outcome {
    let server = Server { socket: args.tmux_socket.clone() };
    let daemon = super::connect_daemon(&args.source.dir, &args.daemon)?;
    if !args.follow {
        let views = match daemon {
            Some(mut daemon) => daemon.sessions()?,
            None => {
                let history = History::Last(hookline::state::HISTORY);
                replay(&args.source, &args.policy, history)?.views()
            }
        };
        let (_, summary) = marks::mark(&server, &views)?;
        println!("{summary}");
        return Ok(ExitCode::SUCCESS);
    }
    catch_signals();
    let followed = match daemon {
        Some(daemon) => follow_daemon(daemon, &server),
        None => follow(args, &server),
    };
    // Marks nobody keeps current any more would go on showing the last states: take them
    // away, and leave the summary saying so. (A hard kill cannot: see docs/tmux.md.)
    match marks::clear(&server, marks::STOPPED) {
        Ok(()) => println!("{}", marks::STOPPED),
        Err(e) => eprintln!(
            "hookline: warning: the marks could not be removed: {}",
            crate::error_chain(&e)
        ),
    }
    followed
}

/// Marks on every event (and every [`REFRESH`]) until a signal or an error.
fn follow(args: &TmuxArgs, server: &Server) -> Outcome {
    let (tx, updates) = std::sync::mpsc::channel();
    let live = Live::start(&args.source, &args.policy, tx, |update| update)?;
    let mut last = None;
    while !stopping() {
        let views: Vec<View> = live.snapshots().iter().map(View::from).collect();
        let (_, summary) = marks::mark(server, &views)?;
        let line = summary.to_string();
        if last.as_ref() != Some(&line) {
            println!("{line}");
            last = Some(line);
        }
        // Wait for the next event (or the refresh), then take every update queued with it.
        let mut wait = REFRESH;
        for _ in 0..256 {
            match updates.recv_timeout(wait) {
                Ok(Update::Event) => {}
                Ok(Update::Notice(notice)) => report([notice]),
                Ok(Update::Failed(why)) => return Err(why.into()),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Ok(ExitCode::SUCCESS),
            }
            wait = Duration::from_millis(20);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Marks on every change of the daemon's sessions (and every [`REFRESH`]) until a signal or
/// the daemon goes away.
fn follow_daemon(daemon: Client, server: &Server) -> Outcome {
    let (mut follower, mut views) = Follower::new(daemon)?;
    let mut last = None;
    while !stopping() {
        let (_, summary) = marks::mark(server, &views)?;
        let line = summary.to_string();
        if last.as_ref() != Some(&line) {
            println!("{line}");
            last = Some(line);
        }
        views = follower.next(REFRESH)?.sessions;
    }
    Ok(ExitCode::SUCCESS)
}
