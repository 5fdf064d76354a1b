//! The tmux command line, bounded: every call has a deadline and a cap on what it reads, so a
//! wedged server or a huge pane cannot hang or flood the caller.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::errors::{Error, TmuxProblem};

/// Longest wait for one tmux command.
const DEADLINE: Duration = Duration::from_secs(5);
/// Most bytes read from one tmux command's output (a 500x200 screen of 4-byte characters is
/// 400 KB).
pub const MAX_OUTPUT: usize = 1 << 20;

/// Which tmux server: tmux's own rules (`$TMUX`, else the default socket) or a socket path
/// (`tmux -S PATH`, the `--tmux-socket` option).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Server {
    /// The server's socket; `None`: `$TMUX`, else tmux's default.
    pub socket: Option<PathBuf>,
}

/// A pane resolved once ([`Pane::resolve`]): every command of an act goes to its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The pane, by its id (`%12`) on its server.
    pub pane: Pane,
    /// The target as it was given (`work:1.0`).
    pub named: String,
    /// The pid of its program when it was resolved.
    pub pid: u32,
    /// Whether that program had exited.
    pub dead: bool,
}

impl Resolved {
    /// Whether the pane is still the one resolved: the same id, still there, running the same
    /// program (not exited, not replaced). `Err` says what changed.
    pub fn still_there(&self) -> Result<(), String> {
        match self.pane.resolve() {
            Ok(now) if now.pid == self.pid && !now.dead => Ok(()),
            Ok(now) if now.dead => {
                Err(format!("the program in pane {} has exited", self.pane.target))
            }
            Ok(now) => Err(format!(
                "pane {} runs another program now (pid {} instead of {})",
                self.pane.target, now.pid, self.pid
            )),
            Err(e) => Err(format!("pane {} ({}) is gone: {e}", self.pane.target, self.named)),
        }
    }
}

/// One pane: a server and a target (`session:window.pane`, `%12`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// The server.
    pub server: Server,
    /// The target, as tmux's `-t` takes it.
    pub target: String,
}

impl Pane {
    /// A pane on the server tmux's own rules find.
    pub fn new(target: impl Into<String>) -> Pane {
        Pane { server: Server::default(), target: target.into() }
    }

    /// A pane on the server listening on `socket`.
    pub fn on_socket(socket: impl Into<PathBuf>, target: impl Into<String>) -> Pane {
        Pane { server: Server { socket: Some(socket.into()) }, target: target.into() }
    }

    /// Runs `tmux [-S socket] ARGS...` with `input` on its stdin; its stdout, at most
    /// [`MAX_OUTPUT`] bytes. A failure or a timeout is an [`Error::Tmux`] naming the target.
    pub fn run(
        &self,
        op: &'static str,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let fail = |source: TmuxProblem| Error::Tmux { op, target: self.target.clone(), source };
        let io = |op, source| fail(TmuxProblem::Io { op, source });
        let mut command = Command::new("tmux");
        if let Some(socket) = &self.server.socket {
            command.arg("-S").arg(socket);
        }
        command
            .args(args)
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| io("run", e))?;
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            // load-buffer reads all of stdin before it answers: the write cannot block on it.
            stdin.write_all(bytes).map_err(|e| io("write to", e))?;
        }
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stdout).take(MAX_OUTPUT as u64).read_to_end(&mut buf);
            buf
        });
        let err = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut buf);
            buf
        });
        let deadline = Instant::now() + DEADLINE;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(fail(TmuxProblem::Timeout { after: DEADLINE }));
                }
                Err(e) => return Err(io("wait for", e)),
            }
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
            return Err(fail(TmuxProblem::Failed { status, stderr }));
        }
        Ok(stdout)
    }

    /// The visible screen, wrapped lines joined (`capture-pane -p -J`), as tmux renders it
    /// without attributes.
    pub fn capture(&self) -> Result<String, Error> {
        let bytes = self.run("capture", &["capture-pane", "-p", "-J", "-t", &self.target], None)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The pid of the program the pane runs (`#{pane_pid}`).
    pub fn pid(&self) -> Result<u32, Error> {
        let text = self.display("#{pane_pid}")?;
        text.parse().map_err(|_| Error::Tmux {
            op: "read the pid of",
            target: self.target.clone(),
            source: TmuxProblem::Unexpected { wanted: "a pid", answer: text },
        })
    }

    /// Whether the pane's program has exited (`#{pane_dead}`, with `remain-on-exit`).
    pub fn is_dead(&self) -> Result<bool, Error> {
        Ok(self.display("#{pane_dead}")? == "1")
    }

    /// Resolves the target once, to what the pane is now: its id on its server (`%12`), the
    /// pid of its program and whether that program has exited. A target like `work:1.0` names
    /// whichever pane holds that index when tmux reads it, and tmux renumbers panes when one
    /// closes: every later command goes to [`Resolved::pane`], the id.
    pub fn resolve(&self) -> Result<Resolved, Error> {
        let text = self.display("#{pane_id}\t#{pane_pid}\t#{pane_dead}")?;
        let mut parts = text.split('\t');
        let (Some(id), Some(pid), Some(dead)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Error::Tmux {
                op: "resolve",
                target: self.target.clone(),
                source: TmuxProblem::Unexpected {
                    wanted: "a pane id, pid and state",
                    answer: text,
                },
            });
        };
        let pid = pid.parse().map_err(|_| Error::Tmux {
            op: "resolve",
            target: self.target.clone(),
            source: TmuxProblem::Unexpected { wanted: "a pid", answer: pid.to_owned() },
        })?;
        if !id.starts_with('%') {
            return Err(Error::Tmux {
                op: "resolve",
                target: self.target.clone(),
                source: TmuxProblem::Unexpected { wanted: "a pane id", answer: id.to_owned() },
            });
        }
        let pane = Pane { server: self.server.clone(), target: id.to_owned() };
        Ok(Resolved { pane, named: self.target.clone(), pid, dead: dead == "1" })
    }

    fn display(&self, format: &str) -> Result<String, Error> {
        let bytes =
            self.run("query", &["display-message", "-p", "-t", &self.target, format], None)?;
        Ok(String::from_utf8_lossy(&bytes).trim().to_owned())
    }

    /// Types `text` as one bracketed paste: loaded into a buffer named `buffer` from stdin (no
    /// key names are interpreted), pasted with `-p` (bracketed, when the program asked for
    /// it) and deleted (`-d`), in one tmux command so that nothing can come in between. Line
    /// feeds go as carriage returns, as a terminal pastes them; inside a bracketed paste the
    /// program reads them as newlines, not as Enter.
    pub(crate) fn paste(&self, buffer: &str, text: &str) -> Result<(), Error> {
        let args = [
            "load-buffer",
            "-b",
            buffer,
            "-",
            ";",
            "paste-buffer",
            "-p",
            "-d",
            "-b",
            buffer,
            "-t",
            &self.target,
        ];
        self.run("paste into", &args, Some(text.as_bytes())).map(drop)
    }

    /// Presses Enter.
    pub(crate) fn enter(&self) -> Result<(), Error> {
        self.run("send Enter to", &["send-keys", "-t", &self.target, "Enter"], None).map(drop)
    }
}
