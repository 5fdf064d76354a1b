//! `hookline deliver`: a text into a session's tmux pane, through the events directory's
//! daemon (the one live authority: without it nothing is typed), confirmed by the session's
//! next `turn_start` or reported loudly as unconfirmed. Exit codes: 0 confirmed, 1 refused
//! (nothing typed), 3 typed but not confirmed, 2 usage or environment error (nothing typed).

use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

use hookline::daemon::Client;
use hookline::decide::Question;
use hookline::deliver::{MAX_TEXT, check_text};
use hookline::protocol::{DeliverAnswer, DeliverOutcome, DeliverRequest, RefusedBy, TmuxPane};

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
    if let Some(text) = &text
        && let Err(problem) = check_text(text)
    {
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
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let request = DeliverRequest {
        // Named exactly: the daemon refuses a name no session has, and types nothing.
        session: args.session.clone(),
        tmux: TmuxPane {
            target: args.tmux.clone(),
            socket: caller_tmux_socket(args.tmux_socket.as_ref()),
        },
        text,
        question: if args.nudge { Question::Nudge } else { Question::Input },
        lease: args.lease.as_deref().map(Into::into),
        wait_ms: args.wait.map_or(0, ms),
        confirm_timeout_ms: Some(ms(args.confirm_timeout)),
        heal_after_ms: Some(ms(args.heal_after)),
    };
    // Interrupted (Ctrl-C, SIGTERM) the process ends, its connection closes, and a delivery
    // that has not started typing types nothing.
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

/// The text: the argument, stdin for `-`, or `--file`; bounded. `None` for a nudge given none
/// (the allowed nudge's text is typed).
fn text(args: &DeliverArgs) -> Result<Option<String>, String> {
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
        (None, Some(text)) => return Ok(Some(text.to_owned())),
        (None, None) if args.nudge => return Ok(None),
        (None, None) => return Err("give the text, `--file F` or `-` for stdin".into()),
    };
    String::from_utf8(bytes)
        .map(Some)
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
            let pane = a.pane_id.as_deref().map(|id| format!(" (pane {id})")).unwrap_or_default();
            println!(
                "delivered to {}{pane} and confirmed by {by} in {} ms{healed}",
                args.session, a.elapsed_ms
            );
            if let Some(text) = &a.text {
                println!("typed: {}", crate::term::escape(text));
            }
        }
        DeliverOutcome::Refused if text => {
            let by = match a.refused_by {
                Some(RefusedBy::Pane) => "the pane",
                Some(RefusedBy::Cancelled) => "its requester going away",
                _ if args.nudge => "the nudge decision",
                _ => "the input decision",
            };
            eprintln!("hookline: deliver: refused by {by} (rule {rule}): {reason}; nothing typed");
        }
        DeliverOutcome::Unconfirmed => {
            let pane = a.pane_id.as_deref().unwrap_or(&args.tmux);
            let keys = match (a.sent.paste, a.sent.enter) {
                (true, 0) => "the text was pasted (no Enter)",
                (true, 1) => "the text and one Enter were sent",
                (true, _) => "the text and two Enters were sent",
                (false, _) => "nothing may have been sent",
            };
            eprintln!(
                "hookline: deliver: UNCONFIRMED: {keys} into pane {pane} ({}) for {} but no \
                 turn_start confirmed it ({reason}); not retried: look at the pane",
                args.tmux, args.session
            );
        }
        _ => {}
    }
}
