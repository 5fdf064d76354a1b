//! Read-ahead: a worker thread that reads, parses and maps the listed event files in order
//! while the consumer hands out and folds the ones before them.
//!
//! The worker does only what does not depend on what was handed out: reading a file, parsing
//! its envelope, mapping it, digesting its payload, quarantining it when it is damaged (see
//! [`read_one`]). Everything that does (echoes, the position, the cursor) stays with the
//! consumer in [`Reader::next_event`](super::Reader::next_event), so an event is handed out,
//! counted and committed exactly as without the worker. Names go to the worker in chunks and
//! come back as results in the same chunks, in the order they were sent; at most
//! [`ReaderConfig::read_ahead`](super::ReaderConfig::read_ahead) names are in flight, so memory
//! stays bounded however long the backlog.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

use super::{Item, Mark, Notice, unreadable};
use crate::Error;
use crate::canonical::SourceRef;
use crate::ingest::echo::payload_text_digest;
use crate::ingest::mapping::map_envelope;
use crate::ingest::source::{self, EventFile};
use crate::profile::Profiles;

/// Names sent to the worker at a time.
pub(super) const CHUNK: usize = 64;

/// One file read: its item and the notice it raised, `None` when it vanished since it was
/// listed, or the error that stopped reading it.
pub(super) type Read = Result<Option<(Item, Option<Notice>)>, Error>;

/// Reads and maps one listed file (`Ok(None)` when it vanished since, pruned by retention);
/// a damaged one is quarantined and becomes an `unknown` event naming it. The same whether the
/// consumer or the worker calls it.
pub(super) fn read_one(
    files: &mut source::FileReader,
    profiles: &Profiles,
    dir: &Path,
    listed: EventFile,
) -> Read {
    let name = listed.name;
    let file = name.to_string();
    let source =
        SourceRef { dir: dir.to_owned(), seq: name.seq, file: file.clone(), legacy: false };
    let mark = match name.unordered_ts_ns {
        None => Mark::Ordered(name.seq),
        Some(_) => Mark::Unordered(file.clone()),
    };
    let mut digest = None;
    let mut notice = None;
    let event = match files.read_event(&listed) {
        Ok(Some(envelope)) => {
            digest = envelope.payload.as_deref().and_then(|raw| payload_text_digest(raw.get()));
            map_envelope(profiles, &envelope, source)
        }
        Ok(None) => return Ok(None),
        Err(problem) => {
            // The copy is for inspection only: a quarantine that cannot be used (a symlink in
            // its place) holds up no event.
            let quarantined = if problem.quarantine {
                source::quarantine(dir, &listed, &problem.reason)
            } else {
                Ok(None)
            };
            let reason = match &quarantined {
                Ok(Some(to)) => {
                    notice = Some(Notice::Quarantined {
                        file: to.clone(),
                        reason: problem.reason.clone(),
                    });
                    format!(
                        "unreadable event file, a copy quarantined to {}: {}",
                        to.display(),
                        problem.reason
                    )
                }
                Ok(None) => format!("unreadable event file: {}", problem.reason),
                Err(e) => {
                    format!("unreadable event file (no copy quarantined: {e}): {}", problem.reason)
                }
            };
            unreadable(source, reason, name.unordered_ts_ns.unwrap_or(0))
        }
    };
    Ok(Some(((event, mark, digest), notice)))
}

/// The workers and what is in flight to and from them.
///
/// Chunk `k` goes to worker `k % workers.len()`, and each worker answers its chunks in the order
/// it got them: so the results are taken back in order by asking each worker in turn, with no
/// reordering, however the workers' speeds differ.
#[derive(Debug)]
pub(super) struct ReadAhead {
    workers: Vec<Worker>,
    stop: Arc<AtomicBool>,
    /// Chunks sent so far: the next one goes to worker `chunks_sent % workers.len()`.
    chunks_sent: usize,
    /// Chunks received so far: the next one comes from worker `chunks_received %
    /// workers.len()`.
    chunks_received: usize,
    /// The chunks sent and not received yet, oldest first (re-read by the consumer if a
    /// worker is lost).
    sent: VecDeque<Vec<EventFile>>,
    /// Results received and not taken yet, in order, with their names.
    ready: VecDeque<(EventFile, Read)>,
    /// Emptied vectors of names and results, sent again instead of new ones: a chunk's are
    /// a few KiB, and allocating one on every chunk made glibc consolidate its free lists.
    spare_names: Vec<Vec<EventFile>>,
    spare_results: Vec<Vec<Read>>,
}

