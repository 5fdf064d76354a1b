//! Drives a TUI in its own tmux server, like a person at a 200x50 terminal.
//!
//! Each [`Tmux`] starts a private server (`tmux -L <unique socket>`, with its own config file),
//! so tests never see or touch a user's tmux. The pane stays after the program exits
//! (`remain-on-exit`), so the last screen and the exit status can still be read. The server is
//! killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Terminal width.
pub const WIDTH: u32 = 200;
/// Terminal height.
pub const HEIGHT: u32 = 50;
/// The target of the only pane.
pub const TARGET: &str = "main";
/// A directory to record every distinct screen into (see [`Tmux::start`]).
pub const SCREENS_ENV: &str = "HOOKLINE_E2E_SCREENS";

/// A private tmux server running one program in one pane.
pub struct Tmux {
    socket: String,
    config: PathBuf,
    /// The socket file, removed on drop (kill-server leaves it behind).
    socket_path: Option<PathBuf>,
    /// `TMUX_TMPDIR` for every tmux command, when the server is a default one there.
    tmpdir: Option<PathBuf>,
}

impl Tmux {
    /// Starts a server whose only pane runs `program` (a path, run without a shell). The config
    /// file is written into `dir`. With [`SCREENS_ENV`] set to a directory, every distinct
    /// screen is recorded there.
    pub fn start(dir: &Path, program: &Path) -> Result<Tmux, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let socket =
            format!("hookline-e2e-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        Tmux::start_named(dir, program, socket, None)
    }

    /// [`Tmux::start`], as the *default* server of `TMUX_TMPDIR=tmpdir`
    /// (`tmpdir/tmux-UID/default`): the server a program with that `TMUX_TMPDIR` and no `$TMUX`
    /// talks to.
    pub fn start_default_in(dir: &Path, program: &Path, tmpdir: &Path) -> Result<Tmux, String> {
        Tmux::start_named(dir, program, "default".into(), Some(tmpdir.to_owned()))
    }

    fn start_named(
        dir: &Path,
        program: &Path,
        socket: String,
        tmpdir: Option<PathBuf>,
    ) -> Result<Tmux, String> {
        let config = dir.join("tmux.conf");
        std::fs::write(&config, "set -g remain-on-exit on\nset -g history-limit 10000\n")
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let mut tmux = Tmux { socket, config, socket_path: None, tmpdir };
        let width = WIDTH.to_string();
        let height = HEIGHT.to_string();
        let program = program.to_str().ok_or("program path is not UTF-8")?;
        tmux.run(&["new-session", "-d", "-s", TARGET, "-x", &width, "-y", &height, program])?;
        let output = tmux.run(&["display-message", "-p", "#{socket_path}"])?;
        let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
        tmux.socket_path = (!path.is_empty()).then(|| PathBuf::from(path));
        if let Some(dir) = std::env::var_os(SCREENS_ENV) {
            tmux.record_screens(PathBuf::from(dir));
        }
        Ok(tmux)
    }

    /// Writes every distinct visible screen, polled every 40 ms, to `dir` as
    /// `<socket>-<n>.txt` until the server goes away: how the pane-sensing fixtures in
    /// `watcher/tests/fixtures/pane/` were captured from the real TUIs.
    fn record_screens(&self, dir: PathBuf) {
        let socket = self.socket.clone();
        let _ = std::fs::create_dir_all(&dir);
        thread::spawn(move || {
            let mut last = String::new();
            for n in 0.. {
                let output = Command::new("tmux")
                    .args(["-L", &socket, "capture-pane", "-p", "-J", "-t", TARGET])
                    .env_remove("TMUX")
                    .stdin(Stdio::null())
                    .output();
                let Ok(output) = output else { return };
                if !output.status.success() {
                    return;
                }
                let screen = String::from_utf8_lossy(&output.stdout).into_owned();
                if screen != last {
                    let _ = std::fs::write(dir.join(format!("{socket}-{n:05}.txt")), &screen);
                    last = screen;
                }
                thread::sleep(Duration::from_millis(40));
            }
        });
    }

