//! The runner: the classifier command in its own process group, the input on stdin, stdout
//! read bounded, the whole group killed at the timeout.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The most stdout read from a classifier; more is an over-long answer.
pub const MAX_STDOUT: usize = 4096;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The command exited (`Some(0)`: success) or was killed by a signal (`None`).
    Exited(Option<i32>),
    /// It ran past the timeout (or something of its group kept stdout open): killed.
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

/// Runs `argv` with `input` on stdin, in a new process group, for at most `timeout`: then
/// every process of the group is killed (SIGKILL) and the run reads [`Ended::TimedOut`].
/// The group is killed when the run ends in any case, before its leader is reaped, so that
/// nothing it started outlives the consult.
pub(crate) fn run(argv: &[String], input: &[u8], timeout: Duration) -> Run {
    let started = Instant::now();
    let failed = |why: String| Run {
        ended: Ended::SpawnFailed(why),
        stdout: Vec::new(),
        over_long: false,
        pgid: None,
        elapsed: started.elapsed(),
    };
    let Some((program, args)) = argv.split_first() else {
        return failed("no command".into());
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return failed(format!("{program}: {e}")),
    };
    let pid = child.id() as libc::pid_t;
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        // A command that never reads its stdin must not hold the consult: the write ends
        // with EPIPE when the group is killed.
        thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.take(MAX_STDOUT as u64 + 1).read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    let deadline = started + timeout;
    let mut timed_out = false;
    // The leader's exit, seen without reaping it (its pid, the group's id, stays taken).
    loop {
        if exited(pid) {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            break;
        }
        thread::sleep((deadline - now).min(Duration::from_millis(5)));
    }
    // Stdout until EOF, which a process of the group that keeps it open withholds.
    let mut stdout = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(buf) => Some(buf),
        Err(_) => {
            timed_out = true;
            None
        }
    };
    // SAFETY: killpg only sends a signal; the group's id is the unreaped leader's pid.
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
    let status = child.wait().ok();
    if stdout.is_none() {
        stdout = rx.recv_timeout(Duration::from_millis(200)).ok();
    }
    let mut stdout = stdout.unwrap_or_default();
    let over_long = stdout.len() > MAX_STDOUT;
    stdout.truncate(MAX_STDOUT);
    let ended =
        if timed_out { Ended::TimedOut } else { Ended::Exited(status.and_then(|s| s.code())) };
    Run { ended, stdout, over_long, pgid: Some(pid), elapsed: started.elapsed() }
}

/// Whether the child `pid` has exited, leaving it unreaped.
fn exited(pid: libc::pid_t) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; WNOWAIT leaves the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        rc != 0 || si_pid(&info) != 0
    }
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

    #[test]
    fn a_command_that_never_reads_stdin_does_not_block_the_run() {
        let input = vec![b'x'; 1 << 20];
        let run = run(&sh("echo unknown"), &input, Duration::from_secs(10));
        assert_eq!(run.ended, Ended::Exited(Some(0)));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "unknown\n");
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
