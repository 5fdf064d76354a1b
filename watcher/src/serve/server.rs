//! The request loop of `hookline serve` and of each daemon connection: request lines in, one
//! reply line each out, answered by a running engine ([`crate::engine::Running`]), which
//! follows the events on threads of its own.
//!
//! Requests are answered in order, at once, except those that may wait (a `next_event` with a
//! timeout, a `deliver`): each is answered from a thread of its own, so that it delays no
//! other request, and its reply comes after those of the requests sent meanwhile. At the end
//! of the input (the requester gone) the deliveries that have not started typing are
//! cancelled, and the waits still running are answered before [`answer`] returns.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use serde_json::Value;

use super::answer::{Reloader, reply};
use super::protocol::{MAX_LINE, Reply, parse};
pub use crate::engine::Note;
use crate::engine::Running;
use crate::engine::deliver::Cancel;

/// The most `next_event` and `deliver` requests waiting at once (each holds a thread while it
/// waits).
pub const MAX_WAITING: usize = 64;

/// What an oversized request line does to its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oversized {
    /// It gets one error reply, and the connection is closed (a socket: whoever sends an
    /// endless line is not speaking the protocol).
    Disconnect,
    /// It gets one error reply, and the next line is read (`hookline serve`'s stdin).
    Skip,
}

/// Answers the requests of `input` until its end, each with one reply line on `output`,
/// flushed, from `running`. Any number of these loops may share one engine at once (`hookline
/// daemon` runs one per connection); the input slots they hand out are the engine's, so each
/// idle's slot goes to one of them only. At the end of `input` the deliveries of this loop
/// that have not started typing are cancelled and the waits still running are answered before
/// it returns; a reader of `output` gone away (a broken pipe) ends it at once, cancelling
/// them too.
pub fn answer<W: Write + Send + 'static>(
    running: &Arc<Running>,
    mut input: impl BufRead,
    output: W,
    oversized: Oversized,
    reload: Option<Reloader>,
) -> io::Result<()> {
    let out = Arc::new(Mutex::new(output));
    let cancel = Cancel::new();
    let mut waiting: Vec<JoinHandle<()>> = Vec::new();
    let mut line = Vec::new();
    let result = loop {
        line.clear();
        let read = match read_line(&mut input, &mut line) {
            Ok(read) => read,
            Err(e) => break Err(e),
        };
        let Some(read) = read else {
            // Longer than MAX_LINE: one error reply, then skip the rest, bounded.
            let error = format!("request line longer than {MAX_LINE} bytes");
            let refused = Reply::error(Value::Null, None, error);
            if let Err(e) = send(&out, &refused) {
                break if e.kind() == io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e) };
            }
            match oversized {
                Oversized::Disconnect => break Ok(()),
                Oversized::Skip => match skip_line(&mut input) {
                    Ok(true) => continue,
                    Ok(false) => break Ok(()),
                    Err(e) => break Err(e),
                },
            }
        };
        if read == 0 {
            break Ok(());
        }
        waiting.retain(|wait| !wait.is_finished());
        let reply = match std::str::from_utf8(&line) {
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

/// Reads one line into `line`, at most [`MAX_LINE`] bytes and its newline: `Some(0)` at the
/// end of the input, `None` when the line is longer (what was read of it is dropped).
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let read = input.take(MAX_LINE as u64 + 1).read_until(b'\n', line)?;
    if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
        line.clear();
        return Ok(None);
    }
    Ok(Some(read))
}

/// Skips the rest of a line without keeping it: `false` when the input ended first.
fn skip_line(input: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        match memchr::memchr(b'\n', buf) {
            Some(at) => {
                input.consume(at + 1);
                return Ok(true);
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Writes one reply line, whole, and flushes it.
fn send(out: &Mutex<impl Write>, reply: &Reply) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    writeln!(out, "{}", reply.to_line()).and_then(|()| out.flush())
}
