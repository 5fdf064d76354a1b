//! `hookline forward`: this machine's canonical events into a NATS JetStream stream, with a
//! cursor of its own (`forward-<stream>`) saved only after the server acknowledged each one.
//! Also the pieces `watch --nats` and `serve --nats` share.

use super::Outcome;
use crate::cli::ForwardArgs;

#[cfg(not(feature = "nats"))]
pub fn run(_: ForwardArgs) -> Outcome {
    Err(without_nats().into())
}

/// The error of a `--nats` flag in a binary built without the feature.
#[cfg(not(feature = "nats"))]
pub fn without_nats() -> String {
    "this hookline was built without NATS support: rebuild with `--features nats`".into()
}

#[cfg(feature = "nats")]
pub fn run(args: ForwardArgs) -> Outcome {
    use std::process::ExitCode;
    use std::time::Duration;

    use hookline::fleet::forward::{ForwardOptions, Forwarder, Retention};
    use hookline::ingest::follow::Prune;
    use hookline::ingest::reader::{Reader, ReaderConfig, Start};
    use hookline::ingest::retention::RetentionPolicy;
    use hookline::ingest::watch::{Mode, WatchOptions, Watcher};
    use hookline::units::parse_duration;

    use super::{catch_signals, events_dir, profiles, stopping};
    use crate::cli::RetentionArg;

    let max_age = parse_duration(&args.max_age).map_err(|e| format!("--max-age: {e}"))?;
    let events_dir = events_dir(&args.dir, super::Reading::Following)?;
    let host = args.host.clone().unwrap_or_else(hookline::fleet::hostname);
    if hookline::fleet::token(&host) != host {
        return Err(format!(
            "--host {host:?}: use letters, digits, '-' and '_' only (it is a subject token)"
        )
        .into());
    }
    let options = ForwardOptions {
        connection: connection(&args.nats, &args.auth),
        events_dir: events_dir.clone(),
        stream: args.auth.stream.clone(),
        prefix: args.subject_prefix.clone(),
        host,
        raw: args.raw,
        retention: match args.retention {
            RetentionArg::Limits => Retention::Limits,
            RetentionArg::Interest => Retention::Interest,
            RetentionArg::WorkQueue => Retention::WorkQueue,
        },
        replicas: args.replicas,
        max_age,
    };
    let cursor = format!("forward-{}", args.auth.stream);
    let reader = Reader::open(ReaderConfig::new(&events_dir, Start::Cursor(cursor), profiles()?))?;
    catch_signals();
    let Some(mut forwarder) =
        Forwarder::connect(options, std::sync::Arc::new(report), Box::new(stopping))?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    let watch = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        ..WatchOptions::default()
    };
    let mut watcher = Watcher::new(reader, watch)?;
    let prune =
        Prune { events_dir, policy: RetentionPolicy::default(), every: Duration::from_secs(600) };
    let ended = forwarder.follow(&mut watcher, Some(&prune), &stopping);
    forwarder.finish();
    ended?;
    Ok(ExitCode::SUCCESS)
}

/// The connection the flags describe.
#[cfg(feature = "nats")]
pub fn connection(url: &str, auth: &crate::cli::NatsAuth) -> hookline::fleet::Connection {
    hookline::fleet::Connection {
        url: url.to_owned(),
        creds: auth.creds.clone(),
        nkey: auth.nkey.clone(),
        tls_ca: auth.tls_ca.clone(),
        inbox_prefix: None,
    }
}

/// Prints a notice of the NATS side on stderr.
#[cfg(feature = "nats")]
pub fn report(notice: hookline::fleet::FleetNotice) {
    if notice.is_warning() {
        eprintln!("hookline: warning: {notice}");
    } else {
        eprintln!("hookline: {notice}");
    }
}

/// What a central reader reads, as the flags say.
#[cfg(feature = "nats")]
pub fn central_options(
    url: &str,
    args: &crate::cli::CentralArgs,
    history_before_ns: Option<u64>,
    follow: bool,
) -> hookline::fleet::central::CentralOptions {
    hookline::fleet::central::CentralOptions {
        connection: connection(url, &args.auth),
        stream: args.auth.stream.clone(),
        consumer: args.consumer.clone().unwrap_or_default(),
        filter: args.filter.clone(),
        history_before_ns,
        follow,
    }
}

/// Reads a central consumer into `sink` (`watch --nats`), through the one follow loop.
#[cfg(feature = "nats")]
pub fn central(
    url: &str,
    args: &crate::cli::CentralArgs,
    follow: bool,
    stop: &dyn Fn() -> bool,
    sink: &mut impl hookline::ingest::follow::Sink,
) -> Result<(), hookline::Error> {
    use hookline::fleet::central::Central;
    use hookline::ingest::follow::{Commit, follow_with};
    let options = central_options(url, args, None, follow);
    let Some(mut central) = Central::open(options, std::sync::Arc::new(report), stop)? else {
        return Ok(());
    };
    follow_with(&mut central, sink, Commit::EachEvent, None, stop).map(drop)
}
