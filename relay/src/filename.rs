//! Names of the files in an events directory.
//!
//! * Event files: `SSSSSSSSSSSSSSSSSSSS-PPPPPPPPPP.json`: the 20-digit zero-padded `seq` and the
//!   writer's 10-digit pid. Names sort exactly as their `seq`.
//! * Unordered event files (the counter lock timed out):
//!   `SSSSSSSSSSSSSSSSSSSS-uTTTTTTTTTTTTTTTTTTTT-PPPPPPPPPP.json`, where `S` is the counter value the
//!   writer saw and `T` its clock in nanoseconds; they sort after the ordered event with the same
//!   `seq` and before the next one.
//! * Temp files start with `.tmp-` and are never visible under a final name until complete.
//! * `.seq` is the counter, `.seq.at-SSSSSSSSSSSSSSSSSSSS` its witness; other dot files belong to hookline (cursors, quarantine).
//! * Buckets: `bSSSSSSSSSSSSSSSSSSSS`, a sub-directory holding the ordered events whose `seq`
//!   lies in `[S, S + BUCKET_SPAN)`, `S` a multiple of [`BUCKET_SPAN`] (see
//!   [`layout`](crate::layout)).
//!
//! Only digits, `-`, `u`, `.` and the fixed words above appear in a name: nothing from a payload
//! ever reaches a path.

use std::cmp::Ordering;
use std::fmt;

/// The sequence counter's file name inside an events directory.
pub const COUNTER_FILE: &str = ".seq";
/// Prefix of the counter's witness: an empty file named after the counter's value
/// (`.seq.at-00000000000000000042`), renamed as the counter moves on, under its lock. A counter
/// set back (a restored backup, a write lost in a crash) no longer matches its witness: that is
/// how a writer sees the regression without listing the directory on every write.
pub const COUNTER_WITNESS_PREFIX: &str = ".seq.at-";
/// Prefix of temp files.
pub const TEMP_PREFIX: &str = ".tmp-";
/// Extension of event files.
pub const EVENT_EXTENSION: &str = ".json";

/// Prefix of a bucket's name.
pub const BUCKET_PREFIX: &str = "b";
/// How many consecutive `seq`s one bucket holds.
pub const BUCKET_SPAN: u64 = 10_000;

const SEQ_DIGITS: usize = 20;
const PID_DIGITS: usize = 10;

/// The parsed name of an event file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventFileName {
    /// The sequence number (for an unordered event, the counter value its writer saw).
    pub seq: u64,
    /// For an unordered event, the writer's clock in nanoseconds.
    pub unordered_ts_ns: Option<u64>,
    /// The writer's pid.
    pub pid: u32,
}

impl EventFileName {
    /// The name of an event that got its `seq` under the counter lock.
    pub fn ordered(seq: u64, pid: u32) -> EventFileName {
        EventFileName { seq, unordered_ts_ns: None, pid }
    }

    /// The name of an event written without the counter lock.
    pub fn unordered(seq: u64, ts_ns: u64, pid: u32) -> EventFileName {
        EventFileName { seq, unordered_ts_ns: Some(ts_ns), pid }
    }

    /// Whether the event's `seq` was allocated under the lock.
    pub fn is_ordered(&self) -> bool {
        self.unordered_ts_ns.is_none()
    }

    /// Parses a file name; `None` for anything that is not an event file.
    pub fn parse(name: &str) -> Option<EventFileName> {
        let stem = name.strip_suffix(EVENT_EXTENSION)?;
        let (seq, rest) = stem.split_once('-')?;
        let seq = digits(seq, SEQ_DIGITS)?;
        match rest.strip_prefix('u') {
            None => Some(EventFileName::ordered(seq, digits(rest, PID_DIGITS)? as u32)),
            Some(rest) => {
                let (ts, pid) = rest.split_once('-')?;
                let ts = digits(ts, SEQ_DIGITS)?;
                Some(EventFileName::unordered(seq, ts, digits(pid, PID_DIGITS)? as u32))
            }
        }
    }
}

