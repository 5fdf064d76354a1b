//! The state machine, driven by fixture files: `watcher/tests/state/*.toml`, one behaviour per
//! file, with an injected clock and no sleeps. See `watcher/tests/state/README.md` for the
//! format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::*;
use crate::testing::{HookCall, T0};
use crate::units::parse_duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Story {
    description: String,
    #[serde(default = "default_cli")]
    cli: String,
    #[serde(default = "default_session")]
    session: String,
    /// When the tracker starts; events before are history. Default: before everything.
    generation_start: Option<String>,
    step: Vec<Step>,
}

fn default_cli() -> String {
    "claude".into()
}

fn default_session() -> String {
    "s1".into()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Step {
    at: String,
    native: Option<String>,
    fixture: Option<String>,
    #[serde(default)]
    payload: BTreeMap<String, toml::Value>,
    cli: Option<String>,
    session: Option<String>,
    tag: Option<String>,
    host_pid: Option<u32>,
    /// The event's `seq` (default: the step's position, 1-based): a lower one than a step
    /// before delivers an event late, as a relay that took its number first but wrote last.
    seq: Option<u64>,
    /// Deliver as an unordered event (lock timeout): ordered by time, not seq.
    #[serde(default)]
    unordered: bool,
    /// A new tracker starts here and replays everything so far.
    #[serde(default)]
    restart: bool,
    /// Look the session up by this id or tag instead of the step's session id.
    view: Option<String>,
    /// A transcript line the session's transcript follower reads at this step.
    transcript: Option<TranscriptStep>,
    expect: Option<Expectation>,
}

/// One line of a transcript fixture (`watcher/tests/fixtures/transcript`), read at the step's
/// time; `written` is when the CLI wrote it (default: the step's time), for lag.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct TranscriptStep {
    fixture: String,
    /// 1-based.
    line: usize,
    written: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Expectation {
    state: Option<String>,
    detail: Option<String>,
    epoch: Option<u64>,
    /// `granted`: taking the slot succeeds; `refused`: it fails; `available`: the view says
    /// a slot could be taken (without taking it).
    input: Option<String>,
    refusal: Option<String>,
    authoritative: Option<bool>,
    fresh: Option<bool>,
    /// How long the view says the session has been `unknown` (a duration).
    unknown_for: Option<String>,
    rule: Option<String>,
    pending_tasks: Option<u32>,
    scheduled_wakes: Option<u32>,
    sessions: Option<usize>,
}

fn stories_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/state")
}

struct Run {
    profiles: Profiles,
    tracker: Tracker,
    history: Vec<Event>,
    trace: Vec<String>,
    /// Every session's view, as JSON, after each step (the generation id written as 0).
    wire: String,
    /// What each session's transcript said so far.
    readings: BTreeMap<String, crate::transcript::Reading>,
}

impl Run {
    fn event(&self, story: &Story, index: usize, step: &Step, at: u64) -> Option<Event> {
        let call = HookCall {
            cli: step.cli.as_deref().unwrap_or(&story.cli),
            session: step.session.as_deref().unwrap_or(&story.session),
            native: step.native.as_deref(),
            fixture: step.fixture.as_deref(),
            payload: &step.payload,
            tag: step.tag.as_deref(),
            host_pid: step.host_pid,
            unordered: step.unordered,
        };
        call.event(&self.profiles, step.seq.unwrap_or(index as u64 + 1), at)
    }
}

