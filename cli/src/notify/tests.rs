//! The notifier, with an injected clock: a tracker fed captured payloads, the notifier shown
//! its snapshots, commands run for real.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use hookline::profile::Profiles;
use hookline::state::Tracker;
use hookline::testing::{HookCall, T0};

const C: &str = "claude-code/2.1.332/";
const MS: u64 = 1_000_000;

struct Rig {
    tracker: Tracker,
    notifier: Notifier,
    profiles: Profiles,
    seq: u64,
    reports: mpsc::Receiver<Report>,
}

impl Rig {
    fn new(toml: &str, journal: &Path) -> Rig {
        let profiles = Profiles::shipped().unwrap();
        let config = NotifyConfig::parse(toml, "test").unwrap();
        let (tx, reports) = mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let runner = Runner::new(Some(NotifyJournal::new(journal, 1 << 20)), 4, move |r| {
            let _ = tx.lock().unwrap().send(r);
        });
        Rig {
            tracker: Tracker::new(profiles.clone(), T0),
            notifier: Notifier::new(config, runner),
            profiles,
            seq: 0,
            reports,
        }
    }

    /// Applies a captured payload for `session` at `at_ms`, and observes it then.
    fn hook(&mut self, session: &str, fixture: &str, at_ms: u64) -> Vec<Firing> {
        let payload = BTreeMap::new();
        let fixture = format!("{C}{fixture}");
        let mut call = HookCall::of_fixture("claude", session, &fixture, &payload);
        call.tag = Some("task-1");
        self.seq += 1;
        let at = T0 + at_ms * MS;
        let event = call.event(&self.profiles, self.seq, at).unwrap();
        self.tracker.apply(&event);
        let snapshot = self.tracker.snapshot(session, at).unwrap();
        self.notifier.observe(&snapshot, Some(&event), at, Mode::Fire)
    }

    fn tick(&mut self, at_ms: u64) -> Vec<Firing> {
        let at = T0 + at_ms * MS;
        let snapshots = self.tracker.snapshots(at);
        self.notifier.tick(&snapshots, at, Mode::Fire)
    }

    fn report(&self) -> Report {
        self.reports.recv_timeout(Duration::from_secs(10)).expect("a report")
    }
}

fn outcomes(firings: &[Firing]) -> Vec<(&str, Trigger, Outcome)> {
    firings.iter().map(|f| (f.rule.as_str(), f.facts.reason, f.outcome)).collect()
}

#[test]
fn a_permission_wait_fires_once_and_a_same_state_event_is_no_transition() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(
        "[[notify]]\nname = \"ask\"\non = [\"waiting_on_human.permission\"]\nrun = [\"true\"]\n",
        &tmp.path().join("j"),
    );
    assert!(rig.hook("s1", "UserPromptSubmit.json", 0).is_empty());
    assert!(rig.hook("s1", "PreToolUse.json", 10).is_empty());
    let fired = rig.hook("s1", "PermissionRequest.json", 20);
    assert_eq!(outcomes(&fired), [("ask", Trigger::Permission, Outcome::Started)]);
    assert_eq!(fired[0].facts.tool.as_deref(), Some("Bash"));
    assert_eq!(fired[0].facts.detail.as_deref(), Some("permission"));
    // Claude's own permission notification, while the dialog is open: the same state.
    assert!(rig.hook("s1", "Notification-permission_prompt.json", 30).is_empty());
    let report = rig.report();
    assert_eq!((report.record.outcome, report.journal_error), (Outcome::Ran, None));
    let journal = NotifyJournal::new(tmp.path().join("j"), 1 << 20).read();
    assert_eq!(journal.len(), 1);
    assert_eq!((journal[0].key.as_str(), journal[0].trigger), ("claude:s1", Trigger::Permission));
}

