//! `hookline deliver`, the built binary, through a real `hookline daemon` process, into the
//! fake agent in a real tmux server. Every test asserts what the fake TUI received.

use std::process::{Command, Output, Stdio};
use std::time::Instant;

use hookline_tests::deliver_check::Daemon;

use super::*;

/// A `hookline daemon` on the fixture's events directory, stopped on drop.
fn daemon(f: &Fixture) -> Daemon {
    Daemon::start(&f.events()).unwrap()
}

/// `hookline deliver` on the fixture's pane and session.
fn hookline_deliver(f: &Fixture, args: &[&str]) -> Output {
    deliver_command(f, args).output().unwrap()
}

/// `hookline decide SESSION QUESTION --json` reading the fixture's pane.
fn hookline_decide(f: &Fixture, question: &str) -> Output {
    Command::new(binaries::hookline())
        .args(["decide", SESSION, question, "--json", "--events-dir"])
        .arg(f.events())
        .args(["--tmux", TARGET, "--tmux-socket"])
        .arg(f.tmux.socket_path().unwrap())
        .env_remove("TMUX")
        .env("XDG_CONFIG_HOME", f.dir.path())
        .output()
        .unwrap()
}

fn deliver_command(f: &Fixture, args: &[&str]) -> Command {
    deliver_command_as(f, SESSION, args)
}

/// `hookline deliver` on the fixture's pane, naming the session as `session`.
fn deliver_command_as(f: &Fixture, session: &str, args: &[&str]) -> Command {
    let mut command = Command::new(binaries::hookline());
    command
        .args(["deliver", "--events-dir"])
        .arg(f.events())
        .args(["--tmux", TARGET, "--tmux-socket"])
        .arg(f.tmux.socket_path().unwrap())
        .args(["--session", session, "--heal-after", "600ms", "--confirm-timeout", "4s"])
        .args(args)
        .env_remove("TMUX")
        .env("XDG_CONFIG_HOME", f.dir.path());
    command
}

