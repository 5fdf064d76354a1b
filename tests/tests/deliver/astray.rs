//! Nothing typed astray (issue 27): each way an adversarial run made `hookline deliver` type
//! or confirm wrongly, reproduced with the built binaries, a real daemon, the real relay and
//! fake agents in a real tmux server. Every test asserts what each agent received.

use std::process::Stdio;

use super::live::{Live, Spec, json, pasted, stderr, stdout, wait_for};
use super::{PASTE_END, PASTE_START};

#[test]
fn a_name_no_session_has_binds_no_act_to_the_session_it_begins() {
    let events_of_nobody = tempfile::tempdir().unwrap();
    let mut live = Live::start(Spec::new("sess-10").tag("task-10"));
    // task-1 runs in the next pane, silent: its hooks reach no daemon.
    live.add(Spec::new("sess-1").tag("task-1").silent_in(events_of_nobody.path().into()));
    live.start_daemon();
    let before = live.turn(0, "warm up");
    let out = live.decide("task-1", "input", &[]);
    assert_eq!(out.status.code(), Some(3), "no signal for task-1: {}", stdout(&out));
    assert!(!stdout(&out).contains("lease "), "{}", stdout(&out));
    assert!(stderr(&out).contains("task-10"), "the names it resembles: {}", stderr(&out));
    let out = live.deliver(1, &["meant for task-1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no session is named \"task-1\""), "{}", stderr(&out));
    // task-10's slot is untouched: its own delivery gets it.
    let out = live.deliver(0, &["meant for task-10"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted("meant for task-10")));
    assert_eq!(live.agents[1].received(), "", "nothing typed into task-1's pane");
}

#[test]
fn panes_renumbered_between_the_paste_and_the_enter_get_no_enter_elsewhere() {
    // main:0.0 a shell's pane, main:0.1 the session, main:0.2 a neighbour with a dialog open.
    let mut live = Live::start(Spec::new("filler"));
    let s = live.add(Spec::new("renumbered"));
    let neighbour = live.add(Spec::new("neighbour").flags(&["--dialog"]));
    let dialog = live.wait_for_screen(neighbour, |s| s.contains("Do you want to proceed?"));
    // Two seconds between the paste and the Enter: time to close a pane in between.
    live.write_overlay("claude", "[deliver]\nenter-delay = \"2s\"\n");
    live.start_daemon();
    let before = live.turn(s, "warm up");
    let name = live.agents[s].name().to_owned();
    let deliver = |target: &str, text: &str| {
        live.deliver_command(&name, target, &["--json", text])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };

    // The pane before it closes after the paste: main:0.1 is the neighbour now, and the Enter
    // still goes to the session's pane, by its id.
    let mut child = deliver("main:0.1", "first");
    let typed = wait_for("the paste", || {
        if child.try_wait().unwrap().is_some() {
            let out = std::mem::replace(&mut child, deliver("x", "x")).wait_with_output().unwrap();
            panic!("deliver ended before its Enter: {}\n{}", stdout(&out), stderr(&out));
        }
        let got = live.agents[s].received();
        got.ends_with(PASTE_END).then_some(got)
    });
    live.tmux.command(&["kill-pane", "-t", &live.agents[0].pane]).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = json(&out);
    assert_eq!(answer["pane_id"], live.agents[s].pane.as_str(), "{answer}");
    assert_eq!(typed, format!("{before}{PASTE_START}first{PASTE_END}"));
    assert_eq!(live.agents[s].received(), format!("{before}{}\r", pasted("first")));

    // The session's own pane closes after the paste: main:0.0 is the neighbour now; no Enter
    // is pressed anywhere, and the answer says which keys went where.
    live.wait_idle_after(s, answer["event"]["seq"].as_u64());
    let child = deliver("main:0.0", "second");
    live.agents[s].wait_received(&format!("{PASTE_START}second{PASTE_END}"));
    live.tmux.command(&["kill-pane", "-t", &live.agents[s].pane]).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let answer = json(&out);
    assert_eq!(answer["outcome"], "unconfirmed", "{answer}");
    assert_eq!(answer["sent"], serde_json::json!({"paste": true, "enter": 0}), "{answer}");
    assert_eq!(answer["pane_id"], live.agents[s].pane.as_str(), "{answer}");
    assert!(stderr(&out).contains("the text was pasted (no Enter)"), "{}", stderr(&out));
    assert_eq!(live.agents[neighbour].received(), "", "no key reached the neighbour");
    let now = live.tmux.command(&["capture-pane", "-p", "-t", &live.agents[neighbour].pane]);
    assert_eq!(now.unwrap(), dialog.trim_end(), "the dialog is untouched");
}

/// Whether `pid` is blocked reading its socket (`read` or `recvfrom`), as
/// `/proc/PID/syscall` says.
fn blocked_reading(pid: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    const READS: [&str; 2] = ["0", "45"];
    #[cfg(target_arch = "aarch64")]
    const READS: [&str; 2] = ["63", "207"];
    let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    syscall.split_whitespace().next().is_some_and(|n| READS.contains(&n))
}

