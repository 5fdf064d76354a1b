//! The documented shell loops, run as written against a live session: a fake agent in the
//! caller's default tmux server (`work:1.0`), a real daemon, the built `hookline` on `PATH`.

use std::path::Path;
use std::process::{Command, Output};

use super::live::{Live, Spec, pasted, stderr, stdout};

/// The `sh` block after the `<!-- tested: ... -->` marker naming `marker` in `doc`.
fn tested_block(doc: &str, marker: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find(marker).unwrap_or_else(|| panic!("{doc} has no {marker:?}"));
    let rest = &text[at..];
    let start = rest.find("```sh\n").expect("a sh block after the marker") + "```sh\n".len();
    let end = rest[start..].find("```").expect("the block's end");
    rest[start..start + end].to_owned()
}

/// Runs `block` with `sh`, as a shell on the caller's side of `live` would: its tmux server
/// the default one of `tmux_tmpdir`, `hookline` on `PATH`, the events directory in the
/// environment, and `your_own_rule` saying it ran.
fn run(live: &Live, tmux_tmpdir: &Path, block: &str) -> Output {
    let bin = hookline_tests::binaries::hookline();
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap());
    let script = format!("your_own_rule() {{ echo \"own rule: $1\"; }}\n{block}");
    Command::new("sh")
        .args(["-c", &script])
        .env("PATH", path)
        .env("HOOKLINE_EVENTS_DIR", live.events())
        .env("XDG_CONFIG_HOME", live.config())
        .env("TMUX_TMPDIR", tmux_tmpdir)
        .env_remove("TMUX")
        .output()
        .unwrap()
}

#[test]
fn the_turn_end_loop_of_decide_md_nudges_a_live_session_as_written() {
    let block = tested_block("docs/decide.md", "<!-- tested: tests/tests/deliver/docs.rs");
    let tmpdir = tempfile::tempdir().unwrap();
    let spec = Spec::new("sess-42").tag("task-42").flags(&["--tasks"]);
    let mut live = Live::start_default_in(spec, tmpdir.path());
    live.tmux.command(&["rename-session", "-t", "main", "work"]).unwrap();
    live.tmux.command(&["move-window", "-s", "work:0", "-t", "work:1"]).unwrap();
    // The nudge waits out a short nudge.min-idle: the loop's --wait does the waiting.
    live.write_policy("[nudge]\nmin-idle = \"1s\"\n");
    live.start_daemon();
    // The first turn leaves one of its two tasks open: stall allows, quoting it.
    let before = live.turn(0, "start the tasks");
    let out = run(&live, tmpdir.path(), &block);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let said = stdout(&out);
    assert!(said.starts_with("delivered to task-42 (pane %0) and confirmed by"), "{said}");
    let typed = said.lines().find_map(|l| l.strip_prefix("typed: ")).expect("the nudge text");
    assert!(typed.contains("Second task"), "{typed}");
    let nudged = format!("{before}{}\r", pasted(typed));
    assert_eq!(live.agents[0].received(), nudged);
    // The nudged turn completed the other task: no structural signal, the caller's own rule.
    let confirmed_by = said.split(" seq ").nth(1).and_then(|r| r.split(' ').next());
    live.wait_idle_after(0, confirmed_by.map(|seq| seq.parse().unwrap()));
    let out = run(&live, tmpdir.path(), &block);
    assert_eq!(stdout(&out), "own rule: task-42\n", "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), nudged, "nothing typed");
}
