//! Where the files of an events directory are, and how to list them without listing the whole
//! history.
//!
//! The relay links each *ordered* event into a bucket, a sub-directory named after the range
//! of `seq`s it holds ([`bucket_name`], [`BUCKET_SPAN`] seqs each), created on demand. So a
//! reader that starts after `seq` S lists the top of the directory (a few entries: buckets, the
//! counter, cursors, unordered events) and only the buckets that can hold a `seq` above S,
//! however long the history kept. Files never move once written: a bucket is where an event
//! appears, not where it is moved to.
//!
//! Everything else stays at the top: unordered events, temp files, the counter and its
//! witness, hookline's own state. Ordered events at the top are read too, in `seq` order with
//! the bucketed ones: an older relay wrote every event there (the *flat* layout), and the relay
//! still puts an event there when its bucket cannot be used.
//!
//! A bucket is used, by writers and readers alike, only when it passes the same checks as the
//! events directory: a real directory (not a symlink), owned by the user, not writable by group
//! or others. Anything else under a bucket's name (a symlink, a file, someone else's directory)
//! is ignored: never followed, never listed, never written into.

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::filename::{
    BUCKET_SPAN, COUNTER_WITNESS_PREFIX, EventFileName, FileKind, bucket_name, bucket_of, classify,
};
use crate::sys::euid;

/// Where an event file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// At the top of the events directory (unordered events; ordered ones of the flat layout).
    Top,
    /// In the bucket of its `seq`.
    Bucket,
}

/// An event file found by a listing: its name and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventFile {
    /// The file's name.
    pub name: EventFileName,
    /// Where it is.
    pub place: Place,
}

impl EventFile {
    /// The directory holding the file, in the events directory `events_dir`.
    pub fn dir(&self, events_dir: &Path) -> PathBuf {
        match self.place {
            Place::Top => events_dir.to_owned(),
            Place::Bucket => events_dir.join(bucket_name(bucket_of(self.name.seq))),
        }
    }

    /// The file's path, in the events directory `events_dir`.
    pub fn path(&self, events_dir: &Path) -> PathBuf {
        self.dir(events_dir).join(self.name.to_string())
    }
}

/// What a listing found.
#[derive(Debug, Default)]
pub struct Listing {
    /// Event files, sorted by name (so by `seq`), from the top and the buckets listed.
    pub events: Vec<EventFile>,
    /// Temp files of writers in progress or killed.
    pub temps: Vec<String>,
    /// Files hookline did not write (in a bucket: `bucket/name`), and refused buckets.
    pub foreign: Vec<String>,
    /// The usable buckets present, listed or not, by first `seq`, ascending.
    pub buckets: Vec<u64>,
    /// The counter's witnesses at the top.
    pub witnesses: Vec<String>,
    /// Set by [`list_some`] when buckets after the ones listed were left for a later listing:
    /// the highest `seq` this listing can hold. Events above it (at the top too) are left out.
    pub up_to: Option<u64>,
}

/// Whether a directory entry's metadata (not following a symlink) makes a usable bucket: the
/// same checks as the events directory's.
pub fn usable_bucket(meta: &Metadata) -> bool {
    meta.is_dir() && meta.uid() == euid() && meta.mode() & 0o022 == 0
}

/// Lists the top of an events directory and every usable bucket that can hold a `seq` above
/// `after` (0: the whole directory).
pub fn list(dir: &Path, after: u64) -> Result<Listing, Error> {
    list_some(dir, after, usize::MAX)
}

/// Lists the top of an events directory and at most `buckets` of the usable buckets that can
/// hold a `seq` above `after`, the oldest first: what a reader reads next, in memory bounded
/// by `buckets` × the bucket span however long the history. When buckets were left, the
/// listing says up to which `seq` it is complete ([`Listing::up_to`]) and holds no event above
/// it, from the top either, so that nothing after a gap is taken before the gap is listed.
pub fn list_some(dir: &Path, after: u64, buckets: usize) -> Result<Listing, Error> {
    let mut listing = list_top(dir)?;
    let wanted: Vec<u64> = listing
        .buckets
        .iter()
        .copied()
        .filter(|b| b.saturating_add(BUCKET_SPAN - 1) > after)
        .collect();
    for first in wanted.iter().take(buckets.max(1)) {
        list_bucket(dir, *first, &mut listing)?;
    }
    if let Some(next) = wanted.get(buckets.max(1)) {
        let up_to = next.saturating_sub(1);
        listing.events.retain(|e| e.name.seq <= up_to);
        listing.up_to = Some(up_to);
    }
    listing.events.sort_unstable_by_key(|e| e.name);
    Ok(listing)
}

/// Lists the top of an events directory and the newest bucket that holds an event (none when
/// no bucket does): enough to know the highest `seq` present, and the unordered events.
pub fn list_newest(dir: &Path) -> Result<Listing, Error> {
    let mut listing = list_top(dir)?;
    for first in listing.buckets.clone().into_iter().rev() {
        let before = listing.events.len();
        list_bucket(dir, first, &mut listing)?;
        if listing.events.len() > before {
            break;
        }
    }
    listing.events.sort_unstable_by_key(|e| e.name);
    Ok(listing)
}

