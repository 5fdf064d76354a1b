//! The request loop of `hookline serve`: request lines in, one reply line each out.
//!
//! Requests are answered in order, at once, except a `next_event` that may wait: it is
//! answered from a thread of its own, so that it delays no other request, and its reply comes
//! after those of the requests sent meanwhile. At the end of the input the waits still running
//! are answered before [`run`] returns.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use serde_json::Value;

use super::hub::Shared;
use super::protocol::{MAX_LINE, Op, Reply, parse};

/// The most `next_event` requests waiting at once (each holds a thread while it waits).
pub const MAX_WAITING: usize = 64;

/// Reads requests from `input` until its end, writing each reply to `output` as one line,
/// flushed. `now` is the clock; `warn` gets the journal's write failures, once each. A reader
/// of `output` gone away (a broken pipe) ends the loop without error, and without waiting for
/// the waits still running.
pub fn run<W: Write + Send + 'static>(
    shared: &Arc<Shared>,
    mut input: impl BufRead,
    output: W,
    now: fn() -> u64,
    mut warn: impl FnMut(&str),
) -> io::Result<()> {
    let out = Arc::new(Mutex::new(output));
    let mut waiting: Vec<JoinHandle<()>> = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            for wait in waiting {
                let _ = wait.join();
            }
            return Ok(());
        }
        waiting.retain(|wait| !wait.is_finished());
        let reply = if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            input.read_until(b'\n', &mut rest)?;
            Reply::error(Value::Null, None, format!("request line longer than {MAX_LINE} bytes"))
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => match parse(text.trim()) {
                    Ok((id, request)) if request.may_wait() => {
                        if waiting.len() >= MAX_WAITING {
                            let error = format!(
                                "{MAX_WAITING} next_event requests are already waiting; wait for \
                                 one of their replies"
                            );
                            Reply::error(id, Some(Op::NextEvent), error)
                        } else {
                            let (shared, out) = (Arc::clone(shared), Arc::clone(&out));
                            waiting.push(thread::spawn(move || {
                                let reply = shared.reply(id, request, &now);
                                // A client gone away is the main loop's business.
                                let _ = send(&out, &reply);
                            }));
                            continue;
                        }
                    }
                    Ok((id, request)) => shared.reply(id, request, &now),
                    Err(refused) => refused,
                },
                Err(_) => Reply::error(Value::Null, None, "request line is not UTF-8".into()),
            }
        };
        for error in shared.take_journal_errors() {
            warn(&error);
        }
        match send(&out, &reply) {
            Ok(()) => {}
            // Nobody reads the replies any more: the waits are not joined.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Writes one reply line, whole, and flushes it.
fn send(out: &Mutex<impl Write>, reply: &Reply) -> io::Result<()> {
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    writeln!(out, "{}", reply.to_line()).and_then(|()| out.flush())
}
