//! `hookline serve`: the decision layer for any language. A running engine (one tracker
//! generation, started with the process, following the events on threads of its own); JSON-line
//! requests on stdin, one JSON-line reply each on stdout (see `hookline::serve`). EOF on stdin
//! ends it: deliveries not typing yet are cancelled, the waits still running answered.

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use hookline::engine::{Engine, Note, Purpose, RunOptions, Running, Source};
use hookline::ingest::watch::{Mode, WatchOptions};
use hookline::protocol::ReloadAnswer;
use hookline::serve::answer::Reloader;
use hookline::serve::lines::{Lines, Overlong};
use hookline::serve::server;

use super::{Outcome, Reading, engine_parts, report};
use crate::cli::{CentralArgs, PolicyArgs, ServeArgs, SourceArgs, TranscriptArgs};

pub fn run(args: ServeArgs) -> Outcome {
    let mode = if args.poll { Mode::Poll } else { Mode::Notify };
    let engine = engine(&args.source, &args.policy, &args.transcripts, &args.nats, mode)?;
    let running = Arc::new(start(engine));
    let reload = reloader(&args.policy);
    let requests = Lines::new(io::stdin().lock(), Overlong::Skip);
    server::answer(&running, requests, io::stdout(), Some(reload))?;
    Ok(ExitCode::SUCCESS)
}

/// The engine `serve` and the daemon run: the events directory's history replayed, then
/// followed (only what arrives after can authorize input); or, with `--nats`, a central
/// consumer, whose messages in the stream at start are history.
pub(super) fn engine(
    source: &SourceArgs,
    policy_args: &PolicyArgs,
    transcripts: &TranscriptArgs,
    nats: &CentralArgs,
    mode: Mode,
) -> Result<Engine, Box<dyn std::error::Error>> {
    let (mut config, reader) =
        engine_parts(source, policy_args, Reading::Following, Purpose::Decisions)?;
    config.unhooked.extend(super::unhooked(&config.profiles, transcripts)?);
    let source = match &nats.nats {
        Some(url) => {
            // A central's state comes from the stream: no directory checkpoint fits it.
            config.checkpoints = false;
            central_source(url, nats)?
        }
        None => Source::Directory {
            reader,
            watch: WatchOptions { mode, ..WatchOptions::default() },
            prune: None,
        },
    };
    Ok(Engine::open(config, source)?)
}

#[cfg(feature = "nats")]
fn central_source(url: &str, nats: &CentralArgs) -> Result<Source, Box<dyn std::error::Error>> {
    use hookline::fleet::central::CentralSource;
    let now = hookline::format::clock::now_ns();
    let options = super::forward::central_options(url, nats, Some(now), true);
    let notice = Arc::new(super::forward::report);
    Ok(Source::Custom(Box::new(CentralSource::new(options, notice))))
}

#[cfg(not(feature = "nats"))]
fn central_source(_: &str, _: &CentralArgs) -> Result<Source, Box<dyn std::error::Error>> {
    Err(super::forward::without_nats().into())
}

/// Runs an engine, telling its operator on stderr.
pub(super) fn start(engine: Engine) -> Running {
    engine.spawn(RunOptions::new(tell))
}

/// Reads the policy and the profiles again for a running engine (`reload`, SIGHUP): a bad
/// file is refused, and the engine keeps what it has.
pub(super) fn reloader(policy_args: &PolicyArgs) -> Reloader {
    let policy_args = PolicyArgs { policy: policy_args.policy.clone() };
    Arc::new(move |running: &Running| -> Result<ReloadAnswer, String> {
        let profiles =
            hookline::profile::Profiles::load(&hookline::profile::OverlayDirs::standard())
                .map_err(|e| format!("the profiles were not reloaded: {e}"))?;
        let warnings = profiles.warnings.iter().map(ToString::to_string).collect();
        let policy = super::policy(&policy_args, &profiles)
            .map_err(|e| format!("the policy was not reloaded: {e}"))?;
        Ok(running.reload(policy, profiles, warnings))
    })
}

/// Prints what the engine tells its operator on stderr.
pub(super) fn tell(note: Note) {
    match note {
        Note::Follow(notice) => report([notice]),
        Note::WatcherStopped(_) => eprintln!("hookline: error: {note}"),
        note if note.is_warning() => eprintln!("hookline: warning: {note}"),
        note => eprintln!("hookline: {note}"),
    }
}
