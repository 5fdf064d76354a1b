//! `hookline-tap`: a transparent terminal between tmux and an agent CLI, for the conformance
//! benchmark (`hookline-bench conformance`).
//!
//!     hookline-tap --log FILE [--ctl FIFO] -- PROGRAM [ARGS...]
//!
//! It runs PROGRAM on a pseudo-terminal of its own, in a new session, and copies bytes both
//! ways, as `ssh` or `script` would: what tmux writes into the pane goes to the CLI, what the
//! CLI draws goes to the pane. The CLI, tmux and every key are real; the tap only watches, and
//! perturbs the line when the benchmark asks it to. It writes one line per fact to `FILE`,
//! each with the relay's clock (nanoseconds since the Unix epoch):
//!
//! | line | when |
//! |---|---|
//! | `child NS PID` | PROGRAM started, as process PID (the leader of its own session) |
//! | `in NS HEX` | bytes arrived from the pane and were passed on |
//! | `drop NS HEX` | bytes arrived and were not passed on (a perturbation) |
//! | `ctl NS COMMAND` | a control command was taken |
//! | `touched NS PATH` | a file was created on a paste's start (`touch-on-paste`) |
//! | `ended NS CODE` | PROGRAM ended (`128 + n` for signal n) |
//! | `exit NS CODE` | the tap exits, with CODE |
//!
//! Control commands, one per line written into the FIFO `--ctl`:
//!
//! * `drop-enter-after-paste`: the first carriage return that arrives after the next
//!   bracketed paste's end is dropped (an Enter the CLI never sees: an eaten Enter);
//! * `delay-output MS`: everything the CLI draws from now on reaches the pane MS later (a slow
//!   redraw; `0` ends it);
//! * `touch-on-paste PATH`: when the next bracketed paste starts, create PATH (a background
//!   command waiting for it ends then: a turn that starts by itself during the paste).

use std::collections::VecDeque;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";
/// How long the pane stays after PROGRAM ended while something it started holds the terminal.
const LINGER: Duration = Duration::from_secs(2);

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn main() {
    match run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("hookline-tap: {e}");
            std::process::exit(2);
        }
    }
}

struct Args {
    log: PathBuf,
    ctl: Option<PathBuf>,
    program: Vec<CString>,
}

fn parse() -> Result<Args, String> {
    let mut args = std::env::args_os().skip(1);
    let (mut log, mut ctl) = (None, None);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--log") => log = args.next().map(PathBuf::from),
            Some("--ctl") => ctl = args.next().map(PathBuf::from),
            Some("--") => break,
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    let program = args
        .map(|a| CString::new(a.as_bytes()).map_err(|_| "an argument holds a NUL".to_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    if program.is_empty() {
        return Err("usage: hookline-tap --log FILE [--ctl FIFO] -- PROGRAM [ARGS...]".into());
    }
    Ok(Args { log: log.ok_or("--log FILE is required")?, ctl, program })
}

/// The log, one line per fact, each written whole.
struct Log(File);

impl Log {
    fn line(&mut self, kind: &str, rest: &str) {
        let _ = self.0.write_all(format!("{kind} {} {rest}\n", now_ns()).as_bytes());
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the line does to the bytes passing through, as the control commands set it.
#[derive(Default)]
struct Perturb {
    /// Drop the first CR after the next paste's end.
    drop_enter: bool,
    /// A paste's end has been seen since `drop_enter` was set.
    paste_ended: bool,
    /// Output is held this long.
    delay: Duration,
    /// Created when the next paste starts.
    touch: Option<PathBuf>,
    /// The last bytes of input, to find the paste markers across reads.
    tail: Vec<u8>,
}

impl Perturb {
    /// Splits an input chunk into what passes and what is dropped, acting on paste starts.
    fn input(&mut self, chunk: &[u8], log: &mut Log) -> (Vec<u8>, Vec<u8>) {
        let (mut pass, mut dropped) = (Vec::with_capacity(chunk.len()), Vec::new());
        for &byte in chunk {
            self.tail.push(byte);
            if self.tail.len() > PASTE_START.len() {
                self.tail.remove(0);
            }
            if self.tail == PASTE_START
                && let Some(path) = self.touch.take()
            {
                match File::create(&path) {
                    Ok(_) => log.line("touched", &path.display().to_string()),
                    Err(e) => log.line("touch-failed", &format!("{} {e}", path.display())),
                }
            }
            if self.drop_enter && self.tail == PASTE_END {
                self.paste_ended = true;
            }
            if self.drop_enter && self.paste_ended && byte == b'\r' {
                self.drop_enter = false;
                self.paste_ended = false;
                dropped.push(byte);
                continue;
            }
            pass.push(byte);
        }
        (pass, dropped)
    }

    fn command(&mut self, line: &str) -> Result<(), String> {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("drop-enter-after-paste"), None) => {
                self.drop_enter = true;
                self.paste_ended = false;
            }
            (Some("delay-output"), Some(ms)) => {
                let ms: u64 = ms.parse().map_err(|_| format!("not milliseconds: {ms}"))?;
                self.delay = Duration::from_millis(ms);
            }
            (Some("touch-on-paste"), Some(path)) => self.touch = Some(PathBuf::from(path)),
            _ => return Err(format!("unknown command {line:?}")),
        }
        Ok(())
    }
}

fn run() -> Result<i32, String> {
    let args = parse()?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.log)
        .map_err(|e| format!("{}: {e}", args.log.display()))?;
    let mut log = Log(file);
    let ctl = match &args.ctl {
        Some(path) => Some(open_fifo(path)?),
        None => None,
    };
    let (master, slave_name) = open_pty()?;
    let size = window_size(0);
    if let Some(size) = size {
        // SAFETY: TIOCSWINSZ with a winsize read from the tap's own terminal.
        unsafe { libc::ioctl(master, libc::TIOCSWINSZ, &size) };
    }
    let raw = RawMode::enter(0);
    let mut argv: Vec<*const libc::c_char> = args.program.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: fork in this single-threaded program; the child only calls async-signal-safe
    // functions on memory prepared before the fork, then execs.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe { child(master, &slave_name, &argv) };
    }
    log.line("child", &pid.to_string());
    let code = relay(master, ctl, pid, &mut log, size);
    drop(raw);
    log.line("exit", &code.to_string());
    Ok(code)
}

