//! `hookline daemon`: one live authority per events directory, for every process of the user.
//!
//! The daemon is a running engine ([`crate::engine::Running`]) behind a Unix socket instead of
//! stdin/stdout: one tracker generation, answering the [serve protocol](crate::protocol)
//! on any number of connections at once (up to [`MAX_CLIENTS`]), each with its own
//! [`answer`](crate::serve::server::answer) loop. The engine serializes every act, so an
//! idle's input slot goes to one client only however many ask at once, as a lease.
//!
//! Beside the events in the events directory (all dot files, which readers skip):
//!
//! * [`SOCKET`], mode 0600: the socket;
//! * [`LOCK`]: held locked (`flock`, exclusive) for as long as the daemon runs, so that a second
//!   daemon on the same directory refuses to start ([`Claim::take`]);
//! * [`PID`]: the holder's pid, written atomically, so that the refusal can name it.
//!
//! A socket left by a daemon that died is replaced: whoever holds the lock owns the socket
//! path. A client ([`Client`]) that finds no daemon gets [`ClientError::NotRunning`] and falls
//! back to replayed history, which never authorizes input.
//!
//! ```no_run
//! use hookline::daemon::Client;
//! use hookline::decide::{Ask, Question};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let events_dir = hookline::format::location::events_dir()?;
//! let mut daemon = Client::connect(&events_dir)?;
//! let decision = daemon.decide(&Ask::new("task-42", Question::Input), None)?;
//! if let Some(lease) = &decision.lease {
//!     // The slot is leased to us: deliver the next prompt to task-42, once (or give the
//!     // lease back with daemon.release(lease) if we do not).
//!     # let _ = lease;
//! }
//! # Ok(())
//! # }
//! ```

mod claim;
mod client;
mod conn;
pub mod follow;

use std::io::{self, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::Value;

pub use self::claim::Claim;
pub use self::client::{Client, DaemonInfo, NextEvent};
use crate::engine::{Note, Running};
pub use crate::errors::ClientError;
use crate::errors::{DaemonStartError, Error};
use crate::protocol::Reply;
use crate::serve::answer::Reloader;
use crate::serve::lines::{Lines, Overlong};
use crate::serve::server;

/// The socket's name in the events directory.
pub const SOCKET: &str = ".hookline.sock";
/// The lock file's name in the events directory.
pub const LOCK: &str = ".hookline.lock";
/// The pid file's name in the events directory.
pub const PID: &str = ".hookline.pid";
/// The most connections served at once; one more is told so and closed.
pub const MAX_CLIENTS: usize = 32;
/// The longest socket path: a `sockaddr_un` holds 108 bytes, with the final NUL.
pub const MAX_SOCKET_PATH: usize = 107;

/// How often the accept loop looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);
/// How long a stopping daemon waits for its connections and its feed to end: with
/// [`STOP_POLL`], a stop takes well under a second whatever a request is doing.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// The daemon's socket for an events directory.
pub fn socket_path(events_dir: &Path) -> PathBuf {
    events_dir.join(SOCKET)
}

/// A daemon listening on its socket, not serving yet ([`Listening::serve`]). Dropping it
/// removes the socket (if it is still the one it bound), then the pid file, then the lock.
#[derive(Debug)]
pub struct Listening {
    listener: Option<UnixListener>,
    socket: PathBuf,
    /// The socket's inode, so that only our own socket is ever removed.
    ino: u64,
    // Dropped after the socket is removed: the lock guards the socket path.
    _claim: Claim,
}

impl Claim {
    /// Binds the socket, mode 0600, replacing one a dead daemon left (the claim proves no
    /// live daemon serves it). Refuses a path too long for a socket, and anything that is not
    /// a socket in its place. The process umask is set to 0177 for the instant of the bind
    /// (so the socket is never reachable with a wider mode): call it before other threads
    /// create files.
    pub fn listen(self) -> Result<Listening, DaemonStartError> {
        let socket = socket_path(self.dir());
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(DaemonStartError::SocketPathTooLong { path: socket, max: MAX_SOCKET_PATH });
        }
        match socket.symlink_metadata() {
            Ok(meta) if meta.file_type().is_socket() => {
                std::fs::remove_file(&socket).map_err(|e| Error::io("remove", &socket, e))?;
            }
            Ok(_) => return Err(DaemonStartError::SocketInTheWay { path: socket }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("stat", &socket, e).into()),
        }
        // The socket is created with the umask's mode: make that 0600 from the start rather
        // than leave a window before the chmod.
        // SAFETY: umask has no preconditions.
        let umask = unsafe { libc::umask(0o177) };
        let bound = UnixListener::bind(&socket);
        // SAFETY: as above.
        unsafe { libc::umask(umask) };
        let listener = bound.map_err(|e| Error::io("bind", &socket, e))?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io("chmod", &socket, e))?;
        let ino = socket.symlink_metadata().map_err(|e| Error::io("stat", &socket, e))?.ino();
        Ok(Listening { listener: Some(listener), socket, ino, _claim: self })
    }
}