fn digits(text: &str, width: usize) -> Option<u64> {
    if text.len() != width || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u64 = text.parse().ok()?;
    if width == PID_DIGITS && value > u64::from(u32::MAX) {
        return None;
    }
    Some(value)
}

/// The longest event file name: an unordered one with every number at its longest.
const MAX_NAME_LEN: usize = SEQ_DIGITS + 2 + SEQ_DIGITS + 1 + PID_DIGITS + EVENT_EXTENSION.len();

impl EventFileName {
    /// The name's bytes, written into `buf`, and their length: what `Display` writes, without
    /// the formatting machinery (a reader names every file it reads, a million on a replay).
    fn render(&self, buf: &mut [u8; MAX_NAME_LEN]) -> usize {
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&zero_padded(self.seq, SEQ_DIGITS));
        put(b"-");
        if let Some(ts) = self.unordered_ts_ns {
            put(b"u");
            put(&zero_padded(ts, SEQ_DIGITS));
            put(b"-");
        }
        put(&zero_padded(u64::from(self.pid), PID_DIGITS)[SEQ_DIGITS - PID_DIGITS..]);
        put(EVENT_EXTENSION.as_bytes());
        at
    }
}

/// `n` in decimal, zero-padded to [`SEQ_DIGITS`] (a `u64` has at most that many digits): its
/// last `width` bytes are `n` padded to `width` when `n` has no more digits than that.
fn zero_padded(mut n: u64, width: usize) -> [u8; SEQ_DIGITS] {
    debug_assert!(width <= SEQ_DIGITS && (width == SEQ_DIGITS || n < 10u64.pow(width as u32)));
    let mut digits = [b'0'; SEQ_DIGITS];
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits
}

impl fmt::Display for EventFileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0; MAX_NAME_LEN];
        let len = self.render(&mut buf);
        // Only ASCII digits, `-`, `u` and the extension were written.
        f.write_str(std::str::from_utf8(&buf[..len]).map_err(|_| fmt::Error)?)
    }
}

impl Ord for EventFileName {
    /// The same order as the names' bytes.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.seq, self.unordered_ts_ns.is_some(), self.unordered_ts_ns, self.pid).cmp(&(
            other.seq,
            other.unordered_ts_ns.is_some(),
            other.unordered_ts_ns,
            other.pid,
        ))
    }
}

impl PartialOrd for EventFileName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What a directory entry is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// An event file.
    Event(EventFileName),
    /// A temp file of a writer in progress (or of one that was killed).
    Temp,
    /// Any other dot file: the counter, hookline's own state.
    Hidden,
    /// A bucket of ordered events, by the first `seq` it can hold.
    Bucket(u64),
    /// Anything else: not written by hookline.
    Foreign,
}

/// Classifies a directory entry by name.
pub fn classify(name: &str) -> FileKind {
    if name.starts_with(TEMP_PREFIX) {
        FileKind::Temp
    } else if name.starts_with('.') {
        FileKind::Hidden
    } else if let Some(first) = parse_bucket(name) {
        FileKind::Bucket(first)
    } else {
        EventFileName::parse(name).map_or(FileKind::Foreign, FileKind::Event)
    }
}

/// The first `seq` of the bucket an ordered event of `seq` goes into.
pub fn bucket_of(seq: u64) -> u64 {
    seq - seq % BUCKET_SPAN
}

/// The name of the bucket whose first `seq` is `first` (a multiple of [`BUCKET_SPAN`]).
pub fn bucket_name(first: u64) -> String {
    format!("{BUCKET_PREFIX}{first:0SEQ_DIGITS$}")
}

