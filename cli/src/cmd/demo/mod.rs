//! `hookline demo`: a scripted Claude Code session played through the real relay binary
//! into a temp events directory, watched live; `demo --live`, a playground of scripted agent
//! TUIs in tmux with their daemon ([`live`]); the agent itself ([`agent`]).

mod agent;
mod live;

use std::io::Write;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::install::find_relay;
use crate::term::escape;
use hookline::canonical::{Event, Kind};
use hookline::decide::Policy;
use hookline::engine::{Engine, EngineConfig, Source};
use hookline::ingest::reader::{ReaderConfig, Start};
use hookline::state::{InputSlot, StateKind, View};

pub use self::agent::run as run_agent;
use super::{Outcome, catch_signals, is_broken_pipe, profiles, stopped_code, stopping};
use crate::cli::DemoArgs;

/// One hook call of the story: what Claude Code 2.1.332 really sent (captured payloads).
struct Step {
    says: &'static str,
    payload: &'static str,
}

macro_rules! fixture {
    ($file:literal) => {
        include_str!(concat!("../../../../watcher/tests/fixtures/claude-code/2.1.332/", $file))
    };
}

const STORY: &[Step] = &[
    Step { says: "claude starts", payload: fixture!("SessionStart-startup.json") },
    Step { says: "the user sends a prompt", payload: fixture!("UserPromptSubmit.json") },
    Step { says: "claude wants to run Bash", payload: fixture!("PreToolUse.json") },
    Step { says: "the permission dialog opens", payload: fixture!("PermissionRequest.json") },
    Step {
        says: "6 s later, still open",
        payload: fixture!("Notification-permission_prompt.json"),
    },
    Step { says: "the user approves; Bash ran", payload: fixture!("PostToolUse.json") },
    Step { says: "the turn ends", payload: fixture!("Stop.json") },
    Step {
        says: "idle at the prompt for a while",
        payload: fixture!("Notification-idle_prompt.json"),
    },
    Step { says: "the user types /compact", payload: fixture!("PreCompact.json") },
    Step { says: "the compaction subagent ends", payload: fixture!("SubagentStop-compact.json") },
    Step { says: "the session restarts compacted", payload: fixture!("SessionStart-compact.json") },
    Step { says: "compaction done", payload: fixture!("PostCompact.json") },
    Step { says: "the user types /exit", payload: fixture!("SessionEnd-prompt_input_exit.json") },
];

pub fn run(args: DemoArgs) -> Outcome {
    if args.live {
        return live::run();
    }
    let relay = find_relay(std::env::var_os("PATH").as_deref())
        .map_err(|e| format!("{e}; build both binaries with `cargo build --release`"))?;
    // A reader that goes away (`hookline demo | head`) is an error to stop on, not a signal
    // that kills the demo before it removes its directory; Ctrl-C and SIGTERM likewise.
    ignore_sigpipe();
    catch_signals();
    let tmp = tempfile::Builder::new().prefix("hookline-demo-").tempdir()?;
    let events_dir = tmp.path().join("events");
    // An engine over the new directory: it holds no history, so every event is live, as a
    // daemon started before the session sees it.
    let profiles = profiles()?;
    let reader = ReaderConfig::new(&events_dir, Start::Beginning, profiles.clone());
    let mut config = EngineConfig::new(profiles, Policy::default(), &events_dir);
    (config.checkpoints, config.transcripts) = (false, false);
    let mut engine = Engine::open(config, Source::directory(reader))?;
    let halt = Arc::new(AtomicBool::new(false));
    let script = {
        let (relay, events_dir, halt) = (relay.clone(), events_dir.clone(), Arc::clone(&halt));
        let pace = Duration::from_millis(args.pace);
        thread::spawn(move || -> Result<(), String> {
            for step in STORY {
                if halt.load(Ordering::Relaxed) {
                    break;
                }
                run_relay(&relay, &events_dir, step.payload)?;
                thread::sleep(pace);
            }
            Ok(())
        })
    };
    let played = play(&args, &relay, &events_dir, &mut engine);
    // The relays are done before the directory goes: none writes into a removed one.
    halt.store(true, Ordering::Relaxed);
    let scripted = script.join().map_err(|_| "the script thread panicked")?;
    let code = match played {
        Ok(Played::Told) => {
            scripted?;
            ExitCode::SUCCESS
        }
        Ok(Played::ReaderGone) => ExitCode::SUCCESS,
        Ok(Played::Stopped) => stopped_code(),
        Err(e) => return Err(e),
    };
    if args.keep {
        let kept = tmp.keep();
        eprintln!("events kept in {}", kept.join("events").display());
    }
    Ok(code)
}

