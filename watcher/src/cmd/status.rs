//! `hookline status`: every session's state, from the events directory's daemon when one
//! answers (live), else rebuilt from the events directory (replayed, never authoritative).

use std::io::IsTerminal;
use std::process::ExitCode;

use hookline::state::{StateKind, View};

use super::{Outcome, ask_daemon, policy, profiles, replay_with};
use crate::cli::StatusArgs;

pub fn run(args: StatusArgs) -> Outcome {
    let profiles = profiles()?;
    // Checked whether or not a daemon answers, as `decide` checks it.
    let policy = policy(&args.policy, &profiles)?;
    let live = ask_daemon(&args.source, &args.policy, |daemon| {
        let generation = daemon.info().generation;
        daemon.sessions().map(|views| (generation, views))
    })?;
    let (views, source) = match live {
        Some((generation, views)) => (views, format!("live: daemon generation {generation}")),
        None => {
            let tracker = replay_with(&args.source, profiles, &policy, hookline::state::HISTORY)?;
            let snapshots = tracker.snapshots(hookline::format::clock::now_ns());
            let views = snapshots.iter().map(View::from).collect();
            (views, "replayed from history: never authoritative".to_owned())
        }
    };
    if args.json || !std::io::stdout().is_terminal() {
        println!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&views, &source);
    Ok(ExitCode::SUCCESS)
}

fn print_table(views: &[View], source: &str) {
    if views.is_empty() {
        println!("no sessions");
        return;
    }
    println!(
        "{:<16} {:<7} {:<13} {:<28} {:<24} {:>8}  last event ({source})",
        "tag", "cli", "session", "cwd", "state", "age"
    );
    for v in views {
        let state = match (v.state, &v.detail) {
            (StateKind::Unknown, _) => "UNKNOWN".to_owned(),
            (StateKind::WaitingOnHuman | StateKind::EnvFault, Some(detail)) => {
                format!("{} ({detail})", v.state)
            }
            (state, _) => state.to_string(),
        };
        println!(
            "{:<16} {:<7} {:<13} {:<28} {:<24} {:>8}  {} → {}",
            clip(v.tag.as_deref().unwrap_or("-"), 16),
            clip(&v.cli, 7),
            clip(v.session_id.as_deref().unwrap_or("-"), 13),
            clip_left(v.cwd.as_deref().unwrap_or("-"), 28),
            state,
            v.age,
            v.last_event.native.as_deref().unwrap_or("-"),
            v.last_event.kind,
        );
        if v.state == StateKind::Unknown {
            println!("{:>18}{}", "", v.detail.as_deref().unwrap_or_default());
        }
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