#[test]
fn a_delivery_interrupted_while_it_waits_types_nothing_and_frees_the_slot() {
    let hold = tempfile::tempdir().unwrap();
    let release = hold.path().join("end-the-turn");
    let release_flag = release.to_str().unwrap().to_owned();
    let mut live = Live::start(Spec::new("interrupted").flags(&["--hold-turn", &release_flag]));
    live.start_daemon();
    // The warm-up turn ends at once.
    std::fs::write(&release, "").unwrap();
    let mut typed = live.turn(0, "warm up");
    live.type_line(0, "a long turn");
    typed = live.agents[0].wait_received(&format!("{typed}a long turn\r"));
    for (signal, text) in [(libc::SIGINT, "interrupted by ^C"), (libc::SIGTERM, "terminated")] {
        wait_for("the turn to start", || (live.view(0)?.state.as_str() == "active").then_some(()));
        let requests = live.journal().iter().filter(|r| r["rule"] == "requester-gone").count();
        let mut child = live
            .deliver_command(live.agents[0].name(), &live.agents[0].pane, &["--wait", "60s", text])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once it waits for the daemon's answer, its request is the daemon's (seen blocked
        // reading in five looks in a row, 20 ms apart: not the instant `hello` takes).
        let mut looks = 0;
        wait_for("deliver to wait for its answer", || {
            if let Some(status) = child.try_wait().unwrap() {
                let mut said = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut said).unwrap();
                panic!("deliver ended before it was interrupted ({status}): {said}");
            }
            looks = if blocked_reading(child.id()) { looks + 1 } else { 0 };
            (looks >= 5).then_some(())
        });
        // SAFETY: kill(2) on the child this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "{status}");
        // The daemon sees its requester gone, and says so in the journal.
        wait_for("the daemon to cancel the delivery", || {
            let gone = live.journal().iter().filter(|r| r["rule"] == "requester-gone").count();
            (gone > requests).then_some(())
        });
        // The turn ends: nothing is typed for the requester that is gone, and the next
        // deliverer gets the slot (its own turn is held, for the next round).
        let seq = live.view(0).map(|v| v.seq);
        std::fs::write(&release, "").unwrap();
        live.wait_idle_after(0, seq);
        let next = format!("after {text}");
        let out = live.deliver(0, &[&next]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        typed = format!("{typed}{}\r", pasted(&next));
        assert_eq!(live.agents[0].received(), typed, "only the next deliverer's text");
    }
    std::fs::write(&release, "").unwrap();
}

#[test]
fn a_turn_start_whose_prompt_cannot_be_read_strictly_or_differs_confirms_nothing() {
    // The agent reports, for each delivery after the warm-up, a `UserPromptSubmit` of that
    // kind: a person's own prompt beside something a strict decoder refuses, the delivered
    // text cut inside its emoji, a person's own prompt; and last, the delivered text itself
    // beside a number beyond a float, which a lenient read of the prompt confirms.
    let kinds = "bignum,deep,surrogate,other,same-bignum";
    let mut live = Live::start(Spec::new("odd-prompts").flags(&["--odd-prompts", kinds]));
    live.start_daemon();
    let mut typed = live.turn(0, "warm up");
    for (kind, text, code) in [
        ("bignum", "beside a big number", 3),
        ("deep", "beside deep nesting", 3),
        ("surrogate", "cut inside its emoji 😀", 3),
        ("other", "a text of mine", 3),
        ("same-bignum", "the same prompt beside a big number", 0),
    ] {
        let seq = live.view(0).map(|v| v.seq);
        // A confirmation that must not come is waited for a second; one that must, longer.
        let timeout = if code == 3 { "1s" } else { "10s" };
        let out = live.deliver(0, &["--confirm-timeout", timeout, "--json", text]);
        assert_eq!(out.status.code(), Some(code), "{kind}: {}", stderr(&out));
        let answer = json(&out);
        if code == 3 {
            assert_eq!(answer["confirmed"], false, "{kind}: {answer}");
            assert!(stderr(&out).contains("another prompt"), "{kind}: {}", stderr(&out));
        } else {
            assert_eq!(answer["event"]["prompt"], text, "{kind}: {answer}");
        }
        typed = format!("{typed}{}\r", pasted(text));
        assert_eq!(live.agents[0].received(), typed, "{kind}");
        live.wait_idle_after(0, seq);
    }
}

#[test]
fn multi_line_text_is_refused_when_the_session_is_not_in_its_panes_foreground() {
    let editor_log = tempfile::NamedTempFile::new().unwrap();
    let editor = format!("exec cat > '{}'", editor_log.path().display());
    let mut live = Live::start(Spec::new("shell-fg").flags(&["--editor", "sh"]));
    live.add(Spec::new("editor-fg").flags(&["--editor", &editor]));
    live.start_daemon();
    let typed = [live.turn(0, "warm up"), live.turn(1, "warm up")];
    let text = "summarise the diff\nthen run: git push --force";
    for (i, program) in [(0, "sh"), (1, "cat")] {
        // Ctrl-G: the agent hands its terminal to a shell, or to an editor.
        let agent_pid: u32 = live
            .tmux
            .command(&["display-message", "-p", "-t", &live.agents[i].pane, "#{pane_pid}"])
            .unwrap()
            .parse()
            .unwrap();
        live.press(i, "C-g");
        wait_for(&format!("{program} in the foreground"), || {
            let group = hookline::host::foreground_group(agent_pid)?;
            (hookline::host::command_name(group)? == program).then_some(())
        });
        let out = live.deliver(i, &["--json", text]);
        assert_eq!(out.status.code(), Some(1), "{program}: {out:?}");
        let answer = json(&out);
        assert_eq!(answer["rule"], "multi-line-unbracketed", "{program}: {answer}");
        assert_eq!(answer["delivered"], false, "{program}: {answer}");
        let reason = answer["reason"].as_str().unwrap();
        assert!(reason.contains(&format!("({program}), not the session's CLI")), "{reason}");
        let ctrl_g = format!("{}\u{7}", typed[i]);
        assert_eq!(live.agents[i].received(), ctrl_g, "{program}: nothing reached the agent");
    }
    // Nothing reached the shell or the editor either: the first thing each reads is what is
    // typed now.
    live.type_line(0, "echo END-$((6*7))");
    let screen = live.wait_for_screen(0, |s| s.contains("END-42"));
    assert!(!screen.contains("summarise") && !screen.contains("git push"), "{screen}");
    live.type_line(1, "marker");
    let logged = wait_for("the editor to write its line", || {
        let text = std::fs::read_to_string(editor_log.path()).ok()?;
        text.contains("marker").then_some(text)
    });
    assert_eq!(logged, "marker\n");
}

#[test]
fn outside_tmux_deliver_types_into_the_callers_tmux_server_not_the_daemons() {
    let (callers, daemons) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The session runs on the caller's default tmux server; the daemon's default server has a
    // pane of the same name, with another agent in it.
    let mut live = Live::start_default_in(Spec::new("callers-server"), callers.path());
    let decoy = Live::start_default_in(Spec::new("daemons-server"), daemons.path());
    live.daemon_tmux_tmpdir(daemons.path());
    live.start_daemon();
    let before = live.turn(0, "warm up");
    let out = live
        .hookline("deliver", &["--tmux", "main:0.0", "--session", "callers-server", "--json"])
        .arg("into the caller's server")
        .env("TMUX_TMPDIR", callers.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let typed = format!("{before}{}\r", pasted("into the caller's server"));
    assert_eq!(live.agents[0].received(), typed);
    assert_eq!(decoy.agents[0].received(), "", "nothing typed into the daemon's server");
}

#[test]
fn a_delivery_through_serve_is_cancelled_when_its_stdin_ends() {
    use std::io::{BufRead, Write};
    let hold = tempfile::tempdir().unwrap();
    let release = hold.path().join("end-the-turn");
    let release_flag = release.to_str().unwrap().to_owned();
    let live = Live::start(Spec::new("serve-eof").flags(&["--hold-turn", &release_flag]));
    let mut serve =
        live.hookline("serve", &[]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let (tx, replies) = std::sync::mpsc::channel();
    let stdout = std::io::BufReader::new(serve.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        }
    });
    // The closure owns serve's stdin: dropping it is the end of stdin.
    let mut ask = move |request: serde_json::Value| {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    };
    let reply = || replies.recv_timeout(std::time::Duration::from_secs(20)).expect("a reply");
    ask(serde_json::json!({"id": "hello", "op": "hello"}));
    assert_eq!(reply()["ok"], true);
    // A turn held mid-way, live for this serve.
    live.type_line(0, "a long turn");
    let typed = live.agents[0].wait_received("a long turn\r");
    wait_for("serve to see the turn start", || {
        ask(serde_json::json!({"id": "state", "op": "state", "session": "serve-eof"}));
        (reply()["view"]["state"] == "active").then_some(())
    });
    let socket = live.tmux.socket_path().unwrap().to_str().unwrap().to_owned();
    let pane = serde_json::json!({"target": live.agents[0].pane, "socket": socket});
    ask(serde_json::json!({
        "id": "deliver", "op": "deliver", "session": "serve-eof", "tmux": pane,
        "text": "after the long turn", "wait_ms": 60000,
    }));
    // Answered in order: once `sessions` is, the delivery is waiting.
    ask(serde_json::json!({"id": "sessions", "op": "sessions"}));
    assert_eq!(reply()["id"], "sessions");
    drop(ask);
    // stdin ends while the turn still runs: the delivery is answered at once, refused.
    let answer = reply();
    assert_eq!(answer["id"], "deliver", "{answer}");
    assert_eq!(
        (&answer["outcome"], &answer["refused_by"], &answer["rule"]),
        (&"refused".into(), &"cancelled".into(), &"requester-gone".into()),
        "{answer}"
    );
    std::fs::write(&release, "").unwrap();
    assert!(serve.wait().unwrap().success());
    live.wait_for_screen(0, |s| s.contains("● done"));
    assert_eq!(live.agents[0].received(), typed, "nothing typed after its requester went away");
}