/// How the story ended.
enum Played {
    /// Told to the end.
    Told,
    /// The reader of stdout went away (`| head`).
    ReaderGone,
    /// SIGINT or SIGTERM.
    Stopped,
}

/// Watches the story the script thread writes and tells it on stdout.
fn play(
    args: &DemoArgs,
    relay: &std::path::Path,
    events_dir: &std::path::Path,
    engine: &mut Engine,
) -> Result<Played, Box<dyn std::error::Error>> {
    let mut out = std::io::stdout().lock();
    match tell(args, relay, events_dir, engine, &mut out) {
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(is_broken_pipe) => {
            Ok(Played::ReaderGone)
        }
        Err(e) => Err(e),
        Ok(()) if stopping() => Ok(Played::Stopped),
        Ok(()) => Ok(Played::Told),
    }
}

fn tell(
    args: &DemoArgs,
    relay: &std::path::Path,
    events_dir: &std::path::Path,
    engine: &mut Engine,
    out: &mut impl Write,
) -> Result<(), Box<dyn std::error::Error>> {
    if !args.json {
        writeln!(out, "hookline demo: a scripted Claude Code session, each hook call run through")?;
        writeln!(out, "  {}", relay.display())?;
        writeln!(out, "  writing into {}\n", events_dir.display())?;
        writeln!(
            out,
            "{:>4}  {:>6}  {:<31} {:<18} {:<38} state",
            "seq", "+ms", "what happens", "native event", "canonical event"
        )?;
        out.flush()?;
    }
    let started = Instant::now();
    let mut seen = 0;
    while seen < STORY.len() {
        let waiting = Instant::now();
        let applied = loop {
            if stopping() {
                return Ok(());
            }
            if let Some(applied) = engine.poll(Duration::from_millis(100))? {
                break applied;
            }
            if waiting.elapsed() > Duration::from_secs(10) {
                let missing = format!("only {seen} of {} events arrived within 10 s", STORY.len());
                return Err(missing.into());
            }
        };
        let event = applied.event;
        let step = &STORY[seen];
        seen += 1;
        let snapshot = event
            .session_id
            .as_deref()
            .and_then(|id| engine.tracker().snapshot(id, hookline::format::clock::now_ns()));
        if args.json {
            let view = snapshot.as_ref().map(View::from);
            let line = serde_json::json!({ "event": event, "state": view });
            writeln!(out, "{}", serde_json::to_string(&line)?)?;
        } else {
            let state = snapshot.map_or("-".to_owned(), |s| {
                let detail = s
                    .detail()
                    .filter(|_| s.state.kind() != StateKind::Unknown)
                    .map(|d| format!(" ({d})"));
                let input = match s.input {
                    InputSlot::Available => ", input slot available",
                    InputSlot::Refused(_) => "",
                };
                format!("{}{}{input}", s.state.kind(), escape(&detail.unwrap_or_default()))
            });
            writeln!(
                out,
                "{:>4}  {:>6}  {:<31} {:<18} {:<38} {state}",
                event.source.seq,
                started.elapsed().as_millis(),
                step.says,
                escape(event.native.as_deref().unwrap_or("-")),
                describe(&event)
            )?;
        }
        out.flush()?;
    }
    if !args.json {
        let listing = hookline::ingest::source::list(events_dir)?;
        let first = listing.events.first().ok_or("no event file written")?;
        let text = std::fs::read_to_string(first.path(events_dir))?;
        let first = first.name;
        let value: serde_json::Value = serde_json::from_str(&text)?;
        writeln!(out, "\nThe relay wrote {} files; the first, {first}:", STORY.len())?;
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        out.flush()?;
    }
    Ok(())
}

