//! The runner: the classifier command under a keeper ([`keeper`](super::keeper)), the input
//! on stdin, stdout read bounded, and everything it started killed when the run ends, at the
//! timeout or before: its process group, and whatever left that group (`setsid`) or was
//! orphaned on purpose.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::keeper::Kept;

/// The most stdout read from a classifier; more is an over-long answer.
pub const MAX_STDOUT: usize = 4096;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The command exited (`Some(0)`: success) or was killed by a signal (`None`).
    Exited(Option<i32>),
    /// It ran past the timeout (or something it started kept stdout open): killed.
    TimedOut,
    /// It could not be started.
    SpawnFailed(String),
}

/// What a run gave.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub ended: Ended,
    /// Stdout, at most [`MAX_STDOUT`] bytes.
    pub stdout: Vec<u8>,
    /// It wrote more than [`MAX_STDOUT`] bytes.
    pub over_long: bool,
    /// The process group it ran in (its pid), when it started.
    #[cfg_attr(not(test), allow(dead_code))]
    pub pgid: Option<i32>,
    pub elapsed: Duration,
}

/// Runs `argv` with `input` on stdin, under a keeper, for at most `timeout`: then everything
/// it started is killed (SIGKILL) and the run reads [`Ended::TimedOut`]. Everything it started
/// is killed when the run ends in any case, before this returns, so that nothing it started
/// outlives the consult: its process group, what left the group, what was orphaned on
/// purpose (see [`keeper`](super::keeper) for how, and where it cannot).
pub(crate) fn run(argv: &[String], input: &[u8], timeout: Duration) -> Run {
    let started = Instant::now();
    let failed = |why: String| Run {
        ended: Ended::SpawnFailed(why),
        stdout: Vec::new(),
        over_long: false,
        pgid: None,
        elapsed: started.elapsed(),
    };
    let Some(program) = argv.first() else {
        return failed("no command".into());
    };
    let mut kept = match Kept::spawn(argv) {
        Ok(kept) => kept,
        Err(e) => return failed(format!("{program}: {e}")),
    };
    if let Some(stdin) = kept.stdin.take() {
        let input = input.to_vec();
        // A command that never reads its stdin must not hold the consult: the write ends
        // with EPIPE when what it started is killed.
        thread::spawn(move || feed(stdin, &input));
    }
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = kept.stdout.take() {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.take(MAX_STDOUT as u64 + 1).read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    let deadline = started + timeout;
    let status = kept.wait_until(deadline);
    let mut timed_out = status.is_none();
    // Stdout until EOF, which a process it started that keeps it open withholds.
    let mut stdout = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(buf) => Some(buf),
        Err(_) => {
            timed_out = true;
            None
        }
    };
    let pgid = kept.pid;
    kept.kill_all();
    if stdout.is_none() {
        stdout = rx.recv_timeout(Duration::from_millis(200)).ok();
    }
    let mut stdout = stdout.unwrap_or_default();
    let over_long = stdout.len() > MAX_STDOUT;
    stdout.truncate(MAX_STDOUT);
    let ended = if timed_out { Ended::TimedOut } else { Ended::Exited(status.flatten()) };
    Run { ended, stdout, over_long, pgid: Some(pgid), elapsed: started.elapsed() }
}