/// One turn typed as a person would: its Stop, live, makes the session idle for the daemon.
fn warm_up(f: &Fixture) -> String {
    f.tmux.type_line("warm up").unwrap();
    f.wait_for_screen(|s| s.contains("● done"));
    let started = Instant::now();
    let mut client = hookline::daemon::Client::connect(&f.events()).unwrap();
    while client.state(SESSION).unwrap().is_none_or(|v| v.state.as_str() != "idle") {
        assert!(started.elapsed() < Duration::from_secs(10), "the session never read idle");
        thread::sleep(Duration::from_millis(50));
    }
    "warm up\r".to_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn journal(f: &Fixture) -> Vec<serde_json::Value> {
    let path = f.dir.path().join("events.decisions.ndjson");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn deliveries(f: &Fixture, step: &str) -> Vec<serde_json::Value> {
    journal(f).into_iter().filter(|r| r["delivery"]["step"] == step).collect()
}

#[test]
fn hookline_deliver_through_the_daemon_is_confirmed_and_submitted_once() {
    let f = Fixture::at_prompt(&[]);
    let _daemon = daemon(&f);
    let before = warm_up(&f);
    let text = "two lines\nof delivered text";
    // An act names its session exactly: a prefix of its id names none, and nothing is typed.
    let out = deliver_command_as(&f, &SESSION[..7], &[text]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains("no session is named"), "{}", stderr(&out));
    assert_eq!(f.received_settled(), before);
    let out = deliver_command(&f, &["--json", text]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "confirmed", "{json}");
    assert_eq!((json["delivered"].clone(), json["confirmed"].clone()), (true.into(), true.into()));
    assert_eq!(json["enter_resent"], false);
    assert_eq!(json["decision"]["verdict"], "allow", "{json}");
    assert!(json["decision"]["slot"]["epoch"].as_u64().is_some(), "{json}");
    assert!(json["decision"]["rule"].as_str().is_some_and(|r| !r.is_empty()));
    assert_eq!(json["event"]["native"], "UserPromptSubmit");
    assert_eq!(json["event"]["prompt"], text);
    assert!(json["elapsed_ms"].as_u64().is_some());
    assert_eq!(f.received_settled(), format!("{before}{}\r", pasted(text)));
    let confirmed = deliveries(&f, "confirmed");
    assert_eq!(confirmed.len(), 1, "{:?}", journal(&f));
    assert_eq!(confirmed[0]["delivery"]["bytes"], text.len());
    assert_eq!(confirmed[0]["delivery"]["confirmed_by"], json["event"]["seq"]);
    // `explain` shows the journaled delivery.
    let out = Command::new(binaries::hookline())
        .args(["explain", SESSION, "--events-dir"])
        .arg(f.events())
        .env("XDG_CONFIG_HOME", f.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("deliver confirmed   into main ("), "{text}");
}

#[test]
fn two_concurrent_deliveries_to_one_idle_session_submit_once() {
    // The spinner keeps the turn busy for 2 s, so a latecomer cannot see a new idle either.
    let f = Fixture::at_prompt(&["--spinner"]);
    let _daemon = daemon(&f);
    let before = warm_up(&f);
    let spawn = |text: &str| {
        deliver_command(&f, &[text]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    };
    let (a, b) = (spawn("from the first"), spawn("from the second"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let mut codes = [a.status.code(), b.status.code()];
    codes.sort();
    assert_eq!(codes, [Some(0), Some(1)], "{}\n{}", stderr(&a), stderr(&b));
    let (winner, loser) = if a.status.code() == Some(0) { ("first", &b) } else { ("second", &a) };
    assert!(stderr(loser).contains("refused by the input decision"), "{}", stderr(loser));
    let received = f.received_settled();
    assert_eq!(received, format!("{before}{}\r", pasted(&format!("from the {winner}"))));
}

#[test]
fn no_daemon_means_exit_2_and_no_byte() {
    let f = Fixture::at_prompt(&[]);
    f.tmux.type_line("warm up").unwrap();
    f.wait_for_screen(|s| s.contains("● done"));
    let out = hookline_deliver(&f, &["hello"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("nothing typed: only a live authority may allow input"), "{err}");
    assert!(!err.contains("replayed"), "never the replay fallback: {err}");
    assert_eq!(f.received_settled(), "warm up\r");
}

#[test]
fn control_characters_are_refused_before_the_daemon_is_asked() {
    let f = Fixture::at_prompt(&[]);
    let _daemon = daemon(&f);
    let before = warm_up(&f);
    let out = hookline_deliver(&f, &["x\x1b[201~\rrm -rf /"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("control character U+001B"), "{}", stderr(&out));
    // The slot was not taken: a clean delivery still gets through.
    let out = deliver_command(&f, &["-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"from stdin")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f.received_settled(), format!("{before}{}\r", pasted("from stdin")));
}

#[test]
fn a_dialog_on_screen_refuses_with_exit_1_and_the_dialog_is_untouched() {
    let f = Fixture::start(&["--dialog"]);
    let _daemon = daemon(&f);
    let before = f.wait_for_screen(|s| s.contains("Do you want to proceed?"));
    let out = hookline_deliver(&f, &["--json", "yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "refused");
    assert_eq!(json["delivered"], false);
    assert_eq!(json["refused_by"], "decision");
    assert_eq!(json["pane"]["dialog"], true, "{json}");
    assert_eq!(json["decision"]["verdict"], "withhold");
    assert_eq!(f.received_settled(), "", "a refused delivery sends no byte");
    assert_eq!(f.tmux.screen().unwrap(), before, "the dialog is still there, untouched");
    assert_eq!(deliveries(&f, "refused").len(), 1, "{:?}", journal(&f));
}

#[test]
fn broken_hooks_exit_3_loudly_with_a_journal_entry() {
    let f = Fixture::at_prompt(&["--no-prompt-hook"]);
    let _daemon = daemon(&f);
    let before = warm_up(&f);
    let out = hookline_deliver(&f, &["--json", "anyone there"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("UNCONFIRMED"), "the stderr line is printed with --json too: {err}");
    assert!(err.contains("no turn_start"), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["delivered"].clone(), json["confirmed"].clone()), (true.into(), false.into()));
    assert_eq!(f.received_settled(), format!("{before}{}\r", pasted("anyone there")));
    let unconfirmed = deliveries(&f, "unconfirmed");
    assert_eq!(unconfirmed.len(), 1, "{:?}", journal(&f));
    assert!(unconfirmed[0]["reason"].as_str().unwrap().contains("no turn_start"));
}

#[test]
fn an_eaten_enter_is_healed_and_journaled() {
    let f = Fixture::at_prompt(&["--eat-first-enter"]);
    let _daemon = daemon(&f);
    // The warm-up is typed, not pasted: the eaten Enter is the delivery's.
    let before = warm_up(&f);
    let out = hookline_deliver(&f, &["--json", "please heal"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["enter_resent"], true, "{json}");
    assert_eq!(f.received_settled(), format!("{before}{}\r\r", pasted("please heal")));
    assert_eq!(deliveries(&f, "self_heal").len(), 1, "{:?}", journal(&f));
}

#[test]
fn wait_gets_an_allow_once_the_session_goes_idle() {
    let f = Fixture::at_prompt(&["--long-child"]);
    let _daemon = daemon(&f);
    // A turn running a silent child for 3 s: not idle yet.
    f.tmux.type_line("start the long thing").unwrap();
    thread::sleep(Duration::from_millis(300));
    let without = hookline_deliver(&f, &["not now"]);
    assert_eq!(without.status.code(), Some(1), "no --wait: asked once: {}", stderr(&without));
    let started = Instant::now();
    let out = hookline_deliver(&f, &["--wait", "20s", "after the long thing"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_secs(1), "it waited for the idle");
    assert_eq!(
        f.received_settled(),
        format!("start the long thing\r{}\r", pasted("after the long thing"))
    );
}

#[test]
fn decide_reads_the_pane_it_is_given() {
    let f = Fixture::at_prompt(&[]);
    let _daemon = daemon(&f);
    warm_up(&f);
    // A person's draft in the composer: input is withheld, and nothing is typed.
    f.tmux.type_text("a draft").unwrap();
    f.wait_for_screen(|s| s.contains("❯ a draft"));
    let out = hookline_decide(&f, "input");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = json["evidence"]["caller"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["field"] == "typed_not_submitted" && f["asks"] == "hold"),
        "{json}"
    );
    assert_eq!(f.received_settled(), "warm up\ra draft");
}

#[test]
fn decide_withholds_input_and_a_nudge_from_a_pane_whose_program_has_exited() {
    let f = Fixture::at_prompt(&[]);
    let _daemon = daemon(&f);
    warm_up(&f);
    // The agent is killed at its prompt: it fires nothing, the session still reads idle.
    let pid = f.tmux.pane_pid().unwrap();
    // SAFETY: kill(2) on the fake agent this test started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    f.tmux.wait_for_exit(Duration::from_secs(10)).unwrap();
    let mut client = hookline::daemon::Client::connect(&f.events()).unwrap();
    assert_eq!(client.state(SESSION).unwrap().unwrap().state.as_str(), "idle");
    let ask = |question: &str| {
        let out = hookline_decide(&f, question);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), json["rule"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(ask("input"), (Some(1), "window-dead".to_owned()));
    assert_eq!(ask("nudge"), (Some(1), "window-dead".to_owned()));
    // A dead pane never makes `crashed` permissive: only structured signals do.
    let (_, rule) = ask("crashed");
    assert_ne!(rule, "window-dead");
    // The slot was never taken: the session is still idle and its input available.
    let view = client.state(SESSION).unwrap().unwrap();
    assert_eq!((view.state.as_str(), view.input.as_str()), ("idle", "available"));
}

#[test]
fn no_enter_is_pressed_when_the_session_opens_a_dialog_by_itself_after_the_paste() {
    // The paste's end starts a turn by itself that asks for permission (a background task
    // ending just then): the delivery's Enter would approve that dialog.
    let f = Fixture::at_prompt(&["--dialog-on-paste"]);
    let _daemon = daemon(&f);
    let before = warm_up(&f);
    let out = hookline_deliver(&f, &["--json", "say ok"]);
    assert_eq!(out.status.code(), Some(3), "typed, not confirmed, loud: {}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["delivered"].clone(), json["confirmed"].clone()), (true.into(), false.into()));
    let err = stderr(&out);
    assert!(err.contains("no Enter was pressed") && err.contains("left its idle prompt"), "{err}");
    // The paste and nothing after it: the dialog is still open, unanswered.
    assert_eq!(f.received_settled(), format!("{before}{}", pasted("say ok")));
    let screen = f.tmux.screen().unwrap();
    assert!(screen.contains("Do you want to proceed?") && !screen.contains("approved"), "{screen}");
    assert_eq!(deliveries(&f, "unconfirmed").len(), 1, "{:?}", journal(&f));
}
