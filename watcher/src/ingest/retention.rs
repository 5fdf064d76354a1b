//! Retention: keeping an events directory bounded over weeks of use.
//!
//! An event file is removed only when every registered cursor (`.cursors/*.json`) has consumed
//! it *and* it is older than `max_age`. With no cursor registered nothing says what was
//! consumed, so nothing is removed, unless the user asked for age alone
//! ([`RetentionPolicy::without_cursors`], `hookline prune --max-age`). The newest event file is
//! always kept, so that a lost counter can be rebuilt above every `seq` ever delivered. Temp
//! files of killed relays go after `temp_age`; quarantined copies after `max_age` (the damaged
//! originals stay in place, and go like any other event). Nothing outside the events
//! directory is ever touched: the quarantine is read and emptied through the directory
//! opened without following a link, and a `.quarantine` that is a symlink is left alone. A bucket (see
//! [`layout`](crate::format::layout)) left empty goes too, when it is older than the newest
//! event's: files never move, so ordering is never touched, and a writer that finds its bucket
//! gone puts its event at the top.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::Error;
use crate::checkpoint;
use crate::format::filename::{EventFileName, bucket_name, bucket_of};
use crate::ingest::cursor::{self, Position};
use crate::ingest::source::{self, QUARANTINE_DIR};
use crate::untrusted;

/// How long files are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Consumed event files and quarantined files older than this are removed.
    pub max_age: Duration,
    /// Temp files older than this (left by killed relays) are removed.
    pub temp_age: Duration,
    /// With no cursor registered, remove event files by age alone. Only on the user's
    /// explicit request: an unregistered consumer may not have read them.
    pub without_cursors: bool,
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        RetentionPolicy {
            max_age: Duration::from_secs(7 * 86400),
            temp_age: Duration::from_secs(3600),
            without_cursors: false,
        }
    }
}

/// What a prune did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    /// Event files removed.
    pub events: usize,
    /// Temp files removed.
    pub temps: usize,
    /// Quarantined files removed.
    pub quarantined: usize,
    /// Event files old enough to go but kept because a cursor has not consumed them.
    pub unconsumed: usize,
    /// Of those, how many each cursor has not consumed, by cursor: the ones holding the
    /// directory back.
    pub held_back_by: std::collections::BTreeMap<String, usize>,
    /// Buckets removed once empty.
    pub buckets: usize,
    /// `.quarantine` is a symlink or not a directory: it was left alone, and whatever it
    /// points to.
    pub quarantine_refused: bool,
}

/// Prunes an events directory as of `now`. A missing directory is not an error.
pub fn prune(dir: &Path, policy: &RetentionPolicy, now: SystemTime) -> Result<PruneReport, Error> {
    let mut report = PruneReport::default();
    if source::dir_id(dir)?.is_none() {
        return Ok(report);
    }
    let cursors = cursor::all(dir)?;
    let consumed = |name: &EventFileName| {
        if cursors.is_empty() {
            return policy.without_cursors;
        }
        cursors.iter().all(|(_, position)| match name.unordered_ts_ns {
            None => name.seq <= position.seq,
            Some(_) => position.unordered.contains(&name.to_string()),
        })
    };
    let old = |path: &Path, age: Duration| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d > age))
    };
    let remove = |path: &Path| match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("remove", path, e)),
    };
    let listing = source::list(dir)?;
    let newest = listing.events.iter().map(|e| e.name).filter(EventFileName::is_ordered).max();
    // A checkpoint is brought up to date by replaying what came after it: one that an event
    // about to go is after is removed first (see `crate::checkpoint`).
    let mut checkpoints = covered_all(dir);
    for file in &listing.events {
        let path = file.path(dir);
        if Some(file.name) == newest || !old(&path, policy.max_age) {
            continue;
        }
        if !consumed(&file.name) {
            report.unconsumed += 1;
            for (name, position) in &cursors {
                if !position.covers_name(&file.name) {
                    *report.held_back_by.entry(name.clone()).or_default() += 1;
                }
            }
            continue;
        }
        checkpoints.retain(|(checkpoint, covers)| {
            covers.covers_name(&file.name) || remove(checkpoint).is_err()
        });
        if remove(&path)? {
            report.events += 1;
        }
    }
    // Buckets left empty go, below the newest event's (a writer may be about to link into
    // that one, or a newer one): `rmdir` refuses one that is not empty, and a writer that
    // finds its bucket gone puts its event at the top.
    let newest_bucket = newest.map_or(0, |n| bucket_of(n.seq));
    for first in listing.buckets.iter().filter(|b| **b < newest_bucket) {
        let path = dir.join(bucket_name(*first));
        match std::fs::remove_dir(&path) {
            Ok(()) => report.buckets += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {}
            Err(e) => return Err(Error::io("remove empty bucket", &path, e)),
        }
    }
    for temp in &listing.temps {
        let path = dir.join(temp);
        if old(&path, policy.temp_age) && remove(&path)? {
            report.temps += 1;
        }
    }
    prune_quarantine(dir, policy, now, &mut report)?;
    Ok(report)
}

