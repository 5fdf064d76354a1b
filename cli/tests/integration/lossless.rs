//! Nothing the relay accepts is lost to the reader: payloads serde_json cannot decode, a counter
//! set back, damaged or at its end. The real relay binary writes, `hookline watch` reads.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use hookline::format::diag;
use hookline::format::envelope::RawEnvelope;
use hookline::format::filename::COUNTER_FILE;
use hookline::format::location::diagnostics_path;

use crate::watch::{hookline, no_follow, relay, run_relay};

/// The relay's test generator (xorshift), so that a failure reproduces from its seed.
#[path = "../../../relay/src/xorshift.rs"]
mod xorshift;

use xorshift::Rng;

impl Rng {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Strings, numbers and nesting that serde_json refuses to decode (or barely accepts), all of
/// them valid JSON the relay stores as a payload.
fn hostile_value(rng: &mut Rng, depth: usize) -> String {
    match rng.below(if depth > 3 { 6 } else { 9 }) {
        0 => rng
            .pick(&[
                r#""\ud800""#,
                r#""cut emoji \ud83d""#,
                r#""\udfff\ud800x""#,
                r#""\ud83d\ude00 fine""#,
                r#""\u0000\n\"\\/""#,
            ])
            .to_owned(),
        1 => rng.pick(&["1e999999", "-1e400", "1E+99999", "0.5e-99999", "-0", "1.0"]).to_owned(),
        2 => "9".repeat(1 + rng.below(6000)),
        3 => format!("\"{}\"", "é✓\\\"".repeat(rng.below(50))),
        4 => rng.pick(&["true", "false", "null", "[]", "{}"]).to_owned(),
        5 => {
            let levels = 100 + rng.below(400);
            let (open, close) = if rng.below(2) == 0 { ("[", "]") } else { ("{\"k\":", "}") };
            format!("{}1{}", open.repeat(levels), close.repeat(levels))
        }
        6 => {
            let items: Vec<String> =
                (0..rng.below(4)).map(|_| hostile_value(rng, depth + 1)).collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let members: Vec<String> = (0..rng.below(4))
                .map(|_| format!("{}:{}", hostile_key(rng), hostile_value(rng, depth + 1)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

/// Keys mapping reads (so they are decoded) and keys it never looks at.
fn hostile_key(rng: &mut Rng) -> String {
    rng.pick(&[
        r#""tool_name""#,
        r#""tool_input""#,
        r#""tool_response""#,
        r#""cwd""#,
        r#""transcript_path""#,
        r#""last_assistant_message""#,
        r#""background_tasks""#,
        r#""notification_type""#,
        r#""x\ud800""#,
        r#""""#,
        r#""other""#,
    ])
    .to_owned()
}

const EVENTS: [&str; 5] = ["Stop", "PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart"];

/// The differential test: generated payloads go through the relay binary; every file it wrote
/// with the payload it accepted comes out of `hookline watch` with its event name and session.
#[test]
fn every_payload_the_relay_accepts_is_delivered_with_its_event_name_and_session() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut expected = Vec::new();
    // The three shapes of the adversarial run first, then generated ones.
    let fixed = [
        r#"{"session_id":"s-0","hook_event_name":"Stop","last_assistant_message":"\ud800"}"#
            .to_owned(),
        r#"{"hook_event_name":"Stop","tool_response":1e999999,"session_id":"s-1"}"#.to_owned(),
        format!(r#"{{"session_id":"s-2","n":{},"hook_event_name":"Stop"}}"#, "7".repeat(5000)),
        format!(
            r#"{{"session_id":"s-3","hook_event_name":"Stop","deep":{}0{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        ),
    ];
    for i in 0..160 {
        let event = EVENTS[rng.below(EVENTS.len())];
        let session = format!("s-{i}");
        let payload = match fixed.get(i) {
            Some(payload) => payload.clone(),
            None => {
                let mut members = vec![
                    format!(r#""session_id":"{session}""#),
                    format!(r#""hook_event_name":"{event}""#),
                ];
                for _ in 0..rng.below(6) {
                    let at = rng.below(members.len() + 1);
                    let member =
                        format!("{}:{}", hostile_key(&mut rng), hostile_value(&mut rng, 0));
                    members.insert(at, member);
                }
                format!("{{{}}}", members.join(","))
            }
        };
        let event = if i < fixed.len() { "Stop" } else { event };
        run_relay(&dir, &[], payload.as_bytes());
        expected.push((event.to_owned(), session));
    }

    // The relay accepted each as a payload (the premise of the test)...
    let files = hookline::ingest::source::list(&dir).unwrap().events;
    assert_eq!(files.len(), expected.len());
    for file in &files {
        let envelope = RawEnvelope::parse(&fs::read(file.path(&dir)).unwrap()).unwrap();
        assert!(envelope.payload.is_some() && envelope.error.is_none(), "{file:?}: {envelope:?}");
    }
    // ...and the reader delivers each, in order, with its name and session.
    let events = no_follow(&dir, &["--from-start"]);
    let got: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap_or_default().to_owned();
            (text("native"), text("session_id"))
        })
        .collect();
    assert_eq!(got, expected);
    for event in &events {
        let reason = event["reason"].as_str().unwrap_or_default();
        assert!(!reason.contains("unreadable"), "{event}");
    }
    assert!(!dir.join(".quarantine").exists(), "nothing quarantined");
}

fn set_counter(dir: &Path, text: &str) {
    fs::write(dir.join(COUNTER_FILE), text).unwrap();
}

fn stop(i: usize) -> Vec<u8> {
    format!(r#"{{"hook_event_name":"Stop","session_id":"s-{i}"}}"#).into_bytes()
}

fn diagnostics(dir: &Path) -> Vec<String> {
    diag::read(&diagnostics_path(dir)).into_iter().map(|r| r.message).collect()
}

/// The seqs of the delivered events and their sessions, in delivery order.
fn delivered(dir: &Path) -> Vec<(u64, String)> {
    no_follow(dir, &["--from-start"])
        .iter()
        .map(|e| (e["origin"]["seq"].as_u64().unwrap(), e["session_id"].as_str().unwrap().into()))
        .collect()
}

fn sessions(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("s-{i}")).collect()
}

#[test]
fn a_counter_set_back_is_repaired_and_noted_and_no_seq_is_reused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for i in 0..5 {
        run_relay(&dir, &[], &stop(i));
    }
    // A backup of the counter from when it was at 2 is restored.
    set_counter(&dir, &format!("{:020}\n", 2));
    for i in 5..8 {
        run_relay(&dir, &[], &stop(i));
    }
    let got = delivered(&dir);
    assert_eq!(got.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
    assert_eq!(got.into_iter().map(|(_, s)| s).collect::<Vec<_>>(), sessions(0..8));
    let notes = diagnostics(&dir);
    assert_eq!(notes.len(), 1, "noted once, then repaired: {notes:?}");
    assert!(notes[0].contains("at 2 was behind the event files (newest seq 5)"), "{notes:?}");
}

#[test]
fn files_above_a_counter_set_back_are_delivered_before_any_relay_repairs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for i in 0..5 {
        run_relay(&dir, &[], &stop(i));
    }
    set_counter(&dir, &format!("{:020}\n", 2));
    // Older than any writer in progress can be.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let got = delivered(&dir);
    assert_eq!(got.into_iter().map(|(_, s)| s).collect::<Vec<_>>(), sessions(0..5));
}

#[test]
fn a_counter_at_its_end_or_damaged_continues_after_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    for i in 0..2 {
        run_relay(&dir, &[], &stop(i));
    }
    set_counter(&dir, &format!("{}\n", u64::MAX));
    run_relay(&dir, &[], &stop(2));
    set_counter(&dir, "garbage");
    run_relay(&dir, &[], &stop(3));
    let got = delivered(&dir);
    assert_eq!(got.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(got.into_iter().map(|(_, s)| s).collect::<Vec<_>>(), sessions(0..4));
    let notes = diagnostics(&dir);
    assert!(
        notes.iter().any(|n| n.contains(&format!("at {} is at its end", u64::MAX))),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("counter rebuilt")), "{notes:?}");
}

#[test]
fn doctor_reports_what_a_relay_could_write_nowhere_but_its_fallback_log() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let runtime = tmp.path().join("run");
    fs::create_dir(&home).unwrap();
    fs::create_dir(&runtime).unwrap();
    let env = [("HOME", &home), ("XDG_RUNTIME_DIR", &runtime)];
    // A relative events dir and no state dir yet: the relay can write neither the event nor
    // the diagnostics file beside the default events dir.
    let mut relay = Command::new(relay())
        .env_clear()
        .envs(env)
        .env("HOOKLINE_EVENTS_DIR", "events")
        .current_dir(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    relay.stdin.take().unwrap().write_all(&stop(0)).unwrap();
    let out = relay.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");

    let out = Command::new(hookline())
        .args(["doctor", "claude"])
        .env_clear()
        .envs(env)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("the relay could not write its diagnostics 1 time(s)"), "{stdout}");
    assert!(stdout.contains("HOOKLINE_EVENTS_DIR=events is relative"), "{stdout}");
    let log = runtime.join("hookline/relay-failures.log");
    assert!(stdout.contains(&format!("see {}", log.display())), "{stdout}");
}
