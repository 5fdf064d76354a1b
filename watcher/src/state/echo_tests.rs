//! Echoes in the tracker: events as a reader hands them out (marked by
//! [`Echoes`](crate::ingest::echo::Echoes)), from hookline's relay and from the older relay's
//! legacy directory.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::canonical::{Kind, SourceRef};
use crate::format::envelope::Envelope;
use crate::format::filename::EventFileName;
use crate::ingest::echo::{Echoes, payload_digest};
use crate::ingest::mapping::map_envelope;
use crate::testing::{HookCall, T0};

const MS: u64 = 1_000_000;
const C: &str = "claude-code/2.1.332/";

/// A tracker fed through an echo detector, as `serve` feeds its tracker from a reader.
struct Feed {
    profiles: Profiles,
    tracker: Tracker,
    echoes: Echoes,
    seq: u64,
}

impl Feed {
    fn new() -> Feed {
        let profiles = Profiles::shipped().unwrap();
        Feed {
            tracker: Tracker::new(profiles.clone(), T0).live(),
            profiles,
            echoes: Echoes::new(),
            seq: 0,
        }
    }

    fn hand_out(&mut self, mut event: Event, digest: Option<u64>) -> (Event, Applied) {
        self.echoes.mark(&mut event, digest);
        let applied = self.tracker.apply(&event);
        (event, applied)
    }

    /// hookline's relay reporting a captured payload (with `extra` merged in) at `at_ms`.
    fn relay(&mut self, cli: &str, fixture: &str, extra: Value, at_ms: u64) -> (Event, Applied) {
        let payload: BTreeMap<String, toml::Value> = serde_json::from_value(extra).unwrap();
        let call =
            HookCall { tag: Some("task-1"), ..HookCall::of_fixture(cli, "s1", fixture, &payload) };
        self.seq += 1;
        let event = call.event(&self.profiles, self.seq, T0 + at_ms * MS).unwrap();
        let text = std::fs::read_to_string(crate::testing::fixtures_dir().join(fixture)).unwrap();
        let mut full: Value = serde_json::from_str(&text).unwrap();
        for (key, value) in extra_object(&payload) {
            full[key] = value;
        }
        self.hand_out(event, Some(payload_digest(&full)))
    }

    /// The older relay's flat file for `native` at `at_ms`, as the reader maps it.
    fn older_relay(&mut self, native: &str, at_ms: u64) -> (Event, Applied) {
        let at = T0 + at_ms * MS;
        let payload = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": native});
        let envelope = Envelope {
            seq_unordered: true,
            ts_ns: at,
            tag: Some("task-1".into()),
            relay_version: "legacy".into(),
            ..Envelope::built("legacy", Some(native.into()), &payload)
        };
        let file = format!("{at}-task-1-{native}.json");
        let source = SourceRef { dir: "/run/events".into(), seq: 0, file, legacy: true };
        let event = map_envelope(&self.profiles, &envelope, source);
        self.hand_out(event, None)
    }

    fn view(&self, at_ms: u64) -> View {
        self.tracker.view("s1", T0 + at_ms * MS).unwrap()
    }

    fn take_slot(&mut self, at_ms: u64) -> Result<Slot, Refusal> {
        self.tracker.take_input_slot("s1", T0 + at_ms * MS)
    }
}

fn extra_object(payload: &BTreeMap<String, toml::Value>) -> Vec<(String, Value)> {
    payload.iter().map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap())).collect()
}

#[test]
fn the_older_relays_copy_of_a_stop_changes_nothing_and_lands_in_the_same_session() {
    let mut feed = Feed::new();
    feed.relay("claude", &format!("{C}SessionStart-startup.json"), json!({}), 0);
    feed.relay("claude", &format!("{C}UserPromptSubmit.json"), json!({}), 100);
    let (stop, _) = feed.relay("claude", &format!("{C}Stop.json"), json!({}), 5_000);
    assert!(feed.take_slot(5_010).is_ok());
    let (echo, applied) = feed.older_relay("Stop", 5_060);
    assert_eq!(echo.echo_of.as_ref(), Some(&stop.source));
    assert_eq!(
        (applied.changed, applied.ignored, applied.rule),
        (false, Some(Ignored::Echo), "echo-never-changes-state")
    );
    assert_eq!(feed.tracker.len(), 1, "the legacy copy joins the relay's session");
    let view = feed.view(5_100);
    assert_eq!(
        (view.state, view.evidence.file.as_str()),
        (StateKind::Idle, stop.source.file.as_str())
    );
    assert_eq!(view.last_event.rule, "echo-never-changes-state");
    assert_eq!(feed.take_slot(5_100), Err(Refusal::AlreadyTaken));
}

#[test]
fn when_the_older_relay_is_first_its_stop_counts_and_the_relays_copy_adds_the_pending_work() {
    let mut feed = Feed::new();
    feed.relay("claude", &format!("{C}UserPromptSubmit.json"), json!({}), 100);
    let (first, applied) = feed.older_relay("Stop", 5_000);
    assert!(applied.changed);
    assert!(feed.take_slot(5_010).is_ok());
    let running = json!({"background_tasks": [{"id": "b1", "status": "running"}]});
    let (echo, applied) = feed.relay("claude", &format!("{C}Stop.json"), running, 5_040);
    assert_eq!(echo.echo_of.as_ref(), Some(&first.source));
    assert_eq!((applied.changed, applied.ignored), (false, Some(Ignored::Echo)));
    let view = feed.view(5_100);
    assert_eq!((view.state, view.pending.tasks), (StateKind::Idle, 1), "more careful, no new slot");
    assert_eq!(feed.take_slot(5_100), Err(Refusal::AlreadyTaken));
}