impl Listening {
    /// The socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Serves until `stopping` says so: each connection gets its own request loop over the
    /// running engine. On the way out the socket is removed first (so new clients fall back
    /// at once), then every answer still waiting is ended with an error (the engine is told
    /// that events stopped), every connection closed, and the connections' threads joined; a
    /// thread still busy half a second later is not waited for (the process may end).
    pub fn serve(
        mut self,
        running: &Arc<Running>,
        reload: Option<Reloader>,
        notes: Arc<dyn Fn(Note) + Send + Sync>,
        stopping: &dyn Fn() -> bool,
    ) -> Result<(), Error> {
        let connections = Arc::new(Connections::default());
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let listener = self.listener.take().expect("a new Listening has its listener");
        let result = loop {
            if stopping() {
                break Ok(());
            }
            match readable(&listener, STOP_POLL) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => break Err(Error::io("poll", &self.socket, e)),
            }
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if is_transient(&e) => {
                    if !matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) {
                        // Out of descriptors or memory: give the running connections a moment
                        // to end rather than spin.
                        thread::sleep(STOP_POLL);
                    }
                    continue;
                }
                Err(e) => break Err(Error::io("accept on", &self.socket, e)),
            };
            threads.retain(|thread| !thread.is_finished());
            if connections.open.load(Ordering::SeqCst) >= MAX_CLIENTS {
                refuse(stream);
                continue;
            }
            match connections.serve(stream, running, reload.clone()) {
                Ok(thread) => threads.push(thread),
                Err(e) => notes(Note::Connection(e)),
            }
        };
        drop(listener);
        self.remove_socket();
        // What follows waits for threads that may be busy (a consult, a delivery): it gets
        // SHUTDOWN_GRACE, then the process ends without it.
        let (running, (done, finished)) = (Arc::clone(running), mpsc::channel());
        thread::spawn(move || {
            running.fail("the daemon is shutting down".into());
            connections.close_all();
            for thread in threads {
                let _ = thread.join();
            }
            let _ = done.send(());
        });
        let _ = finished.recv_timeout(SHUTDOWN_GRACE);
        result
    }

    fn remove_socket(&mut self) {
        if self.socket.symlink_metadata().is_ok_and(|m| m.ino() == self.ino) {
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.remove_socket();
    }
}

/// The connections being served, so that shutting down can close them.
#[derive(Debug, Default)]
struct Connections {
    open: AtomicUsize,
    streams: Mutex<Vec<(u64, UnixStream)>>,
    next: AtomicU64,
}

impl Connections {
    /// Answers `stream`'s requests from a thread of its own.
    fn serve(
        self: &Arc<Self>,
        stream: UnixStream,
        running: &Arc<Running>,
        reload: Option<Reloader>,
    ) -> io::Result<JoinHandle<()>> {
        let reader = BufReader::new(stream.try_clone()?);
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.streams.lock().unwrap_or_else(|p| p.into_inner()).push((id, stream.try_clone()?));
        self.open.fetch_add(1, Ordering::SeqCst);
        let (connections, running) = (Arc::clone(self), Arc::clone(running));
        Ok(thread::spawn(move || {
            let writer = conn::NoSigPipe(stream);
            // A client that goes away mid-reply is its own business; one that sends an
            // over-long line is cut off.
            let lines = Lines::new(reader, Overlong::Close);
            let _ = server::answer(&running, lines, writer, reload);
            connections.open.fetch_sub(1, Ordering::SeqCst);
            let mut streams = connections.streams.lock().unwrap_or_else(|p| p.into_inner());
            // Closed now, even while a wait of its still holds the writer.
            streams
                .iter()
                .filter(|(i, _)| *i == id)
                .for_each(|(_, s)| drop(s.shutdown(std::net::Shutdown::Both)));
            streams.retain(|(i, _)| *i != id);
        }))
    }

    /// Ends every connection: its request loop reads the end of its input.
    fn close_all(&self) {
        for (_, stream) in self.streams.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Tells a connection over the limit why it is closed.
fn refuse(stream: UnixStream) {
    let error = format!(
        "the daemon already serves {MAX_CLIENTS} connections; close one or try again later"
    );
    let mut out = conn::NoSigPipe(stream);
    let _ = writeln!(out, "{}", Reply::error(Value::Null, None, error).to_line());
}

/// Whether `fd` has something to read (for a listener, a connection to accept) within
/// `timeout`. A signal arriving meanwhile is "nothing yet".
fn readable(fd: &impl AsRawFd, timeout: Duration) -> io::Result<bool> {
    let mut poll = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, and the count says one.
    let n = unsafe { libc::poll(&mut poll, 1, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    Ok(n > 0)
}

/// Errors of `accept` that concern one connection, not the listener.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionAborted
    ) || e.raw_os_error().is_some_and(|code| {
        // Out of descriptors or memory: this connection fails, the next may not.
        [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM, libc::EPROTO].contains(&code)
    })
}