/// Writes `input` to the command's stdin with SIGPIPE blocked in this thread: a command that
/// exits without reading it makes the write fail (`EPIPE`) and nothing more. `hookline` leaves
/// SIGPIPE at its default (for `watch | head`), which would end the whole process, a daemon
/// with it; the signal stays pending on this thread and goes with it.
fn feed(mut stdin: std::fs::File, input: &[u8]) {
    // SAFETY: a sigset_t set up by sigemptyset and sigaddset; pthread_sigmask changes this
    // thread's mask only.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, std::ptr::null_mut());
    }
    let _ = stdin.write_all(input);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[cfg(target_os = "linux")]
    /// Whether a process of group `pgid` still runs: a member in /proc that is not a zombie
    /// (a killed orphan waits there until its new parent reaps it, which no test controls).
    fn group_alive(pgid: i32) -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                return false;
            };
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { return false };
            let fields: Vec<&str> = after.split_whitespace().collect();
            // After the command: state, ppid, pgrp.
            fields.len() > 2
                && fields[2] == pgid.to_string()
                && fields[0] != "Z"
                && fields[0] != "X"
        })
    }

    #[cfg(target_os = "linux")]
    /// Waits (bounded) for the group to stop running: SIGKILL is sent before `run` returns,
    /// but the kernel tears a process down asynchronously.
    fn gone(pgid: i32) -> bool {
        (0..300).any(|_| {
            let alive = group_alive(pgid);
            if alive {
                thread::sleep(Duration::from_millis(10));
            }
            !alive
        })
    }

    #[test]
    fn the_input_goes_in_on_stdin_and_stdout_comes_back() {
        let run = run(&sh("read line; echo \"got $line\""), b"hello\n", Duration::from_secs(10));
        assert_eq!(run.ended, Ended::Exited(Some(0)));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "got hello\n");
        assert!(!run.over_long);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_hanging_command_and_the_child_it_left_are_killed_with_their_group() {
        // The shell starts a child that keeps stdout open and outlives it, then hangs itself.
        let run = run(&sh("sleep 300 & echo started; sleep 300"), b"", Duration::from_millis(300));
        assert_eq!(run.ended, Ended::TimedOut);
        let pgid = run.pgid.unwrap();
        assert!(gone(pgid), "process group {pgid} is still running");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_that_outlives_a_quick_answer_is_killed_too() {
        let run =
            run(&sh("(sleep 300 >/dev/null 2>&1 &); echo working"), b"", Duration::from_secs(10));
        assert_eq!(run.ended, Ended::Exited(Some(0)));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "working\n");
        let pgid = run.pgid.unwrap();
        assert!(gone(pgid), "process group {pgid} is still running");
    }

    #[cfg(target_os = "linux")]
    /// Whether `pid` still runs (a zombie or nothing at all: it does not).
    fn running(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        })
    }

    #[cfg(target_os = "linux")]
    /// A script that starts, in a session of its own, a process that writes its pid to
    /// `pid_file` and sleeps (from a subshell that exits at once, with `double_fork`); then,
    /// once the pid is written, runs `then`.
    fn detaching(pid_file: &std::path::Path, double_fork: bool, then: &str) -> Vec<String> {
        let start = format!(
            "setsid sh -c 'echo $$ > {file}.tmp && mv {file}.tmp {file}; exec sleep 300' \
             </dev/null >/dev/null 2>&1 &",
            file = pid_file.display()
        );
        let start = if double_fork { format!("({start})") } else { start };
        let wait = format!("while [ ! -s {} ]; do sleep 0.01; done", pid_file.display());
        sh(&format!("{start}\n{wait}\n{then}"))
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_that_left_for_a_session_of_its_own_is_killed_with_the_rest() {
        for (double_fork, then, timeout) in [
            (false, "echo working", Duration::from_secs(10)),
            (true, "echo working", Duration::from_secs(10)),
            (false, "echo working; sleep 300", Duration::from_millis(500)),
            (true, "sleep 300", Duration::from_millis(500)),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let pid_file = tmp.path().join("pid");
            let run = run(&detaching(&pid_file, double_fork, then), b"", timeout);
            let what = format!("double fork {double_fork}, then {then:?}: {run:?}");
            if then == "echo working" {
                assert_eq!(run.ended, Ended::Exited(Some(0)), "{what}");
                assert_eq!(String::from_utf8_lossy(&run.stdout), "working\n", "{what}");
            } else {
                assert_eq!(run.ended, Ended::TimedOut, "{what}");
            }
            let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            assert!(!running(pid), "the detached process {pid} outlived the consult ({what})");
            assert!(gone(run.pgid.unwrap()), "{what}");
        }
    }

    #[test]
    fn a_command_that_never_reads_stdin_does_not_block_the_run() {
        let input = vec![b'x'; 1 << 20];
        let run = run(&sh("echo unknown"), &input, Duration::from_secs(10));
        assert_eq!(run.ended, Ended::Exited(Some(0)));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "unknown\n");
    }

    #[test]
    fn a_command_that_exits_without_reading_stdin_cannot_end_hookline_by_sigpipe() {
        const CHILD: &str = "HOOKLINE_TEST_SIGPIPE_CHILD";
        if std::env::var_os(CHILD).is_some() {
            // In a process of its own, with SIGPIPE at its default as `hookline` has it.
            // SAFETY: restoring a default disposition has no preconditions.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let stdin = std::fs::File::from(std::os::fd::OwnedFd::from(writer));
            thread::spawn(move || feed(stdin, b"the input")).join().unwrap();
            return;
        }
        let name = module_path!().split_once("::").unwrap().1;
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &format!("{name}::a_command_that_exits_without_reading_stdin_cannot_end_hookline_by_sigpipe")])
            .env(CHILD, "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}\n{}", out.status, String::from_utf8_lossy(&out.stdout));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "the child ran the test"
        );
    }

    #[test]
    fn over_long_output_is_cut_and_said_so() {
        let run = run(&sh("yes working | head -c 100000"), b"", Duration::from_secs(10));
        assert!(run.over_long);
        assert_eq!(run.stdout.len(), MAX_STDOUT);
    }

    #[test]
    fn exit_status_and_spawn_failure_are_reported() {
        assert_eq!(
            run(&sh("echo working; exit 3"), b"", Duration::from_secs(10)).ended,
            Ended::Exited(Some(3))
        );
        let missing = run(&["/nonexistent/classifier".to_owned()], b"", Duration::from_secs(1));
        assert!(
            matches!(missing.ended, Ended::SpawnFailed(ref why) if why.contains("/nonexistent/classifier"))
        );
    }
}
