//! How an error reaches the user: `main` prints it once, `hookline: ` and the error with its
//! causes on one line, then `  fix: ` and how to fix it on the next, whichever command failed
//! and whichever layer (the library, the command line) the error came from.

use std::path::Path;
use std::process::{Command, Output};

use super::watch::hookline;

/// Runs `hookline` with `args` in `home` (as HOME and the working directory).
fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(hookline())
        .args(args)
        .env("HOME", home)
        .env_remove("HOOKLINE_EVENTS_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TMUX")
        .current_dir(home)
        .output()
        .unwrap()
}

/// Asserts a failed run: exit 2, nothing on stdout, and stderr exactly `error` then its fix.
fn assert_reported(out: &Output, error: &str, fix: &str) {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, format!("hookline: {error}\n  fix: {fix}\n"));
}

#[test]
fn every_command_prints_its_errors_fix_once_on_its_own_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // A library error (the events directory), from a reading command.
    for command in [&["status"][..], &["watch", "--no-follow"], &["decide", "s1", "nudge"]] {
        let out = run(home, &[command, &["--events-dir", "rel/events"]].concat());
        assert_reported(
            &out,
            "--events-dir rel/events: not an absolute path",
            "give --events-dir an absolute path",
        );
    }
    // The command line's own error, from install, which touches no file.
    let out = run(home, &["install", "nosuchcli"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fix = stderr.lines().nth(1).and_then(|l| l.strip_prefix("  fix: use one of: "));
    assert!(fix.is_some_and(|known| known.split(", ").any(|cli| cli == "claude")), "{stderr}");
    assert_reported(&out, "no profile for \"nosuchcli\"", &stderr.lines().nth(1).unwrap()[7..]);
    assert!(!home.join(".claude").exists());
    // A library error with a cause, from pane: the cause on the error's line, the fix after.
    let socket = home.join("no-such-tmux-socket");
    let out = run(home, &["pane", "--tmux", "%999", "--tmux-socket", socket.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("hookline: cannot capture tmux pane \"%999\": "), "{stderr}");
    assert_reported(
        &out,
        &first["hookline: ".len()..],
        "check the target with `tmux list-panes -a`; pass --tmux-socket PATH when the pane is on \
         another server than $TMUX's",
    );
    // An error with nothing to fix is its one line, with no `fix:`.
    let out = run(home, &["lease", "--events-dir", &home.to_string_lossy(), "release", "l-0"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("hookline: no hookline daemon answers on "), "{stderr}");
    assert!(!stderr.contains("fix:"), "{stderr}");
    // The events directory may follow the subcommand too, as with every other command.
    let after = run(home, &["lease", "release", "l-0", "--events-dir", &home.to_string_lossy()]);
    assert_eq!((after.status.code(), after.stderr), (out.status.code(), out.stderr));
}
