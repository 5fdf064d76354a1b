//! tmux marks: each pane whose process tree holds a session's host pid gets that session's
//! state in the pane user options `@hookline_state` and `@hookline_detail`; the server gets a
//! summary in the global user option `@hookline_summary` (`2 need you`), for `status-right`
//! and pane borders. A pane without a session has its marks removed.
//!
//! The marks show the state; they authorize nothing (a pane border is no input slot).
//!
//! Every pane is marked by one batched tmux command (`set-option … ; set-option …`), so each
//! argument taken from an event (a tool name, a detail) is passed as data that cannot end a
//! command: see [`batch_arg`].

use std::borrow::Cow;
use std::fmt;

use crate::errors::Error;
use hookline::deliver::in_process_tree;
use hookline::state::{StateKind, View};

use hookline::TmuxProblem;
use hookline::pane::{Pane, Server};

/// The pane option holding the state word.
pub const STATE_OPTION: &str = "@hookline_state";
/// The pane option holding the state's detail.
pub const DETAIL_OPTION: &str = "@hookline_detail";
/// The global option holding the summary.
pub const SUMMARY_OPTION: &str = "@hookline_summary";

/// One pane and the session found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// The pane id (`%3`).
    pub pane: String,
    /// The session in it, when one is: its key, state and detail.
    pub session: Option<(String, StateKind, Option<String>)>,
}

/// How many marked sessions need a person, and how many nobody can tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Waiting on their human, or stopped by an env fault (quota, auth, billing...).
    pub need_you: usize,
    /// `unknown`.
    pub unknown: usize,
    /// Sessions found in a pane.
    pub sessions: usize,
}

impl fmt::Display for Summary {
    /// `2 need you`, `1 need you, 1 unknown`, `0 need you`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} need you", self.need_you)?;
        if self.unknown > 0 {
            write!(f, ", {} unknown", self.unknown)?;
        }
        Ok(())
    }
}

/// The summary a stopped `hookline tmux --follow` leaves, so that the status line says the
/// marks are no longer kept (rather than keep the last count, frozen).
pub const STOPPED: &str = "hookline tmux stopped";

/// Removes the marks of every pane of `server` and sets the summary to `summary` (e.g.
/// [`STOPPED`]), in one tmux command. A server that is gone has no marks left: not an error.
pub fn clear(server: &Server, summary: &str) -> Result<(), Error> {
    let panes = match panes(server) {
        Ok(panes) => panes,
        Err(Error::NoTmuxServer { .. }) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut args: Vec<&str> = vec!["set-option", "-g", SUMMARY_OPTION, summary];
    for (pane, _) in &panes {
        for option in [STATE_OPTION, DETAIL_OPTION] {
            args.extend([";", "set-option", "-p", "-u", "-t", pane, option]);
        }
    }
    let all = Pane { server: server.clone(), target: "(every pane)".into() };
    all.run("unmark", &args, None)?;
    Ok(())
}

/// Every pane of the server with the pid of its program; [`Error::NoTmuxServer`] when no
/// server runs.
pub fn panes(server: &Server) -> Result<Vec<(String, u32)>, Error> {
    let all = Pane { server: server.clone(), target: "(every pane)".into() };
    let out = all
        .run("list", &["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"], None)
        .map_err(no_server)?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|line| {
            let (id, pid) = line.split_once(' ')?;
            Some((id.to_owned(), pid.trim().parse().ok()?))
        })
        .collect())
}

/// A failure to reach the server, as [`Error::NoTmuxServer`]: tmux says `no server running on
/// SOCKET` when the socket is there and nobody listens, `error connecting to SOCKET (...)` when
/// it is not there.
fn no_server(error: hookline::Error) -> Error {
    if let hookline::Error::Tmux { source: TmuxProblem::Failed { stderr, .. }, .. } = &error {
        let socket = stderr
            .strip_prefix("no server running on ")
            .map(str::trim)
            .or_else(|| stderr.strip_prefix("error connecting to ")?.split(" (").next());
        if let Some(socket) = socket {
            return Error::NoTmuxServer { socket: socket.to_owned() };
        }
    }
    Error::Library(error)
}

