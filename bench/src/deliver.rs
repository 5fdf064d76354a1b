//! Request-to-confirmed latency of `hookline deliver` into the real Claude Code TUI, beside the
//! fixed-delay verify an orchestrator does without hookline: type, wait 1.5 s, check.
//!
//! One Claude Code (the primary pinned version, from the end-to-end suites' install cache:
//! `HOOKLINE_E2E_CACHE`) runs in a private tmux server against the suites' mock API, with a real
//! `hookline daemon` on its events directory. The first prompt goes in with the library (a
//! session at launch has no idle to allow input on); then, alternating round by round:
//!
//! * `hookline deliver` (the built binary, `--wait 20s`): from the command's start to its exit
//!   0, which includes getting the allow from the daemon (the pane's three looks, the decision),
//!   the paste, the Enter and the confirming `UserPromptSubmit`; and from the allow on, by the
//!   daemon's own clock (`elapsed_ms - allowed_after_ms`);
//! * the baseline: the allow from the daemon (`decide … input`), then from the allow: a
//!   bracketed paste and Enter through tmux, a fixed 1.5 s sleep, and one check of the events
//!   directory for the prompt's `UserPromptSubmit`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use hookline::daemon::Client;
use hookline::decide::{Ask, Question};
use hookline::deliver::{Confirmations, EventsConfirmations, SessionRef, prompt_matches};
use hookline::profile::Profiles;
use hookline_tests::claude_install::{CLAUDE, Pin};
use hookline_tests::deliver_check::{Daemon, deliver_confirmed};
use hookline_tests::session::ClaudeSession;
use hookline_tests::tmux::{TARGET, Tmux};

use crate::Result;
use crate::stats::{median, ms, percentile};

/// The fixed delay of the baseline.
const FIXED_DELAY: Duration = Duration::from_millis(1500);
/// Claude's `deliver.enter-delay`, which the baseline keeps too.
const ENTER_DELAY: Duration = Duration::from_millis(150);

pub fn run(args: impl Iterator<Item = String>) -> Result<()> {
    let mut runs = 6usize;
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().ok_or("--runs needs a number")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let installed = CLAUDE.installed(Pin::Primary.version());
    let mut session = ClaudeSession::new(&installed, "bench-deliver", Duration::from_secs(3));
    session.launch_tui(&["--permission-mode", "default"]);
    session.wait_for_text("for shortcuts", Duration::from_secs(60));
    let events = session.events.path().to_owned();
    let tag = session.tag.clone();
    let daemon = Daemon::start(&events)?;
    let tmux = session.tmux.as_ref().ok_or("no tmux")?;
    deliver_confirmed(tmux, &events, "claude", &tag, "say hello, then stop")?;
    let mut client = Client::connect(&events)?;
    let (mut ours, mut ours_daemon, mut ours_allow) = (Vec::new(), Vec::new(), Vec::new());
    let mut base = Vec::new();
    let mut base_confirmed = 0;
    let mut healed = 0;
    for round in 0..runs {
        wait_idle(&mut client, &tag)?;
        let text = format!("round {round}: reply with one word");
        let started = Instant::now();
        let (code, json, stderr) =
            daemon.deliver(tmux, &events, &tag, &text, &["--wait", "20s"])?;
        let took = started.elapsed();
        if code != Some(0) {
            return Err(format!("hookline deliver exited {code:?}: {json} {stderr}").into());
        }
        healed += usize::from(json["enter_resent"] == true);
        ours.push(took);
        let (elapsed, allowed) = (json["elapsed_ms"].as_u64(), json["allowed_after_ms"].as_u64());
        let (Some(elapsed), Some(allowed)) = (elapsed, allowed) else {
            return Err(format!("hookline deliver's JSON lacks its times: {json}").into());
        };
        ours_daemon.push(Duration::from_millis(elapsed));
        ours_allow.push(Duration::from_millis(elapsed - allowed));

        wait_idle(&mut client, &tag)?;
        let text = format!("round {round}: answer in one word");
        let decision = client.decide(&Ask::new(&tag, Question::Input), None)?;
        if !decision.allowed() {
            return Err(format!("the baseline got no allow: {}", decision.reason).into());
        }
        let started = Instant::now();
        let since = hookline::format::clock::now_ns();
        let mut confirmations = EventsConfirmations::open(&events, Profiles::shipped()?)?;
        paste(tmux, &text)?;
        thread::sleep(ENTER_DELAY);
        tmux.press("Enter")?;
        thread::sleep(FIXED_DELAY);
        let found = confirmations.turn_starts(&SessionRef::Tag(tag.clone()), since)?;
        if found.iter().any(|t| t.prompt.as_deref().is_some_and(|p| prompt_matches(p, &text))) {
            base_confirmed += 1;
        }
        base.push(started.elapsed());
    }
    wait_idle(&mut client, &tag)?;
    drop(daemon);
    println!("### allow-to-confirmed into Claude Code {}\n", installed.version);
    println!(
        "{runs} rounds, alternating; `hookline deliver` self-healed an eaten Enter {healed} times.\n"
    );
    println!("| Method | Median | p90 | Confirmed by its `UserPromptSubmit` |");
    println!("|---|---:|---:|---|");
    let row = |name: &str, v: &mut Vec<Duration>, confirmed: String| {
        v.sort();
        println!("| {name} | {} | {} | {confirmed} |", ms(median(v)), ms(percentile(v, 90.0)));
    };
    row(
        "`hookline deliver`, command start to exit 0 (includes the allow)",
        &mut ours,
        format!("{runs}/{runs}, proven"),
    );
    row(
        "`hookline deliver`, inside the daemon (`elapsed_ms`)",
        &mut ours_daemon,
        format!("{runs}/{runs}, proven"),
    );
    row(
        "`hookline deliver`, from the allow (`elapsed_ms - allowed_after_ms`)",
        &mut ours_allow,
        format!("{runs}/{runs}, proven"),
    );
    row(
        "fixed delay: type, wait 1.5 s, check (from the allow)",
        &mut base,
        format!("{base_confirmed}/{runs} at the check"),
    );
    Ok(())
}

/// Waits until the daemon reads the session idle.
fn wait_idle(client: &mut Client, tag: &str) -> Result<()> {
    let started = Instant::now();
    loop {
        if client.state(tag)?.is_some_and(|v| v.state.as_str() == "idle") {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the session did not read idle within 60 s".into());
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// One bracketed paste into the pane, as `hookline deliver` types it.
fn paste(tmux: &Tmux, text: &str) -> Result<()> {
    let socket: &Path = tmux.socket_path().ok_or("no tmux socket")?;
    let mut load = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(["load-buffer", "-b", "bench", "-"])
        .stdin(Stdio::piped())
        .spawn()?;
    load.stdin.take().ok_or("no stdin")?.write_all(text.as_bytes())?;
    if !load.wait()?.success() {
        return Err("tmux load-buffer failed".into());
    }
    let status = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(["paste-buffer", "-p", "-d", "-b", "bench", "-t", TARGET])
        .status()?;
    if !status.success() {
        return Err("tmux paste-buffer failed".into());
    }
    Ok(())
}