impl Run {
    fn read_transcript(&mut self, id: &str, step: &TranscriptStep, at: u64, here: &str) {
        use crate::transcript::entry;
        let dir = crate::testing::fixtures_dir().join("transcript");
        let text = std::fs::read_to_string(dir.join(&step.fixture)).unwrap();
        let line = text.lines().nth(step.line - 1).unwrap_or_else(|| panic!("{here}: no line"));
        let session = self.tracker.find(id).unwrap_or_else(|| panic!("{here}: no session {id}"));
        let spec = self.profiles.get(&session.key.cli).and_then(|p| p.transcript.clone());
        let format = spec.unwrap_or_else(|| panic!("{here}: no [transcript]")).format;
        let path = session.transcript_path.clone().unwrap_or_else(|| "/transcript.jsonl".into());
        let entry = entry::read(format, line.as_bytes()).unwrap();
        let written = step
            .written
            .as_deref()
            .map_or(at, |d| T0 + parse_duration(d).unwrap().as_nanos() as u64);
        let reading = self.readings.entry(id.to_owned()).or_default();
        reading.apply(&entry, written);
        let facts = TranscriptFacts { path, format, reading: reading.clone(), grew_ns: Some(at) };
        assert!(self.tracker.observe_transcript(id, facts), "{here}: transcript refused");
    }
}

/// Runs one story file; returns the state after each step.
fn run_story(path: &Path) -> Vec<String> {
    run_story_on_the_wire(path).0
}

/// Runs one story file; returns the state after each step, and every session's view as JSON
/// after each step.
fn run_story_on_the_wire(path: &Path) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let story: Story = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let profiles = Profiles::shipped().unwrap();
    let start = story
        .generation_start
        .as_deref()
        .map_or(0, |d| T0 + parse_duration(d).unwrap().as_nanos() as u64);
    let mut run = Run {
        tracker: Tracker::new(profiles.clone(), start),
        profiles,
        history: Vec::new(),
        trace: Vec::new(),
        wire: String::new(),
        readings: BTreeMap::new(),
    };
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    for (index, step) in story.step.iter().enumerate() {
        let at = T0
            + parse_duration(&step.at)
                .unwrap_or_else(|e| panic!("{name} step {index}: {e}"))
                .as_nanos() as u64;
        let here = format!("{name} step {index} (at {}): {}", step.at, story.description);
        if step.restart {
            run.tracker = Tracker::new(run.profiles.clone(), at);
            for event in &run.history {
                run.tracker.apply(event);
            }
            run.tracker.caught_up();
        }
        if let Some(event) = run.event(&story, index, step, at) {
            // What the story stamps from the generation's start on arrives after it caught up.
            if at >= start && !run.tracker.is_live() {
                run.tracker.caught_up();
            }
            run.tracker.apply(&event);
            run.history.push(event);
        }
        if let Some(t) = &step.transcript {
            let id = step.session.as_deref().unwrap_or(&story.session);
            run.read_transcript(id, t, at, &here);
        }
        let session = step.view.as_deref().or(step.session.as_deref()).unwrap_or(&story.session);
        // One line a view, sorted: sessions last heard of at the same time come in any order.
        let generation = format!("\"generation\":{},", run.tracker.generation().id);
        let mut views: Vec<String> = (run.tracker.views(at).iter())
            .map(|v| serde_json::to_string(v).unwrap().replace(&generation, "\"generation\":0,"))
            .collect();
        views.sort();
        run.wire.push_str(&format!("step {index}\n"));
        for view in views {
            run.wire.push_str(&view);
            run.wire.push('\n');
        }
        let view = run.tracker.view(session, at);
        run.trace.push(view.as_ref().map_or("none".into(), |v| v.state.as_str().to_owned()));
        let Some(expect) = &step.expect else { continue };
        if let Some(n) = expect.sessions {
            assert_eq!(run.tracker.len(), n, "{here}: sessions");
        }
        let Some(view) = view else {
            assert!(expect.state.as_deref() == Some("none"), "{here}: no session {session}");
            continue;
        };
        let show = serde_json::to_string_pretty(&view).unwrap();
        // `unknown` is loud: it always says how long it has lasted, and only it does.
        assert_eq!(
            view.unknown_for_ms.is_some(),
            view.state == StateKind::Unknown,
            "{here}: unknown_for_ms\n{show}"
        );
        if let Some(state) = &expect.state {
            assert_eq!(view.state.as_str(), state, "{here}\n{show}");
        }
        if let Some(detail) = &expect.detail {
            assert!(
                view.detail.as_deref().unwrap_or("").contains(detail.as_str()),
                "{here}: detail\n{show}"
            );
        }
        if let Some(epoch) = expect.epoch {
            assert_eq!(view.epoch, epoch, "{here}: epoch\n{show}");
        }
        if let Some(authoritative) = expect.authoritative {
            assert_eq!(view.authoritative, authoritative, "{here}: authoritative\n{show}");
        }
        if let Some(fresh) = expect.fresh {
            assert_eq!(view.fresh, fresh, "{here}: fresh\n{show}");
        }
        if let Some(unknown_for) = &expect.unknown_for {
            let ms = parse_duration(unknown_for).unwrap().as_millis() as u64;
            assert_eq!(view.unknown_for_ms, Some(ms), "{here}: unknown_for_ms\n{show}");
        }
        if let Some(rule) = &expect.rule {
            assert_eq!(
                view.last_event.rule,
                rule.as_str(),
                "{here}: rule of the last event\n{show}"
            );
        }
        if let Some(n) = expect.pending_tasks {
            assert_eq!(view.pending.tasks, n, "{here}: pending tasks\n{show}");
        }
        if let Some(n) = expect.scheduled_wakes {
            assert_eq!(view.pending.wakes, n, "{here}: scheduled wakes\n{show}");
        }
        match expect.input.as_deref() {
            None => {}
            Some("available") => assert_eq!(view.input, "available", "{here}\n{show}"),
            Some("granted") => {
                let slot = run.tracker.take_input_slot(session, at);
                assert!(slot.is_ok(), "{here}: slot refused: {}\n{show}", slot.unwrap_err());
            }
            Some("refused") => {
                let refusal = run
                    .tracker
                    .take_input_slot(session, at)
                    .expect_err(&format!("{here}: slot granted\n{show}"));
                if let Some(want) = &expect.refusal {
                    assert!(
                        refusal.to_string().contains(want.as_str()),
                        "{here}: refusal {refusal}"
                    );
                }
            }
            Some(other) => {
                panic!("{here}: input must be granted, refused or available, not {other}")
            }
        }
    }
    (run.trace, run.wire)
}

