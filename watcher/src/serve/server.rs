//! `hookline serve` itself: live events into the hub, request lines in, one reply line each
//! out.
//!
//! A thread follows the events directory into the hub ([`follow`]). Requests are answered in
//! order, at once, except a `next_event` that may wait: it is answered from a thread of its
//! own, so that it delays no other request, and its reply comes after those of the requests
//! sent meanwhile. At the end of the input the waits still running are answered before [`run`]
//! returns.
//!
//! The two halves are public for `hookline daemon`, which runs one [`Feeder`] and an
//! [`answer`] loop per connection over the same hub.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use serde_json::Value;

use super::hub::Shared;
use super::lines::{Line, Lines, Overlong};
use super::protocol::{MAX_LINE, Reply, parse};
use crate::canonical::Event;
use crate::checkpoint::{Cadence, Taken};
use crate::ingest::follow::{self, Delivery, FollowNotice, Sink, SinkError};
use crate::ingest::reader::Reader;
use crate::ingest::watch::Watcher;

/// The most `next_event` and `deliver` requests waiting at once (each holds a thread while it
/// waits).
pub const MAX_WAITING: usize = 64;

/// What the server tells its operator (`hookline serve` prints it on stderr).
#[derive(Debug)]
pub enum Note {
    /// A notice of the follow loop.
    Follow(FollowNotice),
    /// The journal could not be written.
    Journal(String),
    /// Events stopped arriving: every answer that depends on them is refused from now on.
    WatcherStopped(crate::Error),
    /// A connection to `hookline daemon` could not be served.
    Connection(io::Error),
    /// The checkpoint could not be saved: the next start replays more history, nothing else.
    Checkpoint(crate::Error),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Follow(notice) => write!(f, "{notice}"),
            Note::Journal(error) => write!(f, "journal: {error}"),
            Note::WatcherStopped(error) => write!(f, "the watcher stopped: {error}"),
            Note::Connection(error) => write!(f, "a connection could not be served: {error}"),
            Note::Checkpoint(error) => write!(f, "checkpoint not saved: {error}"),
        }
    }
}

/// Serves until the end of `input`: `watcher`'s events go into the hub from a thread of its
/// own, and each request line of `input` gets its reply line on `output`, flushed. `now` is
/// the clock; `note` hears what the operator should know. A reader of `output` gone away (a
/// broken pipe) ends it without error, and without waiting for the waits still running.
pub fn run<W: Write + Send + 'static>(
    shared: &Arc<Shared>,
    watcher: Watcher,
    input: impl BufRead,
    output: W,
    now: fn() -> u64,
    note: impl Fn(Note) + Send + Sync + 'static,
) -> io::Result<()> {
    let note = Arc::new(note);
    let feeder = Feeder::start(shared, watcher, Arc::clone(&note));
    let result = answer(shared, Lines::new(input, Overlong::Skip), output, now, &*note);
    feeder.stop();
    result
}

/// [`run`] with another source of events than a watcher: `feed` runs on a thread of its own
/// and hands its events to the [`Feed`] until the stop flag it is given is raised (the end of
/// `input`). A feed that fails stops every answer that depends on fresh events, as a watcher
/// that fails does (`hookline serve --nats` feeds the hub from a JetStream consumer).
pub fn run_fed<W, F>(
    shared: &Arc<Shared>,
    feed: F,
    input: impl BufRead,
    output: W,
    now: fn() -> u64,
    note: impl Fn(Note) + Send + Sync + 'static,
) -> io::Result<()>
where
    W: Write + Send + 'static,
    F: FnOnce(&mut Feed, &dyn Fn() -> bool) -> Result<(), crate::Error> + Send + 'static,
{
    let note = Arc::new(note);
    let feeder = Feeder::start_fed(shared, feed, Arc::clone(&note));
    let result = answer(shared, Lines::new(input, Overlong::Skip), output, now, &*note);
    feeder.stop();
    result
}

/// The thread that follows the events directory (or another feed) into the hub: one per hub,
/// however many request loops ([`answer`]) share it.
#[derive(Debug)]
pub struct Feeder {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Feeder {
    /// Starts following `watcher` into `shared`. When the watcher fails, `note` hears why and
    /// the hub refuses every answer that would be stale ([`Shared::fail`]).
    pub fn start<N: Fn(Note) + Send + Sync + 'static>(
        shared: &Arc<Shared>,
        mut watcher: Watcher,
        note: Arc<N>,
    ) -> Feeder {
        let feed = move |sink: &mut Feed, stopping: &dyn Fn() -> bool| {
            follow::follow(&mut watcher, sink, None, stopping).map(drop)
        };
        Feeder::start_fed(shared, feed, note)
    }

