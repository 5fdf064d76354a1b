//! `hookline doctor [CLI] [--relay PATH]`.

use std::process::ExitCode;

use crate::install::{self, doctor};

use crate::cli::DoctorArgs;
use crate::cmd::Outcome;
use crate::cmd::install::{Setup, env};

/// Runs `hookline doctor`: exits 1 when a problem was found.
pub fn run(args: &DoctorArgs) -> Outcome {
    let setup = Setup::load()?;
    let relay = args.relay.as_ref().map(|r| install::check_relay(r, &setup.cwd)).transpose()?;
    // --events-dir stands for HOOKLINE_EVENTS_DIR, the variable the relay reads.
    let events_dir = args.dir.events_dir.clone();
    let env = move |key: &str| match (&events_dir, key) {
        (Some(dir), hookline::format::location::ENV_EVENTS_DIR) => {
            Some(dir.clone().into_os_string())
        }
        _ => env(key),
    };
    let ctx = doctor::Context {
        env: &env,
        cwd: &setup.cwd,
        relay,
        now_ns: hookline::format::clock::now_ns(),
    };
    let checkup = doctor::check(&setup.profiles, args.cli.as_deref(), &ctx)?;
    print!("{checkup}");
    Ok(if checkup.problems().next().is_some() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