fn story_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(stories_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_state_story_holds() {
    let files = story_files();
    assert!(files.len() >= 14, "only {} stories", files.len());
    for file in files {
        run_story(&file);
    }
}

#[test]
fn every_state_storys_views_read_on_the_wire_as_committed() {
    // The wire form of the views (`status --json`, `serve`, a decision's evidence), byte for
    // byte, after every step of every story: `views.ndjson` was written before the views were
    // built from typed snapshots, and holds the wire form to that. After a deliberate change
    // of the wire form, `HOOKLINE_BLESS=1 cargo test -p hookline state_storys_views` rewrites it.
    let mut wire = String::new();
    for file in story_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        wire.push_str(&format!("# {name}\n{}", run_story_on_the_wire(&file).1));
    }
    crate::testing::assert_recorded("tests/state/views.ndjson", &wire);
}

#[test]
fn a_story_with_a_wrong_expectation_fails() {
    // The harness itself must be able to fail: a copy of a story with one expectation flipped.
    let text =
        std::fs::read_to_string(stories_dir().join("idle-input-eligible-once.toml")).unwrap();
    let broken = text.replacen("state = \"idle\"", "state = \"active\"", 1);
    assert_ne!(text, broken);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("broken.toml");
    std::fs::write(&path, broken).unwrap();
    assert!(std::panic::catch_unwind(|| run_story(&path)).is_err());
}