/// In the child: a new session whose controlling terminal is the pty's slave, then PROGRAM.
unsafe fn child(master: i32, slave: &CString, argv: &[*const libc::c_char]) -> ! {
    // SAFETY: plain system calls on valid descriptors and strings; exec or _exit ends it.
    unsafe {
        libc::setsid();
        let fd = libc::open(slave.as_ptr(), libc::O_RDWR);
        if fd < 0 {
            libc::_exit(126);
        }
        libc::ioctl(fd, libc::TIOCSCTTY, 0);
        libc::dup2(fd, 0);
        libc::dup2(fd, 1);
        libc::dup2(fd, 2);
        if fd > 2 {
            libc::close(fd);
        }
        libc::close(master);
        libc::execvp(argv[0], argv.as_ptr());
        libc::_exit(127)
    }
}

fn open_pty() -> Result<(i32, CString), String> {
    let fail = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: the standard sequence to open a pseudo-terminal pair.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if master < 0 {
            return Err(fail("posix_openpt"));
        }
        if libc::grantpt(master) != 0 || libc::unlockpt(master) != 0 {
            return Err(fail("grantpt"));
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(master, name.as_mut_ptr(), name.len()) != 0 {
            return Err(fail("ptsname_r"));
        }
        let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_owned();
        Ok((master, name))
    }
}

fn open_fifo(path: &std::path::Path) -> Result<i32, String> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| "a NUL in --ctl")?;
    // SAFETY: mkfifo and open on a valid path; O_RDWR keeps the FIFO open without a writer, so
    // polling it never reports a hang-up.
    unsafe {
        if libc::mkfifo(c.as_ptr(), 0o600) != 0
            && std::io::Error::last_os_error().kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(format!("mkfifo {}: {}", path.display(), std::io::Error::last_os_error()));
        }
        let fd = libc::open(c.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("{}: {}", path.display(), std::io::Error::last_os_error()));
        }
        Ok(fd)
    }
}

fn window_size(fd: i32) -> Option<libc::winsize> {
    // SAFETY: TIOCGWINSZ fills a winsize.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) == 0).then_some(size)
    }
}

/// The tap's own terminal in raw mode, restored on drop.
struct RawMode(Option<libc::termios>);

impl RawMode {
    fn enter(fd: i32) -> RawMode {
        // SAFETY: tcgetattr/tcsetattr on the tap's stdin.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut saved) != 0 {
                return RawMode(None);
            }
            let mut raw = saved;
            libc::cfmakeraw(&mut raw);
            libc::tcsetattr(fd, libc::TCSANOW, &raw);
            RawMode(Some(saved))
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            // SAFETY: restores the settings read at the start.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, saved) };
        }
    }
}

