//! `hookline status`: every session's state, from the events directory's daemon when one
//! answers (live), else rebuilt from the events directory (replayed, never authoritative).

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::term::escape;
use hookline::state::{StateKind, View};

use hookline::engine::Purpose;

use super::{
    Outcome, Reading, ask_daemon, engine_parts_with, profiles, replay_with, shown_policy, unhooked,
};
use crate::cli::StatusArgs;

pub fn run(args: StatusArgs) -> Outcome {
    let profiles = profiles()?;
    // Checked whether or not a daemon answers, as `decide` checks it; only shown, so a bad
    // one is a warning.
    let policy = shown_policy(&args.policy, &profiles);
    let live = match &args.daemon.daemon {
        Some(_) => {
            let mut daemon = super::connect_daemon(&args.source.dir, &args.daemon)?
                .ok_or("the daemon named by --daemon did not answer")?;
            Some((daemon.info().generation, daemon.sessions()?))
        }
        None => ask_daemon(&args.source, &args.policy, |daemon| {
            let generation = daemon.info().generation;
            daemon.sessions().map(|views| (generation, views))
        })?,
    };
    let (views, source) = match live {
        Some((generation, views)) => (views, format!("live: daemon generation {generation}")),
        None => {
            let (mut config, reader) = engine_parts_with(
                &args.source,
                Reading::Once,
                Purpose::Display,
                profiles.clone(),
                policy,
            )?;
            config.unhooked.extend(unhooked(&profiles, &args.transcripts)?);
            let engine = replay_with(config, reader)?;
            (engine.views(), "replayed from history: never authoritative".to_owned())
        }
    };
    if args.json || !std::io::stdout().is_terminal() {
        println!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&views, &source);
    Ok(ExitCode::SUCCESS)
}

/// How a view's `input` begins for an idle a live generation only replayed.
const WAITING_FOR_LIVE: &str = "waiting for a live event";

fn print_table(views: &[View], source: &str) {
    if views.is_empty() {
        println!("no sessions");
        return;
    }
    // Every string from an event is escaped before it is clipped or padded, so that what
    // the terminal shows is what the widths count.
    let states: Vec<String> = views
        .iter()
        .map(|v| match (v.state, &v.detail) {
            (StateKind::Unknown, _) => "UNKNOWN".to_owned(),
            (StateKind::WaitingOnHuman | StateKind::EnvFault, Some(detail)) => {
                format!("{} ({})", v.state, escape(detail))
            }
            // A live generation that only replayed this idle (a daemon restarted since).
            (StateKind::Idle, _) if v.input.starts_with(WAITING_FOR_LIVE) => {
                format!("idle ({WAITING_FOR_LIVE})")
            }
            (state, _) => state.to_string(),
        })
        .collect();
    let width = states.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(24);
    println!(
        "{:<16} {:<7} {:<13} {:<28} {:<width$} {:>8}  last event ({source})",
        "tag", "cli", "session", "cwd", "state", "age"
    );
    for (v, state) in views.iter().zip(states) {
        println!(
            "{:<16} {:<7} {:<13} {:<28} {state:<width$} {:>8}  {} → {}",
            clip(&escape(v.tag.as_deref().unwrap_or("-")), 16),
            clip(&escape(&v.cli), 7),
            clip(&escape(&session_name(v)), 13),
            clip_left(&escape(v.cwd.as_deref().unwrap_or("-")), 28),
            v.age,
            escape(v.last_event.native.as_deref().unwrap_or("-")),
            escape(&v.last_event.kind.to_string()),
        );
        if v.state == StateKind::Unknown {
            println!("{:>18}{}", "", escape(v.detail.as_deref().unwrap_or_default()));
        }
        if v.state == StateKind::Idle && v.input.starts_with(WAITING_FOR_LIVE) {
            // What re-opens input, in the refusal's own words.
            let why = v.input.trim_start_matches(WAITING_FOR_LIVE).trim_start_matches(": ");
            println!("{:>18}{}", "", escape(why));
        }
        if v.evidence.kind == "transcript" {
            println!(
                "{:>18}source: transcript ({}): {}",
                "",
                escape(v.evidence.native.as_deref().unwrap_or("-")),
                escape(&v.evidence.file)
            );
        }
    }
}

/// The session id (else `-`), `@host` after it for another host's session.
fn session_name(v: &View) -> String {
    let id = v.session_id.as_deref().unwrap_or("-");
    match &v.host {
        Some(host) => format!("{id}@{host}"),
        None => id.to_owned(),
    }
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width - 1).collect();
    format!("{kept}…")
}

fn clip_left(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - (width - 1)).collect();
    format!("…{kept}")
}
