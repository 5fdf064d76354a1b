//! `hookline decide`: one question about one session, answered by the events directory's
//! daemon when one answers (a live generation: it can allow input, and the allow takes the
//! slot), else from the events directory's history, saying so on stderr. A one-shot reader
//! can never authorize input or a nudge, and says so; its `crashed`, `env-fault` and
//! `escalate` answers read durable evidence and are those a live generation would give
//! (docs/decide.md, "What replayed history may decide").

use std::process::ExitCode;

use crate::term::escape;
use hookline::decide::{Action, Ask, CallerEvidence, Decision, Question};
use hookline::engine::{PaneSensing, Purpose};
use hookline::protocol::{Found, LookupAnswer, TmuxPane};

use super::{
    Outcome, Reading, ask_daemon, caller_tmux_socket, engine_parts_with, policy, profiles,
    say_no_such_session,
};
use crate::cli::DecideArgs;

/// Exit code of an allowed verdict.
const ALLOW: u8 = 0;
/// Exit code of a withheld verdict that hookline stands behind (hold, pause, escalate).
const WITHHOLD: u8 = 1;
/// Exit code of "no structured signal": withheld; keep your own behaviour.
const NO_SIGNAL: u8 = 3;

pub fn run(args: DecideArgs) -> Outcome {
    let evidence: CallerEvidence = match &args.evidence {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("--evidence: {e}"))?,
        None => CallerEvidence::default(),
    };
    let profiles = profiles()?;
    // Checked whether or not a daemon answers: a bad policy is an error either way.
    let policy = policy(&args.policy, &profiles)?;
    let tmux = args.tmux.as_ref().map(|target| TmuxPane {
        target: target.clone(),
        socket: caller_tmux_socket(args.tmux_socket.as_ref()),
    });
    let ask_about = |session: String| {
        let mut ask = Ask::new(session, args.question).with(evidence.clone());
        ask.peek = args.peek;
        ask
    };
    // Questions that lead to typing name their session exactly: a prefix could bind the
    // answer to another session. The others take a prefix, as status and explain do.
    let exact = matches!(args.question, Question::Input | Question::Nudge);
    let live = ask_daemon(&args.source, &args.policy, |daemon| {
        let found = daemon.lookup(&args.session)?;
        let session = match name_for(&args.session, &found, exact) {
            Ok(session) => session,
            Err(ambiguous) => return Ok(Err(ambiguous)),
        };
        daemon.decide(&ask_about(session), tmux.clone()).map(|d| Ok((d, found)))
    })?;
    let (decision, found) = match live {
        Some(answer) => answer?,
        None => {
            let (mut config, reader) = engine_parts_with(
                &args.source,
                Reading::Once,
                Purpose::Decisions,
                profiles,
                policy,
            )?;
            config.count_withheld = args.count;
            let mut engine = super::replay_with(config, reader)?;
            let found = engine.lookup(&args.session);
            let session = name_for(&args.session, &found, exact)?;
            let ask = ask_about(session);
            let decision = match &tmux {
                Some(tmux) => engine.decide_with_pane(ask, &PaneSensing::new(tmux.clone()))?,
                None => engine.decide(&ask),
            };
            for error in engine.take_journal_errors() {
                eprintln!("hookline: warning: journal: {error}");
            }
            (decision, found)
        }
    };
    if decision.state.is_none() && found.found != Found::Exact {
        say_no_such_session(&args.session, &found);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&decision)?);
    } else {
        print_text(&decision);
    }
    Ok(ExitCode::from(match decision.action {
        Action::Proceed => ALLOW,
        Action::FallBack => NO_SIGNAL,
        Action::Hold | Action::Pause | Action::Escalate => WITHHOLD,
    }))
}

/// The name to ask about: the session's exact name when the lookup found one (by prefix only
/// where `exact` is false), else the name as given (answered "no structured signal"). A prefix
/// of several sessions is an error listing them, for a question that takes a prefix.
fn name_for(query: &str, found: &LookupAnswer, exact: bool) -> Result<String, hookline::Error> {
    match found.found {
        Found::Prefix if !exact => Ok(found.name.clone().unwrap_or_else(|| query.to_owned())),
        Found::Ambiguous if !exact => Err(hookline::Error::AmbiguousSession {
            query: query.strip_suffix('…').unwrap_or(query).to_owned(),
            candidates: found.candidates.clone(),
        }),
        _ => Ok(query.to_owned()),
    }
}

/// What an `allow` lets the orchestrator do, so that no answer reads as the opposite (an
/// `env-fault` allow is "no fault: carry on", never "there is a fault").
fn allow_means(question: Question) -> &'static str {
    match question {
        Question::Input => "deliver the input, once, under its lease",
        Question::Nudge => "send the nudge, once, under its lease",
        Question::Crashed => "the session is over: reclaim or retry it",
        Question::EnvFault => "no env fault stands: carry on (retry, charge attempts) as usual",
        Question::Escalate => "nothing calls for a human: carry on",
        Question::Stall => "a nudge is wanted: ask nudge, then send the nudge text",
    }
}

fn print_text(d: &Decision) {
    let verdict = match d.action {
        Action::Proceed
            if d.lease.is_none() && matches!(d.question, Question::Input | Question::Nudge) =>
        {
            "allow (a peek: it would allow now; nothing was taken)".to_owned()
        }
        Action::Proceed => format!("allow ({})", allow_means(d.question)),
        action => format!("withhold ({})", action.as_str()),
    };
    println!("{} {}: {verdict}", d.question, escape(&d.session));
    println!("  {}", escape(&d.reason));
    let state = d.state.map_or("no session".to_owned(), |s| s.as_str().to_owned());
    let age = d.evidence.view.as_ref().map(|v| format!(" for {}", v.age)).unwrap_or_default();
    println!("  signal {}, rule {}, state {state}{age}", d.signal.as_str(), d.rule);
    if let Some(text) = &d.nudge_text {
        println!("  nudge text: {text}");
    }
    if let Some(ms) = d.retry_after_ms {
        println!(
            "  ask again in {}",
            hookline::units::format_duration(std::time::Duration::from_millis(ms))
        );
    }
    if let Some(c) = &d.evidence.classifier {
        println!("  {}", super::explain::consult_line(c));
    }
    for hole in &d.evidence.holes {
        println!("  hole {}: {}", escape(&hole.id), escape(&hole.description));
    }
    if let Some(lease) = &d.lease {
        println!("lease {lease}");
    }
}
