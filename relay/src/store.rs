//! The events directory: safety checks, sequence allocation and atomic writes.
//!
//! ## The write protocol
//! A writer takes an exclusive lock on the counter file `.seq` (bounded wait), reads the last
//! `seq`, stores `seq + 1`, writes the event to a uniquely named temp file (`O_EXCL`,
//! `O_NOFOLLOW`, mode 0600), moves it to its final name in the bucket of its `seq` (see
//! [`layout`](crate::layout); `renameat2` with `RENAME_NOREPLACE`, or a hard link and an
//! unlink where the filesystem lacks it: either fails rather than replace an existing file)
//! and only then releases the lock. So:
//!
//! * an event is never visible under its final name before it is complete;
//! * final names appear in `seq` order: when a reader holds the lock (shared) and reads the
//!   counter as `C`, every event with `seq <= C` is either visible or will never exist (its
//!   writer died after taking the number: a gap). See [`EventsDir::committed_seq`].
//!
//! The counter has a witness (`.seq.at-…`, renamed under the lock as the counter moves on):
//! a counter set back or at its end no longer matches it, and the writer continues after the
//! newest event file instead of reusing a seq ([`Written::counter_repaired`]). An event of
//! 64 KiB or more is written before the lock is taken and only its head rewritten under it
//! ([`EventsDir::write_event_sized`]), so the lock is held for microseconds whatever the size.
//!
//! If the lock cannot be had within the bound (a writer stopped while holding it), the event is
//! still written, without the lock, under an *unordered* name carrying the counter value seen
//! and the writer's clock; readers track those by name and order them by time. So is an event
//! whose counter is not a regular file (a symlink, a directory): it is never followed nor
//! replaced, and the event is not lost for it.
//!
//! No fsync by default: an event is a signal whose loss in a machine crash is covered by the
//! watcher's rescan on start, and fsync costs more than the whole rest of the relay (see the
//! benchmark in `docs/format.md`). `HOOKLINE_FSYNC=1` makes the relay fsync the file and the
//! directory it is in (and the events directory too when the bucket was just created).

use std::fs::{File, Permissions, TryLockError};
use std::io::{self, IoSlice, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::envelope::EnvelopeOut;
use crate::error::{Error, UnsafeReason};
use crate::filename::{
    COUNTER_FILE, EventFileName, bucket_name, bucket_of, counter_witness as witness, temp_name,
};
use crate::layout::Place;
use crate::sys::{DirFd, euid};

/// How long a writer waits for the counter lock before writing an unordered event.
pub const DEFAULT_LOCK_BOUND: Duration = Duration::from_millis(500);

const COUNTER_WIDTH: usize = 21;
const LINK_ATTEMPTS: u32 = 4;

/// An open, checked events directory.
#[derive(Debug)]
pub struct EventsDir {
    path: PathBuf,
    dir: DirFd,
}

/// How to write an event.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    /// Longest wait for the counter lock.
    pub lock_bound: Duration,
    /// Fsync the event file and the directory.
    pub fsync: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { lock_bound: DEFAULT_LOCK_BOUND, fsync: false }
    }
}

/// An event file's content, written in one `writev`: `head`, then `body`, then `tail`. The
/// body is borrowed, so a large payload goes to the file straight from the buffer it was read
/// into.
#[derive(Debug, Default)]
pub struct Content<'a> {
    /// The first bytes.
    pub head: Vec<u8>,
    /// The bytes after `head`.
    pub body: &'a [u8],
    /// The last bytes.
    pub tail: &'a [u8],
}

impl From<Vec<u8>> for Content<'_> {
    fn from(head: Vec<u8>) -> Self {
        Content { head, ..Content::default() }
    }
}