#[test]
fn a_flapping_wait_is_debounced_and_each_session_has_its_own_window() {
    let tmp = tempfile::tempdir().unwrap();
    let rule = "debounce = \"5s\"\n[[notify]]\non = [\"waiting_on_human\"]\nrun = [\"true\"]\n";
    let mut rig = Rig::new(rule, &tmp.path().join("j"));
    let into_wait = |rig: &mut Rig, session: &str, at: u64| {
        rig.hook(session, "PreToolUse.json", at);
        rig.hook(session, "PermissionRequest.json", at + 1)
    };
    assert_eq!(outcomes(&into_wait(&mut rig, "s1", 0))[0].2, Outcome::Started);
    rig.hook("s1", "PostToolUse.json", 1000);
    assert_eq!(outcomes(&into_wait(&mut rig, "s1", 2000))[0].2, Outcome::Debounced);
    assert_eq!(outcomes(&into_wait(&mut rig, "s2", 2000))[0].2, Outcome::Started);
    rig.hook("s1", "PostToolUse.json", 3000);
    assert_eq!(outcomes(&into_wait(&mut rig, "s1", 6000))[0].2, Outcome::Started);
}

#[test]
fn unknown_fires_once_per_spell_after_its_duration_and_not_when_late() {
    let tmp = tempfile::tempdir().unwrap();
    let rule = "late-after = \"1m\"\n[[notify]]\nname = \"lost\"\non = [\"unknown\"]\nunknown-after = \"30s\"\nrun = [\"true\"]\n";
    let mut rig = Rig::new(rule, &tmp.path().join("j"));
    rig.hook("s1", "SessionStart-startup.json", 0);
    assert!(rig.tick(29_000).is_empty());
    assert_eq!(outcomes(&rig.tick(30_000)), [("lost", Trigger::Unknown, Outcome::Started)]);
    assert!(rig.tick(31_000).is_empty());
    // A second session whose spell crossed the threshold long before anyone looked.
    rig.hook("s2", "SessionStart-startup.json", 40_000);
    assert_eq!(outcomes(&rig.tick(200_000)), [("lost", Trigger::Unknown, Outcome::Late)]);
    // A restarted notifier remembers the announced spells from the journal.
    let settled = [rig.report().record.outcome, rig.report().record.outcome];
    assert!(settled.contains(&Outcome::Ran) && settled.contains(&Outcome::Late), "{settled:?}");
    let journal = NotifyJournal::new(tmp.path().join("j"), 1 << 20).read();
    let mut again = Rig::new(rule, &tmp.path().join("j2"));
    again.notifier.remember(&journal);
    again.hook("s1", "SessionStart-startup.json", 0);
    assert!(again.tick(30_000).is_empty());
}

#[test]
fn filters_pass_only_their_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = r#"
        [[notify]]
        name = "codex-only"
        on = ["idle"]
        cli = "codex"
        run = ["true"]
        [[notify]]
        name = "tagged"
        on = ["idle"]
        tag = "task-*"
        run = ["true"]
        [[notify]]
        name = "elsewhere"
        on = ["idle"]
        cwd = "/nowhere/**"
        run = ["true"]
    "#;
    let mut rig = Rig::new(rules, &tmp.path().join("j"));
    rig.hook("s1", "UserPromptSubmit.json", 0);
    assert_eq!(
        outcomes(&rig.hook("s1", "Stop.json", 10)),
        [("tagged", Trigger::Idle, Outcome::Started)]
    );
}

#[test]
fn an_event_read_long_after_it_was_written_fires_late() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(
        "late-after = \"1m\"\n[[notify]]\non = [\"idle\"]\nrun = [\"true\"]\n",
        &tmp.path().join("j"),
    );
    rig.hook("s1", "UserPromptSubmit.json", 0);
    let payload = BTreeMap::new();
    let fixture = format!("{C}Stop.json");
    let event = HookCall::of_fixture("claude", "s1", &fixture, &payload)
        .event(&rig.profiles, 2, T0 + 10 * MS)
        .unwrap();
    rig.tracker.apply(&event);
    let later = T0 + 120_000 * MS;
    let snapshot = rig.tracker.snapshot("s1", later).unwrap();
    let fired = rig.notifier.observe(&snapshot, Some(&event), later, Mode::Fire);
    assert_eq!(fired[0].outcome, Outcome::Late);
    assert_eq!(rig.report().record.outcome, Outcome::Late);
}

