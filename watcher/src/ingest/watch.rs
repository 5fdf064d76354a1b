//! Watching: a [`Reader`] woken by filesystem notifications, with a periodic rescan as a
//! safety net, or by plain polling.
//!
//! Notifications are only hints: on any of them (including inotify's overflow "rescan" flag,
//! an atomic rename arriving as a rename, a deleted or recreated directory) the directory is
//! listed again, and it is also listed every `rescan_interval` whatever happens, so a dropped
//! notification delays an event by at most that interval and never loses it. A directory that
//! does not exist yet is waited for through its parent.
//!
//! Ordered events appear in the bucket of their `seq` (see
//! [`layout`](crate::format::layout)), not at the top: the bucket the next one goes into is
//! watched as well as the top (where a new bucket, an unordered event or an event of an older
//! relay appears), and a rescan lists only the top and that bucket, so neither waiting nor the
//! safety net costs more as the history grows.

use std::collections::{BTreeSet, VecDeque};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::Error;
use crate::canonical::Event;
use crate::format::filename::EventFileName;
use crate::ingest::follow::{self, Delivery, FollowNotice, Sink, SinkError};
use crate::ingest::reader::{Notice, Reader};

/// How changes are noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Filesystem notifications (inotify on Linux) plus a periodic rescan.
    Notify,
    /// Listing the directory every `poll_interval` (network filesystems, exhausted watches).
    Poll,
}

/// Watching options.
#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// How changes are noticed.
    pub mode: Mode,
    /// Polling period in [`Mode::Poll`].
    pub poll_interval: Duration,
    /// Safety-net rescan period in [`Mode::Notify`].
    pub rescan_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            mode: Mode::Notify,
            poll_interval: Duration::from_millis(100),
            rescan_interval: Duration::from_secs(1),
        }
    }
}