/// Parses a bucket's name into its first `seq`; `None` for anything else (a number that is
/// not a multiple of [`BUCKET_SPAN`] included).
pub fn parse_bucket(name: &str) -> Option<u64> {
    let first = digits(name.strip_prefix(BUCKET_PREFIX)?, SEQ_DIGITS)?;
    (first % BUCKET_SPAN == 0).then_some(first)
}

/// The name of the counter's witness for a counter value.
pub fn counter_witness(seq: u64) -> String {
    format!("{COUNTER_WITNESS_PREFIX}{seq:0SEQ_DIGITS$}")
}

/// A temp file name, unique per writer pid and nonce.
pub fn temp_name(pid: u32, nonce: u64) -> String {
    format!("{TEMP_PREFIX}{pid}-{nonce:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_as_the_formatting_machinery_would() {
        let numbers = [0, 1, 9, 10, 42, 99_999, 4_294_967_295, 10_u64.pow(19) - 1, u64::MAX];
        for seq in numbers {
            for pid in [0, 7, 123_456, u32::MAX] {
                assert_eq!(
                    EventFileName::ordered(seq, pid).to_string(),
                    format!("{seq:020}-{pid:010}.json")
                );
                for ts in numbers {
                    assert_eq!(
                        EventFileName::unordered(seq, ts, pid).to_string(),
                        format!("{seq:020}-u{ts:020}-{pid:010}.json")
                    );
                }
            }
        }
    }

    #[test]
    fn names_round_trip_and_sort_like_their_bytes() {
        let names = [
            EventFileName::ordered(9, 4_000_000_000),
            EventFileName::ordered(10, 7),
            EventFileName::unordered(10, 5, 3),
            EventFileName::unordered(10, 6, 1),
            EventFileName::ordered(11, 1),
            EventFileName::ordered(u64::MAX, u32::MAX),
        ];
        for pair in names.windows(2) {
            assert!(pair[0] < pair[1]);
            assert!(pair[0].to_string() < pair[1].to_string(), "{} {}", pair[0], pair[1]);
        }
        for name in names {
            assert_eq!(EventFileName::parse(&name.to_string()), Some(name));
        }
        assert_eq!(names[1].to_string(), "00000000000000000010-0000000007.json");
    }

    #[test]
    fn anything_else_is_not_an_event_name() {
        for name in [
            "",
            "x.json",
            "00000000000000000010-0000000007.json.tmp",
            "0000000000000000010-0000000007.json",
            "00000000000000000010-000000007.json",
            "00000000000000000010-9999999999.json",
            "00000000000000000010-u1-0000000007.json",
            "../00000000000000000010-0000000007.json",
            "99999999999999999999-0000000007.json",
        ] {
            assert_eq!(EventFileName::parse(name), None, "{name}");
        }
        assert_eq!(classify(".tmp-1-a"), FileKind::Temp);
        assert_eq!(classify(".seq"), FileKind::Hidden);
        assert_eq!(classify("notes.txt"), FileKind::Foreign);
    }

    #[test]
    fn buckets_are_named_by_their_first_seq_and_sort_like_it() {
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(BUCKET_SPAN - 1), 0);
        assert_eq!(bucket_of(BUCKET_SPAN), BUCKET_SPAN);
        assert_eq!(bucket_of(u64::MAX), u64::MAX - u64::MAX % BUCKET_SPAN);
        assert_eq!(bucket_name(420_000), "b00000000000000420000");
        assert!(bucket_name(BUCKET_SPAN) < bucket_name(100 * BUCKET_SPAN));
        for first in [0, BUCKET_SPAN, bucket_of(u64::MAX)] {
            assert_eq!(classify(&bucket_name(first)), FileKind::Bucket(first));
        }
        for name in ["b00000000000000420001", "b0000000000000042000", "b", "B00000000000000420000"]
        {
            assert_eq!(parse_bucket(name), None, "{name}");
            assert_ne!(classify(name), FileKind::Bucket(420_000), "{name}");
        }
    }
}
