//! Reading event files: the primary events directory (written by `hookline-relay`) and legacy
//! directories (written by the older Python relay), never following symlinks, never
//! panicking on a bad file.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Error;
use crate::format::envelope::{EnvelopeError, RawEnvelope};
use crate::untrusted;

/// Largest event file read: the largest the relay writes (about 21 MiB: 16 MiB of input as
/// base64, plus the other fields), as the format's owner declares it.
pub const MAX_FILE_BYTES: u64 = crate::format::envelope::MAX_ENVELOPE_BYTES;

/// Sub-directory of an events directory holding quarantined files.
pub const QUARANTINE_DIR: &str = ".quarantine";

/// A directory's identity: when it changes, the directory was deleted and recreated.
///
/// Device and inode number, plus the birth time where the filesystem records one (a new
/// directory may get the inode number of the one just deleted). It is saved in named cursors;
/// across processes only the inode and birth time are compared (see [`DirId::same_dir`]),
/// because a device number may change across a reboot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirId {
    dev: u64,
    ino: u64,
    /// Birth time in ns since the epoch; 0 when the filesystem does not say.
    #[serde(default)]
    born_ns: u64,
}

impl DirId {
    /// Whether a saved identity names the same directory as this one, as far as can be told
    /// across processes and reboots: same inode and, when both are known, same birth time.
    pub fn same_dir(&self, saved: &DirId) -> bool {
        self.ino == saved.ino
            && (self.born_ns == 0 || saved.born_ns == 0 || self.born_ns == saved.born_ns)
    }
}

pub use crate::format::layout::{EventFile, Listing, Place};

/// The identity of a directory, or `None` when it does not exist.
pub(crate) fn dir_id(dir: &Path) -> Result<Option<DirId>, Error> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            let born_ns = meta
                .created()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64);
            Ok(Some(DirId { dev: meta.dev(), ino: meta.ino(), born_ns }))
        }
        Ok(_) => Err(Error::io(
            "read events dir (not a directory)",
            dir,
            std::io::ErrorKind::NotADirectory.into(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("stat", dir, e)),
    }
}

/// What a directory's metadata says of its entries: its identity, modification and change
/// times and size. Creating, removing or renaming an entry changes it, unless the change falls
/// within the same tick of the filesystem's clock as the change before it: a stamp is trusted
/// only once it is [`Stamp::settled`].
///
/// A follower compares it before listing a directory again: while a settled stamp stays the
/// same, nothing appeared or went, and the listing (whose cost grows with the history kept) is
/// skipped, so that waiting costs the same over a million files as over ten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    size: u64,
}

/// How long after a directory last changed its stamp is trusted: far longer than the
/// granularity of any filesystem's timestamps (a kernel clock tick; 2 s on FAT).
pub const STAMP_SETTLED: Duration = Duration::from_secs(3);

impl Stamp {
    /// Whether the directory last changed at least `after` (normally [`STAMP_SETTLED`])
    /// before `now`, so that a change after the stamp was taken cannot have left it as it
    /// was. A time in the future (a clock stepped back) is not settled.
    pub fn settled(&self, now: SystemTime, after: Duration) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else { return false };
        let limit = now.as_nanos() as i128 - after.as_nanos() as i128;
        self.mtime_ns <= limit && self.ctime_ns <= limit
    }
}

/// A directory's [`Stamp`], or `None` when it cannot be had (then it is listed).
pub fn stamp(dir: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(dir).ok().filter(std::fs::Metadata::is_dir)?;
    let ns = |secs: i64, nsecs: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsecs);
    Some(Stamp {
        ino: meta.ino(),
        mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
        ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        size: meta.size(),
    })
}

/// Lists a whole events directory: its top and every bucket (see
/// [`layout`](crate::format::layout)).
pub fn list(dir: &Path) -> Result<Listing, Error> {
    list_after(dir, 0)
}

/// Lists the top of an events directory and the buckets that can hold an ordered event above
/// `seq`: what a reader that has read up to `seq` needs, at a cost that does not grow with the
/// history before it.
pub fn list_after(dir: &Path, seq: u64) -> Result<Listing, Error> {
    Ok(crate::format::layout::list(dir, seq)?)
}

/// Lists the top of an events directory and at most `buckets` buckets that can hold a `seq`
/// above `seq`, the oldest first (see [`crate::format::layout::list_some`]).
pub fn list_some(dir: &Path, seq: u64, buckets: usize) -> Result<Listing, Error> {
    Ok(crate::format::layout::list_some(dir, seq, buckets)?)
}