/// What [`EventsDir::write_event`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The event's file name.
    pub name: EventFileName,
    /// Where the file is: in its bucket (an ordered event), else at the top.
    pub place: Place,
    /// The counter was missing or unreadable and was rebuilt from the directory's files.
    pub counter_recovered: bool,
    /// Something other than a regular file (a symlink, a directory) is where the counter
    /// should be: the event was written unordered.
    pub counter_unusable: bool,
    /// The counter was behind the event files (set back by a restored backup, or not written
    /// out before a crash) or at its end, and was repaired before this event took its seq.
    pub counter_repaired: Option<CounterRepair>,
}

/// A counter found out of step with the event files, and repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterRepair {
    /// The value the counter held.
    pub was: u64,
    /// The highest `seq` among the event files, which the counter continues after.
    pub newest: u64,
}

/// Events at least this large are written before the counter lock is taken (see
/// [`EventsDir::write_event`]).
const EARLY_WRITE_BYTES: usize = 64 << 10;

/// A temp file of this writer, removed when dropped unless it was moved to its final name.
struct Temp<'d> {
    dir: &'d DirFd,
    name: String,
    file: File,
    /// Length of the head written, when the whole content is in the file.
    head_len: Option<usize>,
    /// Moved to its final name: there is no temp name left to remove.
    published: bool,
}

impl Temp<'_> {
    /// Puts `content` in the file: only its head when the same body is there already behind a
    /// head of the same length (the seq changed, not its number of digits), else everything.
    fn fill(&mut self, content: &Content<'_>, body_written: bool) -> io::Result<()> {
        if body_written && self.head_len == Some(content.head.len()) {
            return self.file.write_all_at(&content.head, 0);
        }
        if self.head_len.take().is_some() {
            self.file.set_len(0)?;
            self.file.rewind()?;
        }
        write_all_vectored(&mut self.file, &[&content.head, content.body, content.tail])?;
        self.head_len = Some(content.head.len());
        Ok(())
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if !self.published {
            let _ = self.dir.unlink(&self.name);
        }
    }
}