#[test]
fn a_claude_trace_and_a_codex_trace_of_the_same_story_give_the_same_states() {
    for story in ["same-story", "denied-story"] {
        let claude = run_story(&stories_dir().join(format!("{story}-claude.toml")));
        let codex = run_story(&stories_dir().join(format!("{story}-codex.toml")));
        assert_eq!(claude, codex, "{story}");
    }
}

/// Session s1's event from a Claude fixture, with this `seq`, `at` after [`T0`].
fn claude_event(profiles: &Profiles, fixture: &str, seq: u64, at: &str) -> Event {
    let payload = BTreeMap::new();
    let call = HookCall::of_fixture("claude", "s1", fixture, &payload);
    let at = T0 + parse_duration(at).unwrap().as_nanos() as u64;
    call.event(profiles, seq, at).unwrap()
}

#[test]
fn a_slot_asked_for_under_a_previous_generation_is_refused_and_stays_free() {
    // A caller that saw the idle under an earlier tracker (before the watcher restarted) acts
    // on a state this generation never vouched for: it must look again.
    let profiles = Profiles::shipped().unwrap();
    let event = |fixture: &str, seq: u64, at: &str| claude_event(&profiles, fixture, seq, at);
    let history = [
        event("claude-code/2.1.332/UserPromptSubmit.json", 1, "0s"),
        event("claude-code/2.1.332/Stop.json", 2, "5s"),
    ];
    let mut old = Tracker::new(profiles.clone(), T0).live();
    for e in &history {
        old.apply(e);
    }
    let seen = old.view("s1", T0).unwrap();
    assert_eq!((seen.state, seen.input.as_str()), (StateKind::Idle, "available"));

    let mut tracker = Tracker::new(profiles.clone(), T0 + 60_000_000_000);
    for e in &history {
        tracker.apply(e);
    }
    tracker.caught_up();
    for e in [
        event("claude-code/2.1.332/UserPromptSubmit.json", 3, "2m"),
        event("claude-code/2.1.332/Stop.json", 4, "2m5s"),
    ] {
        tracker.apply(&e);
    }
    let now = T0 + 130_000_000_000;
    let current = tracker.generation().id;
    assert_ne!(seen.generation, current);
    let stale = Expect { generation: Some(seen.generation), epoch: Some(seen.epoch) };
    let refusal = tracker.take_input_slot_expecting("s1", now, stale).unwrap_err();
    assert_eq!(refusal, Refusal::OtherGeneration { expected: seen.generation, current });
    assert!(refusal.to_string().contains("is not the current one"), "{refusal}");
    // The refusal took nothing: a caller with the current view gets the slot, once.
    assert_eq!(tracker.view("s1", now).unwrap().input, "available");
    let fresh = Expect { generation: Some(current), epoch: Some(seen.epoch) };
    assert!(tracker.take_input_slot_expecting("s1", now, fresh).is_ok());
    assert_eq!(
        tracker.take_input_slot_expecting("s1", now, fresh).unwrap_err(),
        Refusal::AlreadyTaken
    );
}

