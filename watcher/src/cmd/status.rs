//! `hookline status`: every session's state, rebuilt from the events directory.

use std::io::IsTerminal;
use std::process::ExitCode;

use hookline::state::{Snapshot, State, View};
use hookline::term::escape;

use super::{Outcome, replay};
use crate::cli::StatusArgs;

pub fn run(args: StatusArgs) -> Outcome {
    let tracker = replay(&args.source, &args.policy, hookline::state::HISTORY)?;
    let snapshots = tracker.snapshots(hookline::format::clock::now_ns());
    if args.json || !std::io::stdout().is_terminal() {
        let views: Vec<View> = snapshots.iter().map(View::from).collect();
        println!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&snapshots);
    Ok(ExitCode::SUCCESS)
}

fn print_table(views: &[Snapshot]) {
    if views.is_empty() {
        println!("no sessions");
        return;
    }
    // Every string from an event is escaped before it is clipped or padded, so that what
    // the terminal shows is what the widths count.
    let states: Vec<String> = views
        .iter()
        .map(|v| match &v.state {
            State::Unknown(_) => "UNKNOWN".to_owned(),
            State::WaitingOnHuman(reason) => format!("{} ({reason})", v.state.kind()),
            State::EnvFault(class) => format!("{} ({class})", v.state.kind()),
            state => state.kind().to_string(),
        })
        .collect();
    let width = states.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(24);
    println!(
        "{:<16} {:<7} {:<13} {:<28} {:<width$} {:>8}  last event (replayed from history: never authoritative)",
        "tag", "cli", "session", "cwd", "state", "age"
    );
    for (v, state) in views.iter().zip(states) {
        println!(
            "{:<16} {:<7} {:<13} {:<28} {state:<width$} {:>8}  {} → {}",
            clip(&escape(v.tag.as_deref().unwrap_or("-")), 16),
            clip(&escape(&v.cli), 7),
            clip(&escape(v.session_id.as_deref().unwrap_or("-")), 13),
            clip_left(&escape(v.cwd.as_deref().unwrap_or("-")), 28),
            v.age(),
            escape(v.last_event.native.as_deref().unwrap_or("-")),
            escape(&v.last_event.kind),
        );
        if let State::Unknown(_) = v.state {
            println!("{:>18}{}", "", escape(&v.detail().unwrap_or_default()));
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