/// Removes the quarantined files older than `policy.max_age`: only regular files (or links,
/// as links) directly in the events directory's own `.quarantine`, through the directory
/// opened, never through a link. A `.quarantine` that is a symlink (or not a directory) is
/// left alone, with whatever it points to, and said so in the report.
fn prune_quarantine(
    dir: &Path,
    policy: &RetentionPolicy,
    now: SystemTime,
    report: &mut PruneReport,
) -> Result<(), Error> {
    let path = dir.join(QUARANTINE_DIR);
    let quarantine = match untrusted::Dir::open(&path) {
        Ok(Some(quarantine)) => quarantine,
        Ok(None) => return Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
            report.quarantine_refused = true;
            return Ok(());
        }
        Err(e) => return Err(Error::io("open", &path, e)),
    };
    let limit = now.checked_sub(policy.max_age).and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    let Some(limit) = limit else { return Ok(()) };
    for name in quarantine.names().map_err(|e| Error::io("list", &path, e))? {
        let entry = quarantine.stat(&name).map_err(|e| Error::io("stat", path.join(&name), e))?;
        // A directory in there is not ours to empty; a link goes as itself.
        let Some(entry) = entry.filter(|e| !e.directory) else { continue };
        if entry.mtime >= i64::try_from(limit.as_secs()).unwrap_or(i64::MAX) {
            continue;
        }
        if quarantine.remove(&name).map_err(|e| Error::io("remove", path.join(&name), e))? {
            report.quarantined += 1;
        }
    }
    Ok(())
}