#[test]
fn a_cursor_turn_the_human_aborted_is_never_idle_whichever_relay_reports_it_first() {
    let cursor = |status: &str| {
        json!({
            "conversation_id": "s1", "generation_id": "gen-3", "hook_event_name": "stop",
            "cursor_version": "2.5.0", "workspace_roots": ["/w"], "status": status,
        })
    };
    let relay = |feed: &mut Feed, at_ms: u64| {
        let payload = cursor("aborted");
        let envelope = Envelope {
            seq: 9,
            ts_ns: T0 + at_ms * MS,
            tag: Some("task-1".into()),
            ..Envelope::built("cursor", Some("stop".into()), &payload)
        };
        let name = EventFileName::ordered(9, 1).to_string();
        let source = SourceRef { dir: "/events".into(), seq: 9, file: name, legacy: false };
        let event = map_envelope(&feed.profiles, &envelope, source);
        feed.hand_out(event, Some(payload_digest(&payload)))
    };
    // The relay first: its `waiting_for_input` stands, the legacy `Stop` is its echo.
    let mut feed = Feed::new();
    let (original, _) = relay(&mut feed, 1_000);
    assert!(matches!(original.kind, Kind::WaitingForInput { .. }), "{:?}", original.kind);
    let (echo, _) = feed.older_relay("Stop", 1_050);
    assert_eq!(echo.echo_of.as_ref(), Some(&original.source));
    assert_eq!(feed.view(1_100).state, StateKind::WaitingOnHuman);
    // The older relay first: its `Stop` made the session idle; the relay's copy says the turn
    // was aborted, which only makes the consumer more careful.
    let mut feed = Feed::new();
    feed.older_relay("Stop", 1_000);
    assert_eq!(feed.view(1_010).state, StateKind::Idle);
    let (echo, applied) = relay(&mut feed, 1_040);
    assert!(echo.echo_of.is_some());
    assert_eq!((applied.changed, applied.rule), (true, "echo-more-careful-than-its-first-copy"));
    assert_eq!(feed.view(1_100).state, StateKind::WaitingOnHuman);
    assert!(feed.take_slot(1_100).is_err());
}

#[test]
fn a_session_first_heard_of_from_the_legacy_directory_is_taken_over_by_the_relay() {
    let mut feed = Feed::new();
    feed.older_relay("SessionStart", 0);
    assert_eq!(feed.view(10).cli, "legacy");
    let (echo, _) = feed.relay("claude", &format!("{C}SessionStart-startup.json"), json!({}), 30);
    assert!(echo.echo_of.is_some());
    assert_eq!(feed.tracker.len(), 1);
    let view = feed.view(40);
    assert_eq!((view.cli.as_str(), view.epoch), ("claude", 1));
    feed.relay("claude", &format!("{C}UserPromptSubmit.json"), json!({}), 100);
    assert_eq!(feed.tracker.view("task-1", T0 + 110 * MS).unwrap().state, StateKind::Active);
    let (stop, _) = feed.relay("claude", &format!("{C}Stop.json"), json!({}), 5_000);
    let (echo, _) = feed.older_relay("Stop", 5_050);
    assert_eq!(echo.echo_of.as_ref(), Some(&stop.source));
    assert_eq!(feed.tracker.len(), 1);
    assert!(feed.take_slot(5_100).is_ok());
    assert_eq!(feed.take_slot(5_110), Err(Refusal::AlreadyTaken));
}

#[test]
fn two_stops_of_two_turns_each_open_their_slot_with_their_echoes_folded() {
    // Within a second of each other, with identical payloads (the same prompt, the same
    // answer): only the prompt between them tells the two stops apart.
    let mut feed = Feed::new();
    for turn in 0..2u64 {
        let at = turn * 1_400;
        feed.relay("claude", &format!("{C}UserPromptSubmit.json"), json!({}), at + 100);
        let (stop, applied) = feed.relay("claude", &format!("{C}Stop.json"), json!({}), at + 1_000);
        assert!(stop.echo_of.is_none() && applied.changed, "turn {turn}");
        assert!(feed.take_slot(at + 1_010).is_ok(), "turn {turn}");
        let (echo, _) = feed.older_relay("Stop", at + 1_050);
        assert_eq!(echo.echo_of.as_ref(), Some(&stop.source), "turn {turn}");
        // A second registration of the relay: the identical payload again.
        let (echo, _) = feed.relay("claude", &format!("{C}Stop.json"), json!({}), at + 1_070);
        assert_eq!(echo.echo_of.as_ref(), Some(&stop.source), "turn {turn}");
        assert_eq!(feed.take_slot(at + 1_100), Err(Refusal::AlreadyTaken), "turn {turn}");
    }
}
