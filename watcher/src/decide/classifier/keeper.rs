//! A command run under a keeper, so that everything it starts can be killed, even a process
//! that left its process group (`setsid`) or was orphaned on purpose (a double fork).
//!
//! A process group is not enough: `setsid` takes a process out of it, and a process whose
//! parent exits is adopted by init, out of anyone's reach. So the command is not our child:
//! a *keeper* is, a fork of this process that runs no other code. The keeper
//!
//! * marks itself a child subreaper (`PR_SET_CHILD_SUBREAPER`, Linux): every process the
//!   command leaves behind, however it detached itself, is reparented to the keeper rather
//!   than to init;
//! * starts the command in a process group of its own, its stdin and stdout the pipes it is
//!   given, its stderr `/dev/null`; tells the runner its pid, then its exit status, without
//!   reaping it (its pid, the group's id, stays taken);
//! * and when the runner closes the control pipe (or when the runner's process ends, which
//!   closes it too) kills the command's group and then, again and again, every child it has
//!   (`/proc/thread-self/children`; the children of a child killed come to it next), reaping
//!   them, until it has no child left; then it exits.
//!
//! Between `fork` and `exit` (or `exec`) the keeper and the command run only async-signal-safe
//! system calls on memory prepared before the fork: no allocation, no lock, no panic.
//!
//! Without `/proc/thread-self/children` (a kernel built without `CONFIG_PROC_CHILDREN`), or
//! outside Linux, the keeper kills the group only and waits at most [`SWEEP_GIVE_UP`] for the
//! rest to go: a detached process can then outlive the consult, as with a group alone.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// How long a keeper that cannot list its children waits for them to go after killing the
/// group, before it gives up on them.
pub(crate) const SWEEP_GIVE_UP: Duration = Duration::from_millis(200);

/// A report of the keeper on the status pipe: a tag byte, then a native-endian `i32`.
const REPORT: usize = 5;
/// `P`: the command's pid.
const PID: u8 = b'P';
/// `S`: the command exited: its exit code, or minus the signal that killed it.
const STATUS: u8 = b'S';

/// A command running under its keeper. Dropping it kills everything the command started.
#[derive(Debug)]
pub(crate) struct Kept {
    keeper: libc::pid_t,
    /// The command's pid, and its process group's id.
    pub(crate) pid: libc::pid_t,
    /// The command's stdin.
    pub(crate) stdin: Option<File>,
    /// The command's stdout.
    pub(crate) stdout: Option<File>,
    status: File,
    /// Closed: the keeper kills everything and exits.
    control: Option<OwnedFd>,
    exited: Option<Option<i32>>,
}

/// The fds a keeper keeps, and the command's argv: everything it touches, made before the fork.
struct Prepared<'a> {
    argv: &'a [*const libc::c_char],
    stdin: RawFd,
    stdout: RawFd,
    null: RawFd,
    exec_error: RawFd,
    status: RawFd,
    control: RawFd,
}

