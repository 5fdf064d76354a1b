//! Reading the hook's input: bounded in size and in time.
//!
//! Some Claude Code versions leave a hook's stdin open without ever sending EOF, so the relay
//! stops reading as soon as one complete JSON value has arrived, and gives up at a deadline if
//! none ever completes. Input that cannot be the start of a JSON value (binary garbage, plain
//! text) is read to EOF, the cap or the deadline, so that it is kept whole. Input beyond
//! [`MAX_INPUT_BYTES`] is read (so the host never blocks on a full pipe) but not kept: the
//! event is marked truncated.
//!
//! Stdin is read straight into the buffer that is later written out (no intermediate copy),
//! and a JSON object is validated as it arrives ([`crate::validate`]), so that a large payload
//! is looked at once, while the host is still writing it, and not parsed a second time.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

use hookline_relay::envelope::MAX_INPUT_BYTES;

use crate::validate::{Fed, Validator};

/// How long the relay waits for input to complete: 2 s.
pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(2);

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The first read's size, and the least a read asks for: a pipe's default capacity.
const READ_CHUNK: usize = 64 << 10;

/// What a pipe on stdin is grown to once a first read fills a default pipe: Linux's default
/// limit for unprivileged processes (`/proc/sys/fs/pipe-max-size`). A large payload then
/// arrives in a few reads instead of one per 64 KiB, each a wake-up of the relay and the host.
const BIG_PIPE: libc::c_int = 1 << 20;

/// Bounds for reading input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The most bytes kept.
    pub(crate) max_bytes: usize,
    /// The longest time spent reading.
    pub(crate) deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bytes: MAX_INPUT_BYTES, deadline: DEFAULT_DEADLINE }
    }
}

/// What was read.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Input {
    /// The bytes kept (at most `max_bytes`), with a leading UTF-8 BOM removed.
    pub(crate) bytes: Vec<u8>,
    /// Where the first complete JSON value ends in `bytes`, when one was seen.
    pub(crate) json_end: Option<usize>,
    /// The value ending at `json_end` is an object the scanner checked as it read it: serde_json
    /// accepts it, given it is UTF-8 ([`crate::validate`]). When false, nothing is known.
    pub(crate) vouched: bool,
    /// Bytes seen in total, including any beyond the cap and the BOM.
    pub(crate) total: u64,
    /// More input arrived than was kept.
    pub(crate) truncated: bool,
    /// The deadline passed before the input ended or a JSON value completed.
    pub(crate) timed_out: bool,
}

impl Input {
    /// Input given whole (Codex's `notify` passes its JSON as the last argument).
    pub(crate) fn from_bytes(bytes: &[u8], max_bytes: usize) -> Input {
        let mut reader = Reader::new(max_bytes);
        reader.feed(bytes);
        reader.finish(false)
    }
}

/// Reads a file descriptor (stdin) until a JSON value completes, EOF, or the deadline.
pub(crate) fn read_fd(fd: BorrowedFd<'_>, limits: Limits) -> io::Result<Input> {
    let start = Instant::now();
    let fd = fd.as_raw_fd();
    let mut reader = Reader::new(limits.max_bytes);
    let mut spill = Vec::new();
    let mut first = true;
    loop {
        let Some(remaining) = limits.deadline.checked_sub(start.elapsed()) else {
            return Ok(reader.finish(true));
        };
        if !wait_readable(fd, remaining)? {
            return Ok(reader.finish(true));
        }
        let (n, done) = match reader.read_once(fd, &mut spill) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 || done {
            return Ok(reader.finish(false));
        }
        if std::mem::take(&mut first) && n >= READ_CHUNK {
            // A full default pipe: more is coming. Not a pipe, or over the limit: no matter.
            // SAFETY: F_SETPIPE_SZ takes an int; on any other file it fails with EBADF/EINVAL.
            unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, BIG_PIPE) };
        }
    }
}

/// The buffer a large payload is read into, at least.
const BIG_BUFFER: usize = 4 << 20;

