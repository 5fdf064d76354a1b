//! `hookline deliver`: a text into a session's tmux pane, through the events directory's
//! daemon (the one live authority: without it nothing is typed), confirmed by the session's
//! next `turn_start` or reported loudly as unconfirmed. Exit codes: 0 confirmed, 1 refused
//! (nothing typed), 3 typed but not confirmed, 2 usage or environment error (nothing typed).

use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

use hookline::daemon::Client;
use hookline::deliver::{MAX_TEXT, check_text};
use hookline::serve::protocol::{DeliverAnswer, DeliverOutcome, DeliverRequest, TmuxPane};

use super::decide::daemon_lookup;
use super::{Outcome, Reading, caller_tmux_socket, events_dir};
use crate::cli::DeliverArgs;

/// Exit code of a usage or environment error: nothing was typed.
const ERROR: u8 = 2;

pub fn run(args: &DeliverArgs) -> Outcome {
    let text = match text(args) {
        Ok(text) => text,
        Err(why) => return Ok(fail(&why)),
    };
    // Checked before the daemon is asked, so that no slot is taken for a text never typed.
    if let Err(problem) = check_text(&text) {
        return Ok(fail(&format!("nothing typed: {problem}")));
    }
    let dir = events_dir(&args.dir, Reading::Once)?;
    let mut daemon = match Client::connect(&dir) {
        Ok(daemon) => daemon,
        Err(e) => {
            let why = format!(
                "{e}; nothing typed: only a live authority may allow input (start `hookline \
                 daemon` before the sessions it serves)"
            );
            return Ok(fail(&why));
        }
    };
    // A prefix of one session's id or tag names it, as for `decide`; of several, nothing is typed.
    let session = match daemon.sessions().map(|views| daemon_lookup(&views, &args.session)) {
        Ok(Ok(session)) => session,
        Ok(Err(ambiguous)) => return Ok(fail(&format!("{ambiguous}; nothing typed"))),
        Err(e) => return Ok(fail(&format!("{e}; nothing typed"))),
    };
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let request = DeliverRequest {
        session,
        tmux: TmuxPane {
            target: args.tmux.clone(),
            socket: args.tmux_socket.clone().or_else(caller_tmux_socket),
        },
        text,
        wait_ms: args.wait.map_or(0, ms),
        confirm_timeout_ms: Some(ms(args.confirm_timeout)),
        heal_after_ms: Some(ms(args.heal_after)),
    };
    let answer = match daemon.deliver(&request) {
        Ok(answer) => answer,
        Err(e) => return Ok(fail(&format!("{e}"))),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    }
    say(&answer, args, !args.json);
    Ok(ExitCode::from(answer.outcome.exit_code()))
}

/// The text: the argument, stdin for `-`, or `--file`; bounded.
fn text(args: &DeliverArgs) -> Result<String, String> {
    let limit = MAX_TEXT as u64 + 1;
    let mut bytes = Vec::new();
    match (&args.file, args.text.as_deref()) {
        (Some(path), _) => std::fs::File::open(path)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        (None, Some("-")) => std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read stdin: {e}"))?,
        (None, Some(text)) => return Ok(text.to_owned()),
        (None, None) => return Err("give the text, `--file F` or `-` for stdin".into()),
    };
    String::from_utf8(bytes)
        .map_err(|e| format!("the text is not UTF-8 (byte {})", e.utf8_error().valid_up_to()))
}

fn fail(why: &str) -> ExitCode {
    eprintln!("hookline: deliver: {why}");
    ExitCode::from(ERROR)
}

/// The outcome for people: on stdout when confirmed, on stderr otherwise. An unconfirmed
/// delivery is said on stderr even with `--json`.
fn say(a: &DeliverAnswer, args: &DeliverArgs, text: bool) {
    let rule = a.rule.as_deref().unwrap_or("-");
    let reason = a.reason.as_deref().unwrap_or("");
    match a.outcome {
        DeliverOutcome::Confirmed if text => {
            let by = a
                .event
                .as_ref()
                .map(|e| {
                    let native = e.native.as_deref().unwrap_or("turn_start");
                    format!("{native} seq {}", e.seq)
                })
                .unwrap_or_default();
            let healed = if a.enter_resent { ", after one more Enter" } else { "" };
            println!(
                "delivered to {} and confirmed by {by} in {} ms{healed}",
                args.session, a.elapsed_ms
            );
        }
        DeliverOutcome::Refused if text => {
            let by = match a.refused_by {
                Some(hookline::serve::protocol::RefusedBy::Pane) => "the pane",
                _ => "the input decision",
            };
            eprintln!("hookline: deliver: refused by {by} (rule {rule}): {reason}; nothing typed");
        }
        DeliverOutcome::Unconfirmed => {
            eprintln!(
                "hookline: deliver: UNCONFIRMED: the text was typed into {} for {} but no \
                 turn_start confirmed it ({reason}); not retried: look at the pane",
                args.tmux, args.session
            );
        }
        _ => {}
    }
}
