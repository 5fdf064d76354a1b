//! `hookline lease list|release ID`: the leases the events directory's daemon holds on its
//! sessions' input slots. Exit 0 done, 1 an unknown or spent lease, 2 no daemon.

use std::process::ExitCode;

use crate::term::escape;
use hookline::daemon::Client;
use hookline::decide::Released;

use super::{Outcome, Reading, events_dir};
use crate::cli::{LeaseAction, LeaseArgs};

pub fn run(args: &LeaseArgs) -> Outcome {
    let dir = events_dir(&args.dir, Reading::Once)?;
    let mut daemon = Client::connect(&dir)
        .map_err(|e| format!("{e}; leases live in the daemon: none is held without one"))?;
    match &args.action {
        LeaseAction::List => {
            let json = args.json;
            let leases = daemon.leases()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&leases)?);
            } else if leases.is_empty() {
                println!("no lease held");
            }
            for lease in leases.iter().filter(|_| !json) {
                println!(
                    "{}  {} {}  epoch {}  taken {}",
                    lease.id,
                    lease.question,
                    escape(&lease.session),
                    lease.slot.epoch,
                    hookline::units::rfc3339(lease.taken_ns)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        LeaseAction::Release { id } => match daemon.release(&id.as_str().into()) {
            Ok(Released::Freed) => {
                println!("released {id}: the slot is free for the next caller");
                Ok(ExitCode::SUCCESS)
            }
            Ok(Released::Void) => {
                println!(
                    "released {id}: the session had already left that idle (its next idle \
                     brings a slot of its own)"
                );
                Ok(ExitCode::SUCCESS)
            }
            Err(hookline::ClientError::Refused { error, .. }) => {
                eprintln!("hookline: lease: {error}");
                Ok(ExitCode::from(1))
            }
            Err(e) => Err(e.into()),
        },
    }
}