/// Every checkpoint of an events directory that can be read, with the position it covers:
/// what retention reads.
pub(crate) fn covered_all(events_dir: &Path) -> Vec<(PathBuf, Position)> {
    #[derive(Deserialize)]
    struct Covers {
        covers: Position,
    }
    let covered = |folder| {
        let path = checkpoint::path(events_dir, folder);
        let bytes = checkpoint::read(&path).ok()??;
        let body = checkpoint::body(&bytes).ok()?;
        let covers = serde_json::from_slice::<Covers>(body).ok()?.covers;
        Some((path, covers))
    };
    [checkpoint::Folder::Tracker, checkpoint::Folder::Decider]
        .into_iter()
        .filter_map(covered)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::store::{EventsDir, WriteOptions};
    use crate::ingest::cursor::Cursor;

    fn write_events(dir: &Path, n: usize) {
        let events = EventsDir::create(dir).unwrap();
        for _ in 0..n {
            events.write_event(1, 1, &WriteOptions::default(), |_, _| b"{}".to_vec()).unwrap();
        }
    }

    fn count(dir: &Path) -> usize {
        source::list(dir).unwrap().events.len()
    }

    #[test]
    fn only_events_every_cursor_consumed_and_old_enough_go() {
        let tmp = tempfile::tempdir().unwrap();
        write_events(tmp.path(), 10);
        let mut a = Cursor::open(tmp.path(), "a").unwrap();
        a.position.seq = 8;
        a.save(&a.position).unwrap();
        let mut b = Cursor::open(tmp.path(), "b").unwrap();
        b.position.seq = 5;
        b.save(&b.position).unwrap();
        let policy = RetentionPolicy::default();
        let now = SystemTime::now();
        assert_eq!(prune(tmp.path(), &policy, now).unwrap(), PruneReport::default(), "too young");
        let later = now + Duration::from_secs(8 * 86400);
        let report = prune(tmp.path(), &policy, later).unwrap();
        assert_eq!((report.events, report.unconsumed), (5, 4));
        // b holds back the four (seq 6 to 9; the newest, 10, is always kept), a one (seq 9).
        let held: Vec<(&str, usize)> =
            report.held_back_by.iter().map(|(n, c)| (n.as_str(), *c)).collect();
        assert_eq!(held, [("a", 1), ("b", 4)]);
        assert_eq!(count(tmp.path()), 5);
    }

    #[test]
    fn with_no_cursor_registered_nothing_goes_unless_age_alone_is_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        write_events(tmp.path(), 3);
        let later = SystemTime::now() + Duration::from_secs(30 * 86400);
        let report = prune(tmp.path(), &RetentionPolicy::default(), later).unwrap();
        assert_eq!((report.events, report.unconsumed), (0, 2));
        assert_eq!(count(tmp.path()), 3);
        let by_age = RetentionPolicy { without_cursors: true, ..RetentionPolicy::default() };
        assert_eq!(prune(tmp.path(), &by_age, later).unwrap().events, 2);
    }

    #[test]
    fn the_newest_event_is_always_kept() {
        let tmp = tempfile::tempdir().unwrap();
        write_events(tmp.path(), 3);
        let later = SystemTime::now() + Duration::from_secs(30 * 86400);
        let by_age = RetentionPolicy { without_cursors: true, ..RetentionPolicy::default() };
        prune(tmp.path(), &by_age, later).unwrap();
        let left = source::list(tmp.path()).unwrap().events;
        assert_eq!(left.iter().map(|e| e.name.seq).collect::<Vec<_>>(), [3]);
    }

    #[test]
    fn emptied_buckets_go_and_the_newest_events_bucket_stays() {
        use crate::format::filename::{BUCKET_SPAN, COUNTER_FILE};
        let tmp = tempfile::tempdir().unwrap();
        EventsDir::create(tmp.path()).unwrap();
        let counter = format!("{:020}\n", BUCKET_SPAN - 3);
        std::fs::write(tmp.path().join(COUNTER_FILE), counter).unwrap();
        write_events(tmp.path(), 5);
        let listing = source::list(tmp.path()).unwrap();
        assert_eq!(listing.buckets, [0, BUCKET_SPAN]);
        let mut a = Cursor::open(tmp.path(), "a").unwrap();
        a.position.seq = BUCKET_SPAN + 2;
        a.save(&a.position).unwrap();
        let later = SystemTime::now() + Duration::from_secs(8 * 86400);
        let report = prune(tmp.path(), &RetentionPolicy::default(), later).unwrap();
        assert_eq!((report.events, report.buckets), (4, 1));
        let left = source::list(tmp.path()).unwrap();
        assert_eq!(left.buckets, [BUCKET_SPAN], "the emptied bucket went, the newest stays");
        assert_eq!(left.events.iter().map(|e| e.name.seq).collect::<Vec<_>>(), [BUCKET_SPAN + 2]);
        // The relay continues in the bucket kept.
        write_events(tmp.path(), 1);
        assert_eq!(count(tmp.path()), 2);
    }

    #[test]
    fn old_temp_files_of_killed_relays_go() {
        let tmp = tempfile::tempdir().unwrap();
        write_events(tmp.path(), 1);
        std::fs::write(tmp.path().join(".tmp-123-abc"), "{\"v\":1,").unwrap();
        let report = prune(
            tmp.path(),
            &RetentionPolicy::default(),
            SystemTime::now() + Duration::from_secs(7200),
        )
        .unwrap();
        assert_eq!(report.temps, 1);
        assert!(!tmp.path().join(".tmp-123-abc").exists());
    }

    #[test]
    fn a_damaged_file_goes_once_every_cursor_passed_it_and_its_copy_by_age() {
        let tmp = tempfile::tempdir().unwrap();
        write_events(tmp.path(), 3);
        let listed = source::list(tmp.path()).unwrap().events[1];
        let bad = listed.path(tmp.path());
        std::fs::write(&bad, "{").unwrap();
        source::quarantine(tmp.path(), &listed, "not a valid envelope").unwrap();
        let mut a = Cursor::open(tmp.path(), "a").unwrap();
        a.position.seq = 1;
        a.save(&a.position).unwrap();
        let later = SystemTime::now() + Duration::from_secs(8 * 86400);
        prune(tmp.path(), &RetentionPolicy::default(), later).unwrap();
        assert!(bad.exists(), "not consumed yet: kept");
        a.position.seq = 3;
        a.save(&a.position).unwrap();
        prune(tmp.path(), &RetentionPolicy::default(), later).unwrap();
        assert!(!bad.exists());
        assert_eq!(std::fs::read_dir(tmp.path().join(QUARANTINE_DIR)).unwrap().count(), 0);
    }

    /// Sets a file's (or a link's own) modification time.
    fn set_mtime(path: &Path, when: SystemTime) {
        let secs = when.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() as i64;
        let time = libc::timespec { tv_sec: secs, tv_nsec: 0 };
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path string and two valid timespecs.
        let rc = unsafe {
            libc::utimensat(
                libc::AT_FDCWD,
                c.as_ptr(),
                [time, time].as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        assert_eq!(rc, 0, "{}", path.display());
    }

    #[test]
    fn a_quarantine_that_is_a_symlink_is_left_alone_with_what_it_points_to() {
        let tmp = tempfile::tempdir().unwrap();
        let events = tmp.path().join("events");
        write_events(&events, 2);
        let documents = tmp.path().join("documents");
        std::fs::create_dir(&documents).unwrap();
        let month_ago = SystemTime::now() - Duration::from_secs(30 * 86400);
        for name in ["thesis.odt", "taxes.pdf"] {
            std::fs::write(documents.join(name), name).unwrap();
            set_mtime(&documents.join(name), month_ago);
        }
        std::os::unix::fs::symlink(&documents, events.join(QUARANTINE_DIR)).unwrap();
        let report = prune(&events, &RetentionPolicy::default(), SystemTime::now()).unwrap();
        assert_eq!((report.quarantined, report.quarantine_refused), (0, true));
        assert_eq!(std::fs::read_dir(&documents).unwrap().count(), 2);

        // Quarantining through it is refused too: nothing is created or linked there.
        let listed = source::list(&events).unwrap().events[0];
        assert!(source::quarantine(&events, &listed, "damaged").is_err());
        assert_eq!(std::fs::read_dir(&documents).unwrap().count(), 2);
    }

    #[test]
    fn in_the_quarantine_a_link_goes_as_a_link_and_a_directory_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let events = tmp.path().join("events");
        write_events(&events, 2);
        let listed = source::list(&events).unwrap().events[0];
        source::quarantine(&events, &listed, "damaged").unwrap();
        let quarantine = events.join(QUARANTINE_DIR);
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "keep me").unwrap();
        std::os::unix::fs::symlink(&outside, quarantine.join("link")).unwrap();
        std::fs::create_dir(quarantine.join("sub")).unwrap();
        std::fs::write(quarantine.join("sub/inner"), "").unwrap();
        let month_ago = SystemTime::now() - Duration::from_secs(30 * 86400);
        for name in ["link", "sub", "sub/inner"] {
            set_mtime(&quarantine.join(name), month_ago);
        }
        set_mtime(&outside, month_ago);
        let later = SystemTime::now() + Duration::from_secs(8 * 86400);
        let report = prune(&events, &RetentionPolicy::default(), later).unwrap();
        // The copy, its note and the link.
        assert_eq!(report.quarantined, 3);
        assert!(!report.quarantine_refused);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
        let left: Vec<_> =
            std::fs::read_dir(&quarantine).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, ["sub"]);
        assert!(quarantine.join("sub/inner").exists());
    }

    #[test]
    fn a_missing_dir_is_nothing_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let report =
            prune(&tmp.path().join("none"), &RetentionPolicy::default(), SystemTime::now());
        assert_eq!(report.unwrap(), PruneReport::default());
    }
}
