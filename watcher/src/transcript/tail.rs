//! A bounded tail follower: the complete lines appended to one file, read a bounded number of
//! bytes at a time, bound to the file's identity.
//!
//! * It never reads the whole file: on opening (and after the file was truncated or replaced)
//!   it reads at most [`TailLimits::tail_bytes`] from the end, and those lines are *history*
//!   ([`Line::history`]); each [`Tail::poll`] reads at most [`TailLimits::read_bytes`], and a
//!   file that grew by more than `tail_bytes` since the last poll is skipped to its tail.
//! * It is bound to the file's device and inode: a file renamed away and replaced (rotation,
//!   a rewrite by compaction) rebinds to the new file, whose lines present at that moment are
//!   history again, never replayed as new.
//! * A file shorter than what was read (truncated in place) is read again from its tail, as
//!   history.
//! * Nothing at the path can block it: the file is opened non-blocking and judged on the open
//!   descriptor, so a FIFO (or a device, a directory) swapped in is refused
//!   ([`Error::TranscriptNotAFile`]), never waited on. A symlink is followed: a transcript
//!   is only read.
//! * A partial last line waits for its newline; a line longer than
//!   [`TailLimits::max_line`] is dropped whole (counted in [`Poll::dropped`]), never buffered
//!   past the limit.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::untrusted::{self, Link};

/// How much a [`Tail`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailLimits {
    /// The most bytes read from the end of the file on opening or rebinding (history).
    pub tail_bytes: u64,
    /// The most bytes read by one poll.
    pub read_bytes: u64,
    /// The longest line kept; longer ones are dropped.
    pub max_line: usize,
}

impl Default for TailLimits {
    fn default() -> TailLimits {
        TailLimits { tail_bytes: 256 * 1024, read_bytes: 4 * 1024 * 1024, max_line: 1024 * 1024 }
    }
}

/// One complete line (without its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The bytes, as written (not necessarily UTF-8).
    pub bytes: Vec<u8>,
    /// Already in the file when the follower bound to it: it may be old, and counts only
    /// where its own timestamp says it is newer than what the consumer knows.
    pub history: bool,
}

/// What happened to the file since the last poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing but appends (or nothing).
    Same,
    /// The follower bound to the file for the first time.
    Opened,
    /// The file is shorter than what was read: truncated in place.
    Truncated,
    /// Another file now has the path (rotation, replacement, a rewrite).
    Replaced,
    /// The path names no file (yet, or any more).
    Missing,
}

/// One poll's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    /// The complete lines read, oldest first.
    pub lines: Vec<Line>,
    /// What happened to the file.
    pub change: Change,
    /// Whether the file grew (new bytes were read, or skipped).
    pub grew: bool,
    /// Lines dropped for being longer than [`TailLimits::max_line`].
    pub dropped: usize,
    /// Bytes skipped because the file grew by more than [`TailLimits::tail_bytes`] at once.
    pub skipped: u64,
}

/// Follows one file's appended lines.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    limits: TailLimits,
    /// The (device, inode) bound to, once the file was seen.
    identity: Option<(u64, u64)>,
    file: Option<File>,
    /// The offset read up to.
    offset: u64,
    /// An incomplete last line.
    partial: Vec<u8>,
    /// The partial line was history.
    partial_history: bool,
    /// Dropping bytes up to the next newline (an over-long line, or the first, cut line of a
    /// tail read).
    discarding: bool,
}