#[test]
fn stale_windows_replace_the_profile_windows_per_state_then_per_cli() {
    let profiles = Profiles::shipped().unwrap();
    let payload = BTreeMap::new();
    let prompt = |cli: &'static str, fixture: &'static str, session: &'static str| {
        HookCall::of_fixture(cli, session, fixture, &payload)
    };
    let minutes = |m: u64| T0 + m * 60_000_000_000;
    let tracker = |windows: StaleWindows| {
        let mut tracker = Tracker::new(profiles.clone(), T0).with_stale_windows(windows).live();
        let claude = prompt("claude", "claude-code/2.1.332/UserPromptSubmit.json", "c1");
        let gemini = prompt("gemini", "gemini/0.61.0/BeforeAgent.json", "g1");
        for event in [claude.event(&profiles, 1, T0), gemini.event(&profiles, 1, T0)] {
            tracker.apply(&event.unwrap());
        }
        tracker
    };
    let window = |d: &str| parse_duration(d).unwrap();
    let state = |t: &Tracker, session: &str, at: u64| t.view(session, at).unwrap();

    // Claude's profile: active goes stale after 15m, gemini's after 5m.
    let profile = tracker(StaleWindows::default());
    assert_eq!(state(&profile, "c1", minutes(14)).state, StateKind::Active);
    let view = state(&profile, "c1", minutes(16));
    assert_eq!(view.stale.unwrap().set_by, "profile");

    // Per state: both CLIs, shorter or longer.
    let mut windows = StaleWindows::default();
    windows.by_state.insert(StateKind::Active, window("2m"));
    let per_state = tracker(windows.clone());
    for session in ["c1", "g1"] {
        assert_eq!(state(&per_state, session, minutes(1)).state, StateKind::Active);
        let view = state(&per_state, session, minutes(3));
        assert_eq!(view.state, StateKind::Unknown, "{session}");
        assert!(view.detail.unwrap().contains("for over 2m (policy stale.active)"));
        assert_eq!(view.stale.unwrap().set_by, "stale.active");
    }

    // Per CLI wins for that CLI only; zero turns staleness off.
    windows.by_cli.entry("claude".into()).or_default().insert(StateKind::Active, Duration::ZERO);
    let per_cli = tracker(windows);
    assert_eq!(state(&per_cli, "c1", minutes(600)).state, StateKind::Active);
    let view = state(&per_cli, "g1", minutes(3));
    assert_eq!(view.stale.unwrap().set_by, "stale.active");
}

#[test]
fn stale_windows_over_keep_the_windows_they_do_not_set() {
    let window = |d: &str| parse_duration(d).unwrap();
    let mut own = StaleWindows::default();
    own.by_state.insert(StateKind::Active, window("2m"));
    own.by_cli.entry("claude".into()).or_default().insert(StateKind::Active, window("3m"));
    let mut over = StaleWindows::default();
    over.by_state.insert(StateKind::ChildCommand, window("1h"));
    over.by_cli.entry("claude".into()).or_default().insert(StateKind::Active, window("4m"));
    let tracker = Tracker::new(Profiles::shipped().unwrap(), T0)
        .with_stale_windows(own)
        .with_stale_windows_over(&over);
    let windows = tracker.stale_windows();
    assert_eq!(windows.by_state[&StateKind::Active], window("2m"));
    assert_eq!(windows.by_state[&StateKind::ChildCommand], window("1h"));
    assert_eq!(windows.by_cli["claude"][&StateKind::Active], window("4m"));
    let same = tracker.with_stale_windows_over(&StaleWindows::default());
    assert_eq!(same.stale_windows().by_state.len(), 2);
}

#[test]
fn by_arrival_history_is_never_live_and_what_arrives_after_catching_up_always_is() {
    // The generation starts at 1h; the clock is wrong both ways: history stamped 2h (ahead),
    // live events stamped 0s (stepped back an hour).
    let profiles = Profiles::shipped().unwrap();
    let event = |fixture: &str, seq: u64, at: &str| claude_event(&profiles, fixture, seq, at);
    let hour = 3_600_000_000_000;
    let mut tracker = Tracker::new(profiles.clone(), T0 + hour);
    tracker.apply(&event("claude-code/2.1.332/UserPromptSubmit.json", 1, "2h"));
    tracker.apply(&event("claude-code/2.1.332/Stop.json", 2, "2h1s"));
    let view = tracker.view("s1", T0 + hour).unwrap();
    assert_eq!((view.state, view.authoritative), (StateKind::Idle, false), "{view:?}");
    assert_eq!(
        tracker.take_input_slot("s1", T0 + hour),
        Err(Refusal::Replayed { live_since_ns: None })
    );

    tracker.caught_up();
    tracker.apply(&event("claude-code/2.1.332/UserPromptSubmit.json", 3, "0s"));
    tracker.apply(&event("claude-code/2.1.332/Stop.json", 4, "1s"));
    let view = tracker.view("s1", T0 + 2_000_000_000).unwrap();
    assert_eq!((view.state, view.authoritative), (StateKind::Idle, true), "{view:?}");
    assert!(tracker.take_input_slot("s1", T0 + 2_000_000_000).is_ok());
}