/// Which session each pane holds: the most recently active one of this machine whose host
/// pid is in the pane's process tree (`views` most recently active first, as the tracker
/// gives them). Another host's session never marks a pane here: its pid is another
/// machine's.
pub fn find(panes: &[(String, u32)], views: &[View]) -> Vec<Marked> {
    panes
        .iter()
        .map(|(pane, pane_pid)| Marked {
            pane: pane.clone(),
            session: views
                .iter()
                .filter(|v| v.host.is_none())
                .find(|v| v.host_pid.is_some_and(|host| in_process_tree(host, *pane_pid)))
                .map(|v| (crate::notify::view_key(v), v.state, v.detail.clone())),
        })
        .collect()
}

/// The summary of what was found in the panes, and of the other hosts' sessions (which mark
/// no pane here, but need a person all the same).
pub fn summarize(marked: &[Marked], views: &[View]) -> Summary {
    let mut summary = Summary::default();
    let found = marked.iter().filter_map(|m| m.session.as_ref()).map(|(_, state, _)| *state);
    let remote = views.iter().filter(|v| v.host.is_some()).map(|v| v.state);
    for state in found.chain(remote) {
        summary.sessions += 1;
        match state {
            StateKind::WaitingOnHuman | StateKind::EnvFault => summary.need_you += 1,
            StateKind::Unknown => summary.unknown += 1,
            _ => {}
        }
    }
    summary
}

/// One argument of a batched tmux command line (`cmd ARGS… ; cmd ARGS…`), written so that
/// tmux reads it back as `value`, whatever it holds. tmux takes an argument that *ends* in
/// `;` for a command separator, the `;` dropped (so a detail `x;` would show as `x`, and a
/// tool named `;` would end the command before its value and fail the whole batch); an
/// argument ending in `\;` it reads as ending in `;`. So a final `;` gets a `\` before it:
/// escaped, never stripped. Nothing else in an argument is interpreted: there is no shell,
/// and `set-option` without `-F` expands no `#{}` format.
pub fn batch_arg(value: &str) -> Cow<'_, str> {
    match value.strip_suffix(';') {
        Some(rest) => Cow::Owned(format!("{rest}\\;")),
        None => Cow::Borrowed(value),
    }
}

/// Marks every pane of `server` with its session's state (and unmarks the others), sets the
/// summary, all in one tmux command; returns what was found. Every argument goes through
/// [`batch_arg`]: no text can end a command early, so none can fail or reorder the batch.
pub fn mark(server: &Server, views: &[View]) -> Result<(Vec<Marked>, Summary), Error> {
    let marked = find(&panes(server)?, views);
    let summary = summarize(&marked, views);
    let summary_text = summary.to_string();
    let mut args: Vec<Cow<'_, str>> =
        vec!["set-option".into(), "-g".into(), SUMMARY_OPTION.into(), batch_arg(&summary_text)];
    for m in &marked {
        let (state, detail) = match &m.session {
            Some((_, state, detail)) => (Some(state.as_str()), detail.as_deref()),
            None => (None, None),
        };
        for (option, value) in [(STATE_OPTION, state), (DETAIL_OPTION, detail)] {
            args.extend([";", "set-option", "-p"].map(Cow::from));
            if value.is_none() {
                args.push("-u".into());
            }
            args.extend(["-t".into(), batch_arg(&m.pane), option.into()]);
            args.extend(value.map(batch_arg));
        }
    }
    let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
    let all = Pane { server: server.clone(), target: "(every pane)".into() };
    all.run("mark", &args, None)?;
    Ok((marked, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_final_semicolon_is_escaped_and_nothing_is_stripped() {
        let cases = [
            ("x;", "x\\;"),
            (";", "\\;"),
            ("\\;", "\\\\;"),
            ("a;b", "a;b"),
            ("x\\", "x\\"),
            ("#{pane_id} \"q\"\n", "#{pane_id} \"q\"\n"),
            ("", ""),
        ];
        for (value, arg) in cases {
            assert_eq!(batch_arg(value), arg, "{value:?}");
        }
    }
}
