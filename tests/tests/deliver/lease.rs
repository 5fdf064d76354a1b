//! Input as a lease, from a shell (issue 26): `hookline decide`, `hookline lease` and
//! `hookline deliver`, the built binaries, through a real daemon, against fake agents in a real
//! tmux server whose hooks go through the real relay. Every test asserts what the agent
//! received, byte for byte.

use super::live::{Live, Spec, json, lease_of, pasted, stderr, stdout, wait_for};

const S: &str = "lease-session-1";

/// One agent at a live idle, with a daemon reading `policy`.
fn idle_session(flags: &[&str], policy: &str) -> (Live, String) {
    let mut live = Live::start(Spec::new(S).flags(flags));
    live.write_policy(policy);
    live.start_daemon();
    let before = live.turn(0, "warm up");
    (live, before)
}

#[test]
fn a_peek_takes_nothing_and_the_deliver_after_it_is_confirmed() {
    let (live, before) = idle_session(&[], "");
    let out = live.decide(S, "input", &["--peek"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("nothing was taken"), "{said}");
    assert!(!said.contains("\nlease "), "a peek holds no lease: {said}");
    let out = live.decide(S, "input", &["--peek", "--json"]);
    let d = json(&out);
    assert_eq!((&d["verdict"], d.get("lease")), (&"allow".into(), None), "{d}");
    let out = live.lease(&["list", "--json"]);
    assert_eq!(json(&out), serde_json::json!([]), "{}", stdout(&out));
    let out = live.deliver(0, &["after a peek"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(&format!("delivered to {S}")), "{}", stdout(&out));
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted("after a peek")));
}