#[test]
fn a_full_history_is_kept_only_for_the_sessions_a_query_names() {
    let profiles = Profiles::shipped().unwrap();
    let mut tracker = Tracker::new(profiles.clone(), T0).with_full_history_of("keep");
    let payload = BTreeMap::new();
    let turns = HISTORY * 2;
    for (i, session) in (0..turns).flat_map(|i| [(i, "keep-1"), (i, "drop-1")]) {
        for (j, fixture) in ["UserPromptSubmit.json", "Stop.json"].into_iter().enumerate() {
            let fixture = format!("claude-code/2.1.332/{fixture}");
            let call = HookCall::of_fixture("claude", session, &fixture, &payload);
            let seq = (i * 4 + j) as u64 + if session == "keep-1" { 1 } else { 3 };
            tracker.apply(&call.event(&profiles, seq, T0 + seq * 1_000_000).unwrap());
        }
    }
    let kept = |query: &str| tracker.lookup(query).unwrap().unwrap().session.history().count();
    assert_eq!(kept("keep-1"), turns * 2, "every transition of the session asked about");
    assert_eq!(kept("drop-1"), HISTORY, "the others keep the default");
}

/// A tracker restored from a checkpoint, as the checkpoint file carries it (through its JSON).
fn through_a_checkpoint(tracker: &Tracker, profiles: &Profiles, started_ns: u64) -> Tracker {
    let json = serde_json::to_string(&tracker.to_wire(HISTORY)).unwrap();
    let mut restored = Tracker::new(profiles.clone(), started_ns);
    restored.restore(serde_json::from_str(&json).unwrap()).unwrap();
    restored
}

#[test]
fn every_story_folded_from_a_checkpoint_at_any_step_ends_as_its_full_replay() {
    // Replayed history: the trackers start after every event, as a one-shot reader does.
    let started = u64::MAX / 2;
    for path in story_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let story: Story = toml::from_str(&text).unwrap();
        let profiles = Profiles::shipped().unwrap();
        let run = Run {
            tracker: Tracker::new(profiles.clone(), started),
            profiles: profiles.clone(),
            history: Vec::new(),
            trace: Vec::new(),
            wire: String::new(),
            readings: BTreeMap::new(),
        };
        let events: Vec<(Event, u64)> = (story.step.iter().enumerate())
            .filter_map(|(index, step)| {
                let at = T0 + parse_duration(&step.at).unwrap().as_nanos() as u64;
                run.event(&story, index, step, at).map(|e| (e, at))
            })
            .collect();
        let end = events.last().map_or(T0, |(_, at)| *at) + 1_000_000_000;
        let mut full = Tracker::new(profiles.clone(), started);
        for (event, _) in &events {
            full.apply(event);
        }
        let want = serde_json::to_string(&full.to_wire(HISTORY)).unwrap();
        // Sorted: sessions last heard of at the same time come in any order.
        let views = |t: &Tracker| {
            let generation = format!("\"generation\":{},", t.generation().id);
            let mut views: Vec<String> = (t.views(end).iter())
                .map(|v| serde_json::to_string(v).unwrap().replace(&generation, ""))
                .collect();
            views.sort();
            views
        };
        for cut in 0..=events.len() {
            let mut before = Tracker::new(profiles.clone(), started);
            for (event, _) in &events[..cut] {
                before.apply(event);
            }
            let mut resumed = through_a_checkpoint(&before, &profiles, started);
            for (event, _) in &events[cut..] {
                resumed.apply(event);
            }
            let here = format!("{} cut after {cut} events", path.display());
            assert_eq!(serde_json::to_string(&resumed.to_wire(HISTORY)).unwrap(), want, "{here}");
            assert_eq!(views(&resumed), views(&full), "{here}");
        }
    }
}

