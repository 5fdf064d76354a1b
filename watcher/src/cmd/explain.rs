//! `hookline explain SESSION`: the events and rules that produced a session's state.

use std::process::ExitCode;

use hookline::units::rfc3339;

use super::{Outcome, replay};
use crate::cli::ExplainArgs;

pub fn run(args: ExplainArgs) -> Outcome {
    let tracker = replay(&args.source, &args.policy, usize::MAX)?;
    let now = hookline::format::clock::now_ns();
    let (Some(session), Some(view)) =
        (tracker.find(&args.session), tracker.view(&args.session, now))
    else {
        eprintln!("hookline: no session with id or tag {:?}", args.session);
        return Ok(ExitCode::from(1));
    };
    let history: Vec<_> = session.history().collect();
    if args.json {
        let out = serde_json::json!({ "state": view, "history": history });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "session {} (cli {}, tag {})",
        view.session_id.as_deref().unwrap_or("-"),
        view.cli,
        view.tag.as_deref().unwrap_or("-")
    );
    for step in history {
        let e = &step.evidence;
        let state = step.state.map_or("(no change)".to_owned(), |s| format!("→ {}", s.as_str()));
        println!(
            "  {}  seq {:>6}  {:<20} {:<20} {:<14} epoch {}  rule {} (mapped by {})",
            rfc3339(e.ts_ns),
            e.seq,
            e.native.as_deref().unwrap_or("-"),
            e.kind,
            state,
            step.epoch,
            e.rule,
            e.mapped_by
        );
    }
    println!(
        "now: {} for {}{}; set by {} ({}) under rule {}",
        view.state.as_str(),
        view.age,
        view.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default(),
        view.evidence.native.as_deref().unwrap_or("-"),
        view.evidence.file,
        view.evidence.rule
    );
    println!("input: {}", view.input);
    Ok(ExitCode::SUCCESS)
}