/// Faults in, in one call, the pages of `buf`'s spare capacity that the bytes waiting in the
/// pipe `fd` will fill: one `madvise` instead of a page fault per 4 KiB page, each dear in a VM.
/// Only a hint: not a pipe, or a kernel without `MADV_POPULATE_WRITE` (before 5.14), and the
/// pages fault in as the read fills them.
#[cfg(target_os = "linux")]
fn prefault_for_pipe(fd: i32, buf: &mut Vec<u8>) {
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which is valid.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut waiting) } != 0 || waiting <= 0 {
        return;
    }
    let spare = buf.spare_capacity_mut();
    let len = spare.len().min(waiting as usize);
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let start = spare.as_mut_ptr() as usize;
    // Whole pages inside the spare capacity only: the one the data starts in may hold
    // bytes already kept, and is faulted in already.
    let (first, end) = (start.next_multiple_of(page), (start + len) / page * page);
    if end > first {
        // SAFETY: the range lies inside this Vec's allocation; populating it writes nothing
        // a read would not overwrite, and fails harmlessly where unsupported.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_POPULATE_WRITE)
        };
    }
}

/// One `read(2)` into `buf`'s spare capacity; the bytes read are appended to `buf`.
fn read_into(fd: i32, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    let len = spare.len().min(max);
    // SAFETY: the kernel writes at most `len` bytes into the spare capacity, which is at least
    // that long; they are initialized once read returns their count.
    let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), len) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    // SAFETY: `n <= len` bytes after the length were just written by read.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// Waits until `fd` can be read without blocking (data, EOF or an error), at most `timeout`.