    fn run(&self, args: &[&str]) -> Result<Output, String> {
        let mut command = Command::new("tmux");
        if let Some(tmpdir) = &self.tmpdir {
            command.env("TMUX_TMPDIR", tmpdir);
        }
        let output = command
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                format!("cannot run tmux ({e}): install it (tests/e2e-prereqs.sh does)")
            })?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(format!(
                "tmux {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// The server's socket file (for `tmux -S`).
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket_path.as_deref()
    }

    /// Runs any tmux command on this server: its stdout, trimmed.
    pub fn command(&self, args: &[&str]) -> Result<String, String> {
        self.run(args).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    }

    /// Types `text` literally (no key names are interpreted).
    pub fn type_text(&self, text: &str) -> Result<(), String> {
        self.run(&["send-keys", "-t", TARGET, "-l", text]).map(drop)
    }

    /// Presses one key by its tmux name (`Enter`, `Escape`, `C-c`).
    pub fn press(&self, key: &str) -> Result<(), String> {
        self.run(&["send-keys", "-t", TARGET, key]).map(drop)
    }

    /// Types `text`, then presses Enter.
    pub fn type_line(&self, text: &str) -> Result<(), String> {
        self.type_text(text)?;
        self.press("Enter")
    }

    /// The visible screen.
    pub fn screen(&self) -> Result<String, String> {
        self.capture(&["capture-pane", "-p", "-t", TARGET])
    }

    /// The scrollback and the visible screen.
    pub fn screen_with_history(&self) -> Result<String, String> {
        self.capture(&["capture-pane", "-p", "-S", "-", "-t", TARGET])
    }

    fn capture(&self, args: &[&str]) -> Result<String, String> {
        self.run(args).map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Polls the visible screen until `predicate` holds; on timeout, the last screen is the
    /// error.
    pub fn wait_for_screen(
        &self,
        timeout: Duration,
        predicate: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen()?;
            if predicate(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= deadline {
                return Err(screen);
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types a line, waits for its last `echo_tail` characters to be echoed, waits `settle`,
    /// then presses Enter. (An Enter that follows the text at once can be taken as part of it:
    /// Claude Code 2.1.197 then leaves the line unsubmitted.)
    pub fn submit_line(
        &self,
        line: &str,
        echo_tail: usize,
        settle: Duration,
    ) -> Result<(), String> {
        self.type_text(line)?;
        let skip = line.chars().count().saturating_sub(echo_tail);
        let tail: String = line.chars().skip(skip).collect();
        self.wait_for_screen(Duration::from_secs(10), |screen| screen.contains(&tail))
            .map_err(|_| format!("the typed text {line:?} was not echoed"))?;
        thread::sleep(settle);
        self.press("Enter")
    }

    /// Waits for the pane's program to exit and returns its exit status, `None` when tmux does
    /// not report it (see [`Tmux::exit`]); an error when it is still running after `timeout`.
    pub fn wait_for_exit(&self, timeout: Duration) -> Result<Option<i32>, String> {
        let deadline = Instant::now() + timeout;
        let mut exited_at = None;
        loop {
            match self.exit()? {
                Exit::Status(status) => return Ok(Some(status)),
                // A zombie is usually reaped (and its status reported) a moment later.
                Exit::Unknown => {
                    let since = *exited_at.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_secs(3) {
                        return Ok(None);
                    }
                }
                Exit::Running if Instant::now() < deadline => {}
                Exit::Running => {
                    let pid = self.pane_pid().map_or_else(|e| e, |p| p.to_string());
                    return Err(format!("the CLI (pid {pid}) did not exit within {timeout:?}"));
                }
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The pid of the pane's program.
    pub fn pane_pid(&self) -> Result<u32, String> {
        let output = self.run(&["display-message", "-p", "-t", TARGET, "#{pane_pid}"])?;
        let text = String::from_utf8_lossy(&output.stdout);
        text.trim().parse().map_err(|_| format!("no pane pid in {text:?}"))
    }

    /// Whether the pane's program has exited, and with which status when tmux knows it
    /// (`128 + n` for a signal).
    ///
    /// tmux marks the pane dead when its terminal closes, which can be a moment before the
    /// status is known; and tmux 3.3a sometimes never reaps the program at all (a lost
    /// SIGCHLD: seen with Claude Code, and with a plain `sh` script in about one run in eight
    /// on a loaded machine), leaving a zombie and no status. A zombie's status is then read from
    /// `/proc/PID/stat`; a program that is gone without a reported status is exited, status
    /// unknown.
    pub fn exit(&self) -> Result<Exit, String> {
        let format = "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}:#{pane_pid}";
        let output = self.run(&["display-message", "-p", "-t", TARGET, format])?;
        let text = String::from_utf8_lossy(&output.stdout);
        let fields: Vec<&str> = text.trim().split(':').collect();
        let number = |i: usize| fields.get(i).and_then(|f| f.parse::<i32>().ok());
        Ok(match (fields.first(), number(1), number(2)) {
            (Some(&"1"), Some(status), _) => Exit::Status(status),
            (Some(&"1"), None, Some(signal)) => Exit::Status(128 + signal),
            _ => match number(3).map(|pid| process(pid as u32)) {
                Some(Process::Zombie(Some(status))) => Exit::Status(status),
                Some(Process::Zombie(None) | Process::Gone) => Exit::Unknown,
                Some(Process::Alive) | None => Exit::Running,
            },
        })
    }
}

/// What `/proc` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Process {
    Alive,
    /// Exited, not yet reaped; its exit status as [`Tmux::exit`] reports it, when readable.
    Zombie(Option<i32>),
    Gone,
}

fn process(pid: u32) -> Process {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Process::Gone;
    };
    // "pid (comm) S ...": the fields after the last ')' start with field 3, the state; field 52
    // is the exit code, in waitpid(2)'s encoding.
    let rest: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    if rest.first() != Some(&"Z") {
        return Process::Alive;
    }
    let status =
        rest.get(52 - 3).and_then(|code| code.parse::<i32>().ok()).map(|code| match code & 0x7f {
            0 => (code >> 8) & 0xff,
            signal => 128 + signal,
        });
    Process::Zombie(status)
}

/// Whether a program has exited, as [`Tmux::exit`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Still running.
    Running,
    /// Exited with this status.
    Status(i32),
    /// Exited; tmux has not reported the status.
    Unknown,
}

fn is_zombie_or_gone(pid: u32) -> bool {
    process(pid) != Process::Alive
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let program = self.pane_pid().ok();
        let _ = self.run(&["kill-server"]);
        // The program gets SIGHUP and may still write files as it dies (Claude Code saves its
        // state): wait for it, so that its folders can be removed after this.
        if let Some(pid) = program {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !is_zombie_or_gone(pid) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(20));
            }
        }
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreaped_programs_exit_status_is_read_from_proc() {
        fn zombie(mut child: std::process::Child) -> Process {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let state = process(child.id());
                if state != Process::Alive || Instant::now() > deadline {
                    child.wait().unwrap();
                    return state;
                }
                thread::sleep(Duration::from_millis(10));
            }
        }
        let exits = Command::new("sh").args(["-c", "exit 5"]).spawn().unwrap();
        assert_eq!(zombie(exits), Process::Zombie(Some(5)));
        let mut sleeps = Command::new("sleep").arg("100").spawn().unwrap();
        assert_eq!(process(sleeps.id()), Process::Alive);
        sleeps.kill().unwrap();
        assert_eq!(zombie(sleeps), Process::Zombie(Some(128 + 9)));
        assert_eq!(process(std::process::id()), Process::Alive);
        assert_eq!(process(u32::MAX - 1), Process::Gone);
    }

    #[test]
    fn a_program_is_driven_and_its_exit_status_read() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("prog.sh");
        // The program waits for a second line before it exits: output written just before a
        // terminal closes can be lost (Linux drops what tmux has not read yet).
        let program = "#!/bin/sh\nread line\necho \"got [$line]\"\nread _\nexit 3\n";
        std::fs::write(&script, program).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let tmux = Tmux::start(dir.path(), &script).unwrap();
        tmux.type_line("hello 'world' Enter").unwrap();
        let screen =
            tmux.wait_for_screen(Duration::from_secs(10), |s| s.contains("got [")).unwrap();
        assert!(screen.contains("got [hello 'world' Enter]"), "{screen}");
        assert_eq!(tmux.exit().unwrap(), Exit::Running);
        tmux.press("Enter").unwrap();
        assert_eq!(tmux.wait_for_exit(Duration::from_secs(10)), Ok(Some(3)));
        assert_eq!(tmux.exit().unwrap(), Exit::Status(3));
        let socket = tmux.socket_path.clone().unwrap();
        assert!(socket.exists());
        drop(tmux);
        assert!(!socket.exists(), "the socket is removed with the server");
        assert_eq!(screen.lines().count(), HEIGHT as usize, "{screen}");
    }
}