/// Lists the top of an events directory and its newest bucket holding an event: enough to
/// know the highest `seq` present and the unordered events.
pub fn list_newest(dir: &Path) -> Result<Listing, Error> {
    Ok(crate::format::layout::list_newest(dir)?)
}

/// Where the file an event was read from is (`dir/file`, or for an ordered event of hookline's
/// relay, `dir/<bucket>/file` when it is there): [`SourceRef`] names an event by its events
/// directory, which is stable, rather than by the bucket it sits in.
///
/// [`SourceRef`]: crate::canonical::SourceRef
pub fn event_path(source: &crate::canonical::SourceRef) -> PathBuf {
    let flat = source.dir.join(&source.file);
    if source.legacy {
        return flat;
    }
    match crate::format::filename::EventFileName::parse(&source.file) {
        Some(name) if name.is_ordered() => {
            let file = EventFile { name, place: Place::Bucket };
            let usable = std::fs::symlink_metadata(file.dir(&source.dir))
                .is_ok_and(|meta| crate::format::layout::usable_bucket(&meta));
            let bucketed = file.path(&source.dir);
            if usable && std::fs::symlink_metadata(&bucketed).is_ok() { bucketed } else { flat }
        }
        _ => flat,
    }
}

/// Reads a file without following a symlink, refusing anything larger than
/// [`MAX_FILE_BYTES`]. Returns the bytes and the modification time (ns since the epoch).
pub fn read_file(path: &Path) -> std::io::Result<(Vec<u8>, u64)> {
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)?;
    read_open(file)
}

/// Reads a file opened without following a symlink: see [`read_file`].
fn read_open(mut file: File) -> std::io::Result<(Vec<u8>, u64)> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {MAX_FILE_BYTES} byte limit",
            meta.len()
        )));
    }
    // One byte more than the size: a read that returns exactly the size, short of the room
    // it was given, met the end of the file (a regular file's read stops short only there),
    // so no second read is needed to see the end. A file that grew since is read on.
    let size = meta.len() as usize;
    let mut bytes: Vec<u8> = Vec::with_capacity(size + 1);
    // SAFETY: the kernel writes at most `size + 1` bytes into the spare capacity, which is that
    // long; `read` returns how many it wrote.
    let n = unsafe { libc::read(file.as_raw_fd(), bytes.as_mut_ptr().cast(), size + 1) };
    let read = usize::try_from(n).ok();
    if let Some(n) = read {
        // SAFETY: the first `n` bytes were just written by read.
        unsafe { bytes.set_len(n) };
    }
    if read != Some(size) {
        // Interrupted, shorter or longer than it was: read on to the end, as it is now.
        // Through `read` alone: `File`'s own `read_to_end` asks for the metadata and the
        // position again (two more syscalls a file) to size a buffer already sized.
        struct Plain<'a>(&'a mut File);
        impl Read for Plain<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0.read(buf)
            }
        }
        Plain(&mut file).read_to_end(&mut bytes)?;
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok((bytes, mtime))
}

/// Reads the event files of one events directory the quick way, and the careful way when the
/// quick way is not conclusive.
///
/// The quick way: the directory last read from (a bucket, or the top) is kept open and each
/// file opened by its name there (`openat`: no walk of the whole path per file; a bucket
/// turned into a symlink since is not followed; no access time written), read with one `read`
/// into a buffer kept from file to file (no allocation per file) and closed: three system
/// calls, where [`read_file`] makes five. A regular file's read stops short of the room given only at its end, so a read
/// that does not fill the buffer got the whole file.
///
/// It only ever *accepts*: whatever the quick way cannot vouch for (the directory or the file
/// cannot be opened there, an empty read, a file as large as the buffer, bytes that do not
/// parse as an envelope of that name) is read again by its path with [`read_file`], and only
/// that answer counts. So a bucket removed and made again since it was opened never hides a
/// file, and a file is reported damaged, missing or unreadable exactly as [`read_event`] would
/// report it.
#[derive(Debug)]
pub struct FileReader {
    events_dir: PathBuf,
    /// The directory last read from: `None` for the top, else the bucket's first seq.
    open: Option<(Option<u64>, std::os::fd::OwnedFd)>,
    /// The last file read the quick way.
    buffer: Vec<u8>,
}

/// The quick way's buffer: larger files (rare: a large payload) are read the careful way.
const QUICK_READ_BYTES: usize = 64 << 10;

impl FileReader {
    /// A reader of the files of the events directory `events_dir`.
    pub fn new(events_dir: &Path) -> FileReader {
        FileReader { events_dir: events_dir.to_owned(), open: None, buffer: Vec::new() }
    }