/// A reader that waits for new events.
pub struct Watcher {
    reader: Reader,
    options: WatchOptions,
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
    notifier: Option<RecommendedWatcher>,
    watched: Vec<PathBuf>,
    next_scan: Instant,
    dirty: bool,
    /// Events passed over by `next_matching`, in order, not yet handed out.
    held: VecDeque<Event>,
    /// Ordered seqs handed out while older events were held.
    handed_ahead: BTreeSet<u64>,
    notices: Vec<Notice>,
    /// Tests set this to lose every notification, as inotify does on overflow.
    #[cfg(test)]
    deaf: bool,
    /// Tests count the directory listings.
    #[cfg(test)]
    scans: usize,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("reader", &self.reader)
            .field("options", &self.options)
            .field("watched", &self.watched)
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// Starts watching. In [`Mode::Notify`], if notifications cannot be set up (watch limit,
    /// unsupported filesystem), the watcher falls back to polling and says so in its notices.
    pub fn new(reader: Reader, options: WatchOptions) -> Result<Watcher, Error> {
        let (wake_tx, wake_rx) = mpsc::channel();
        let mut watcher = Watcher {
            reader,
            options,
            wake_tx,
            wake_rx,
            notifier: None,
            watched: Vec::new(),
            next_scan: Instant::now(),
            dirty: true,
            held: VecDeque::new(),
            handed_ahead: BTreeSet::new(),
            notices: Vec::new(),
            #[cfg(test)]
            deaf: false,
            #[cfg(test)]
            scans: 0,
        };
        if options.mode == Mode::Notify {
            let tx = watcher.wake_tx.clone();
            match notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|e| is_own_read(&e.kind)) {
                    return;
                }
                let _ = tx.send(());
            }) {
                Ok(notifier) => watcher.notifier = Some(notifier),
                Err(e) => watcher.fall_back_to_polling(&e.to_string()),
            }
        }
        let _ = watcher.arm();
        Ok(watcher)
    }

    fn fall_back_to_polling(&mut self, why: &str) {
        self.notifier = None;
        self.options.mode = Mode::Poll;
        self.notices.push(Notice::Degraded(format!(
            "filesystem notifications unavailable ({why}); polling every {:?} instead \
             (on Linux, raise fs.inotify.max_user_watches or pass --poll)",
            self.options.poll_interval
        )));
    }

    /// Watches what exists of: the events directory (else its parent, to see it appear), the
    /// bucket the next ordered event goes into (new events appear there, not at the top; a new
    /// bucket appearing at the top is a notification too), and each legacy directory (else its
    /// parent). Returns whether something new is watched: what changed in it before its watch
    /// began was not notified, so the caller lists again.
    fn arm(&mut self) -> bool {
        let Some(notifier) = &mut self.notifier else {
            return false;
        };
        let mut wanted = Vec::new();
        let dirs = std::iter::once(self.reader.events_dir().to_owned())
            .chain(self.reader.legacy_dirs().to_vec());
        for dir in dirs {
            let target = if dir.is_dir() {
                Some(dir)
            } else {
                dir.parent().filter(|p| p.is_dir()).map(Path::to_owned)
            };
            wanted.extend(target);
        }
        wanted.extend(self.reader.current_bucket());
        wanted.sort();
        wanted.dedup();
        if wanted == self.watched {
            return false;
        }
        for path in &self.watched {
            if wanted.binary_search(path).is_err() {
                let _ = notifier.unwatch(path);
            }
        }
        let mut failure = None;
        let mut added = false;
        let mut watched = Vec::new();
        for path in wanted {
            if self.watched.binary_search(&path).is_ok() {
                watched.push(path);
                continue;
            }
            match notifier.watch(&path, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    watched.push(path);
                    added = true;
                }
                Err(e) => failure = Some(format!("{}: {e}", path.display())),
            }
        }
        self.watched = watched;
        if let Some(why) = failure {
            self.fall_back_to_polling(&why);
        }
        added
    }

    fn scan(&mut self) -> Result<(), Error> {
        #[cfg(test)]
        {
            self.scans += 1;
        }
        self.dirty = false;
        self.reader.poll()?;
        self.notices.extend(self.reader.take_notices());
        let newly_watched = self.arm();
        if newly_watched || self.reader.has_pending() || self.reader.needs_rescan() {
            self.dirty = true;
        }
        let period = match self.options.mode {
            Mode::Notify => self.options.rescan_interval,
            Mode::Poll => self.options.poll_interval,
        };
        self.next_scan = Instant::now() + period;
        Ok(())
    }

    /// The next event, waiting at most `timeout` for one.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Event>, Error> {
        if let Some(event) = self.held.pop_front() {
            self.handed(&event);
            return Ok(Some(event));
        }
        let event = self.next_from_reader(Instant::now() + timeout)?;
        if let Some(event) = &event {
            self.handed(event);
        }
        Ok(event)
    }

    fn next_from_reader(&mut self, deadline: Instant) -> Result<Option<Event>, Error> {
        loop {
            if let Some(event) = self.reader.next_event() {
                return Ok(Some(event));
            }
            let now = Instant::now();
            if self.dirty || now >= self.next_scan {
                self.scan()?;
                if self.reader.has_pending() {
                    continue;
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let wait = deadline.min(self.next_scan).saturating_duration_since(now);
            match self.wake_rx.recv_timeout(wait) {
                Ok(()) => {
                    while self.wake_rx.try_recv().is_ok() {}
                    self.dirty = true;
                    #[cfg(test)]
                    if self.deaf {
                        self.dirty = false;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.fall_back_to_polling("notifier stopped")
                }
            }
        }
    }

    /// The next event that `wanted` accepts, waiting at most `timeout`. Events it passes
    /// over are kept, in order, for [`Watcher::next_timeout`]; a commit never counts them as
    /// handed out, and never hands out again the ones that were.
    pub fn next_matching(
        &mut self,
        wanted: impl Fn(&Event) -> bool,
        timeout: Duration,
    ) -> Result<Option<Event>, Error> {
        if let Some(index) = self.held.iter().position(&wanted) {
            let event = self.held.remove(index);
            if let Some(event) = &event {
                self.handed(event);
            }
            return Ok(event);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let Some(event) = self.next_from_reader(deadline)? else { return Ok(None) };
            if wanted(&event) {
                self.handed(&event);
                return Ok(Some(event));
            }
            self.held.push_back(event);
        }
    }

    /// The next event of one session, named by its session id or its tag, waiting at most
    /// `timeout`; events of other sessions are kept for [`Watcher::next_timeout`].
    pub fn next_for_session(
        &mut self,
        id_or_tag: &str,
        timeout: Duration,
    ) -> Result<Option<Event>, Error> {
        self.next_matching(
            |e| e.session_id.as_deref() == Some(id_or_tag) || e.tag.as_deref() == Some(id_or_tag),
            timeout,
        )
    }

    /// Notes that an event reached the consumer.
    fn handed(&mut self, event: &Event) {
        if self.held.is_empty() {
            self.handed_ahead.clear();
        } else if is_ordered(event) {
            self.handed_ahead.insert(event.source.seq);
        }
    }

    /// Saves the cursor: every event handed out, none of those held back.
    pub fn commit(&mut self) -> Result<(), Error> {
        if self.held.is_empty() {
            return self.reader.commit();
        }
        let mut position = self.reader.position().clone();
        if let Some(first) = self.held.iter().filter(|e| is_ordered(e)).map(|e| e.source.seq).min()
        {
            position.seq = first - 1;
            position.ahead.retain(|s| *s < first);
            position.ahead.extend(self.handed_ahead.iter().filter(|s| **s >= first));
        }
        for event in &self.held {
            if event.source.legacy {
                if let Some(files) = position.legacy.get_mut(&event.source.dir) {
                    files.remove(&event.source.file);
                }
            } else if !is_ordered(event) {
                position.unordered.remove(&event.source.file);
            }
        }
        self.reader.commit_at(&position)
    }

    /// Calls `handle` for each event until it breaks, committing after each call returns.
    pub fn run(&mut self, handle: impl FnMut(&Event) -> ControlFlow<()>) -> Result<(), Error> {
        let mut sink = Callback { handle, notices: Vec::new() };
        let ended = follow::follow(self, &mut sink, None, &|| false);
        self.notices.extend(sink.notices);
        ended.map(drop)
    }

    /// Moves the watcher to a thread that sends each event on a rendezvous channel and
    /// commits once the receiver has taken it. Dropping the [`Subscription`] stops the thread.
    pub fn spawn(mut self) -> Subscription {
        let (tx, rx): (SyncSender<Event>, Receiver<Event>) = mpsc::sync_channel(0);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let mut sink = Channel(tx);
            follow::follow(&mut self, &mut sink, None, &|| stopped.load(Ordering::Relaxed))
                .map(drop)
        });
        Subscription { rx, stop, handle: Some(handle) }
    }

    /// Takes the notices (quarantined files, directory recreated, polling fallback) gathered
    /// since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// The reader underneath.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The watch mode in force (it may have fallen back to polling).
    pub fn mode(&self) -> Mode {
        self.options.mode
    }
}