fn wait_readable(fd: i32, timeout: Duration) -> io::Result<bool> {
    let mut pollfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let millis = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
    loop {
        // SAFETY: `pollfd` is a valid, initialized pollfd and we pass a count of one.
        let ret = unsafe { libc::poll(&mut pollfd, 1, millis) };
        if ret >= 0 {
            return Ok(ret > 0);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Accumulates input and tracks whether one JSON value has completed.
struct Reader {
    input: Input,
    max_bytes: usize,
    bom_checked: bool,
    scanner: Scanner,
}

/// Finds where the first JSON value ends, across chunks.
struct Scanner {
    scan: Scan,
    /// Bytes scanned so far, after the BOM (kept or not).
    offset: usize,
    /// The value that ended is an object [`Validator`] vouched for.
    vouched: bool,
    /// Checks the top-level object while the scan is [`Scan::Object`].
    validator: Validator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Before the first non-whitespace byte.
    Start,
    /// Inside a top-level object, checked as it goes by the scanner's [`Validator`].
    Object,
    /// Inside an object or array.
    Nested { depth: u32, in_string: bool, escaped: bool },
    /// Inside a top-level string.
    TopString { escaped: bool },
    /// Inside a top-level number or literal: it ends at whitespace or EOF. `number`: every
    /// byte so far can belong to a number; `literal`: the `true`, `false` or `null` the bytes
    /// so far begin; `len`: bytes so far.
    TopScalar { number: bool, literal: Option<&'static [u8]>, len: usize },
    /// Not the start of any JSON value: no value will complete, so read on to EOF (or the
    /// deadline) and keep it all, rather than stop at some whitespace byte in the middle.
    Garbage,
    /// One value has completed.
    Done,
}

/// Where a value ended, relative to the byte just scanned.
enum Ended {
    No,
    /// The byte just scanned closed the value.
    After,
    /// The value ended before the byte just scanned (whitespace after a scalar).
    Before,
}

const LITERALS: [&[u8]; 3] = [b"true", b"false", b"null"];

/// Finds the quote that closes a string in `bytes`, the string's content so far; `escaped`:
/// whether `bytes[0]` follows an unescaped backslash. `Ok(index of the quote)`, or, when the
/// string goes on past `bytes`, `Err(whether the next byte is escaped)`.
fn skip_string(bytes: &[u8], escaped: bool) -> Result<usize, bool> {
    // Whether the byte after `bytes[from..to]` is escaped: an odd run of backslashes before
    // it, counting the carried backslash when the run starts at `from`.
    let escapes = |from: usize, to: usize, carried: bool| {
        let run = bytes[from..to].iter().rev().take_while(|&&b| b == b'\\').count();
        (run + usize::from(carried && run == to - from)) % 2 == 1
    };
    let mut from = 0;
    let mut carried = escaped;
    while let Some(at) = hookline_relay::find::byte(b'"', &bytes[from..]) {
        let quote = from + at;
        if !escapes(from, quote, carried) {
            return Ok(quote);
        }
        from = quote + 1;
        carried = false;
    }
    Err(escapes(from, bytes.len(), carried))
}

impl Scan {
    /// The same scanner state, inside a string, with `escaped` set.
    fn with_escaped(self, escaped: bool) -> Scan {
        match self {
            Scan::Nested { depth, in_string: true, .. } => {
                Scan::Nested { depth, in_string: true, escaped }
            }
            Scan::TopString { .. } => Scan::TopString { escaped },
            other => other,
        }
    }

    /// A top-level scalar after one more (non-whitespace) byte: still a possible number or
    /// literal, or garbage.
    fn push(self, byte: u8) -> Scan {
        let Scan::TopScalar { number, literal, len } = self else { return self };
        let number = number
            && match len {
                0 => matches!(byte, b'0'..=b'9' | b'-'),
                _ => matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'),
            };
        let literal = literal.filter(|l| l.get(len) == Some(&byte));
        if number || literal.is_some() {
            Scan::TopScalar { number, literal, len: len + 1 }
        } else {
            Scan::Garbage
        }
    }
}

impl Reader {
    fn new(max_bytes: usize) -> Reader {
        Reader {
            input: Input::default(),
            max_bytes,
            bom_checked: false,
            scanner: Scanner {
                scan: Scan::Start,
                offset: 0,
                vouched: false,
                validator: Validator::after_open_brace(),
            },
        }
    }

    /// Takes a chunk; returns true once a JSON value has completed.
    fn feed(&mut self, mut chunk: &[u8]) -> bool {
        self.input.total += chunk.len() as u64;
        if !self.bom_checked && !chunk.is_empty() {
            self.bom_checked = true;
            chunk = chunk.strip_prefix(BOM).unwrap_or(chunk);
        }
        let end = self.scanner.scan(chunk);
        self.keep(chunk);
        self.ended(end)
    }

    /// Reads once from `fd`: straight into the kept bytes while they are under the cap, into
    /// `spill` (counted and scanned, not kept) beyond it. Returns the bytes read (0 at EOF)
    /// and whether a JSON value has completed.
    fn read_once(&mut self, fd: i32, spill: &mut Vec<u8>) -> io::Result<(usize, bool)> {
        let bytes = &mut self.input.bytes;
        let room = self.max_bytes - bytes.len();
        if room == 0 {
            spill.clear();
            spill.reserve(READ_CHUNK);
            let n = read_into(fd, spill, READ_CHUNK)?;
            return Ok((n, n > 0 && self.feed(spill)));
        }
        if bytes.len() == bytes.capacity() {
            if bytes.len() < READ_CHUNK {
                bytes.reserve(READ_CHUNK.min(room));
            } else {
                // A large payload is arriving: room for 4 MiB at once (address space only),
                // rather than a move at every doubling.
                bytes.reserve(bytes.len().max(BIG_BUFFER.saturating_sub(bytes.len())).min(room));
            }
        }
        let mut from = bytes.len();
        if from >= READ_CHUNK {
            #[cfg(target_os = "linux")]
            prefault_for_pipe(fd, bytes);
        }
        let n = read_into(fd, bytes, room)?;
        self.input.total += n as u64;
        if n > 0 && !self.bom_checked {
            self.bom_checked = true;
            if bytes.starts_with(BOM) {
                bytes.drain(..BOM.len());
                from = 0;
            }
        }
        let end = self.scanner.scan(&self.input.bytes[from..]);
        Ok((n, self.ended(end)))
    }

    /// Records where a value ended, if one did; true when one did.
    fn ended(&mut self, end: Option<usize>) -> bool {
        match end {
            Some(end) => {
                // A value that ends beyond the cap was not kept whole: not usable.
                self.input.json_end = Some(end).filter(|&end| end <= self.max_bytes);
                true
            }
            None => false,
        }
    }

    fn keep(&mut self, chunk: &[u8]) {
        let room = self.max_bytes - self.input.bytes.len();
        if chunk.len() > room {
            self.input.truncated = true;
        }
        self.input.bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }

    fn finish(mut self, timed_out: bool) -> Input {
        let scanner = &self.scanner;
        let complete = scanner.scan == Scan::Done;
        if !complete && !timed_out && matches!(scanner.scan, Scan::TopScalar { .. }) {
            // EOF ends a top-level scalar.
            self.input.json_end = Some(scanner.offset).filter(|&end| end <= self.max_bytes);
        }
        self.input.vouched = complete && scanner.vouched && self.input.json_end.is_some();
        self.input.timed_out = timed_out && !complete;
        self.input
    }
}

impl Scanner {
    /// Scans the next chunk; where the value ended (counted from the first byte scanned), if
    /// it did in this chunk.
    fn scan(&mut self, chunk: &[u8]) -> Option<usize> {
        let mut end = None;
        let mut i = 0;
        while i < chunk.len() {
            if self.scan == Scan::Object {
                match self.validator.feed(&chunk[i..]) {
                    Fed::More => break,
                    Fed::Ended(len) => {
                        self.scan = Scan::Done;
                        self.vouched = true;
                        end = Some(self.offset + i + len);
                        break;
                    }
                    // Not valid (or too deep) from this byte on: the structural scan goes on
                    // from here, and serde_json will say what is wrong.
                    Fed::Aside { at, depth, in_string, escaped } => {
                        self.scan = Scan::Nested { depth, in_string, escaped };
                        i += at;
                    }
                }
            }
            // The bulk of a large payload is string content (file text, tool output), full of
            // escapes (`\n`, `\"`): jump from quote to quote instead of stepping through every
            // byte, and tell an escaped quote by the run of backslashes before it.
            match self.scan {
                Scan::Nested { in_string: true, escaped, .. } | Scan::TopString { escaped } => {
                    match skip_string(&chunk[i..], escaped) {
                        Ok(quote) => {
                            i += quote;
                            self.scan = self.scan.with_escaped(false);
                        }
                        Err(escaped) => {
                            self.scan = self.scan.with_escaped(escaped);
                            break;
                        }
                    }
                }
                Scan::Garbage => break,
                _ => {}
            }
            match self.step(chunk[i]) {
                Ended::No => {}
                Ended::After => end = Some(self.offset + i + 1),
                Ended::Before => end = Some(self.offset + i),
            }
            if end.is_some() {
                break;
            }
            i += 1;
        }
        self.offset += chunk.len();
        end
    }

    /// Advances the scanner by one byte.
    fn step(&mut self, byte: u8) -> Ended {
        let ws = matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        self.scan = match self.scan {
            Scan::Done => return Ended::No,
            Scan::Start if ws => Scan::Start,
            Scan::Start => match byte {
                b'{' => Scan::Object,
                b'[' => Scan::Nested { depth: 1, in_string: false, escaped: false },
                b'"' => Scan::TopString { escaped: false },
                _ => {
                    let literal = LITERALS.into_iter().find(|l| l[0] == byte);
                    Scan::TopScalar { number: true, literal, len: 0 }.push(byte)
                }
            },
            Scan::TopString { escaped: true } => Scan::TopString { escaped: false },
            Scan::TopString { escaped: false } => match byte {
                b'\\' => Scan::TopString { escaped: true },
                b'"' => Scan::Done,
                _ => Scan::TopString { escaped: false },
            },
            Scan::TopScalar { number, literal, len } if ws => {
                if number || literal.is_some_and(|l| l.len() == len) {
                    self.scan = Scan::Done;
                    return Ended::Before;
                }
                Scan::Garbage
            }
            scalar @ Scan::TopScalar { .. } => scalar.push(byte),
            Scan::Garbage => Scan::Garbage,
            Scan::Object => unreachable!("objects are scanned by the validator"),
            Scan::Nested { depth, in_string: true, escaped } => Scan::Nested {
                depth,
                in_string: byte != b'"' || escaped,
                escaped: !escaped && byte == b'\\',
            },
            Scan::Nested { depth, in_string: false, .. } => match byte {
                b'"' => Scan::Nested { depth, in_string: true, escaped: false },
                b'{' | b'[' => Scan::Nested { depth: depth + 1, in_string: false, escaped: false },
                b'}' | b']' if depth == 1 => Scan::Done,
                b'}' | b']' => Scan::Nested { depth: depth - 1, in_string: false, escaped: false },
                _ => Scan::Nested { depth, in_string: false, escaped: false },
            },
        };
        if self.scan == Scan::Done { Ended::After } else { Ended::No }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xorshift::Rng;

    #[test]
    fn strings_full_of_backslashes_and_quotes_end_where_serde_says_in_any_chunking() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let alphabet = ['\\', '"', 'a', ' ', '}', '{', '\n', 'é'];
        for round in 0..2000 {
            let mut object = serde_json::Map::new();
            for key in 0..rng.below(4) + 1 {
                let len = rng.below(40);
                let text: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
                object.insert(format!("k{key}\\\""), serde_json::Value::String(text));
            }
            let value = serde_json::Value::Object(object);
            let json = match round % 2 {
                0 => serde_json::to_string(&value).unwrap(),
                // A top-level string takes the same path.
                _ => serde_json::to_string(&value.to_string()).unwrap(),
            };
            let text = format!("{json} \"\\\" tail");
            let bytes = text.as_bytes();
            let mut reader = Reader::new(1 << 20);
            let mut at = 0;
            let mut done = false;
            while at < bytes.len() && !done {
                let next = (at + rng.below(8) + 1).min(bytes.len());
                done = reader.feed(&bytes[at..next]);
                at = next;
            }
            let input = reader.finish(false);
            assert_eq!(input.json_end, Some(json.len()), "round {round}: {text}");
        }
    }

    fn whole(text: &[u8]) -> Input {
        Input::from_bytes(text, 1 << 20)
    }

    #[test]
    fn an_object_completes_at_its_closing_brace_even_with_more_after_it() {
        let text = br#"  {"a": "}\"{", "b": [1, {"c": 2}]} trailing"#;
        let input = whole(text);
        let end = input.json_end.unwrap();
        assert_eq!(&input.bytes[..end], &text[..text.len() - " trailing".len()]);
        assert!(!input.truncated && !input.timed_out);
    }

    #[test]
    fn a_value_split_over_many_chunks_completes_once() {
        let text = br#"{"k": "v\\", "n": [1,2,3]}"#;
        let mut reader = Reader::new(1 << 20);
        for (i, b) in text.iter().enumerate() {
            assert_eq!(reader.feed(&[*b]), i + 1 == text.len(), "byte {i}");
        }
    }

    #[test]
    fn a_value_ends_at_the_same_byte_wherever_the_reads_split_it() {
        let texts: [&[u8]; 3] = [
            br#"{"a": "x\"y\\", "b": ["}\"", {"c": "\\\"]"}], "d": "\\"} tail"#,
            br#""\\\"a\\" tail"#,
            br#"[{"k": "\u0022]\\"}, "}"] tail"#,
        ];
        for text in texts {
            let expected = text.len() - b" tail".len();
            for split in 0..=text.len() {
                let mut reader = Reader::new(1 << 20);
                let done = reader.feed(&text[..split]) || reader.feed(&text[split..]);
                assert!(done, "split at {split}");
                assert_eq!(reader.input.json_end, Some(expected), "split at {split}");
            }
        }
    }

    #[test]
    fn a_bom_is_stripped_and_counted() {
        let input = whole(b"\xEF\xBB\xBF{}");
        assert_eq!(input.bytes, b"{}");
        assert_eq!(input.json_end, Some(2));
        assert_eq!(input.total, 5);
    }

    #[test]
    fn scalars_end_at_whitespace_or_eof_and_strings_at_their_quote() {
        assert_eq!(whole(b"123 456").json_end, Some(3));
        assert_eq!(whole(b"true").json_end, Some(4));
        assert_eq!(whole(br#""a\"b" x"#).json_end, Some(6));
        assert_eq!(whole(b"").json_end, None);
        assert_eq!(whole(b"{\"open\": 1").json_end, None);
    }

    #[test]
    fn garbage_is_no_value_and_is_read_to_its_end() {
        for text in
            [&b"hello world"[..], b"\xff\xfe 1 2", b"tru e", b"nul", b"12a 3", b"+1 x", b"e5 x"]
        {
            let mut reader = Reader::new(1 << 20);
            assert!(!reader.feed(text), "{text:?} never completes");
            let input = reader.finish(false);
            assert_eq!(input.bytes, text);
            assert!(
                input.json_end.is_none() || !text.contains(&b' '),
                "{text:?}: {:?}",
                input.json_end
            );
        }
        assert_eq!(whole(b"null \xff").json_end, Some(4));
        assert_eq!(whole(b"-1.5e3\nx").json_end, Some(6));
    }

    #[test]
    fn input_beyond_the_cap_is_counted_but_not_kept() {
        let text = format!("{{\"x\": \"{}\"}}", "y".repeat(100));
        let input = Input::from_bytes(text.as_bytes(), 10);
        assert_eq!(input.bytes.len(), 10);
        assert!(input.truncated);
        assert_eq!(input.json_end, None, "a value that ends beyond the cap is not usable");
        assert_eq!(input.total, text.len() as u64);
    }
}