fn read_fd(fd: i32, buf: &mut [u8]) -> isize {
    // SAFETY: read into a buffer of its length.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
}

fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: write from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Copies bytes both ways until PROGRAM ends; returns its exit code.
fn relay(
    master: i32,
    ctl: Option<i32>,
    pid: i32,
    log: &mut Log,
    mut size: Option<libc::winsize>,
) -> i32 {
    let mut perturb = Perturb::default();
    let mut held: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut ctl_buf: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut stdin_open = true;
    let mut status = None;
    let mut ended_at: Option<Instant> = None;
    loop {
        let now = Instant::now();
        while held.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, bytes)) = held.pop_front() {
                write_all(1, &bytes);
            }
        }
        if status.is_none() {
            status = reap(pid, false);
            if let Some(code) = status {
                log.line("ended", &code.to_string());
                ended_at = Some(Instant::now());
            }
        }
        // PROGRAM is gone; what it left holding the terminal keeps the pane alive no longer
        // than a moment.
        if ended_at.is_some_and(|at| at.elapsed() > LINGER) {
            for (_, bytes) in held.drain(..) {
                write_all(1, &bytes);
            }
            return status.unwrap_or(1);
        }
        let timeout = held
            .front()
            .map_or(Duration::from_millis(100), |(due, _)| due.saturating_duration_since(now))
            .min(Duration::from_millis(100));
        let mut fds = vec![libc::pollfd { fd: master, events: libc::POLLIN, revents: 0 }];
        if stdin_open {
            fds.push(libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 });
        }
        if let Some(fd) = ctl {
            fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
        }
        // SAFETY: poll on a live array of pollfds.
        let ready = unsafe {
            libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout.as_millis() as i32)
        };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if let Some(now) = window_size(0)
            && size.is_none_or(|s| s.ws_row != now.ws_row || s.ws_col != now.ws_col)
        {
            // SAFETY: TIOCSWINSZ with the new size of the tap's terminal.
            unsafe { libc::ioctl(master, libc::TIOCSWINSZ, &now) };
            size = Some(now);
        }
        for pfd in &fds {
            if pfd.revents == 0 {
                continue;
            }
            if pfd.fd == master {
                let n = read_fd(master, &mut buf);
                if n <= 0 {
                    // EIO: every holder of the slave is gone.
                    for (_, bytes) in held.drain(..) {
                        write_all(1, &bytes);
                    }
                    if status.is_none() {
                        status = reap(pid, true);
                        log.line("ended", &status.unwrap_or(1).to_string());
                    }
                    return status.unwrap_or(1);
                }
                let bytes = buf[..n as usize].to_vec();
                if perturb.delay.is_zero() && held.is_empty() {
                    write_all(1, &bytes);
                } else {
                    held.push_back((Instant::now() + perturb.delay, bytes));
                }
            } else if pfd.fd == 0 {
                let n = read_fd(0, &mut buf);
                if n <= 0 {
                    stdin_open = false;
                    continue;
                }
                let (pass, dropped) = perturb.input(&buf[..n as usize], log);
                if !pass.is_empty() {
                    log.line("in", &hex(&pass));
                    write_all(master, &pass);
                }
                if !dropped.is_empty() {
                    log.line("drop", &hex(&dropped));
                }
            } else {
                let n = read_fd(pfd.fd, &mut buf);
                if n > 0 {
                    ctl_buf.extend_from_slice(&buf[..n as usize]);
                    while let Some(end) = ctl_buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = ctl_buf.drain(..=end).collect();
                        let line = String::from_utf8_lossy(&line).trim().to_owned();
                        match perturb.command(&line) {
                            Ok(()) => log.line("ctl", &line),
                            Err(e) => log.line("ctl-error", &e),
                        }
                    }
                }
            }
        }
    }
    status.unwrap_or(1)
}

/// PROGRAM's exit code once it has ended (`128 + n` for signal n); `wait` blocks for it.
fn reap(pid: i32, wait: bool) -> Option<i32> {
    let mut raw = 0;
    let flags = if wait { 0 } else { libc::WNOHANG };
    // SAFETY: waitpid on our own child.
    let got = unsafe { libc::waitpid(pid, &mut raw, flags) };
    if got != pid {
        return None;
    }
    if libc::WIFEXITED(raw) {
        Some(libc::WEXITSTATUS(raw))
    } else if libc::WIFSIGNALED(raw) {
        Some(128 + libc::WTERMSIG(raw))
    } else {
        None
    }
}