    /// Forgets the open directory (the events directory was made again).
    pub fn reset(&mut self) {
        self.open = None;
    }

    /// A listed file's bytes, as [`read_file`] reads them.
    pub fn read(&mut self, file: &EventFile) -> std::io::Result<Vec<u8>> {
        match self.read_quick(file) {
            Some(bytes) => Ok(bytes.to_vec()),
            None => read_file(&file.path(&self.events_dir)).map(|(bytes, _)| bytes),
        }
    }

    /// [`read_event`] through this reader.
    pub fn read_event(&mut self, file: &EventFile) -> Result<Option<RawEnvelope>, ReadProblem> {
        if let Some(bytes) = self.read_quick(file)
            && let Ok(Some(envelope)) = parse_event(file, Ok((bytes, 0)))
        {
            return Ok(Some(envelope));
        }
        read_event(&self.events_dir, file)
    }

    /// The file's bytes read the quick way, or `None` when they cannot be vouched for.
    fn read_quick(&mut self, file: &EventFile) -> Option<&[u8]> {
        use std::os::fd::{FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        let key = match file.place {
            Place::Top => None,
            Place::Bucket => Some(crate::format::filename::bucket_of(file.name.seq)),
        };
        if self.open.as_ref().is_none_or(|(open, _)| *open != key) {
            self.open = None;
            let path = std::ffi::CString::new(file.dir(&self.events_dir).as_os_str().as_bytes());
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: the path is NUL-terminated and outlives the call.
            let fd = unsafe { libc::open(path.ok()?.as_ptr(), flags) };
            if fd < 0 {
                return None;
            }
            // SAFETY: `fd` was just opened and is owned by nobody else.
            self.open = Some((key, unsafe { OwnedFd::from_raw_fd(fd) }));
        }
        let (_, dir) = self.open.as_ref()?;
        let name = std::ffi::CString::new(file.name.to_string()).ok()?;
        // O_NONBLOCK: a FIFO in the way never blocks (it reads empty, and goes the careful way).
        // O_NOATIME: the first read of a file written since its last read (every file of a cold
        // backlog) would otherwise write its inode back for the access time; refused (EPERM)
        // for a file of another user, which then goes the careful way.
        #[cfg(target_os = "linux")]
        let no_atime = libc::O_NOATIME;
        #[cfg(not(target_os = "linux"))]
        let no_atime = 0;
        let flags =
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | no_atime;
        // SAFETY: the directory fd is open; the name is NUL-terminated and outlives the call.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` was just opened and is owned by nobody else; it is closed on return.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        self.buffer.clear();
        self.buffer.reserve(QUICK_READ_BYTES);
        // SAFETY: the kernel writes at most QUICK_READ_BYTES bytes into the spare capacity,
        // which is at least that long.
        let n = unsafe {
            libc::read(fd.as_raw_fd(), self.buffer.as_mut_ptr().cast(), QUICK_READ_BYTES)
        };
        let n = usize::try_from(n).ok().filter(|&n| n > 0 && n < QUICK_READ_BYTES)?;
        // SAFETY: the first `n` bytes were just written by read.
        unsafe { self.buffer.set_len(n) };
        Some(&self.buffer)
    }
}

/// Why an event file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadProblem {
    /// What is wrong.
    pub reason: String,
    /// Whether the file should be moved aside: damaged files are, files of a newer format
    /// version are not (a newer reader can use them).
    pub quarantine: bool,
}

/// Reads and parses an event file of the events directory `dir`; `Ok(None)` when it vanished
/// since it was listed.
pub fn read_event(dir: &Path, file: &EventFile) -> Result<Option<RawEnvelope>, ReadProblem> {
    match read_file(&file.path(dir)) {
        Ok((bytes, mtime)) => parse_event(file, Ok((&bytes, mtime))),
        Err(e) => parse_event(file, Err(e)),
    }
}

/// An event file's bytes (or why they could not be read) parsed as [`read_event`] does.
fn parse_event(
    file: &EventFile,
    read: std::io::Result<(&[u8], u64)>,
) -> Result<Option<RawEnvelope>, ReadProblem> {
    let damaged = |reason: String| ReadProblem { reason, quarantine: true };
    let name = &file.name;
    let bytes = match read {
        Ok((bytes, _)) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(damaged(e.to_string())),
    };
    // The payload is left raw: every payload the relay accepted is read (see `rawjson`).
    let envelope = match RawEnvelope::parse(bytes) {
        Ok(envelope) => envelope,
        Err(e @ EnvelopeError::Version(_)) => {
            return Err(ReadProblem { reason: e.to_string(), quarantine: false });
        }
        Err(e) => return Err(damaged(e.to_string())),
    };
    if envelope.seq != name.seq {
        return Err(damaged(format!("envelope seq {} does not match its file name", envelope.seq)));
    }
    Ok(Some(envelope))
}

