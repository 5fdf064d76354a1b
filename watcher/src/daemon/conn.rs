//! Writing to a socket whose reader may be gone, without the signal that would kill us.

use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// A stream written with `MSG_NOSIGNAL`: a peer gone away is an `EPIPE` error, never a
/// `SIGPIPE` (which `hookline` leaves at its default, killing the process, for `watch | head`).
#[derive(Debug)]
pub(super) struct NoSigPipe(pub(super) UnixStream);

impl Write for NoSigPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` bytes, and the descriptor is open for as
        // long as `self.0` lives.
        let n = unsafe {
            libc::send(self.0.as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL)
        };
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