impl EventsDir {
    /// Opens the directory for writing, creating it and its missing parents with mode 0700.
    /// Refuses a symlink, a directory owned by another user, or one writable by group or others.
    pub fn create(path: &Path) -> Result<EventsDir, Error> {
        // Opened first: it exists on every call but the first, and creating it first would
        // cost two more system calls each time (the `mkdir` that fails, a `stat`).
        match DirFd::open_nofollow(path) {
            Ok(dir) => return EventsDir::checked(path, dir),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            // Anything else (a symlink, a file in the way): open() below says what.
            Err(_) => return EventsDir::open(path),
        }
        match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path) {
            Ok(()) => {}
            // A symlink or a file in the way: let open() below say which.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("create dir", path, e)),
        }
        EventsDir::open(path)
    }

    /// Opens an existing directory, with the same checks as [`EventsDir::create`].
    pub fn open(path: &Path) -> Result<EventsDir, Error> {
        let unsafe_dir = |reason| Error::UnsafeDir { path: path.to_owned(), reason };
        let dir = match DirFd::open_nofollow(path) {
            Ok(dir) => dir,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(unsafe_dir(UnsafeReason::Symlink));
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                let is_link = path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
                let reason =
                    if is_link { UnsafeReason::Symlink } else { UnsafeReason::NotADirectory };
                return Err(unsafe_dir(reason));
            }
            Err(e) => return Err(Error::io("open dir", path, e)),
        };
        EventsDir::checked(path, dir)
    }

    /// The directory opened at `path`, once its owner and mode are checked.
    fn checked(path: &Path, dir: DirFd) -> Result<EventsDir, Error> {
        let unsafe_dir = |reason| Error::UnsafeDir { path: path.to_owned(), reason };
        let meta = dir.metadata().map_err(|e| Error::io("stat dir", path, e))?;
        let us = euid();
        if meta.uid() != us {
            return Err(unsafe_dir(UnsafeReason::ForeignOwner { owner: meta.uid(), us }));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(unsafe_dir(UnsafeReason::Writable { mode: meta.mode() & 0o7777 }));
        }
        Ok(EventsDir { path: path.to_owned(), dir })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one event file. `render(seq, unordered)` returns the file's content for the
    /// `seq` allocated; it may be called more than once (with a guess first, again when a
    /// name collides).
    ///
    /// See [`EventsDir::write_event_sized`] for large events.
    ///
    /// Before taking a seq the counter is checked against its witness (see [`Written`]'s
    /// `counter_repaired`): a counter behind the files, or at `u64::MAX`, is repaired from the
    /// directory's files, so that no new event reuses the seq of one present.
    pub fn write_event<'c, C: Into<Content<'c>>>(
        &self,
        pid: u32,
        ts_ns: u64,
        options: &WriteOptions,
        render: impl FnMut(u64, bool) -> C,
    ) -> Result<Written, Error> {
        self.write_event_sized(pid, ts_ns, options, 0, render)
    }

    /// [`EventsDir::write_event`] for an event of about `size` bytes. A large one (at least
    /// 64 KiB) is rendered and written to its temp file before the counter lock is taken, with
    /// the seq the counter suggests; under the lock only its head is written again with the seq
    /// allocated (the same length unless the seq gains a digit). So the lock is held for
    /// microseconds whatever the event's size, and concurrent writers of large events do not
    /// time out into unordered names.
    pub fn write_event_sized<'c, C: Into<Content<'c>>>(
        &self,
        pid: u32,
        ts_ns: u64,
        options: &WriteOptions,
        size: usize,
        mut render: impl FnMut(u64, bool) -> C,
    ) -> Result<Written, Error> {
        let Some(counter) = self.open_counter()? else {
            let seq = self.max_seq()?;
            let written = self.write_unordered(pid, ts_ns, seq, options, &mut render, None)?;
            return Ok(Written { counter_unusable: true, ..written });
        };
        let early = if size >= EARLY_WRITE_BYTES {
            // Read without the lock: only a guess, which costs a rewrite of the head if wrong.
            let guess = read_counter(&counter).ok().flatten().unwrap_or(0).saturating_add(1);
            let mut temp = self.create_temp(pid, ts_ns).map_err(|e| self.write_error(e))?;
            temp.fill(&render(guess, false).into(), false).map_err(|e| self.write_error(e))?;
            Some(temp)
        } else {
            None
        };
        if !lock_bounded(&counter, options.lock_bound, false)? {
            let seq = read_counter(&counter).ok().flatten().unwrap_or(0);
            return self.write_unordered(pid, ts_ns, seq, options, &mut render, early);
        }
        // The lock is released when `counter` is dropped, on every path out of here.
        let mut repaired = None;
        let (mut last, mut recovered) = match read_counter(&counter) {
            Ok(Some(seq)) => match self.dir.rename(&witness(seq), &witness(seq.wrapping_add(1))) {
                Ok(()) if seq < u64::MAX => (seq, false),
                // The witness names another value: the counter was set back, or its last write
                // was lost (then the files agree with it), or this directory predates
                // witnesses. Or the counter is at its end.
                _ => {
                    let at_least = if seq == u64::MAX { 0 } else { seq };
                    let newest = self.resync_witness(at_least)?;
                    if newest > seq || seq == u64::MAX {
                        repaired = Some(CounterRepair { was: seq, newest });
                    }
                    (newest.max(at_least), repaired.is_some())
                }
            },
            // A new counter, or one deleted by hand: continue after the files present.
            Ok(None) => (self.resync_witness(0)?, false),
            Err(_) => (self.resync_witness(0)?, true),
        };
        if last == u64::MAX {
            // Every seq is taken: written unordered (ordered by time after the last one).
            drop(counter);
            let written = self.write_unordered(pid, ts_ns, last, options, &mut render, early)?;
            return Ok(Written { counter_repaired: repaired, ..written });
        }
        let mut temp = early;
        for _ in 0..LINK_ATTEMPTS {
            let seq = last + 1;
            counter
                .write_all_at(format!("{seq:020}\n").as_bytes(), 0)
                .map_err(|e| Error::io("write counter", self.path.join(COUNTER_FILE), e))?;
            let name = EventFileName::ordered(seq, pid);
            let content = render(seq, false).into();
            match self.publish(&name, &content, &mut temp, pid, ts_ns, options) {
                Ok(place) => {
                    return Ok(Written {
                        name,
                        place,
                        counter_recovered: recovered,
                        counter_unusable: false,
                        counter_repaired: repaired,
                    });
                }
                // The counter fell behind the files and its witness did not show it (both
                // restored together): catch up.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    recovered = true;
                    last = self.resync_witness(seq)?.max(seq);
                }
                Err(e) => return Err(self.write_error(e)),
            }
        }
        Err(Error::io(
            "allocate a free seq in",
            &self.path,
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    fn write_error(&self, e: io::Error) -> Error {
        Error::io("write event", &self.path, e)
    }

    fn write_unordered<'c, C: Into<Content<'c>>>(
        &self,
        pid: u32,
        ts_ns: u64,
        seq: u64,
        options: &WriteOptions,
        render: &mut impl FnMut(u64, bool) -> C,
        early: Option<Temp<'_>>,
    ) -> Result<Written, Error> {
        let content = render(seq, true).into();
        let mut temp = early;
        for bump in 0..u64::from(LINK_ATTEMPTS) {
            let name = EventFileName::unordered(seq, ts_ns + bump, pid);
            match self.publish(&name, &content, &mut temp, pid, ts_ns + bump, options) {
                Ok(place) => {
                    return Ok(Written {
                        name,
                        place,
                        counter_recovered: false,
                        counter_unusable: false,
                        counter_repaired: None,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(self.write_error(e)),
            }
        }
        Err(Error::io(
            "find a free unordered name in",
            &self.path,
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    /// Puts `content` in the temp file (`temp`, created if `None`) and links it under
    /// `name`; the temp file is kept for another attempt only when `name` is taken
    /// (`AlreadyExists`), and removed otherwise.
    fn publish<'d>(
        &'d self,
        name: &EventFileName,
        content: &Content<'_>,
        temp: &mut Option<Temp<'d>>,
        pid: u32,
        nonce: u64,
        options: &WriteOptions,
    ) -> io::Result<Place> {
        let body_written = temp.is_some();
        let file = match temp {
            Some(file) => file,
            None => temp.insert(self.create_temp(pid, nonce)?),
        };
        let result = (|| -> io::Result<Place> {
            file.fill(content, body_written)?;
            if options.fsync {
                file.file.sync_all()?;
            }
            let final_name = name.to_string();
            let bucket = if name.is_ordered() { self.bucket(name.seq) } else { None };
            let mut synced_top = false;
            let mut place = Place::Top;
            if let Some((bucket, created)) = &bucket {
                match self.dir.rename_noreplace_to(&file.name, bucket, &final_name) {
                    Ok(()) => {
                        file.published = true;
                        place = Place::Bucket;
                        if options.fsync {
                            bucket.as_file()?.sync_all()?;
                        }
                        synced_top = !created;
                    }
                    // The bucket was pruned empty since it was opened (only an old one can be,
                    // after a counter set back): the event goes to the top.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            if !file.published {
                self.dir.rename_noreplace(&file.name, &final_name)?;
                file.published = true;
            }
            if options.fsync && !synced_top {
                self.dir.as_file()?.sync_all()?;
            }
            Ok(place)
        })();
        if !matches!(&result, Err(e) if e.kind() == io::ErrorKind::AlreadyExists) {
            *temp = None;
        }
        result
    }

    fn create_temp(&self, pid: u32, nonce: u64) -> io::Result<Temp<'_>> {
        let mut attempt = 0u64;
        loop {
            let name = temp_name(pid, nonce.wrapping_add(attempt));
            match self.dir.create_new(&name, 0o600) {
                Ok(file) => {
                    return Ok(Temp {
                        dir: &self.dir,
                        name,
                        file,
                        head_len: None,
                        published: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Lists the directory (under the counter lock) and returns the highest seq among the
    /// event files (0 when there are none). The caller continues after it or `at_least`,
    /// whichever is higher: the witness is made to name the counter's next value.
    fn resync_witness(&self, at_least: u64) -> Result<u64, Error> {
        let (newest, witnesses) = self.scan()?;
        for name in witnesses {
            let _ = self.dir.unlink(&name);
        }
        let next = newest.max(at_least).wrapping_add(1);
        // Best effort: without a witness the next writer lists the directory again.
        let _ = self.dir.create_new(&witness(next), 0o600);
        Ok(newest)
    }

    /// The highest seq among the event files (at the top and in the newest bucket holding one)
    /// and the counter's witnesses.
    fn scan(&self) -> Result<(u64, Vec<String>), Error> {
        let listing = crate::layout::list_newest(&self.path)?;
        let max = listing.events.iter().map(|e| e.name.seq).max().unwrap_or(0);
        Ok((max, listing.witnesses))
    }

    /// The bucket an ordered event of `seq` goes into, created if missing (mode 0700); `None`
    /// when it cannot be used (something else under its name: a symlink, a file, a directory
    /// of another user or writable by others), and the event goes to the top instead. The
    /// flag says whether it was created here (its entry in the top directory needs an fsync).
    fn bucket(&self, seq: u64) -> Option<(DirFd, bool)> {
        let name = bucket_name(bucket_of(seq));
        let mut created = false;
        for _ in 0..2 {
            match self.dir.open_dir_at(&name) {
                Ok(bucket) => {
                    let meta = bucket.metadata().ok()?;
                    let usable = meta.uid() == euid() && meta.mode() & 0o022 == 0;
                    return usable.then_some((bucket, created));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match self.dir.mkdir_at(&name, 0o700) {
                        Ok(()) => created = true,
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(_) => return None,
                    }
                }
                // A symlink (ELOOP), a file (ENOTDIR), or no access.
                Err(_) => return None,
            }
        }
        None
    }

    /// The counter, opened (created if missing); `None` when something that is not a regular
    /// file is in its place.
    fn open_counter(&self) -> Result<Option<File>, Error> {
        let error = |e| Error::io("open counter", self.path.join(COUNTER_FILE), e);
        match self.dir.open_or_create_rw(COUNTER_FILE, 0o600) {
            Ok(file) if file.metadata().map_err(error)?.is_file() => Ok(Some(file)),
            Ok(_) => Ok(None),
            Err(e) if not_a_file(&e) => Ok(None),
            Err(e) => Err(error(e)),
        }
    }

    /// The highest `seq` among the event files present (0 when there are none).
    pub fn max_seq(&self) -> Result<u64, Error> {
        self.scan().map(|(max, _)| max)
    }

    /// The highest `seq` that is committed: every ordered event with a `seq` at or below it is
    /// visible now or will never exist. Read under a shared lock on the counter, waiting at
    /// most `bound`; `None` when the lock could not be had in time (a writer is stuck holding
    /// it): then only unordered events can be trusted to be complete.
    ///
    /// A directory with no counter has no writer in progress: everything visible is committed.
    pub fn committed_seq(&self, bound: Duration) -> Result<Option<u64>, Error> {
        let counter = match self.dir.open_read(COUNTER_FILE) {
            Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => file,
            // No writer can use a counter that is not a regular file: they all write
            // unordered events, which are complete when visible.
            Ok(_) => return Ok(Some(u64::MAX)),
            Err(e) if not_a_file(&e) => return Ok(Some(u64::MAX)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Some(u64::MAX)),
            Err(e) => return Err(Error::io("open counter", self.path.join(COUNTER_FILE), e)),
        };
        if !lock_bounded(&counter, bound, true)? {
            return Ok(None);
        }
        match read_counter(&counter) {
            Ok(Some(seq)) => Ok(Some(seq)),
            // Created but never written, or damaged: the next writer rebuilds it from the
            // files, so nothing visible can still be in flight below what is there.
            _ => Ok(Some(u64::MAX)),
        }
    }

    /// Sets the directory's permission bits (used by tests and `doctor --fix`).
    pub fn set_mode(&self, mode: u32) -> Result<(), Error> {
        self.dir
            .as_file()
            .and_then(|f| f.set_permissions(Permissions::from_mode(mode)))
            .map_err(|e| Error::io("chmod", &self.path, e))
    }
}

/// Whether opening a name failed because it is a symlink (`O_NOFOLLOW`) or a directory.
fn not_a_file(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EISDIR))
}

/// Writes every byte of `parts`, in order, with as few `writev` calls as the kernel allows.
fn write_all_vectored(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> =
        parts.iter().filter(|p| !p.is_empty()).map(|p| IoSlice::new(p)).collect();
    let mut slices = &mut slices[..];
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes one event for a payload that is already a JSON object, with an envelope like the
/// relay's (this process's pid, no host fields): for tools that inject events and for tests.
pub fn write_payload(
    events: &EventsDir,
    cli: &str,
    event: &str,
    tag: Option<&str>,
    payload: &serde_json::value::RawValue,
    options: &WriteOptions,
) -> Result<Written, Error> {
    let ts_ns = crate::clock::now_ns();
    events.write_event(std::process::id(), ts_ns, options, |seq, seq_unordered| {
        let envelope = EnvelopeOut {
            event: Some(event),
            tag,
            bytes: payload.get().len() as u64,
            payload: Some(payload),
            ..EnvelopeOut::this_process(seq, seq_unordered, ts_ns, cli)
        };
        serde_json::to_vec(&envelope).unwrap_or_default()
    })
}

/// Takes the lock (exclusive or shared), retrying with growing sleeps until `bound` has passed.
/// `Ok(false)` when the bound passed; an error when the filesystem cannot lock at all.
fn lock_bounded(file: &File, bound: Duration, shared: bool) -> Result<bool, Error> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        let attempt = if shared { file.try_lock_shared() } else { file.try_lock() };
        match attempt {
            Ok(()) => return Ok(true),
            Err(TryLockError::WouldBlock) => {}
            // No locking on this filesystem: behave as if the bound passed.
            Err(TryLockError::Error(_)) => return Ok(false),
        }
        let elapsed = start.elapsed();
        if elapsed >= bound {
            return Ok(false);
        }
        thread::sleep(pause.min(bound - elapsed));
        pause = (pause * 2).min(Duration::from_millis(2));
    }
}

/// `Ok(None)` for an empty counter, an error for a damaged one.
fn read_counter(file: &File) -> io::Result<Option<u64>> {
    let mut buf = [0u8; COUNTER_WIDTH + 8];
    let n = file.read_at(&mut buf, 0)?;
    let text = std::str::from_utf8(&buf[..n]).map_err(|_| io::ErrorKind::InvalidData)?;
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| io::ErrorKind::InvalidData.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, EventsDir) {
        let tmp = tempfile::tempdir().unwrap();
        let events = EventsDir::create(&tmp.path().join("a/b/events")).unwrap();
        (tmp, events)
    }

    #[test]
    fn create_makes_private_parents_and_writes_private_files() {
        let (_tmp, events) = dir();
        let mode = std::fs::metadata(events.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let written = events.write_event(7, 1, &WriteOptions::default(), |_, _| b"{}".to_vec());
        let written = written.unwrap();
        assert_eq!(written.place, Place::Bucket);
        let file = crate::layout::EventFile { name: written.name, place: written.place };
        assert_eq!(std::fs::metadata(file.path(events.path())).unwrap().mode() & 0o777, 0o600);
        let bucket = events.path().join(bucket_name(0));
        assert_eq!(std::fs::symlink_metadata(bucket).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn seqs_increase_and_names_carry_them() {
        let (_tmp, events) = dir();
        let mut seen = Vec::new();
        for _ in 0..5 {
            let w = events
                .write_event(7, 1, &WriteOptions::default(), |seq, unordered| {
                    assert!(!unordered);
                    format!("{{\"seq\":{seq}}}").into_bytes()
                })
                .unwrap();
            seen.push(w.name.seq);
        }
        assert_eq!(seen, [1, 2, 3, 4, 5]);
        assert_eq!(events.committed_seq(Duration::from_millis(10)).unwrap(), Some(5));
        let names: Vec<_> = std::fs::read_dir(events.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert_eq!(names, [bucket_name(0)], "no temp file is left, all are in their bucket");
        let listing = crate::layout::list(events.path(), 0).unwrap();
        assert_eq!(listing.events.len(), 5);
        assert!(listing.temps.is_empty());
    }

    #[test]
    fn a_lost_or_stale_counter_is_rebuilt_from_the_files() {
        let (_tmp, events) = dir();
        let opts = WriteOptions::default();
        for _ in 0..3 {
            events.write_event(7, 1, &opts, |_, _| b"{}".to_vec()).unwrap();
        }
        std::fs::write(events.path().join(COUNTER_FILE), "garbage").unwrap();
        let w = events.write_event(7, 1, &opts, |_, _| b"{}".to_vec()).unwrap();
        assert_eq!((w.name.seq, w.counter_recovered), (4, true));
        std::fs::write(events.path().join(COUNTER_FILE), format!("{:020}\n", 2)).unwrap();
        let w = events.write_event(7, 1, &opts, |_, _| b"{}".to_vec()).unwrap();
        assert_eq!((w.name.seq, w.counter_recovered), (5, true));
    }

    #[test]
    fn a_held_lock_gives_an_unordered_event_and_no_committed_seq() {
        let (_tmp, events) = dir();
        let opts = WriteOptions { lock_bound: Duration::from_millis(20), fsync: false };
        events.write_event(7, 1, &opts, |_, _| b"{}".to_vec()).unwrap();
        let holder = File::options().write(true).open(events.path().join(COUNTER_FILE)).unwrap();
        holder.lock().unwrap();
        let w = events
            .write_event(8, 99, &opts, |seq, unordered| {
                assert!(unordered);
                assert_eq!(seq, 1);
                b"{}".to_vec()
            })
            .unwrap();
        assert_eq!(w.name, EventFileName::unordered(1, 99, 8));
        assert_eq!(events.committed_seq(Duration::from_millis(20)).unwrap(), None);
        holder.unlock().unwrap();
        assert_eq!(events.committed_seq(Duration::from_millis(20)).unwrap(), Some(1));
    }

    #[test]
    fn unsafe_dirs_are_refused_with_the_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        EventsDir::create(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = EventsDir::create(&link).unwrap_err();
        assert!(matches!(err, Error::UnsafeDir { reason: UnsafeReason::Symlink, .. }), "{err}");
        std::fs::set_permissions(&real, Permissions::from_mode(0o777)).unwrap();
        let err = EventsDir::create(&real).unwrap_err();
        assert!(err.to_string().contains("mode 777"), "{err}");
        let file = tmp.path().join("file");
        std::fs::write(&file, "").unwrap();
        let err = EventsDir::create(&file).unwrap_err();
        assert!(matches!(err, Error::UnsafeDir { reason: UnsafeReason::NotADirectory, .. }));
    }
}
