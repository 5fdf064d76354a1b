//! The part of std's start-up the relay keeps, having its own `main` (see the crate's
//! documentation): file descriptors 0, 1 and 2 open, and `SIGPIPE` ignored.

/// Opens `/dev/null` on whichever of file descriptors 0, 1 and 2 is closed, as std does before
/// `main`: a file the relay opens (an event's temp file, the counter) must never get one of
/// those numbers, where a stray write to stderr (an allocation failure's message) would land
/// in it. Then ignores `SIGPIPE`, as std does: a write to a closed pipe (the `--help` text to a
/// stderr nobody reads) fails with `EPIPE` instead of killing the relay.
pub(crate) fn init() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: `fds` is a valid array of three pollfds; a zero timeout never blocks.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0;
    for pollfd in fds {
        let closed = if polled {
            pollfd.revents & libc::POLLNVAL != 0
        } else {
            // poll itself failed (no memory, or a sandbox refusing it): ask each one.
            // SAFETY: F_GETFD on any number is harmless.
            let flags = unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) };
            flags == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        if closed {
            // The lowest free number is the one that is closed, ascending as we go. Nothing
            // else to do if it fails: the relay goes on, as it must.
            // SAFETY: the path is a NUL-terminated literal.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
    // SAFETY: SIG_IGN is a valid disposition for SIGPIPE, and nothing else in this process
    // installs a handler for it.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}