fn list_top(dir: &Path) -> Result<Listing, Error> {
    let error = |e| Error::io("list dir", dir, e);
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir).map_err(error)? {
        let entry = entry.map_err(error)?;
        let Ok(name) = entry.file_name().into_string() else {
            listing.foreign.push(entry.file_name().to_string_lossy().into_owned());
            continue;
        };
        match classify(&name) {
            FileKind::Event(name) => listing.events.push(EventFile { name, place: Place::Top }),
            FileKind::Temp => listing.temps.push(name),
            FileKind::Hidden if name.starts_with(COUNTER_WITNESS_PREFIX) => {
                listing.witnesses.push(name)
            }
            FileKind::Hidden => {}
            FileKind::Bucket(first) => match entry.metadata() {
                Ok(meta) if usable_bucket(&meta) => listing.buckets.push(first),
                // Removed since it was listed: nothing in it.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                _ => listing.foreign.push(name),
            },
            FileKind::Foreign => listing.foreign.push(name),
        }
    }
    listing.buckets.sort_unstable();
    Ok(listing)
}

/// Adds a bucket's event files to `listing`; a bucket removed meanwhile (pruned empty) has none.
fn list_bucket(dir: &Path, first: u64, listing: &mut Listing) -> Result<(), Error> {
    let bucket = bucket_name(first);
    let path = dir.join(&bucket);
    let error = |e| Error::io("list bucket", &path, e);
    let entries = match std::fs::read_dir(&path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(error(e)),
    };
    for entry in entries {
        let entry = entry.map_err(error)?;
        // Once a listing is long, room for a whole bucket (or an eighth more) at a time: a cold
        // backlog lists a million names, and doubling left the list's old copies resident
        // (`status` over 1,000,000 events peaked at 88 MiB, 49 MiB growing this way), while
        // growing by an eighth still copies each name a bounded number of times. A follower's
        // few names never get here.
        let (len, capacity) = (listing.events.len(), listing.events.capacity());
        if len == capacity && len >= 1024 {
            listing.events.reserve((BUCKET_SPAN as usize).max(len / 8));
        }
        let name = entry.file_name();
        match name.to_str().map(classify) {
            // Only what the relay puts there: ordered events of the bucket's range.
            Some(FileKind::Event(name)) if name.is_ordered() && bucket_of(name.seq) == first => {
                listing.events.push(EventFile { name, place: Place::Bucket });
            }
            _ => listing.foreign.push(format!("{bucket}/{}", name.to_string_lossy())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn touch(path: &Path) {
        std::fs::write(path, "{}").unwrap();
    }

    #[test]
    fn a_listing_after_a_seq_skips_the_buckets_below_it_and_keeps_the_top() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for first in [0, BUCKET_SPAN, 2 * BUCKET_SPAN] {
            let bucket = dir.join(bucket_name(first));
            std::fs::create_dir(&bucket).unwrap();
            std::fs::set_permissions(&bucket, std::fs::Permissions::from_mode(0o700)).unwrap();
            touch(&bucket.join(EventFileName::ordered(first.max(1), 7).to_string()));
        }
        touch(&dir.join(EventFileName::ordered(5, 3).to_string()));
        touch(&dir.join(EventFileName::unordered(4, 9, 3).to_string()));
        let seqs = |l: &Listing| l.events.iter().map(|e| e.name.seq).collect::<Vec<_>>();
        let all = list(dir, 0).unwrap();
        assert_eq!(seqs(&all), [1, 4, 5, BUCKET_SPAN, 2 * BUCKET_SPAN]);
        assert_eq!(all.buckets, [0, BUCKET_SPAN, 2 * BUCKET_SPAN]);
        let late = list(dir, BUCKET_SPAN + 3).unwrap();
        assert_eq!(seqs(&late), [4, 5, BUCKET_SPAN, 2 * BUCKET_SPAN]);
        let last = list(dir, 2 * BUCKET_SPAN - 1).unwrap();
        assert_eq!(seqs(&last), [4, 5, 2 * BUCKET_SPAN]);
        let newest = list_newest(dir).unwrap();
        assert_eq!(seqs(&newest), [4, 5, 2 * BUCKET_SPAN]);
        for file in &all.events {
            assert!(file.path(dir).is_file(), "{:?}", file);
        }
    }

    #[test]
    fn hostile_buckets_are_never_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let elsewhere = tmp.path().join(".elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        touch(&elsewhere.join(EventFileName::ordered(1, 1).to_string()));
        std::os::unix::fs::symlink(&elsewhere, dir.join(bucket_name(0))).unwrap();
        touch(&dir.join(bucket_name(BUCKET_SPAN)));
        let open = dir.join(bucket_name(2 * BUCKET_SPAN));
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        touch(&open.join(EventFileName::ordered(2 * BUCKET_SPAN, 1).to_string()));
        let listing = list(dir, 0).unwrap();
        assert!(listing.events.is_empty(), "{:?}", listing.events);
        assert!(listing.buckets.is_empty());
        assert_eq!(listing.foreign.len(), 3, "{:?}", listing.foreign);
    }
}