    /// Starts `feed` on a thread of its own, handing its events to the hub, until
    /// [`Feeder::stop`]. When it fails, `note` hears why and the hub refuses every answer
    /// that would be stale.
    pub fn start_fed<N, F>(shared: &Arc<Shared>, feed: F, note: Arc<N>) -> Feeder
    where
        N: Fn(Note) + Send + Sync + 'static,
        F: FnOnce(&mut Feed, &dyn Fn() -> bool) -> Result<(), crate::Error> + Send + 'static,
    {
        let note: Arc<dyn Fn(Note) + Send + Sync> = note;
        let mut sink = Feed { shared: Arc::clone(shared), note, cadence: Cadence::new() };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let stopping = || stop.load(Ordering::Relaxed);
                if let Err(e) = feed(&mut sink, &stopping) {
                    let why = e.to_string();
                    (sink.note)(Note::WatcherStopped(e));
                    sink.shared.fail(why);
                }
            })
        };
        Feeder { stop, thread }
    }

    /// Stops following and waits for the thread to end.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// Live events into the hub, which wakes the `next_event` waiters: the [`Sink`] a feed of
/// [`Feeder::start_fed`] delivers to.
pub struct Feed {
    shared: Arc<Shared>,
    note: Arc<dyn Fn(Note) + Send + Sync>,
    cadence: Cadence,
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed").finish_non_exhaustive()
    }
}

impl Feed {
    /// Tells the operator something (what `hookline serve` prints on stderr).
    pub fn note(&self, note: Note) {
        (self.note)(note);
    }
}

impl Sink for Feed {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        self.shared.apply(&event);
        self.cadence.applied();
        Ok(Delivery::Delivered)
    }

    fn notice(&mut self, notice: FollowNotice) {
        (self.note)(Note::Follow(notice));
    }

    fn checkpoint(&mut self, reader: &Reader, last: bool) {
        if !(self.cadence.due() || last && self.cadence.unsaved()) {
            return;
        }
        self.cadence = Cadence::new();
        // Taken under the hub's lock, written after it: answers do not wait for the disk.
        let taken = self.shared.checkpoint(reader);
        if let Err(e) = taken.and_then(|taken| taken.map_or(Ok(()), Taken::write)) {
            (self.note)(Note::Checkpoint(e));
        }
    }
}

/// Answers the requests of `input` until its end, each with one reply line on `output`,
/// flushed, from the hub [`Feeder`] keeps current. Any number of these loops may share one
/// hub at once (`hookline daemon` runs one per connection); the input slots they hand out are
/// the hub's, so each idle's slot goes to one of them only. At the end of `input` the waits
/// still running are answered before it returns; a reader of `output` gone away (a broken
/// pipe) ends it at once. A line longer than [`MAX_LINE`] gets an error reply, then what
/// `input`'s [`Overlong`] says: the next line, or the end without
/// waiting for the waits (their replies go to a stream the caller closes).
pub fn answer<W: Write + Send + 'static>(
    shared: &Arc<Shared>,
    mut input: Lines<impl BufRead>,
    output: W,
    now: fn() -> u64,
    note: &dyn Fn(Note),
) -> io::Result<()> {
    let out = Arc::new(Mutex::new(output));
    let mut waiting: Vec<JoinHandle<()>> = Vec::new();
    let too_long = || format!("request line longer than {MAX_LINE} bytes");
    loop {
        let line = match input.next_line()? {
            Line::Request(line) => Some(line),
            Line::TooLong { closed: false } => None,
            Line::TooLong { closed: true } => {
                // Cut off: one error reply, and its waits are not waited for (their replies
                // go to a stream the caller closes).
                return match send(&out, &Reply::error(Value::Null, None, too_long())) {
                    Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
                    _ => Ok(()),
                };
            }
            Line::End => {
                for wait in waiting {
                    let _ = wait.join();
                }
                return Ok(());
            }
        };
        waiting.retain(|wait| !wait.is_finished());
        let reply = match line {
            None => Reply::error(Value::Null, None, too_long()),
            Some(line) => match std::str::from_utf8(line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => match parse(text.trim()) {
                    Ok((id, request)) if request.may_wait() => {
                        if waiting.len() >= MAX_WAITING {
                            let error = format!(
                                "{MAX_WAITING} next_event requests (or deliveries) are \
                                 already waiting; wait for one of their replies"
                            );
                            Reply::error(id, Some(request.op()), error)
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
            },
        };
        for error in shared.take_journal_errors() {
            note(Note::Journal(error));
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
