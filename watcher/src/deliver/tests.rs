use super::*;
use crate::pane::sense;
use crate::profile::Profiles;

#[test]
fn text_with_a_control_character_is_refused_with_where_it_is() {
    for (text, char, offset) in [
        ("hi\u{1b}[201~ then Enter", '\u{1b}', 2),
        ("8-bit CSI \u{9b}201~", '\u{9b}', 10),
        ("a carriage return\r", '\r', 17),
        ("nul\u{0}", '\u{0}', 3),
        ("del\u{7f}", '\u{7f}', 3),
    ] {
        assert_eq!(check_text(text), Err(TextProblem::Control { char, offset }), "{text:?}");
    }
    let message = check_text("x\u{1b}").unwrap_err().to_string();
    assert!(message.contains("U+001B at byte 1"), "{message}");
    assert_eq!(check_text("two\nlines\twith a tab ❯"), Ok(()));
    assert_eq!(check_text(" \n "), Err(TextProblem::Empty));
    let long = "x".repeat(MAX_TEXT + 1);
    assert_eq!(check_text(&long), Err(TextProblem::TooLong { bytes: MAX_TEXT + 1 }));
    assert_eq!(check_text(&long[1..]), Ok(()));
}

#[test]
fn a_reported_prompt_matches_the_text_whatever_its_line_breaks() {
    assert!(prompt_matches("one\r\ntwo  three", "one\ntwo three"));
    assert!(prompt_matches("  hi\n", "hi"));
    assert!(!prompt_matches("hi there", "hi"));
}

#[test]
fn each_screen_that_must_refuse_names_its_rule() {
    let shipped = Profiles::shipped().unwrap();
    let claude = &shipped.get("claude").unwrap().pane;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pane");
    for (file, rule) in [
        ("claude-2.1.332/idle.txt", None),
        ("claude-2.1.332/done.txt", None),
        ("claude-2.1.332/typed.txt", Some(Rule::ComposerHoldsText)),
        ("claude-2.1.332/busy.txt", Some(Rule::Busy)),
        ("claude-2.1.332/dialog.txt", Some(Rule::Dialog)),
        ("claude-2.1.197/menu.txt", Some(Rule::ComposerHoldsText)),
        ("claude-2.1.332/trust.txt", Some(Rule::LoginOrTrust)),
    ] {
        let reading = sense(&std::fs::read_to_string(dir.join(file)).unwrap(), claude);
        assert_eq!(refusal(&reading, claude).map(|(r, _)| r), rule, "{file}");
    }
    let blank = sense("\n\n", claude);
    assert_eq!(refusal(&blank, claude).map(|(r, _)| r), Some(Rule::PromptNotVisible));
    let (_, reason) = refusal(&sense("Do you want to proceed?\n", claude), claude).unwrap();
    assert_eq!(reason, "a dialog is on screen (\"Do you want to proceed?\" on screen)");
    // A profile without patterns senses nothing and refuses nothing.
    assert_eq!(
        refusal(&sense("anything\n", &PanePatterns::default()), &PanePatterns::default()),
        None
    );
}

#[test]
fn this_process_is_in_its_own_tree_and_its_parents_but_not_a_childs() {
    let me = std::process::id();
    assert!(in_process_tree(me, me));
    assert!(in_process_tree(me, crate::host::parent(me).unwrap()));
    assert!(in_process_tree(me, 1));
    let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
    assert!(!in_process_tree(me, child.id()));
    assert!(in_process_tree(child.id(), me));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!in_process_tree(u32::MAX - 1, 1));
}

#[test]
fn the_exit_codes_are_those_of_hookline_deliver() {
    let refused = Outcome::Refused { rule: Rule::Dialog, reason: String::new() };
    assert_eq!(refused.exit_code(), 1);
    assert_eq!(Outcome::Unconfirmed { reason: String::new() }.exit_code(), 3);
    let json = serde_json::to_value(Report {
        outcome: refused,
        delivered: false,
        enter_resent: false,
        sent: Sent::default(),
        elapsed_ms: 7,
        pane: None,
    })
    .unwrap();
    assert_eq!(json["outcome"], "refused");
    assert_eq!(json["rule"], "dialog");
}

#[test]
fn only_a_turn_start_of_the_session_after_the_paste_confirms_with_its_prompt() {
    use crate::format::envelope::RawEnvelope;
    let dir = tempfile::tempdir().unwrap();
    let profiles = Profiles::shipped().unwrap();
    let event = |native: &str, extra: serde_json::Value, ts_ns: u64, file: &str| {
        let mut payload = serde_json::json!({"hook_event_name": native, "session_id": "s1"});
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let text = serde_json::json!({
            "v": 1, "seq": 7, "ts_ns": ts_ns, "cli": "claude", "event": native, "tag": "t1",
            "pid": 1, "ppid": 1, "relay_version": "0", "payload": payload,
        });
        std::fs::write(dir.path().join(file), text.to_string()).unwrap();
        let envelope = RawEnvelope::parse(text.to_string().as_bytes()).unwrap();
        let mut e = crate::ingest::reader::event_from_envelope(&profiles, &envelope, file);
        e.source.dir = dir.path().to_owned();
        e
    };
    let prompt = event("UserPromptSubmit", serde_json::json!({"prompt": "hi\nthere"}), 100, "a");
    let by_id = SessionRef::Id("s1".into());
    let t = turn_started(&prompt, &profiles, &by_id, 100).unwrap();
    assert_eq!(
        (t.seq, t.prompt.as_deref(), t.native.as_deref()),
        (7, Some("hi\nthere"), Some("UserPromptSubmit"))
    );
    assert!(turn_started(&prompt, &profiles, &SessionRef::Tag("t1".into()), 0).is_some());
    assert_eq!(turn_started(&prompt, &profiles, &by_id, 101), None, "before the paste");
    assert_eq!(turn_started(&prompt, &profiles, &SessionRef::Id("s2".into()), 0), None);
    let stop = event("Stop", serde_json::json!({}), 200, "b");
    assert_eq!(turn_started(&stop, &profiles, &by_id, 0), None, "not a turn_start");
    let sub =
        event("UserPromptSubmit", serde_json::json!({"prompt": "x", "agent_id": "a"}), 300, "c");
    assert_eq!(turn_started(&sub, &profiles, &by_id, 0), None, "a subagent's");
}