#[test]
fn a_checkpoint_of_a_live_idle_session_authorizes_nothing() {
    let profiles = Profiles::shipped().unwrap();
    let mut live = Tracker::new(profiles.clone(), 0).live();
    live.apply(&claude_event(&profiles, "claude-code/2.1.332/UserPromptSubmit.json", 1, "1s"));
    live.apply(&claude_event(&profiles, "claude-code/2.1.332/Stop.json", 2, "2s"));
    let now = T0 + 3_000_000_000;
    assert!(live.view("s1", now).unwrap().authoritative, "the live tracker's idle is live");
    let mut restored = through_a_checkpoint(&live, &profiles, now);
    let view = restored.view("s1", now).unwrap();
    assert_eq!((view.state, view.authoritative), (StateKind::Idle, false));
    let refusal = restored.take_input_slot("s1", now).unwrap_err();
    assert!(refusal.to_string().contains("replayed"), "{refusal}");
}

#[test]
fn the_same_session_id_on_two_hosts_is_two_sessions_and_a_name_they_share_finds_neither() {
    let profiles = Profiles::shipped().unwrap();
    let on = |host: Option<&str>, fixture: &str, seq: u64, at: &str| {
        let mut e = claude_event(&profiles, fixture, seq, at);
        e.host = host.map(Into::into);
        e.tag = Some("job".into());
        e
    };
    let mut tracker = Tracker::new(profiles.clone(), T0).live();
    // build-2's session is mid-turn; a stop of ci-runner-7's session of the same id (and tag)
    // must not make it idle.
    tracker.apply(&on(Some("build-2"), "claude-code/2.1.332/UserPromptSubmit.json", 1, "0s"));
    tracker.apply(&on(Some("ci-runner-7"), "claude-code/2.1.332/UserPromptSubmit.json", 1, "1s"));
    tracker.apply(&on(Some("ci-runner-7"), "claude-code/2.1.332/Stop.json", 2, "2s"));
    let now = T0 + 3_000_000_000;
    assert_eq!(tracker.len(), 2, "one session per host");
    let view = |name: &str| tracker.view(name, now).map(|v| (v.state, v.host));
    assert_eq!(view("s1@build-2"), Some((StateKind::Active, Some("build-2".into()))));
    assert_eq!(view("s1@ci-runner-7"), Some((StateKind::Idle, Some("ci-runner-7".into()))));
    assert_eq!(view("job@build-2").map(|v| v.0), Some(StateKind::Active));
    // A name two hosts share names neither of them: never the wrong one.
    assert_eq!(view("s1"), None);
    assert_eq!(view("job"), None);
    assert!(tracker.take_input_slot("s1", now).is_err());
    assert!(tracker.take_input_slot("s1@build-2", now).is_err(), "build-2 is mid-turn");
    assert!(tracker.take_input_slot("s1@ci-runner-7", now).is_ok());
    let Err(Error::AmbiguousSession { candidates, .. }) = tracker.lookup("s1") else {
        panic!("a shared name is ambiguous to a person");
    };
    assert_eq!(candidates.len(), 2);
    assert!(candidates.iter().any(|c| c.starts_with("s1@build-2 ")), "{candidates:?}");
    // A local session of another id is found by its name alone.
    tracker.apply(&{
        let mut e = on(None, "claude-code/2.1.332/UserPromptSubmit.json", 3, "2s");
        e.session_id = Some("local".into());
        e.tag = None;
        e
    });
    assert_eq!(tracker.view("local", now).unwrap().host, None);
    assert_eq!(tracker.lookup("local").unwrap().unwrap().name(), "local");
    assert_eq!(tracker.lookup("s1@ci").unwrap().unwrap().name(), "s1@ci-runner-7");
}