/// Copies a damaged event file of the events directory `dir` into its quarantine for
/// inspection, with a note of the reason beside it, and leaves the original where it is: every
/// other consumer still reads it at its position and reports it too, and retention removes it
/// once every cursor has passed it. The copy is a hard link when the filesystem allows one.
/// Calling this again for the same file (a second reader hitting it) changes nothing. Returns
/// where the copy is; a file that vanished meanwhile is not an error (`None`).
///
/// The quarantine is a directory of the events directory's own: it is created there (mode
/// 0700) when missing, and refused, with nothing written, when a symlink or anything but a
/// directory of this user's that others cannot write is in its place. Everything in it is
/// done through the directory opened, never through a link.
pub fn quarantine(dir: &Path, event: &EventFile, reason: &str) -> Result<Option<PathBuf>, Error> {
    let target_dir = dir.join(QUARANTINE_DIR);
    let opened = untrusted::Dir::open_or_create(&target_dir, 0o700)
        .map_err(|e| Error::io("open quarantine dir", &target_dir, e))?;
    let meta = opened.metadata().map_err(|e| Error::io("stat", &target_dir, e))?;
    if !crate::format::layout::usable_bucket(&meta) {
        return Err(Error::io(
            "use quarantine dir (another user's, or writable by others)",
            &target_dir,
            std::io::ErrorKind::PermissionDenied.into(),
        ));
    }
    let file = OsString::from(event.name.to_string());
    let original = event.path(dir);
    let io = |op, e| Error::io(op, target_dir.join(&file), e);
    match opened.link_from(&original, &file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // No hard links here (some network and FUSE filesystems): a copy, when the file can
        // be read at all; else the note alone says what was wrong.
        Err(_) => match read_file(&original) {
            Ok((bytes, _)) => {
                opened.write_atomic(&file, &bytes, 0o600).map_err(|e| io("write", e))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(_) => {}
        },
    }
    let mut note = file.clone();
    note.push(".reason");
    if !opened.contains(&note).map_err(|e| io("stat", e))? {
        opened
            .write_atomic(&note, format!("{reason}\n").as_bytes(), 0o600)
            .map_err(|e| io("write", e))?;
    }
    Ok(Some(target_dir.join(file)))
}

/// A file of the older Python relay: `<ts_ns>-<task_id>-<event>.json`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LegacyName {
    /// Wall-clock nanoseconds from the name.
    pub ts_ns: u64,
    /// The whole file name.
    pub file: String,
}

impl LegacyName {
    /// Parses a legacy file name; `None` for temp files and anything else.
    pub fn parse(file: &str) -> Option<LegacyName> {
        let stem = file.strip_suffix(".json")?;
        let (ts, rest) = stem.split_once('-')?;
        if ts.is_empty() || !ts.bytes().all(|b| b.is_ascii_digit()) || !rest.contains('-') {
            return None;
        }
        Some(LegacyName { ts_ns: ts.parse().ok()?, file: file.to_owned() })
    }
}

/// Lists a legacy directory (never creating it): its event files in time order.
pub(crate) fn list_legacy(dir: &Path) -> Result<Vec<LegacyName>, Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list legacy dir", dir, e)),
    };
    let mut names: Vec<LegacyName> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| LegacyName::parse(&name))
        .collect();
    names.sort();
    Ok(names)
}

