//! `hookline decide`: one question about one session, answered by the events directory's
//! daemon when one answers (a live generation: it can allow input, and the allow takes the
//! slot), else from the events directory's history, saying so on stderr. A one-shot reader
//! can never authorize input or a nudge, and says so; its `crashed`, `env-fault` and
//! `escalate` answers read durable evidence and are those a live generation would give
//! (docs/decide.md, "What replayed history may decide").

use std::process::ExitCode;

use hookline::canonical::SessionKey;
use hookline::decide::{Action, Ask, CallerEvidence, Decider, Decision, Question};
use hookline::ingest::follow;
use hookline::ingest::reader::Start;
use hookline::pane;
use hookline::serve::hub::{PANE_GAP, PANE_SAMPLES};
use hookline::serve::protocol::TmuxPane;
use hookline::state::{Match, Tracker, View};
use hookline::term::escape;

use super::{
    Outcome, Reading, ask_daemon, caller_tmux_socket, journal, lookup, policy, profiles,
    reader_config, with_fix,
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
        socket: args.tmux_socket.clone().or_else(caller_tmux_socket),
    });
    // The daemon reads the pane itself, with the patterns of the session's CLI.
    let ask_about = |session: String| Ask {
        pane: evidence.pane.clone(),
        transcript: evidence.transcript,
        window_dead: evidence.window_dead,
        tmux: tmux.clone(),
        ..Ask::new(session, args.question)
    };
    let live = ask_daemon(&args.source, &args.policy, |daemon| {
        let session = match daemon_lookup(&daemon.sessions()?, &args.session) {
            Ok(session) => session,
            Err(ambiguous) => return Ok(Err(ambiguous)),
        };
        daemon.decide(&ask_about(session)).map(Ok)
    })?;
    let decision = match live {
        Some(answer) => answer?,
        None => {
            let config =
                reader_config(&args.source, Reading::Once, Start::Beginning, profiles.clone())?;
            let journal = journal(&policy, &config.events_dir);
            let now = hookline::format::clock::now_ns();
            let mut decider = Decider::new(Tracker::new(profiles, now), policy).one_shot();
            if args.count {
                decider = decider.counting();
            }
            if let Some(journal) = journal {
                decider = decider.with_journal(journal);
            }
            follow::replay(config, |event| {
                decider.apply(&event);
            })?;
            let (facts, _unreadable) =
                hookline::transcript::Followers::default().poll(decider.tracker(), now);
            for (key, facts) in facts {
                decider.observe_transcript(&key, facts);
            }
            // A prefix is asked about under the session's own name; a name that matches
            // nothing is asked as given, and answered "no structured signal".
            let session = match lookup(decider.tracker(), &args.session)? {
                Some(found) if found.by == Match::Prefix => found.name().to_owned(),
                _ => args.session.clone(),
            };
            let mut ask = ask_about(session);
            if let Some(tmux) = ask.tmux.take() {
                let now = hookline::format::clock::now_ns();
                let profiles = decider.tracker().profiles();
                let patterns = match decider.view(&ask.session, now) {
                    Some(view) if profiles.get(&view.cli).is_some() => {
                        profiles.get(&view.cli).map(|p| p.pane.clone()).unwrap_or_default()
                    }
                    _ => pane::union(profiles.iter().map(|p| &p.pane)),
                };
                let reading = tmux.pane().sense_settled(&patterns, PANE_SAMPLES, PANE_GAP)?;
                let mut evidence = reading.evidence;
                if ask.question == Question::Crashed
                    && decider.policy().classifier.command.is_some()
                {
                    evidence.screen = Some(pane::strip_escapes(&tmux.pane().capture()?));
                }
                ask.pane = Some(evidence.or(ask.pane));
            }
            let decision = decider.decide(&ask, hookline::format::clock::now_ns());
            for error in decider.take_journal_errors() {
                eprintln!("hookline: warning: journal: {error}");
            }
            decision
        }
    };
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

/// What an `allow` lets the orchestrator do, so that no answer reads as the opposite (an
/// `env-fault` allow is "no fault: carry on", never "there is a fault").
fn allow_means(question: Question) -> &'static str {
    match question {
        Question::Input => "deliver the input, once",
        Question::Nudge => "send the nudge, once",
        Question::Crashed => "the session is over: reclaim or retry it",
        Question::EnvFault => "no env fault stands: carry on (retry, charge attempts) as usual",
        Question::Escalate => "nothing calls for a human: carry on",
        Question::Stall => "a nudge is wanted: ask nudge, then send the nudge text",
    }
}

fn print_text(d: &Decision) {
    let verdict = match d.action {
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
}

/// SESSION as the daemon knows it: an exact session id or tag as given, else the one session
/// whose id or tag it begins (a trailing `…`, as `status` clips, ignored), else as given (the
/// daemon answers "no structured signal"). Several sessions for one prefix is the library's
/// [`hookline::Error::AmbiguousSession`], worded as [`Tracker::lookup`] words it.
pub(super) fn daemon_lookup(views: &[View], query: &str) -> Result<String, String> {
    let query = query.strip_suffix('…').unwrap_or(query);
    let names = |v: &View| [v.session_id.clone(), v.tag.clone()];
    if query.is_empty() || views.iter().flat_map(names).flatten().any(|name| name == query) {
        return Ok(query.to_owned());
    }
    let candidates: Vec<&View> = views
        .iter()
        .filter(|v| names(v).iter().flatten().any(|name| name.starts_with(query)))
        .collect();
    match candidates.as_slice() {
        [] => Ok(query.to_owned()),
        [one] => Ok(one.session_id.clone().or_else(|| one.tag.clone()).unwrap_or_default()),
        many => {
            let key = |v: &&View| SessionKey {
                cli: v.cli.clone(),
                session_id: v.session_id.clone(),
                tag: v.tag.clone(),
            };
            let error = hookline::Error::AmbiguousSession {
                query: query.to_owned(),
                candidates: many.iter().map(|v| key(v).describe()).collect(),
            };
            Err(with_fix(error).to_string())
        }
    }
}