#[test]
fn the_command_gets_exactly_the_documented_variables() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("env");
    let rule = format!(
        "[[notify]]\non = [\"waiting_on_human\"]\nrun = [\"sh\", \"-c\", \"env | grep ^HOOKLINE_ | sort > {}\"]\n",
        out.display()
    );
    let mut rig = Rig::new(&rule, &tmp.path().join("j"));
    rig.hook("s1", "PreToolUse.json", 0);
    rig.hook("s1", "PermissionRequest.json", 5);
    assert_eq!(rig.report().record.outcome, Outcome::Ran);
    let env = std::fs::read_to_string(&out).unwrap();
    let names: Vec<&str> = env.lines().map(|l| l.split('=').next().unwrap()).collect();
    let mut documented: Vec<&str> = Facts::env(&Facts {
        session: None,
        tag: None,
        host: None,
        cli: String::new(),
        cwd: None,
        state: StateKind::Idle,
        detail: None,
        reason: Trigger::Idle,
        tool: None,
        message: None,
        age_ms: 0,
    })
    .iter()
    .map(|(k, _)| *k)
    .collect();
    // What the test itself runs with (HOOKLINE_BLESS, ...) is inherited, as any variable is.
    let inherited: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    let extra: Vec<&str> = inherited
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("HOOKLINE_") && !documented.contains(k))
        .collect();
    documented.extend(extra);
    documented.sort();
    assert_eq!(names, documented);
    assert!(env.contains("HOOKLINE_STATE=waiting_on_human\n"), "{env}");
    assert!(env.contains("HOOKLINE_REASON=waiting_on_human\n"), "{env}");
    assert!(env.contains("HOOKLINE_SESSION=s1\n"), "{env}");
    assert!(env.contains("HOOKLINE_TAG=task-1\n"), "{env}");
    assert!(env.contains("HOOKLINE_TOOL=Bash\n"), "{env}");
}

#[test]
fn a_hanging_command_is_killed_with_its_process_group_and_journaled() {
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("child.pid");
    let rule = format!(
        "[[notify]]\non = [\"idle\"]\ntimeout = \"300ms\"\nshell = true\nrun = \"sleep 30 & echo $! > {}; wait\"\n",
        pid_file.display()
    );
    let mut rig = Rig::new(&rule, &tmp.path().join("j"));
    rig.hook("s1", "UserPromptSubmit.json", 0);
    assert_eq!(rig.hook("s1", "Stop.json", 10)[0].outcome, Outcome::Started);
    // The command runs until it is killed: observing returned before it settled.
    assert!(rig.reports.try_recv().is_err(), "observing waited for the command");
    let report = rig.report();
    assert_eq!(report.record.outcome, Outcome::TimedOut);
    let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // The background sleep was in the group: it is gone (or a zombie about to be reaped).
    std::thread::sleep(Duration::from_millis(100));
    let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
    assert!(stat.is_empty() || stat.contains(") Z "), "{stat}");
    let journal = NotifyJournal::new(tmp.path().join("j"), 1 << 20).read();
    assert_eq!(journal[0].outcome, Outcome::TimedOut);
}

#[test]
fn a_failing_or_missing_command_is_journaled_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = r#"
        [[notify]]
        name = "fails"
        on = ["idle"]
        run = ["sh", "-c", "echo no display >&2; exit 3"]
        [[notify]]
        name = "missing"
        on = ["idle"]
        run = ["/nonexistent/notifier"]
    "#;
    let mut rig = Rig::new(rules, &tmp.path().join("j"));
    rig.hook("s1", "UserPromptSubmit.json", 0);
    rig.hook("s1", "Stop.json", 10);
    let mut reports = [rig.report(), rig.report()];
    reports.sort_by(|a, b| a.record.rule.cmp(&b.record.rule));
    let [fails, missing] = reports;
    assert_eq!(fails.record.outcome, Outcome::Failed);
    assert_eq!(fails.record.exit_code, Some(3));
    assert_eq!(fails.record.error.as_deref(), Some("no display"));
    assert_eq!(missing.record.outcome, Outcome::CannotRun);
    assert!(missing.record.error.unwrap().starts_with("cannot run /nonexistent/notifier: "));
}