/// Reads a legacy file as an envelope of the `legacy` profile: its `event` becomes the
/// native name, `task_id` the tag, and the identity fields the payload.
pub(crate) fn read_legacy(dir: &Path, name: &LegacyName) -> Result<RawEnvelope, String> {
    #[derive(Deserialize)]
    struct Legacy {
        event: Option<String>,
        task_id: Option<String>,
        session_id: Option<String>,
        transcript_path: Option<String>,
        cwd: Option<String>,
    }
    let (bytes, _) = read_file(&dir.join(&name.file)).map_err(|e| e.to_string())?;
    let legacy: Legacy =
        serde_json::from_slice(&bytes).map_err(|e| format!("not a legacy event: {e}"))?;
    let event = legacy
        .event
        .or_else(|| name.file.strip_suffix(".json")?.rsplit('-').next().map(str::to_owned));
    let mut payload = Map::new();
    for (key, value) in [
        ("session_id", legacy.session_id),
        ("transcript_path", legacy.transcript_path),
        ("cwd", legacy.cwd),
        ("hook_event_name", event.clone()),
    ] {
        if let Some(value) = value {
            payload.insert(key.into(), Value::String(value));
        }
    }
    Ok(RawEnvelope {
        seq_unordered: true,
        ts_ns: name.ts_ns,
        tag: legacy.task_id,
        relay_version: "legacy".into(),
        bytes: bytes.len() as u64,
        ..RawEnvelope::built("legacy", event, &Value::Object(payload))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::filename::{EventFileName, bucket_name};

    /// Writes `body` as the ordered event `seq` at the top (flat) or in its bucket.
    fn put(dir: &Path, seq: u64, place: Place, body: &str) -> EventFile {
        let file = EventFile { name: EventFileName::ordered(seq, 7), place };
        std::fs::create_dir_all(file.dir(dir)).unwrap();
        std::fs::write(file.path(dir), body).unwrap();
        file
    }

    #[test]
    fn a_file_reader_reads_what_read_file_reads_at_the_top_and_in_buckets() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let files = [
            put(dir, 1, Place::Bucket, "one"),
            put(dir, 2, Place::Top, ""),
            put(dir, 3, Place::Bucket, &"x".repeat(100_000)),
            put(dir, 20_001, Place::Bucket, "three"),
            put(dir, 4, Place::Top, "four"),
        ];
        let mut reader = FileReader::new(dir);
        for file in files.iter().chain(files.iter().rev()) {
            let bytes = reader.read(file).unwrap();
            assert_eq!(bytes, read_file(&file.path(dir)).unwrap().0, "{:?}", file.name);
        }
        let gone = EventFile { name: EventFileName::ordered(5, 7), place: Place::Bucket };
        assert_eq!(reader.read(&gone).unwrap_err().kind(), std::io::ErrorKind::NotFound);
        std::os::unix::fs::symlink(files[0].path(dir), dir.join(gone.name.to_string())).unwrap();
        let link = EventFile { place: Place::Top, ..gone };
        assert!(reader.read(&link).is_err(), "a symlink is not followed");
    }

    #[test]
    fn a_bucket_made_again_since_the_reader_opened_it_hides_no_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let first = put(dir, 1, Place::Bucket, "one");
        let mut reader = FileReader::new(dir);
        assert_eq!(reader.read(&first).unwrap(), b"one");
        // Pruned empty, then made again by a writer (the reader still holds the old one).
        std::fs::remove_file(first.path(dir)).unwrap();
        std::fs::remove_dir(dir.join(bucket_name(0))).unwrap();
        let second = put(dir, 2, Place::Bucket, "two");
        assert_eq!(reader.read(&second).unwrap(), b"two");
    }

    #[test]
    fn legacy_names_carry_time_task_and_event() {
        let name = LegacyName::parse("1796048674135003796-story-1-dev-2-Stop.json").unwrap();
        assert_eq!(name.ts_ns, 1796048674135003796);
        for bad in ["x-Stop.json", "123-Stop.json.tmp", "123.json", "-a-b.json", "12a-x-y.json"] {
            assert_eq!(LegacyName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_legacy_file_becomes_an_envelope_of_the_legacy_profile() {
        let tmp = tempfile::tempdir().unwrap();
        let file = "1796048674135003796-story-1-dev-2-Stop.json";
        std::fs::write(
            tmp.path().join(file),
            r#"{"ts": 1796048674.1, "event": "Stop", "task_id": "story-1-dev-2", "session_id": "s1", "transcript_path": null, "cwd": "/p"}"#,
        )
        .unwrap();
        let envelope = read_legacy(tmp.path(), &LegacyName::parse(file).unwrap()).unwrap();
        assert_eq!(envelope.cli, "legacy");
        assert_eq!(envelope.event.as_deref(), Some("Stop"));
        assert_eq!(envelope.tag.as_deref(), Some("story-1-dev-2"));
        let payload: Value = serde_json::from_str(envelope.payload.unwrap().get()).unwrap();
        assert_eq!(payload["session_id"], "s1");
    }

    #[test]
    fn files_are_read_without_following_symlinks_and_with_a_size_cap() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("real"), "{}").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("link")).unwrap();
        assert!(read_file(&tmp.path().join("link")).is_err());
        assert!(read_file(&tmp.path().join("real")).is_ok());
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path string; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_file(&fifo).unwrap_err().to_string().contains("regular"));
    }
}