impl Tail {
    /// A follower of `path`. Nothing is read until the first [`Tail::poll`], which binds to
    /// the file there and reads its tail as history.
    pub fn new(path: impl Into<PathBuf>, limits: TailLimits) -> Tail {
        Tail {
            path: path.into(),
            limits,
            identity: None,
            file: None,
            offset: 0,
            partial: Vec::new(),
            partial_history: false,
            discarding: false,
        }
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The (device, inode) of the file bound to, once seen.
    pub fn identity(&self) -> Option<(u64, u64)> {
        self.identity
    }

    /// The offset read up to.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads what was appended since the last poll (see the module docs).
    pub fn poll(&mut self) -> Result<Poll, Error> {
        let io_err = |op: &'static str, path: &Path| {
            let path = path.to_owned();
            move |source: io::Error| Error::Io { op, path, source }
        };
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let change = if self.identity.is_some() { Change::Missing } else { Change::Same };
                self.file = None;
                return Ok(Poll { change, ..Poll::empty() });
            }
            Err(e) => return Err(io_err("stat transcript", &self.path)(e)),
        };
        if !meta.is_file() {
            return Err(Error::TranscriptNotAFile { path: self.path.clone() });
        }
        let identity = (meta.dev(), meta.ino());
        let change = match self.identity {
            None => Change::Opened,
            Some(old) if old != identity => Change::Replaced,
            Some(_) if meta.len() < self.offset => Change::Truncated,
            Some(_) => Change::Same,
        };
        let mut poll = Poll { change, ..Poll::empty() };
        let history = change != Change::Same;
        if history {
            // Non-blocking, and judged on the descriptor: what stat saw may have been swapped
            // for a FIFO (which would block an `open` for good) or anything else since.
            let (mut file, opened) = match untrusted::open_regular(&self.path, Link::Follow) {
                Ok(opened) => opened,
                // Bound as before: the file it held is read on if the path names it again.
                Err(e) if untrusted::is_not_regular(&e) => {
                    return Err(Error::TranscriptNotAFile { path: self.path.clone() });
                }
                Err(e) => return Err(io_err("open transcript", &self.path)(e)),
            };
            // The file opened must be the one stat saw; if it changed in between, the next
            // poll sees the difference.
            self.identity = Some((opened.dev(), opened.ino()));
            self.offset = opened.len().saturating_sub(self.limits.tail_bytes);
            self.partial.clear();
            // The first line of a tail read is cut, unless the tail starts at a line's start.
            self.discarding = self.offset > 0 && !starts_line(&mut file, self.offset);
            self.file = Some(file);
        } else if meta.len().saturating_sub(self.offset) > self.limits.tail_bytes {
            let to = meta.len() - self.limits.tail_bytes;
            poll.skipped = to - self.offset;
            poll.grew = true;
            self.offset = to;
            self.partial.clear();
            self.discarding = self.file.as_mut().is_none_or(|f| !starts_line(f, to));
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(poll);
        };
        file.seek(SeekFrom::Start(self.offset)).map_err(io_err("seek transcript", &self.path))?;
        let mut buf = Vec::new();
        file.by_ref()
            .take(self.limits.read_bytes)
            .read_to_end(&mut buf)
            .map_err(io_err("read transcript", &self.path))?;
        self.offset += buf.len() as u64;
        poll.grew |= !buf.is_empty() && !history;
        self.split(&buf, history, &mut poll);
        Ok(poll)
    }

    fn split(&mut self, buf: &[u8], history: bool, poll: &mut Poll) {
        let mut rest = buf;
        while !rest.is_empty() {
            let newline = rest.iter().position(|b| *b == b'\n');
            let (piece, complete) = match newline {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = newline.map_or(&[][..], |i| &rest[i + 1..]);
            if self.discarding {
                self.discarding = !complete;
                continue;
            }
            if self.partial.is_empty() {
                self.partial_history = history;
            }
            if self.partial.len() + piece.len() > self.limits.max_line {
                self.partial.clear();
                poll.dropped += 1;
                self.discarding = !complete;
                continue;
            }
            self.partial.extend_from_slice(piece);
            if complete {
                let bytes = std::mem::take(&mut self.partial);
                poll.lines.push(Line { bytes, history: self.partial_history });
            }
        }
    }
}

/// Whether the byte before `offset` is a newline.
fn starts_line(file: &mut File, offset: u64) -> bool {
    let mut byte = [0u8];
    file.seek(SeekFrom::Start(offset - 1)).is_ok()
        && file.read_exact(&mut byte).is_ok()
        && byte[0] == b'\n'
}

impl Poll {
    fn empty() -> Poll {
        Poll { lines: Vec::new(), change: Change::Same, grew: false, dropped: 0, skipped: 0 }
    }
}
