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
    /// Deliver as an unordered event (lock timeout): ordered by time, not seq.
    #[serde(default)]
    unordered: bool,
    /// A new tracker starts here and replays everything so far.
    #[serde(default)]
    restart: bool,
    /// Look the session up by this id or tag instead of the step's session id.
    view: Option<String>,
    expect: Option<Expectation>,
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
        call.event(&self.profiles, index as u64 + 1, at)
    }
}

/// Runs one story file; returns the state after each step.
fn run_story(path: &Path) -> Vec<String> {
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
        }
        if let Some(event) = run.event(&story, index, step, at) {
            run.tracker.apply(&event);
            run.history.push(event);
        }
        let session = step.view.as_deref().or(step.session.as_deref()).unwrap_or(&story.session);
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
        if let Some(rule) = &expect.rule {
            assert_eq!(view.last_event.rule, rule, "{here}: rule of the last event\n{show}");
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
    run.trace
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
