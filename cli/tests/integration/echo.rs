//! Echoes through `hookline serve` and `hookline watch` as real processes: events written by
//! the real relay, flat files written as the older Python relay writes them, and each stop
//! handing out exactly one input slot whichever copy arrives first.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::watch::{fixture, hookline, lines, no_follow, run_relay_with};

/// A `hookline serve` child reading an events directory and a legacy directory.
struct Serve {
    child: Child,
    replies: mpsc::Receiver<Value>,
}

impl Serve {
    fn start(events: &Path, legacy: &Path) -> Serve {
        let mut child = Command::new(hookline())
            .arg("serve")
            .arg("--events-dir")
            .arg(events)
            .arg("--legacy-dir")
            .arg(legacy)
            .env("XDG_CONFIG_HOME", events.with_file_name("no-config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let replies = lines(child.stdout.take().unwrap());
        let mut serve = Serve { child, replies };
        // Answered once history is replayed: what is written from now on is live.
        serve.ask(json!({"op": "hello"}));
        serve
    }

    fn ask(&mut self, request: Value) -> Value {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let reply = self.replies.recv_timeout(Duration::from_secs(30)).expect("a reply");
        assert_eq!(reply["ok"], true, "{request} → {reply}");
        reply
    }

    /// The next event of `session`, waited for (the legacy directory is listed once a second).
    fn next(&mut self, session: &str) -> Value {
        let reply = self.ask(json!({"op": "next_event", "session": session, "timeout_ms": 20_000}));
        assert_eq!(reply["timed_out"], false, "an event of {session} arrives: {reply}");
        reply["event"].clone()
    }

    /// `decide input`: the decision (which takes the slot when it allows).
    fn input(&mut self, session: &str) -> Value {
        self.ask(json!({"op": "decide", "session": session, "question": "input"}))["decision"]
            .clone()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Runs the real relay as a hook of `tag`'s session runs it, silent as always.
fn hook(events: &Path, args: &[&str], tag: &str, payload: &Value) {
    run_relay_with(events, args, &[("HOOKLINE_TAG", tag)], payload.to_string().as_bytes());
}

/// Writes a flat file as the older Python relay does: `<ts_ns>-<task_id>-<event>.json`
/// holding `{ts, event, task_id, session_id, transcript_path, cwd}`, as `<final>.tmp` first,
/// then renamed. Returns its name.
fn older_relay(legacy: &Path, event: &str, task: &str, session: &str) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let name = format!("{}-{task}-{event}.json", now.as_nanos());
    let content = json!({
        "ts": now.as_secs_f64(), "event": event, "task_id": task, "session_id": session,
        "transcript_path": null, "cwd": "/home/dev/work/proj",
    });
    let temp = legacy.join(format!("{name}.tmp"));
    fs::write(&temp, content.to_string()).unwrap();
    fs::rename(&temp, legacy.join(&name)).unwrap();
    name
}

/// A captured Claude payload, for session `session`.
fn claude(file: &str, session: &str) -> Value {
    let mut payload: Value =
        serde_json::from_str(&fixture(&format!("claude-code/2.1.332/{file}"))).unwrap();
    payload["session_id"] = json!(session);
    payload
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (events, legacy) = (tmp.path().join("events"), tmp.path().join("run/events"));
    fs::create_dir_all(&legacy).unwrap();
    (tmp, events, legacy)
}

fn assert_allowed(decision: &Value) {
    assert_eq!(
        (&decision["verdict"], &decision["rule"]),
        (&json!("allow"), &json!("input-at-explicit-idle")),
        "{decision}"
    );
    assert!(decision["slot"].is_object(), "{decision}");
}

fn assert_no_second_slot(decision: &Value) {
    assert_eq!(decision["verdict"], "withhold", "{decision}");
    assert!(decision["slot"].is_null(), "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(reason.contains("already taken"), "{decision}");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    Relay,
    OlderRelay,
}

/// The sequence of issue 22, then a second turn: each stop gives one slot, whichever of its
/// two copies arrives first, and the stop of the next turn gives the next one.
fn one_slot_per_stop(first: First) {
    let (_tmp, events, legacy) = dirs();
    let mut serve = Serve::start(&events, &legacy);
    let (session, task) = ("s-echo", "task-1");
    let relay_stop = |events: &Path| hook(events, &[], task, &claude("Stop.json", session));
    hook(&events, &[], task, &claude("SessionStart-startup.json", session));
    hook(&events, &[], task, &claude("UserPromptSubmit.json", session));
    assert_eq!(serve.next(session)["kind"], "session_start");
    assert_eq!(serve.next(session)["kind"], "turn_start");

    for turn in 1..=2 {
        let (original, echo) = match first {
            First::Relay => {
                relay_stop(&events);
                let original = serve.next(session);
                assert_allowed(&serve.input(session));
                older_relay(&legacy, "Stop", task, session);
                (original, serve.next(session))
            }
            First::OlderRelay => {
                older_relay(&legacy, "Stop", task, session);
                let original = serve.next(session);
                assert_allowed(&serve.input(task));
                relay_stop(&events);
                (original, serve.next(session))
            }
        };
        // The second `decide input`: the echo opened no second slot.
        assert_no_second_slot(&serve.input(session));
        assert_no_second_slot(&serve.input(task));
        assert_eq!((&original["kind"], &echo["kind"]), (&json!("stop"), &json!("stop")));
        assert!(original.get("echo_of").is_none(), "turn {turn}: {original}");
        assert_eq!(echo["echo_of"], original["origin"], "turn {turn}: {echo}");
        assert_eq!(echo["origin"]["legacy"].as_bool().is_some(), first == First::Relay);
        let state = serve.ask(json!({"op": "state", "session": session}))["view"].clone();
        assert_eq!((&state["state"], &state["cli"]), (&json!("idle"), &json!("claude")));
        let sessions = serve.ask(json!({"op": "sessions"}))["sessions"].clone();
        assert_eq!(sessions.as_array().unwrap().len(), 1, "one session for both relays");

        // The orchestrator's input starts the next turn: its stop is an event, not an echo.
        hook(&events, &[], task, &claude("UserPromptSubmit.json", session));
        assert_eq!(serve.next(session)["kind"], "turn_start");
    }
    drop(serve);

    // The canonical stream says the same: every copy is there, each echo names its original,
    // and a line that is no echo has no `echo_of` key at all.
    let stream = no_follow(&events, &["--from-start", "--legacy-dir", legacy.to_str().unwrap()]);
    let echoes: Vec<&Value> = stream.iter().filter(|e| e.get("echo_of").is_some()).collect();
    assert_eq!(stream.len(), 8, "{stream:#?}");
    assert_eq!(echoes.len(), 2, "{stream:#?}");
    for echo in echoes {
        let original = stream.iter().find(|e| e["origin"] == echo["echo_of"]).unwrap();
        assert_eq!(original["kind"], "stop");
        assert!(original.get("echo_of").is_none());
    }
}

#[test]
fn a_stop_reported_by_both_relays_gives_one_slot_when_the_relay_writes_first() {
    one_slot_per_stop(First::Relay);
}

#[test]
fn a_stop_reported_by_both_relays_gives_one_slot_when_the_older_relay_writes_first() {
    one_slot_per_stop(First::OlderRelay);
}

#[test]
fn a_session_known_only_to_the_legacy_directory_is_idle_at_its_stop() {
    let (_tmp, events, legacy) = dirs();
    let mut serve = Serve::start(&events, &legacy);
    older_relay(&legacy, "SessionStart", "task-old", "s-old");
    assert_eq!(serve.next("s-old")["kind"], "session_start");
    older_relay(&legacy, "Stop", "task-old", "s-old");
    let stop = serve.next("task-old");
    assert_eq!((&stop["kind"], &stop["cli"]), (&json!("stop"), &json!("legacy")));
    assert!(stop.get("echo_of").is_none(), "{stop}");
    assert_allowed(&serve.input("task-old"));
    assert_no_second_slot(&serve.input("s-old"));
    // Another file of the same directory is another stop, never an echo: the older relay
    // writes one file per hook call (and reports no prompt, so it is the same idle).
    older_relay(&legacy, "Stop", "task-old", "s-old");
    let again = serve.next("s-old");
    assert!(again.get("echo_of").is_none(), "{again}");
    let state = serve.ask(json!({"op": "state", "session": "task-old"}))["view"].clone();
    assert_eq!(
        (&state["state"], &state["evidence"]["file"]),
        (&json!("idle"), &again["origin"]["file"])
    );
}

/// One CLI's turn: how the relay is registered, the prompt's payload and the input-ready
/// event's payload.
struct Turn {
    /// The profile that maps its events.
    cli: &'static str,
    name: &'static str,
    /// The relay's arguments as `hookline install` registers it, for the prompt and the
    /// input-ready event.
    args: [&'static [&'static str]; 2],
    /// A second registration of the same hook (another scope, or Cursor running Claude's).
    second: &'static [&'static str],
    prompt: Value,
    /// The kind the prompt maps to.
    prompt_kind: &'static str,
    ready: Value,
    /// Whether the older relay reports this event (it knows only `Stop` among these).
    older_relay: bool,
}

fn turns() -> Vec<Turn> {
    let file = |path: &str, session: &str| {
        let mut payload: Value = serde_json::from_str(&fixture(path)).unwrap();
        payload["session_id"] = json!(session);
        payload
    };
    // A payload of the fixtures built from documentation, with its session id at `key`.
    let documented = |path: &str, key: &str, session: &str| {
        let mut payload: Value = serde_json::from_str(&fixture(path)).unwrap();
        payload[key] = json!(session);
        payload
    };
    let cursor = |native: &str, extra: Value| {
        let mut p = json!({
            "conversation_id": "s-cursor", "generation_id": "gen-3", "model": "default",
            "hook_event_name": native, "cursor_version": "2.5.0", "workspace_roots": ["/w"],
            "user_email": null, "transcript_path": null
        });
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        p
    };
    vec![
        Turn {
            cli: "claude",
            name: "s-claude",
            args: [&["--cli", "claude"], &["--cli", "claude"]],
            second: &["--cli", "claude"],
            prompt: file("claude-code/2.1.332/UserPromptSubmit.json", "s-claude"),
            prompt_kind: "turn_start",
            ready: file("claude-code/2.1.332/Stop.json", "s-claude"),
            older_relay: true,
        },
        Turn {
            cli: "claude",
            name: "s-claude-idle",
            args: [&["--cli", "claude"], &["--cli", "claude"]],
            second: &["--cli", "claude"],
            // Claude's idle timer, re-armed by a compaction, fires idle_prompt with no turn
            // in between: the compaction's restart is what comes before it here.
            prompt: file("claude-code/2.1.332/SessionStart-compact.json", "s-claude-idle"),
            prompt_kind: "session_start",
            ready: file("claude-code/2.1.332/Notification-idle_prompt.json", "s-claude-idle"),
            older_relay: false,
        },
        Turn {
            cli: "codex",
            name: "s-codex",
            args: [&["--cli", "codex"], &["--cli", "codex"]],
            second: &["--cli", "codex"],
            prompt: file("codex/0.171.0/UserPromptSubmit.json", "s-codex"),
            prompt_kind: "turn_start",
            ready: file("codex/0.171.0/Stop.json", "s-codex"),
            older_relay: true,
        },
        Turn {
            cli: "gemini",
            name: "s-gemini",
            args: [&["--cli", "gemini"], &["--cli", "gemini"]],
            second: &["--cli", "gemini"],
            prompt: file("gemini/0.61.0/BeforeAgent.json", "s-gemini"),
            prompt_kind: "turn_start",
            ready: file("gemini/0.61.0/AfterAgent.json", "s-gemini"),
            older_relay: true,
        },
        Turn {
            cli: "copilot",
            name: "s-copilot",
            args: [
                &["--cli", "copilot", "--event", "userPromptSubmitted"],
                &["--cli", "copilot", "--event", "agentStop"],
            ],
            second: &["--cli", "copilot", "--event", "agentStop"],
            prompt: json!({"sessionId": "s-copilot", "timestamp": 1, "cwd": "/w", "prompt": "fix it"}),
            prompt_kind: "turn_start",
            ready: json!({"sessionId": "s-copilot", "timestamp": 2, "cwd": "/w", "transcriptPath": "/t", "stopReason": "end_turn"}),
            older_relay: true,
        },
        Turn {
            cli: "cursor",
            name: "s-cursor",
            args: [&["--cli", "cursor"], &["--cli", "cursor"]],
            // Cursor runs the hooks of ~/.claude/settings.json too: the relay registered
            // for Claude gets Cursor's payload.
            second: &["--cli", "claude"],
            prompt: cursor("beforeSubmitPrompt", json!({"prompt": "fix it"})),
            prompt_kind: "turn_start",
            ready: cursor("stop", json!({"status": "completed", "loop_count": 0})),
            older_relay: true,
        },
        // OpenCode's plugin runs the relay with the event name; a second copy of the plugin
        // (project and user) runs it twice. The older relay has no OpenCode dialect.
        Turn {
            cli: "opencode",
            name: "s-opencode",
            args: [
                &["--cli", "opencode", "--event", "chat.message"],
                &["--cli", "opencode", "--event", "session.idle"],
            ],
            second: &["--cli", "opencode", "--event", "session.idle"],
            prompt: json!({"type": "chat.message", "input": {"sessionID": "s-opencode"}, "output": {}}),
            prompt_kind: "turn_start",
            ready: json!({"type": "session.idle", "properties": {"sessionID": "s-opencode"}}),
            older_relay: false,
        },
        Turn {
            cli: "qwen",
            name: "s-qwen",
            args: [&["--cli", "qwen"], &["--cli", "qwen"]],
            second: &["--cli", "qwen"],
            prompt: file("qwen/0.24.4/UserPromptSubmit.json", "s-qwen"),
            prompt_kind: "turn_start",
            ready: file("qwen/0.24.4/Stop.json", "s-qwen"),
            older_relay: false,
        },
        // Qwen's idle_prompt ends a denied or interrupted turn; one this soon after a prompt
        // would belong to the turn before (`idle-prompt-delay`), so a start comes before it.
        Turn {
            cli: "qwen",
            name: "s-qwen-idle",
            args: [&["--cli", "qwen"], &["--cli", "qwen"]],
            second: &["--cli", "qwen"],
            prompt: file("qwen/0.24.4/SessionStart-startup.json", "s-qwen-idle"),
            prompt_kind: "session_start",
            ready: file("qwen/0.24.4/Notification-idle_prompt.json", "s-qwen-idle"),
            older_relay: false,
        },
        Turn {
            cli: "droid",
            name: "s-droid",
            args: [&["--cli", "droid"], &["--cli", "droid"]],
            second: &["--cli", "droid"],
            prompt: file("droid/0.225.2/UserPromptSubmit.json", "s-droid"),
            prompt_kind: "turn_start",
            ready: file("droid/0.225.2/Stop.json", "s-droid"),
            older_relay: false,
        },
        Turn {
            cli: "droid",
            name: "s-droid-idle",
            args: [&["--cli", "droid"], &["--cli", "droid"]],
            second: &["--cli", "droid"],
            prompt: file("droid/0.225.2/SessionStart-startup.json", "s-droid-idle"),
            prompt_kind: "session_start",
            ready: file("droid/0.225.2/Notification-idle_prompt.json", "s-droid-idle"),
            older_relay: false,
        },
        // Grok Build runs its own hooks and Claude's, with its own payload both times.
        Turn {
            cli: "grok",
            name: "s-grok",
            args: [&["--cli", "grok"], &["--cli", "grok"]],
            second: &["--cli", "claude"],
            prompt: documented("grok/docs-1.0.6/user_prompt_submit.json", "sessionId", "s-grok"),
            prompt_kind: "turn_start",
            ready: {
                let mut stop = documented("grok/docs-1.0.6/stop.json", "sessionId", "s-grok");
                stop["backgroundTasks"] = json!([]);
                stop["sessionCrons"] = json!([]);
                stop
            },
            older_relay: false,
        },
        Turn {
            cli: "grok",
            name: "s-grok-idle",
            args: [&["--cli", "grok"], &["--cli", "grok"]],
            second: &["--cli", "claude"],
            prompt: documented("grok/docs-1.0.6/session_start.json", "sessionId", "s-grok-idle"),
            prompt_kind: "session_start",
            ready: documented(
                "grok/docs-1.0.6/notification-idle_prompt.json",
                "sessionId",
                "s-grok-idle",
            ),
            older_relay: false,
        },
        Turn {
            cli: "kimi",
            name: "s-kimi",
            args: [&["--cli", "kimi"], &["--cli", "kimi"]],
            second: &["--cli", "kimi"],
            prompt: documented("kimi/docs-0.38.0/UserPromptSubmit.json", "session_id", "s-kimi"),
            prompt_kind: "turn_start",
            ready: documented("kimi/docs-0.38.0/Stop.json", "session_id", "s-kimi"),
            older_relay: false,
        },
        // Kilo Code runs OpenCode's plugin, told which CLI it runs in.
        Turn {
            cli: "kilo",
            name: "s-kilo",
            args: [
                &["--cli", "kilo", "--event", "chat.message"],
                &["--cli", "kilo", "--event", "session.idle"],
            ],
            second: &["--cli", "kilo", "--event", "session.idle"],
            prompt: json!({"type": "chat.message", "input": {"sessionID": "s-kilo"}, "output": {}}),
            prompt_kind: "turn_start",
            ready: json!({"type": "session.idle", "properties": {"sessionID": "s-kilo"}}),
            older_relay: false,
        },
        // Pi's extension runs the relay with the event name; its events carry the session id
        // the extension read from the context.
        Turn {
            cli: "pi",
            name: "s-pi",
            args: [
                &["--cli", "pi", "--event", "before_agent_start"],
                &["--cli", "pi", "--event", "agent_end"],
            ],
            second: &["--cli", "pi", "--event", "agent_end"],
            prompt: file("pi/0.73.1/before_agent_start.json", "s-pi"),
            prompt_kind: "turn_start",
            ready: file("pi/0.73.1/agent_end-stop.json", "s-pi"),
            older_relay: false,
        },
        // Antigravity's payloads name no event: each registration passes it.
        Turn {
            cli: "antigravity",
            name: "s-agy",
            args: [
                &["--cli", "antigravity", "--event", "PreInvocation"],
                &["--cli", "antigravity", "--event", "Stop"],
            ],
            second: &["--cli", "antigravity", "--event", "Stop"],
            prompt: documented(
                "antigravity/docs-1.1/PreInvocation.json",
                "conversationId",
                "s-agy",
            ),
            prompt_kind: "turn_start",
            ready: documented("antigravity/docs-1.1/Stop.json", "conversationId", "s-agy"),
            older_relay: false,
        },
    ]
}

#[test]
fn echoes_of_every_input_ready_event_of_every_cli_open_no_second_slot() {
    let (_tmp, events, legacy) = dirs();
    let mut serve = Serve::start(&events, &legacy);
    let profiles = hookline::profile::Profiles::shipped().unwrap();
    let mut covered = Vec::new();
    for turn in turns() {
        if profiles.get(turn.cli).is_none() {
            // A profile this build does not ship (yet): nothing of it to echo.
            continue;
        }
        let session = turn.name;
        hook(&events, turn.args[0], "task", &turn.prompt);
        assert_eq!(serve.next(session)["kind"], turn.prompt_kind, "{session}");
        hook(&events, turn.args[1], "task", &turn.ready);
        let original = serve.next(session);
        assert!(original.get("echo_of").is_none(), "{original}");
        assert_eq!(original["cli"], turn.cli, "{original}");
        let cli = turn.cli;
        let kind = original["kind"].as_str().unwrap().to_owned();
        let profile = profiles.get(cli).unwrap();
        assert!(
            profile.input_ready.iter().any(|k| k.as_str() == kind),
            "{session}: {kind} is input-ready for {cli}"
        );
        covered.push((cli.to_owned(), kind.clone()));
        assert_allowed(&serve.input(session));

        hook(&events, turn.second, "task", &turn.ready);
        let echo = serve.next(session);
        assert_eq!((&echo["cli"], &echo["kind"]), (&json!(cli), &json!(kind)), "{echo}");
        assert_eq!(echo["echo_of"], original["origin"], "{session}: {echo}");
        assert_no_second_slot(&serve.input(session));
        if turn.older_relay {
            older_relay(&legacy, "Stop", "task", session);
            let echo = serve.next(session);
            assert_eq!(echo["origin"]["legacy"], true, "{echo}");
            assert_eq!(echo["echo_of"], original["origin"], "{session}: {echo}");
            assert_no_second_slot(&serve.input(session));
        }
        let state = serve.ask(json!({"op": "state", "session": session}))["view"].clone();
        assert_eq!((&state["state"], &state["cli"]), (&json!("idle"), &json!(cli)), "{state}");
    }
    // Every input-ready kind of every installable profile was echoed above.
    for profile in profiles.iter().filter(|p| p.name != "legacy") {
        for kind in &profile.input_ready {
            let pair = (profile.name.clone(), kind.as_str().to_owned());
            assert!(covered.contains(&pair), "{pair:?} is not covered");
        }
    }
}