impl Kept {
    /// Starts `argv` under a keeper. An error when it could not be started (the command not
    /// found, not executable, out of processes...): nothing is left running then.
    pub(crate) fn spawn(argv: &[String]) -> io::Result<Kept> {
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(std::ffi::OsStr::new(a).as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the command")
            })?;
        if args.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command"));
        }
        let mut pointers: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        pointers.push(std::ptr::null());
        let (stdin_r, stdin_w) = io::pipe()?;
        let (stdout_r, stdout_w) = io::pipe()?;
        let (exec_r, exec_w) = io::pipe()?;
        let (status_r, status_w) = io::pipe()?;
        let (control_r, control_w) = io::pipe()?;
        let null = File::options().read(true).write(true).open("/dev/null")?;
        let prepared = Prepared {
            argv: &pointers,
            stdin: stdin_r.as_raw_fd(),
            stdout: stdout_w.as_raw_fd(),
            null: null.as_raw_fd(),
            exec_error: exec_w.as_raw_fd(),
            status: status_w.as_raw_fd(),
            control: control_r.as_raw_fd(),
        };
        // SAFETY: the child runs `keep`, which calls only async-signal-safe functions on
        // memory prepared above, and never returns.
        let keeper = unsafe { libc::fork() };
        if keeper < 0 {
            return Err(io::Error::last_os_error());
        }
        if keeper == 0 {
            // SAFETY: in the child of a fork, as `keep` requires.
            unsafe { keep(&prepared) }
        }
        drop((stdin_r, stdout_w, exec_w, status_w, control_r, null));
        let mut kept = Kept {
            keeper,
            pid: 0,
            stdin: Some(File::from(OwnedFd::from(stdin_w))),
            stdout: Some(File::from(OwnedFd::from(stdout_r))),
            status: File::from(OwnedFd::from(status_r)),
            control: Some(OwnedFd::from(control_w)),
            exited: None,
        };
        // The command's exec error, or the end of the pipe once it runs.
        let mut errno = Vec::new();
        File::from(OwnedFd::from(exec_r)).read_to_end(&mut errno)?;
        if let Ok(errno) = <[u8; 4]>::try_from(errno.as_slice()) {
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        match kept.report()? {
            Some((PID, pid)) => kept.pid = pid,
            _ => return Err(io::Error::other("the keeper did not start the command")),
        }
        Ok(kept)
    }

    /// One report of the keeper, `None` at the end of the pipe.
    fn report(&mut self) -> io::Result<Option<(u8, i32)>> {
        let mut buf = [0u8; REPORT];
        match self.status.read_exact(&mut buf) {
            Ok(()) => Ok(Some((buf[0], i32::from_ne_bytes([buf[1], buf[2], buf[3], buf[4]])))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Waits until the command exits or `deadline` passes: its exit code (`None`: killed by a
    /// signal), or `None` at the deadline. What it started may still run.
    pub(crate) fn wait_until(&mut self, deadline: Instant) -> Option<Option<i32>> {
        while self.exited.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable(&self.status, left) {
                return None;
            }
            self.exited = match self.report() {
                Ok(Some((STATUS, status))) => Some((status >= 0).then_some(status)),
                Ok(Some(_)) => continue,
                // The keeper is gone: so is what it kept.
                Ok(None) | Err(_) => Some(None),
            };
        }
        self.exited
    }

    /// Kills the command and everything it started, and waits for the keeper to be done.
    pub(crate) fn kill_all(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if self.control.take().is_none() {
            return;
        }
        loop {
            // SAFETY: waitpid on our own child, with no status wanted.
            let rc = unsafe { libc::waitpid(self.keeper, std::ptr::null_mut(), 0) };
            if rc >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.end();
    }
}

/// Whether `file` can be read within `timeout` (a signal meanwhile: not yet).
fn readable(file: &File, timeout: Duration) -> bool {
    let mut poll = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, and the count says one.
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

/// The keeper: see the module's documentation. Never returns.
///
/// # Safety
///
/// Only in the child of a `fork`, with `prepared` made before it.
unsafe fn keep(p: &Prepared<'_>) -> ! {
    // SAFETY (whole function): only async-signal-safe calls, on fds and memory prepared
    // before the fork; nothing allocates, locks or panics.
    unsafe {
        // Only what the keeper and the command need stays open: no other descriptor of the
        // process (another consult's pipes, a client's socket, a lock) is held past its owner.
        let mut keep = [p.stdin, p.stdout, p.null, p.exec_error, p.status, p.control];
        close_all_but(&mut keep);
        #[cfg(target_os = "linux")]
        libc::prctl(
            libc::PR_SET_CHILD_SUBREAPER,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
        let command = libc::fork();
        if command == 0 {
            run(p);
        }
        if command < 0 {
            report(p.exec_error, errno().to_ne_bytes().as_slice());
            libc::_exit(127);
        }
        // Ended by the control pipe only: a signal to the caller's group is not for it, and a
        // runner gone makes its reports fail, not kill it.
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
            libc::signal(signal, libc::SIG_IGN);
        }
        let mut pid = [0u8; REPORT];
        pid[0] = PID;
        pid[1..].copy_from_slice(&command.to_ne_bytes());
        report(p.status, &pid);
        // Its own stdio the keeper does not need: the caller's terminal or pipes are let go.
        for fd in 0..3 {
            if !keep.contains(&fd) {
                libc::dup2(p.null, fd);
            }
        }
        for fd in [p.stdin, p.stdout, p.exec_error, p.null] {
            libc::close(fd);
        }
        let mut reported = false;
        loop {
            if !reported && let Some(status) = exit_status(command) {
                let mut report_status = [0u8; REPORT];
                report_status[0] = STATUS;
                report_status[1..].copy_from_slice(&status.to_ne_bytes());
                report(p.status, &report_status);
                reported = true;
            }
            let mut poll = libc::pollfd { fd: p.control, events: libc::POLLIN, revents: 0 };
            if libc::poll(&mut poll, 1, 5) > 0 {
                break;
            }
        }
        sweep(command);
        libc::_exit(0)
    }
}

/// The command, in the keeper's child: its own process group, the pipes as stdin and stdout,
/// `/dev/null` as stderr, the signal state of a new process; then `exec`. Never returns.
///
/// # Safety
///
/// Only in the child of a `fork`, with `p` made before it.
unsafe fn run(p: &Prepared<'_>) -> ! {
    // SAFETY: as for `keep`.
    unsafe {
        libc::setpgid(0, 0);
        if libc::dup2(p.stdin, 0) < 0 || libc::dup2(p.stdout, 1) < 0 || libc::dup2(p.null, 2) < 0 {
            report(p.exec_error, errno().to_ne_bytes().as_slice());
            libc::_exit(127);
        }
        // Rust ignores SIGPIPE; a command expects it at its default, and no signal blocked.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execvp(p.argv[0], p.argv.as_ptr());
        report(p.exec_error, errno().to_ne_bytes().as_slice());
        libc::_exit(127)
    }
}

/// Kills the command's group, then every child of the keeper (what it adopted included),
/// reaping them, until none is left.
///
/// # Safety
///
/// Only in the keeper.
unsafe fn sweep(command: libc::pid_t) {
    // SAFETY: as for `keep`; `command` is the keeper's child, not reaped yet, so its pid (the
    // group's id) names nobody else.
    unsafe {
        libc::kill(-command, libc::SIGKILL);
        let mut listed = true;
        let mut gave_up_at: Option<libc::timespec> = None;
        loop {
            if listed {
                listed = kill_children();
            }
            loop {
                let reaped = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
                if reaped > 0 {
                    continue;
                }
                if reaped < 0 && errno() != libc::EINTR {
                    // No child left.
                    return;
                }
                break;
            }
            if !listed {
                // Children cannot be listed: what the group kill did not end is left.
                let mut now: libc::timespec = std::mem::zeroed();
                libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
                let start = *gave_up_at.get_or_insert(now);
                let waited_ms = (now.tv_sec - start.tv_sec) * 1000
                    + (now.tv_nsec - start.tv_nsec) as libc::time_t / 1_000_000;
                if waited_ms >= SWEEP_GIVE_UP.as_millis() as libc::time_t {
                    return;
                }
            }
            let pause = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// Sends SIGKILL to every child of the calling thread (`/proc/thread-self/children`);
/// `false` when they cannot be listed.
///
/// # Safety
///
/// Only in the keeper (single-threaded after the fork).
#[cfg(target_os = "linux")]
unsafe fn kill_children() -> bool {
    // SAFETY: a NUL-terminated path; the buffer is ours; only async-signal-safe calls.
    unsafe {
        let path = c"/proc/thread-self/children";
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut buf = [0u8; 512];
        let mut pid: libc::pid_t = 0;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            if n <= 0 {
                break;
            }
            for &byte in &buf[..n as usize] {
                if byte.is_ascii_digit() {
                    pid = pid.saturating_mul(10).saturating_add(libc::pid_t::from(byte - b'0'));
                } else {
                    if pid > 0 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                }
            }
        }
        if pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
        true
    }
}

/// Children cannot be listed outside Linux.
#[cfg(not(target_os = "linux"))]
unsafe fn kill_children() -> bool {
    false
}

/// The command's exit, seen without reaping it: its exit code, or minus the signal that
/// killed it; `None` while it runs.
///
/// # Safety
///
/// `pid` is a child of the caller.
unsafe fn exit_status(pid: libc::pid_t) -> Option<i32> {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; WNOWAIT leaves the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) != 0 {
            return Some(-libc::SIGKILL);
        }
        if si_pid(&info) == 0 {
            return None;
        }
        let status = si_status(&info);
        Some(if info.si_code == libc::CLD_EXITED { status } else { -status })
    }
}

/// Writes a whole report (a few bytes: one write), ignoring failure (nobody to tell).
///
/// # Safety
///
/// `fd` is open.
unsafe fn report(fd: RawFd, bytes: &[u8]) {
    // SAFETY: the buffer is valid for its length.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

/// Closes every descriptor but those in `keep` (which it sorts).
///
/// # Safety
///
/// Only where nothing else uses the descriptors closed (the keeper).
unsafe fn close_all_but(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from: libc::c_uint = 3;
    for &fd in keep.iter() {
        let Ok(fd) = libc::c_uint::try_from(fd) else { continue };
        if fd > from {
            // SAFETY: closing descriptors nobody else uses in this process.
            unsafe { close_range(from, fd - 1) };
        }
        from = from.max(fd + 1);
    }
    // SAFETY: as above.
    unsafe { close_range(from, libc::c_uint::MAX) };
}

/// Closes the descriptors `first..=last`: `close_range` where the kernel has it, else one by
/// one up to the descriptor limit.
///
/// # Safety
///
/// As [`close_all_but`].
unsafe fn close_range(first: libc::c_uint, last: libc::c_uint) {
    // SAFETY: close_range takes two fd numbers and flags; close takes one fd.
    unsafe {
        #[cfg(target_os = "linux")]
        if libc::syscall(libc::SYS_close_range, first, last, 0 as libc::c_uint) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 16) as libc::c_uint
        } else {
            1024
        };
        for fd in first..=last.min(max) {
            libc::close(fd as libc::c_int);
        }
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The pid a `waitid` filled in (zero when no child changed state).
#[cfg(target_os = "linux")]
unsafe fn si_pid(info: &libc::siginfo_t) -> libc::pid_t {
    // SAFETY: the caller passes a siginfo_t `waitid` filled in (or zeroed).
    unsafe { info.si_pid() }
}

/// The pid a `waitid` filled in (zero when no child changed state).
#[cfg(not(target_os = "linux"))]
unsafe fn si_pid(info: &libc::siginfo_t) -> libc::pid_t {
    info.si_pid
}

/// The exit code or signal a `waitid` filled in.
#[cfg(target_os = "linux")]
unsafe fn si_status(info: &libc::siginfo_t) -> i32 {
    // SAFETY: the caller passes a siginfo_t `waitid` filled in for an exited child.
    unsafe { info.si_status() }
}

/// The exit code or signal a `waitid` filled in.
#[cfg(not(target_os = "linux"))]
unsafe fn si_status(info: &libc::siginfo_t) -> i32 {
    info.si_status
}
