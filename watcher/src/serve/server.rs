//! The request loop of `hookline serve` and of each daemon connection: request lines in, one
//! reply line each out, answered by a running engine ([`crate::engine::Running`]), which
//! follows the events on threads of its own.
//!
//! Requests are answered in order, at once, except those that may wait (a `next_event` with a
//! timeout, a `deliver`): each is answered from a thread of its own, so that it delays no
//! other request, and its reply comes after those of the requests sent meanwhile. At the end
//! of the input (the requester gone) the deliveries that have not started typing are
//! cancelled, and the waits still running are answered before [`answer`] returns. Request
//! lines are read with a bound ([`super::lines`]): an endless line never grows the memory.

use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use serde_json::Value;

use super::answer::{Reloader, reply};
use super::lines::{Line, Lines};
pub use crate::engine::Note;
use crate::engine::Running;
use crate::engine::deliver::Cancel;
use crate::protocol::{MAX_LINE, Reply, parse};

/// The most `next_event` and `deliver` requests waiting at once (each holds a thread while it
/// waits).
pub(crate) const MAX_WAITING: usize = 64;

/// Answers the requests of `input` until its end, each with one reply line on `output`,
/// flushed, from `running`. Any number of these loops may share one engine at once (`hookline
/// daemon` runs one per connection); the input slots they hand out are the engine's, so each
/// idle's slot goes to one of them only. An over-long line gets one error reply, then is
/// skipped or ends the input as `input` says ([`super::lines::Overlong`]). At the end of `input` (the
/// requester gone) the deliveries of this loop that have not started typing are cancelled and
/// the waits still running are answered before it returns; a reader of `output` gone away (a
/// broken pipe) ends it at once, cancelling them too.
pub fn answer<W: Write + Send + 'static>(
    running: &Arc<Running>,
    mut input: Lines<impl BufRead>,
    output: W,
    reload: Option<Reloader>,
) -> io::Result<()> {
    let out = Arc::new(Mutex::new(output));
    let cancel = Cancel::new();
    let mut waiting: Vec<JoinHandle<()>> = Vec::new();
    let too_long = || format!("request line longer than {MAX_LINE} bytes");
    let result = loop {
        let line = match input.next_line() {
            Ok(Line::Request(line)) => Some(line.to_vec()),
            Ok(Line::TooLong { closed: false }) => None,
            Ok(Line::TooLong { closed: true }) => {
                // Cut off: one error reply, and the connection ends.
                break match send(&out, &Reply::error(Value::Null, None, too_long())) {
                    Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
                    _ => Ok(()),
                };
            }
            Ok(Line::End) => break Ok(()),
            Err(e) => break Err(e),
        };
        waiting.retain(|wait| !wait.is_finished());
        let reply = match line {
            None => Reply::error(Value::Null, None, too_long()),
            Some(line) => match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => match parse(text.trim()) {
                    Ok((id, request)) if request.may_wait() => {
                        if waiting.len() >= MAX_WAITING {
                            let error = format!(
                                "{MAX_WAITING} next_event requests (or deliveries) are already \
                                 waiting; wait for one of their replies"
                            );
                            Reply::error(id, Some(request.op()), error)
                        } else {
                            let (running, out) = (Arc::clone(running), Arc::clone(&out));
                            let (cancel, reload) = (cancel.clone(), reload.clone());
                            waiting.push(thread::spawn(move || {
                                let reply = reply(&running, id, request, &cancel, reload.as_ref());
                                // A client gone away is the main loop's business.
                                let _ = send(&out, &reply);
                            }));
                            continue;
                        }
                    }
                    Ok((id, request)) => reply(running, id, request, &cancel, reload.as_ref()),
                    Err(refused) => refused,
                },
                Err(_) => Reply::error(Value::Null, None, "request line is not UTF-8".into()),
            },
        };
        match send(&out, &reply) {
            Ok(()) => {}
            // Nobody reads the replies any more.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    // The requester is gone: what has not started typing types nothing.
    cancel.cancel();
    for wait in waiting {
        let _ = wait.join();
    }
    result
}

/// Writes one reply line, whole, and flushes it.
fn send(out: &Mutex<impl Write>, reply: &Reply) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    writeln!(out, "{}", reply.to_line()).and_then(|()| out.flush())
}
