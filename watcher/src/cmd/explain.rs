//! `hookline explain SESSION`: the events and rules that produced a session's state.

use std::process::ExitCode;

use hookline::units::rfc3339;

use super::{Outcome, events_dir, journal, policy, profiles, replay};
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
    // The journal's lines about the session: withheld verdicts and deliveries.
    let key = tracker.session_key(&args.session);
    let mut ids = vec![args.session.clone()];
    ids.extend(view.session_id.clone());
    ids.extend(view.tag.clone());
    let journaled: Vec<_> =
        journal(&policy(&args.policy, &profiles()?)?, &events_dir(&args.source.dir)?)
            .map(|j| j.read())
            .unwrap_or_default()
            .into_iter()
            .filter(|r| ids.iter().any(|id| r.concerns(id, key.as_deref())))
            .collect();
    if args.json {
        let out = serde_json::json!({ "state": view, "history": history, "journal": journaled });
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
    if !journaled.is_empty() {
        println!("journal ({} lines):", journaled.len());
    }
    for r in &journaled {
        match &r.delivery {
            Some(d) => println!(
                "  {}  deliver {:<11} into {} ({} bytes{}{}, {} ms)  rule {}: {}",
                r.at,
                d.step.as_str(),
                d.tmux,
                d.bytes,
                if d.enter_resent { ", Enter resent" } else { "" },
                d.confirmed_by.map(|s| format!(", confirmed by seq {s}")).unwrap_or_default(),
                d.elapsed_ms,
                r.rule,
                r.reason
            ),
            None => println!(
                "  {}  {} {} ({})  rule {}: {}",
                r.at,
                r.question,
                r.verdict.as_str(),
                r.action.as_str(),
                r.rule,
                r.reason
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
