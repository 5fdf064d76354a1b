//! Request lines, read with a bound: however long a line its sender writes, at most
//! [`MAX_LINE`] bytes of it are ever held.
//!
//! A line longer than that is refused as it is read ([`Line::TooLong`]), not after: what
//! happens next is the caller's choice ([`Overlong`]). A socket client that sends one is
//! disconnected (it may be sending forever); `hookline serve`'s stdin, whose writer owns the
//! process, has the rest of the line skipped, read and dropped a buffer at a time, and goes on
//! with the next one.

use std::io::{self, BufRead};

use crate::protocol::MAX_LINE;

/// What to do after an over-long line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlong {
    /// Read no more: the input ends there (a socket client is disconnected).
    Close,
    /// Drop the rest of the line, unread into memory, and go on with the next one.
    Skip,
}

/// One read of [`Lines::next_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line, without its newline (the last line of the input may have none).
    Request(&'a [u8]),
    /// A line longer than [`MAX_LINE`] bytes, not kept. `closed`: the input ends here
    /// ([`Overlong::Close`]); otherwise the next read starts after this line's end.
    TooLong {
        /// No more is read from this input.
        closed: bool,
    },
    /// The end of the input.
    End,
}

/// A reader of request lines, each at most [`MAX_LINE`] bytes (its newline aside).
#[derive(Debug)]
pub struct Lines<R> {
    input: R,
    overlong: Overlong,
    line: Vec<u8>,
    /// Inside an over-long line: its rest is dropped before the next line is read.
    skipping: bool,
    closed: bool,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `input`; an over-long one is handled as `overlong` says.
    pub fn new(input: R, overlong: Overlong) -> Lines<R> {
        Lines { input, overlong, line: Vec::new(), skipping: false, closed: false }
    }

    /// The next line. An I/O error of the input is returned as it is.
    pub fn next_line(&mut self) -> io::Result<Line<'_>> {
        if self.closed {
            return Ok(Line::End);
        }
        if self.skipping {
            self.skipping = false;
            if !self.skip_line()? {
                return Ok(Line::End);
            }
        }
        self.line.clear();
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                // The end: a last line without its newline is a line too.
                return Ok(if self.line.is_empty() {
                    Line::End
                } else {
                    Line::Request(&self.line)
                });
            }
            let newline = memchr(available);
            let piece = newline.unwrap_or(available.len());
            if self.line.len() + piece > MAX_LINE {
                // Refused now, before more of it is held.
                let used = newline.map_or(available.len(), |i| i + 1);
                self.input.consume(used);
                self.line.clear();
                let closed = self.overlong == Overlong::Close;
                self.closed = closed;
                self.skipping = !closed && newline.is_none();
                return Ok(Line::TooLong { closed });
            }
            self.line.extend_from_slice(&available[..piece]);
            match newline {
                Some(i) => {
                    self.input.consume(i + 1);
                    return Ok(Line::Request(&self.line));
                }
                None => {
                    let used = available.len();
                    self.input.consume(used);
                }
            }
        }
    }

    /// Drops bytes up to and including the next newline; `false` when the input ended first.
    fn skip_line(&mut self) -> io::Result<bool> {
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(false);
            }
            match memchr(available) {
                Some(i) => {
                    self.input.consume(i + 1);
                    return Ok(true);
                }
                None => {
                    let used = available.len();
                    self.input.consume(used);
                }
            }
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor, Read};

    use super::*;

    /// Every read until the end, as owned values.
    fn all(input: &[u8], overlong: Overlong) -> Vec<Result<String, bool>> {
        let mut lines = Lines::new(BufReader::with_capacity(4096, Cursor::new(input)), overlong);
        let mut out = Vec::new();
        loop {
            match lines.next_line().unwrap() {
                Line::Request(bytes) => out.push(Ok(String::from_utf8_lossy(bytes).into_owned())),
                Line::TooLong { closed } => out.push(Err(closed)),
                Line::End => return out,
            }
        }
    }

    #[test]
    fn lines_come_without_their_newline_and_a_last_line_without_one_counts() {
        assert_eq!(
            all(b"a\n\nbc\nd", Overlong::Skip),
            [Ok("a".into()), Ok("".into()), Ok("bc".into()), Ok("d".into())]
        );
        assert_eq!(all(b"", Overlong::Skip), []);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_refused() {
        let mut input = vec![b'x'; MAX_LINE];
        input.push(b'\n');
        input.extend(vec![b'y'; MAX_LINE + 1]);
        input.extend(b"\nnext\n");
        let read = all(&input, Overlong::Skip);
        assert_eq!(
            read.len(),
            3,
            "{:?}",
            read.iter().map(|r| r.as_ref().map(String::len)).collect::<Vec<_>>()
        );
        assert_eq!(read[0].as_ref().map(String::len), Ok(MAX_LINE));
        assert_eq!(read[1], Err(false));
        assert_eq!(read[2], Ok("next".into()));
    }

    #[test]
    fn skipping_goes_on_with_the_next_line_and_closing_reads_no_more() {
        let mut input = b"first\n".to_vec();
        input.extend(vec![b'z'; 3 * MAX_LINE]);
        input.extend(b"\nafter\n");
        assert_eq!(
            all(&input, Overlong::Skip),
            [Ok("first".into()), Err(false), Ok("after".into())]
        );
        assert_eq!(all(&input, Overlong::Close), [Ok("first".into()), Err(true)]);
        // Cut at the end, no newline: refused, then the end.
        assert_eq!(all(&vec![b'z'; MAX_LINE + 10], Overlong::Skip), [Err(false)]);
    }

    /// An endless input: `n` bytes of `x`, never a newline, counting what was read.
    struct Endless {
        left: u64,
        read: std::rc::Rc<std::cell::Cell<u64>>,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(b'x');
            self.left -= n as u64;
            self.read.set(self.read.get() + n as u64);
            Ok(n)
        }
    }

    #[test]
    fn an_endless_line_is_refused_after_the_limit_and_never_held() {
        let read = std::rc::Rc::new(std::cell::Cell::new(0));
        let endless = Endless { left: 64 * MAX_LINE as u64, read: read.clone() };
        let mut lines = Lines::new(BufReader::new(endless), Overlong::Close);
        assert_eq!(lines.next_line().unwrap(), Line::TooLong { closed: true });
        assert!(read.get() <= MAX_LINE as u64 + 8192, "read {} bytes", read.get());
        assert_eq!(lines.next_line().unwrap(), Line::End);
        assert!(lines.line.capacity() <= 2 * MAX_LINE, "{}", lines.line.capacity());

        let read = std::rc::Rc::new(std::cell::Cell::new(0));
        let endless = Endless { left: 64 * MAX_LINE as u64, read: read.clone() };
        let mut lines = Lines::new(BufReader::new(endless), Overlong::Skip);
        assert_eq!(lines.next_line().unwrap(), Line::TooLong { closed: false });
        assert_eq!(lines.next_line().unwrap(), Line::End);
        assert_eq!(read.get(), 64 * MAX_LINE as u64, "skipped to the end");
        assert!(lines.line.capacity() <= 2 * MAX_LINE, "{}", lines.line.capacity());
    }
}