/// `hookline lease list --json`: the ids held.
fn held(live: &Live) -> Vec<String> {
    let out = live.lease(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let leases = json(&out);
    leases.as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_lease_decide_took_is_the_only_way_to_type_at_that_idle_and_is_spent_once() {
    let (live, before) = idle_session(&[], "");
    let out = live.decide(S, "input", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lease = lease_of(&out);
    assert!(lease.starts_with("l-"), "{lease}");
    assert_eq!(held(&live), std::slice::from_ref(&lease));
    // Without the lease, the slot is taken: refused, nothing typed.
    let out = live.deliver(0, &["without the lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("input-slot-refused"), "{}", stderr(&out));
    // A lease nobody was given: refused, nothing typed, and nothing to release.
    let out = live.deliver(0, &["--lease", "l-000000000000000000000000", "with a made-up lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no lease l-000000000000000000000000"), "{}", stderr(&out));
    let out = live.lease(&["release", "l-000000000000000000000000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), before, "nothing typed");
    // Under the lease: typed and confirmed; the lease is used.
    let out = live.deliver(0, &["--lease", &lease, "--json", "under the lease"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = json(&out);
    assert_eq!(
        (&answer["outcome"], &answer["lease"]),
        (&"confirmed".into(), &lease.clone().into())
    );
    let typed = format!("{before}{}\r", pasted("under the lease"));
    assert_eq!(live.agents[0].received(), typed);
    assert!(held(&live).is_empty());
    // A used lease types nothing again, even at the next idle, and cannot be given back.
    live.wait_idle_after(0, answer["event"]["seq"].as_u64());
    let out = live.deliver(0, &["--lease", &lease, "twice under one lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("lease {lease} is used")), "{}", stderr(&out));
    let out = live.lease(&["release", &lease]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is used"), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), typed, "nothing typed");
}

#[test]
fn a_released_lease_frees_the_slot_for_a_deliver() {
    let (live, before) = idle_session(&[], "");
    let out = live.decide(S, "input", &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lease = json(&out)["lease"].as_str().expect("lease in --json").to_owned();
    let out = live.lease(&["release", &lease]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("the slot is free for the next caller"), "{}", stdout(&out));
    let out = live.lease(&["release", &lease]);
    assert_eq!(out.status.code(), Some(1), "released once: {}", stdout(&out));
    assert!(stderr(&out).contains("is released"), "{}", stderr(&out));
    let out = live.deliver(0, &["after the release"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted("after the release")));
    // A released lease types nothing.
    let out = live.deliver(0, &["--lease", &lease, "under a released lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn another_sessions_lease_types_nothing_into_this_one() {
    let mut live = Live::start(Spec::new("lease-a").tag("task-a"));
    live.add(Spec::new("lease-b").tag("task-b"));
    live.start_daemon();
    let (a, b) = (live.turn(0, "warm up a"), live.turn(1, "warm up b"));
    let out = live.decide("task-b", "input", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lease_b = lease_of(&out);
    let out = live.deliver(0, &["--lease", &lease_b, "into a under b's lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains(&format!("lease {lease_b} is for session \"task-b\"")), "{said}");
    // b's lease is still b's: it types into b, and a's slot was never touched.
    let out = live.deliver(1, &["--lease", &lease_b, "into b"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = live.deliver(0, &["into a"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{a}{}\r", pasted("into a")));
    assert_eq!(live.agents[1].received(), format!("{b}{}\r", pasted("into b")));
}

/// Waits until the daemon's policy says `value` for `key` (after a reload).
fn wait_policy(live: &Live, key: &str, value: &str) {
    wait_for(&format!("the daemon's {key} to be {value}"), || {
        let client = live.client();
        (client.info().policy.get(key).and_then(|v| v.as_str()) == Some(value)).then_some(())
    });
}

#[test]
fn nudges_wait_for_min_idle_and_a_reloaded_policy_keeps_idle_sessions_eligible() {
    // The first turn leaves one of its two tasks open: `stall` quotes it.
    let (live, before) = idle_session(&["--tasks"], "[nudge]\nmin-idle = \"1h\"\n");
    let out = live.deliver(0, &["--nudge"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("rule nudge-waits-for-min-idle"), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), before, "nothing typed inside nudge.min-idle");

    // SIGHUP: the policy is read again, and the idle it had is still eligible.
    live.write_policy("[nudge]\nmin-idle = \"0s\"\n");
    // SAFETY: kill(2) on the daemon this test started.
    assert_eq!(unsafe { libc::kill(live.daemon_pid() as libc::pid_t, libc::SIGHUP) }, 0);
    wait_policy(&live, "nudge.min-idle", "0s");
    let out = live.decide(S, "nudge", &["--peek", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let nudge = json(&out)["nudge_text"].as_str().unwrap().to_owned();
    assert!(nudge.contains("Second task"), "{nudge}");
    let out = live.deliver(0, &["--nudge", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = json(&out);
    assert_eq!(answer["text"], nudge.as_str(), "{answer}");
    assert_eq!(answer["decision"]["question"], "nudge", "{answer}");
    assert_eq!(answer["event"]["prompt"], nudge.as_str(), "{answer}");
    let nudged = format!("{before}{}\r", pasted(&nudge));
    assert_eq!(live.agents[0].received(), nudged);

    // The nudged turn completed the other task: nothing left to quote. `hookline daemon
    // --reload` reads a changed policy, and the new idle stays eligible.
    live.wait_idle_after(0, answer["event"]["seq"].as_u64());
    live.write_policy("[nudge]\nmin-idle = \"0s\"\n[input]\nmax-idle-age = \"1h\"\n");
    let out = live.hookline("daemon", &["--reload"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("live generation goes on"), "{}", stdout(&out));
    wait_policy(&live, "input.max-idle-age", "1h");
    // A nudge with nothing to quote and no text: a usage error, nothing typed, the slot
    // given back.
    let out = live.deliver(0, &["--nudge"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("has no text to quote"), "{}", stderr(&out));
    let out = live.deliver(0, &["after the reload"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{nudged}{}\r", pasted("after the reload")));
}

#[test]
fn after_a_daemon_restart_the_refusal_names_the_cause_and_the_way_out() {
    let (mut live, before) = idle_session(&[], "");
    live.start_daemon();
    let out = live.deliver(0, &["after a restart"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("predates this live generation"), "the cause: {said}");
    assert!(said.contains("the daemon or serve restarted since"), "the cause: {said}");
    assert!(said.contains("the session's next turn end re-opens input"), "the way out: {said}");
    assert!(said.contains("a person typing into its pane"), "the way out: {said}");
    let out = live.decide(S, "input", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("predates this live generation"), "{}", stdout(&out));
    let out = live.hookline("status", &[]).output().unwrap();
    let views = json(&out);
    let input = views[0]["input"].as_str().unwrap();
    assert!(input.starts_with("waiting for a live event: "), "{views}");
    // And on a terminal, as a person reads it.
    let status = format!(
        "XDG_CONFIG_HOME='{}' '{}' status --events-dir '{}'; read _",
        live.config().display(),
        hookline_tests::binaries::hookline().display(),
        live.events().display()
    );
    live.tmux.command(&["new-window", "-d", "-t", "main:1", &status]).unwrap();
    let screen = wait_for("status on a terminal", || {
        let screen = live.tmux.command(&["capture-pane", "-p", "-J", "-t", "main:1"]).ok()?;
        screen.contains("last event").then_some(screen)
    });
    assert!(screen.contains("idle (waiting for a live event)"), "{screen}");
    assert!(screen.contains("the session's next turn end re-opens input"), "{screen}");
    assert_eq!(live.agents[0].received(), before, "nothing typed");
    // The way out: a person's turn ends live.
    let before = live.turn(0, "a person's turn");
    let out = live.deliver(0, &["after a live turn end"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted("after a live turn end")));
}

#[test]
fn a_peek_counts_toward_no_cap_streak_or_counter() {
    let runs = tempfile::NamedTempFile::new().unwrap();
    let classifier =
        format!("cat >/dev/null; echo run >> '{}'; echo finished", runs.path().display());
    let policy = format!(
        "[nudge]\nmin-idle = \"0s\"\nmax-in-a-row = 1\n[escalate]\nwithheld-in-a-row = 2\n\
         [classifier]\ncommand = [\"/bin/sh\", \"-c\", {classifier:?}]\nmax-per-session = 1\n"
    );
    let (live, before) = idle_session(&["--tasks"], &policy);
    let journaled = live.journal().len();
    for _ in 0..3 {
        // A nudge peeked at: allowed each time, the cap of one untouched.
        let out = live.decide(S, "nudge", &["--peek"]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        // A withheld `crashed` peeked at: no streak toward escalate.withheld-in-a-row.
        let out = live.decide(S, "crashed", &["--peek"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    }
    assert!(held(&live).is_empty(), "a peek holds no lease");
    assert_eq!(live.journal().len(), journaled, "a peek is not journaled: {:?}", live.journal());
    let out = live.decide(S, "escalate", &[]);
    assert_eq!(out.status.code(), Some(0), "no streak from peeks: {}", stdout(&out));
    // The one nudge the cap allows is still there.
    let out = live.deliver(0, &["--nudge", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = json(&out);
    let nudged = format!("{before}{}\r", pasted(answer["text"].as_str().unwrap()));
    assert_eq!(live.agents[0].received(), nudged);
    // At the next idle (nothing left to quote, a last message): the real nudge counted.
    live.wait_idle_after(0, answer["event"]["seq"].as_u64());
    let out = live.decide(S, "nudge", &["--peek"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("nudge-cap-reached"), "{}", stdout(&out));
    // Peeks at `stall` never consult the classifier; the one consult allowed runs after.
    for _ in 0..2 {
        let out = live.decide(S, "stall", &["--peek"]);
        assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    }
    assert_eq!(std::fs::read_to_string(runs.path()).unwrap(), "", "no consult for a peek");
    let out = live.decide(S, "stall", &["--json"]);
    assert_eq!(json(&out)["rule"], "stall-classifier-finished", "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(runs.path()).unwrap(), "run\n");
    // Withheld `crashed` asked for real do count: the streak escalates.
    for _ in 0..2 {
        live.decide(S, "crashed", &[]);
    }
    let out = live.decide(S, "escalate", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("withheld-in-a-row"), "{}", stdout(&out));
}

#[test]
fn an_abandoned_lease_expires_after_input_lease_expires_after() {
    let (live, before) = idle_session(&[], "[input]\nlease-expires-after = \"1s\"\n");
    let out = live.decide(S, "input", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lease = lease_of(&out);
    // Its holder went away without a word: the slot stays taken until the lease expires.
    let out = live.deliver(0, &["while it is held"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    wait_for("the lease to expire", || held(&live).is_empty().then_some(()));
    let out = live.deliver(0, &["after it expired"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted("after it expired")));
    let out = live.deliver(0, &["--lease", &lease, "under the expired lease"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("expired"), "{}", stderr(&out));
    let out = live.lease(&["release", &lease]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn a_waiting_nudge_is_typed_once_min_idle_has_passed_not_at_the_end_of_its_wait() {
    let (live, before) = idle_session(&["--tasks"], "[nudge]\nmin-idle = \"1s\"\n");
    let out = live.deliver(0, &["--nudge", "--wait", "30s", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = json(&out);
    let allowed_after = answer["allowed_after_ms"].as_u64().unwrap();
    assert!(allowed_after < 15_000, "asked again once min-idle passed: {answer}");
    let nudge = answer["text"].as_str().unwrap();
    assert_eq!(live.agents[0].received(), format!("{before}{}\r", pasted(nudge)));
}