/// What a worker is sent: the names to read, and an empty vector for their results.
type Request = (Vec<EventFile>, Vec<Read>);

/// What a worker sends back: the vector of names, emptied, and the results in their order.
type Response = (Vec<EventFile>, Vec<Read>);

/// One worker thread and its two channels.
#[derive(Debug)]
struct Worker {
    requests: Option<Sender<Request>>,
    results: Receiver<Response>,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts up to `threads` workers reading files of `dir` with `profiles`; `None` when no
    /// thread can be had (the consumer then reads them itself).
    pub(super) fn start(dir: PathBuf, profiles: Profiles, threads: usize) -> Option<ReadAhead> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for index in 0..threads.max(1) {
            let (requests, work) = mpsc::channel::<Request>();
            let (done, results) = mpsc::channel::<Response>();
            let (stopped, dir, profiles) = (Arc::clone(&stop), dir.clone(), profiles.clone());
            let thread = std::thread::Builder::new()
                .name(format!("hookline-read-ahead-{index}"))
                .spawn(move || {
                    let mut files = source::FileReader::new(&dir);
                    while let Ok((mut names, mut chunk)) = work.recv() {
                        chunk.reserve(names.len());
                        for name in names.drain(..) {
                            if stopped.load(Ordering::Relaxed) {
                                return;
                            }
                            chunk.push(read_one(&mut files, &profiles, &dir, name));
                        }
                        if done.send((names, chunk)).is_err() {
                            return;
                        }
                    }
                });
            // As many as can be had: fewer threads read more slowly, not wrongly.
            let Ok(thread) = thread else { break };
            workers.push(Worker { requests: Some(requests), results, thread: Some(thread) });
        }
        if workers.is_empty() {
            return None;
        }
        Some(ReadAhead {
            workers,
            stop,
            chunks_sent: 0,
            chunks_received: 0,
            sent: VecDeque::new(),
            ready: VecDeque::new(),
            spare_names: Vec::new(),
            spare_results: Vec::new(),
        })
    }

    /// Names sent and not taken yet.
    pub(super) fn in_flight(&self) -> usize {
        self.sent.iter().map(Vec::len).sum::<usize>() + self.ready.len()
    }

    /// Sends the next names of `backlog` until `limit` are in flight. Returns false when a
    /// worker is gone.
    pub(super) fn top_up(&mut self, backlog: &mut VecDeque<EventFile>, limit: usize) -> bool {
        let mut in_flight = self.in_flight();
        while in_flight < limit && !backlog.is_empty() {
            let n = CHUNK.min(limit - in_flight).min(backlog.len());
            let mut chunk = self.spare_names.pop().unwrap_or_default();
            chunk.extend(backlog.drain(..n));
            let mut copy = self.spare_names.pop().unwrap_or_default();
            copy.extend_from_slice(&chunk);
            let results = self.spare_results.pop().unwrap_or_default();
            let worker = &self.workers[self.chunks_sent % self.workers.len()];
            let Some(requests) = &worker.requests else { return false };
            if requests.send((copy, results)).is_err() {
                // Not sent: back where it was, for the consumer to read.
                for name in chunk.into_iter().rev() {
                    backlog.push_front(name);
                }
                return false;
            }
            self.chunks_sent += 1;
            self.sent.push_back(chunk);
            in_flight += n;
        }
        true
    }

    /// The worker the next chunk in order comes from.
    fn next_worker(&self) -> &Worker {
        &self.workers[self.chunks_received % self.workers.len()]
    }

    /// The next result in order, waiting for its worker if it has not read it yet; `None`
    /// when nothing is in flight, or the worker is gone (see [`ReadAhead::into_unread`]).
    pub(super) fn next(&mut self) -> Option<Read> {
        if self.ready.is_empty() {
            self.sent.front()?;
            let response = self.next_worker().results.recv().ok()?;
            self.received(response);
        }
        self.ready.pop_front().map(|(_, read)| read)
    }

    fn received(&mut self, (names_back, mut chunk): Response) {
        self.chunks_received += 1;
        let mut names = self.sent.pop_front().unwrap_or_default();
        self.ready.extend(names.drain(..).zip(chunk.drain(..)));
        self.spare_names.extend([names, names_back]);
        self.spare_results.push(chunk);
    }

    /// Takes whatever results arrived in order without waiting.
    pub(super) fn collect(&mut self) {
        while !self.sent.is_empty() {
            match self.next_worker().results.try_recv() {
                Ok(response) => self.received(response),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            }
        }
    }

    /// Stops the workers; returns the names sent to them and not taken yet, in order, for the
    /// consumer to read itself (a result received and not taken is dropped with it, so it is
    /// read, and reported, once).
    pub(super) fn into_unread(mut self) -> Vec<EventFile> {
        self.shut_down();
        let ready = std::mem::take(&mut self.ready).into_iter().map(|(name, _)| name);
        let sent = std::mem::take(&mut self.sent).into_iter().flatten();
        ready.chain(sent).collect()
    }

    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for worker in &mut self.workers {
            worker.requests = None;
        }
        for worker in &mut self.workers {
            if let Some(thread) = worker.thread.take() {
                // A worker stops at the next file; a panic there was already reported.
                let _ = thread.join();
            }
        }
    }

    /// Workers running.
    #[cfg(test)]
    pub(super) fn workers(&self) -> usize {
        self.workers.len()
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::value::RawValue;

    use super::super::{Reader, ReaderConfig, Start};
    use crate::canonical::{Event, Kind};
    use crate::format::store::{EventsDir, WriteOptions, write_payload};
    use crate::profile::Profiles;

    const NATIVES: &[&str] = &["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"];

    /// Writes `n` events of a few sessions with payloads of pseudo-random sizes (up to about
    /// 20 KiB), the relay's way, and damages the one at `bad`; returns its file name.
    fn write_backlog(dir: &std::path::Path, n: usize, bad: usize) -> String {
        let events = EventsDir::create(dir).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut bad_file = String::new();
        for index in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pad = "x".repeat((state % 20_000) as usize);
            let native = NATIVES[index % NATIVES.len()];
            let payload = format!(
                r#"{{"session_id":"s{}","hook_event_name":"{native}","tool_name":"Bash","pad":"{pad}"}}"#,
                index % 7
            );
            let payload = RawValue::from_string(payload).unwrap();
            let written =
                write_payload(&events, "claude", native, None, &payload, &WriteOptions::default())
                    .unwrap();
            if index == bad {
                bad_file = written.name.to_string();
            }
        }
        // Damaged where the listing finds it (in its bucket, or at the top).
        let listing = crate::ingest::source::list(dir).unwrap();
        let damaged = listing.events.iter().find(|e| e.name.to_string() == bad_file).unwrap();
        fs::write(damaged.path(dir), b"{\"v\":1,\"seq\":").unwrap();
        bad_file
    }

    /// Copies a directory's files and sub-directories (the buckets), hidden ones aside.
    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                copy_tree(&entry.path(), &to.join(entry.file_name()));
            } else if kind.is_file() {
                fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
    }

    fn config(
        dir: &std::path::Path,
        start: Start,
        read_ahead: usize,
        threads: usize,
    ) -> ReaderConfig {
        ReaderConfig {
            batch: 50,
            read_ahead,
            read_ahead_threads: threads,
            ..ReaderConfig::new(dir, start, Profiles::shipped().unwrap())
        }
    }

    fn open(config: ReaderConfig) -> Reader {
        let mut reader = Reader::open(config).unwrap();
        reader.ahead_from = 1;
        reader
    }

    /// Takes up to `limit` events, polling as needed.
    fn take(reader: &mut Reader, limit: usize) -> Vec<Event> {
        let mut out = Vec::new();
        while out.len() < limit {
            if let Some(event) = reader.next_event() {
                out.push(event);
                continue;
            }
            let queued = reader.poll().unwrap();
            if queued == 0 && !reader.has_pending() {
                break;
            }
        }
        out
    }

    /// What the consumer sees of an event, its origin's directory aside (the copy of the
    /// backlog read by the reference run lives elsewhere).
    fn seen(events: &[Event]) -> Vec<(u64, String, Option<String>, Option<String>)> {
        events
            .iter()
            .map(|e| {
                let kind = match &e.kind {
                    Kind::Unknown { reason } => format!("unknown: {}", reason.is_some()),
                    other => other.name().to_owned(),
                };
                (e.source.seq, kind, e.native.clone(), e.session_id.clone())
            })
            .collect()
    }

    #[test]
    fn one_worker_hands_out_what_the_consumer_would_read_in_order_once_across_a_restart() {
        hands_out_what_the_consumer_would_read_in_order_once_across_a_restart(1);
    }

    #[test]
    fn three_workers_hand_out_what_the_consumer_would_read_in_order_once_across_a_restart() {
        hands_out_what_the_consumer_would_read_in_order_once_across_a_restart(3);
    }

    fn hands_out_what_the_consumer_would_read_in_order_once_across_a_restart(threads: usize) {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, reference_dir) = (tmp.path().join("events"), tmp.path().join("reference"));
        let bad = write_backlog(&dir, 600, 333);
        copy_tree(&dir, &reference_dir);
        let mut reference = open(config(&reference_dir, Start::Beginning, 0, threads));
        let expected = take(&mut reference, usize::MAX);
        assert!(reference.ahead.is_none(), "no worker when read-ahead is off");
        assert_eq!(expected.len(), 600);

        // Stopped in the middle of a batch, with the workers far ahead, and resumed.
        let named = || config(&dir, Start::Cursor("consumer".into()), 200, threads);
        let mut reader = open(named());
        let mut got = take(&mut reader, 275);
        let ahead = reader.ahead.as_ref().expect("the workers started");
        assert_eq!(ahead.workers(), threads);
        assert!(ahead.in_flight() > 0, "the workers read ahead");
        reader.commit().unwrap();
        let mut notices = reader.take_notices();
        drop(reader);
        let mut reader = open(named());
        got.extend(take(&mut reader, usize::MAX));
        notices.extend(reader.take_notices());

        assert_eq!(seen(&got), seen(&expected));
        let seqs: Vec<u64> = got.iter().map(|e| e.source.seq).collect();
        assert_eq!(seqs, (1..=600).collect::<Vec<u64>>(), "in order, each once");
        let Kind::Unknown { reason: Some(reason) } = &got[333].kind else {
            panic!("{:?}", got[333])
        };
        assert!(reason.contains("quarantined"), "{reason}");
        assert!(dir.join(".quarantine").join(&bad).exists());
        let quarantined = notices
            .iter()
            .filter(
                |n| matches!(n, super::Notice::Quarantined { file, .. } if file.ends_with(&bad)),
            )
            .count();
        assert!(quarantined >= 1, "{notices:?}");
        assert!(take(&mut reader, usize::MAX).is_empty(), "nothing is handed out twice");
    }

    #[test]
    fn lost_workers_leave_their_files_to_the_consumer_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        write_backlog(tmp.path(), 300, 120);
        let mut reader = open(config(tmp.path(), Start::Beginning, 100, 2));
        let mut got = take(&mut reader, 70);
        assert!(reader.ahead.as_ref().is_some_and(|a| a.in_flight() > 0), "the worker read ahead");
        reader.lose_ahead();
        got.extend(take(&mut reader, usize::MAX));
        assert!(reader.ahead.is_none(), "no worker is started again");
        let seqs: Vec<u64> = got.iter().map(|e| e.source.seq).collect();
        assert_eq!(seqs, (1..=300).collect::<Vec<u64>>());
        assert!(matches!(got[120].kind, Kind::Unknown { .. }), "{:?}", got[120]);
    }
}