/// The sink of [`Watcher::run`]: a callback, and the notices kept for the watcher.
struct Callback<F> {
    handle: F,
    notices: Vec<Notice>,
}

impl<F: FnMut(&Event) -> ControlFlow<()>> Sink for Callback<F> {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        Ok(match (self.handle)(&event) {
            ControlFlow::Continue(()) => Delivery::Delivered,
            ControlFlow::Break(()) => Delivery::Last,
        })
    }

    fn notice(&mut self, notice: FollowNotice) {
        if let FollowNotice::Reader(notice) = notice {
            self.notices.push(notice);
        }
    }
}

/// The sink of [`Watcher::spawn`]: a rendezvous channel; its notices are dropped, as nobody
/// can ask the moved watcher for them.
struct Channel(SyncSender<Event>);

impl Sink for Channel {
    fn deliver(&mut self, event: Event) -> Result<Delivery, SinkError> {
        Ok(if self.0.send(event).is_ok() { Delivery::Delivered } else { Delivery::Closed })
    }

    fn notice(&mut self, _: FollowNotice) {}
}

fn is_ordered(event: &Event) -> bool {
    !event.source.legacy && EventFileName::parse(&event.source.file).is_some_and(|n| n.is_ordered())
}

/// Whether a notification reports a mere open or read, such as the watcher's own listing of
/// the directory (inotify reports `IN_OPEN` on it): waking on those would rescan forever and
/// spin a core. A close after writing still wakes.
fn is_own_read(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind};
    matches!(kind, EventKind::Access(access) if *access != AccessKind::Close(AccessMode::Write))
}

/// Events from a watcher running on its own thread (see [`Watcher::spawn`]).
#[derive(Debug)]
pub struct Subscription {
    rx: Receiver<Event>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<(), Error>>>,
}

impl Subscription {
    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Event> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Stops the thread and returns its error, if it failed.
    pub fn stop(mut self) -> Result<(), Error> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Ok(()),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