/// Makes a write to a closed pipe fail with `EPIPE` instead of killing the process (`main`
/// restores the default for the commands that have nothing to clean up).
pub(super) fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Runs the relay as Claude Code would: payload on stdin, nothing expected back.
fn run_relay(
    relay: &std::path::Path,
    events_dir: &std::path::Path,
    payload: &str,
) -> Result<(), String> {
    let mut child = Command::new(relay)
        .args(["--cli", "claude"])
        .env("HOOKLINE_EVENTS_DIR", events_dir)
        .env("HOOKLINE_TAG", "demo-task-1")
        .env("CLAUDE_PID", std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", relay.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.as_bytes()).map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() || !out.stdout.is_empty() || !out.stderr.is_empty() {
        return Err(format!(
            "the relay broke its contract: {}, stdout {:?}, stderr {:?}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// One line about a canonical event.
pub fn describe(event: &Event) -> String {
    let kind = event.kind.name();
    let detail = match &event.kind {
        Kind::SessionStart { source } => source.clone().map(|s| format!("source={s}")),
        Kind::SessionEnd { reason } => reason.clone().map(|r| format!("reason={r}")),
        Kind::ToolStart { tool } | Kind::PermissionRequest { tool } => {
            tool.clone().map(|t| format!("tool={t}"))
        }
        Kind::ToolEnd { tool, ok } => {
            Some(format!("tool={} ok={ok}", tool.as_deref().unwrap_or("?")))
        }
        Kind::WaitingForInput { reason, .. } => Some(format!("reason={}", reason.as_str())),
        Kind::Stop { pending_tasks, scheduled_wakes, .. } => {
            Some(format!("pending_tasks={pending_tasks} scheduled_wakes={scheduled_wakes}"))
        }
        Kind::StopFailure { error, .. } => Some(format!("error={}", error.as_str())),
        Kind::Compact { phase, trigger } => {
            Some(format!("phase={} trigger={}", phase.as_str(), trigger.as_deref().unwrap_or("?")))
        }
        Kind::SubagentStart { agent_type } | Kind::SubagentStop { agent_type } => {
            Some(format!("agent_type={:?}", agent_type.as_deref().unwrap_or("")))
        }
        Kind::Notification { notification_type, .. } => {
            notification_type.clone().map(|t| format!("type={t}"))
        }
        Kind::Unknown { reason } => reason.clone(),
        Kind::TurnStart | Kind::IdlePrompt | Kind::Todo => None,
    };
    let subagent = if event.is_subagent() { " (subagent)" } else { "" };
    let line = match detail {
        Some(detail) => format!("{kind} {detail}{subagent}"),
        None => format!("{kind}{subagent}"),
    };
    escape(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use hookline::canonical::{CANONICAL_VERSION, Event, Kind, SourceRef};

    #[test]
    fn a_described_event_reaches_the_terminal_escaped() {
        let event = Event {
            v: CANONICAL_VERSION,
            kind: Kind::ToolStart { tool: Some("Ba\x1b]0;x\x07sh\r\nfake".into()) },
            cli: "claude".into(),
            session_id: Some("s1".into()),
            tag: None,
            host: None,
            agent_id: None,
            turn_id: None,
            cwd: None,
            transcript_path: None,
            native: Some("PreToolUse".into()),
            rule: "claude.toml#map[4]".into(),
            ts_ns: 1,
            host_pid: None,
            todo: None,
            input_digest: None,
            source: SourceRef { dir: "/ev".into(), seq: 1, file: "f".into(), legacy: false },
            echo_of: None,
        };
        assert_eq!(super::describe(&event), "tool_start tool=Ba\\e]0;x\\ash\\r\\nfake");
    }
}
