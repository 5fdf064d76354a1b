//! `hookline explain SESSION`: the events and rules that produced a session's state.

use std::process::ExitCode;

use crate::term::{escape, widths};
use hookline::state::View;
use hookline::units::rfc3339;

use hookline::engine::History;

use super::{Outcome, Reading, events_dir, journal, lookup, profiles, replay, shown_policy};
use crate::cli::ExplainArgs;

pub fn run(args: ExplainArgs) -> Outcome {
    let engine = replay(&args.source, &args.policy, History::AllOf(args.session.clone()))?;
    let tracker = engine.tracker();
    let now = hookline::format::clock::now_ns();
    let Some(found) = lookup(tracker, &args.session)? else {
        super::say_no_such_session(&args.session, &engine.lookup(&args.session));
        return Ok(ExitCode::from(1));
    };
    let view = View::from(&tracker.snapshot_of(found.session, now));
    let history: Vec<_> = found.session.history().collect();
    // The journal's lines about the session: withheld verdicts and deliveries.
    let mut ids = vec![args.session.clone(), found.name().to_owned()];
    ids.extend(view.session_id.clone());
    ids.extend(view.tag.clone());
    let journaled: Vec<_> = journal(
        &shown_policy(&args.policy, &profiles()?),
        &events_dir(&args.source.dir, Reading::Once)?,
    )
    .map(|j| j.read())
    .unwrap_or_default()
    .into_iter()
    .filter(|r| ids.iter().any(|id| r.concerns(id, Some(found.key))))
    .collect();
    if args.json {
        let out = serde_json::json!({ "state": view, "history": history, "journal": journaled });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "session {} (cli {}, tag {})",
        escape(view.session_id.as_deref().unwrap_or("-")),
        escape(&view.cli),
        escape(view.tag.as_deref().unwrap_or("-"))
    );
    // Every cell that varies in length is padded to its column's longest, so that the
    // columns line up whatever the state names, event names and seqs.
    let rows: Vec<[String; 6]> = history
        .iter()
        .map(|step| {
            let e = &step.evidence;
            [
                e.seq.to_string(),
                escape(e.native.as_deref().unwrap_or("-")).into_owned(),
                escape(&e.kind).into_owned(),
                step.state.map_or("(no change)".to_owned(), |s| format!("→ {}", s.as_str())),
                step.epoch.to_string(),
                format!("rule {} (mapped by {})", e.rule, escape(&e.mapped_by)),
            ]
        })
        .collect();
    let [seq, native, kind, state, epoch, _] = widths(&rows);
    for (step, [s, n, k, st, ep, rule]) in history.iter().zip(&rows) {
        println!(
            "  {}  seq {s:>seq$}  {n:<native$}  {k:<kind$}  {st:<state$}  epoch {ep:<epoch$}  {rule}",
            rfc3339(step.evidence.ts_ns),
        );
    }
    println!(
        "now: {} for {}{}; set by {} ({}) under rule {}",
        view.state.as_str(),
        view.age,
        view.detail.as_deref().map(|d| format!(" ({})", escape(d))).unwrap_or_default(),
        escape(view.evidence.native.as_deref().unwrap_or("-")),
        escape(&view.evidence.file),
        view.evidence.rule
    );
    println!("input: {}", escape(&view.input));
    if !journaled.is_empty() {
        println!("journal ({} lines):", journaled.len());
    }
    for r in &journaled {
        match &r.delivery {
            Some(d) => println!(
                "  {}  deliver {:<11} into {} ({} bytes{}{}, {} ms)  rule {}: {}",
                r.at,
                d.step.as_str(),
                escape(&d.tmux),
                d.bytes,
                if d.enter_resent { ", Enter resent" } else { "" },
                d.confirmed_by.map(|s| format!(", confirmed by seq {s}")).unwrap_or_default(),
                d.elapsed_ms,
                escape(&r.rule),
                escape(&r.reason)
            ),
            None => println!(
                "  {}  {} {} ({})  rule {}: {}",
                r.at,
                r.question,
                r.verdict.as_str(),
                r.action.as_str(),
                escape(&r.rule),
                escape(&r.reason)
            ),
        }
        if let Some(c) = &r.consult {
            println!("    {}", consult_line(c));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A classifier consult, for people: what it said, how, and whether it changed the decision.
pub(crate) fn consult_line(c: &hookline::decide::classifier::ConsultNote) -> String {
    let changed = match (c.changed, c.deterministic) {
        (true, Some(was)) => format!("changed the decision from {}", was.as_str()),
        (true, None) => "changed the decision".to_owned(),
        (false, _) => "decision unchanged".to_owned(),
    };
    let answer = c.answer.lines().next().unwrap_or("").trim();
    format!(
        "classifier: {} ({}, {} ms, input {} bytes sha256 {}): {changed}; answered {:?}",
        c.verdict,
        c.outcome.as_str(),
        c.latency_ms,
        c.input_bytes,
        &c.input_sha256[..c.input_sha256.len().min(16)],
        escape(answer)
    )
}
