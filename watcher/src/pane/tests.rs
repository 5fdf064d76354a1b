use std::path::PathBuf;

use super::*;
use crate::profile::Profiles;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pane").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn patterns(cli: &str) -> PanePatterns {
    Profiles::shipped().unwrap().get(cli).unwrap().pane.clone()
}

/// What a fixture must read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// At the prompt, composer empty, nothing else.
    Idle,
    /// At the prompt, the composer holds text.
    Typed,
    /// Processing.
    Busy,
    /// A dialog is open.
    Dialog,
    /// A login, trust or onboarding screen.
    Login,
}

/// Every screen captured from the real TUIs in the e2e suites (`HOOKLINE_E2E_SCREENS`),
/// and what pane sensing must make of it.
const SCREENS: &[(&str, &str, Seen)] = &[
    ("claude", "claude-2.1.332/idle.txt", Seen::Idle),
    ("claude", "claude-2.1.332/typed.txt", Seen::Typed),
    ("claude", "claude-2.1.332/busy.txt", Seen::Busy),
    ("claude", "claude-2.1.332/busy-hook.txt", Seen::Busy),
    ("claude", "claude-2.1.332/dialog.txt", Seen::Dialog),
    ("claude", "claude-2.1.332/done.txt", Seen::Idle),
    ("claude", "claude-2.1.332/trust.txt", Seen::Login),
    ("claude", "claude-2.1.332/onboarding.txt", Seen::Login),
    ("claude", "claude-2.1.197/idle.txt", Seen::Idle),
    ("claude", "claude-2.1.197/typed.txt", Seen::Typed),
    ("claude", "claude-2.1.197/busy.txt", Seen::Busy),
    ("claude", "claude-2.1.197/dialog.txt", Seen::Dialog),
    ("claude", "claude-2.1.197/done.txt", Seen::Idle),
    ("claude", "claude-2.1.197/menu.txt", Seen::Typed),
    ("claude", "claude-2.1.197/compacting.txt", Seen::Busy),
    ("codex", "codex-0.171.0/idle.txt", Seen::Idle),
    ("codex", "codex-0.171.0/typed.txt", Seen::Typed),
    ("codex", "codex-0.171.0/busy.txt", Seen::Busy),
    ("codex", "codex-0.171.0/dialog.txt", Seen::Dialog),
    ("codex", "codex-0.171.0/done.txt", Seen::Idle),
    ("codex", "codex-0.171.0/trust.txt", Seen::Login),
    ("gemini", "gemini-0.61.0/idle.txt", Seen::Idle),
    ("gemini", "gemini-0.61.0/typed.txt", Seen::Typed),
    ("gemini", "gemini-0.61.0/busy.txt", Seen::Busy),
    ("gemini", "gemini-0.61.0/dialog.txt", Seen::Dialog),
    ("gemini", "gemini-0.61.0/done.txt", Seen::Idle),
    ("qwen", "qwen-0.24.4/idle.txt", Seen::Idle),
    ("qwen", "qwen-0.24.4/typed.txt", Seen::Typed),
    ("qwen", "qwen-0.24.4/busy.txt", Seen::Busy),
    ("qwen", "qwen-0.24.4/dialog.txt", Seen::Dialog),
    ("qwen", "qwen-0.24.4/done.txt", Seen::Idle),
    ("qwen", "qwen-0.24.4/api-error.txt", Seen::Idle),
    ("droid", "droid-0.225.2/idle.txt", Seen::Idle),
    ("droid", "droid-0.225.2/typed.txt", Seen::Typed),
    ("droid", "droid-0.225.2/busy.txt", Seen::Busy),
    ("droid", "droid-0.225.2/dialog.txt", Seen::Dialog),
    ("droid", "droid-0.225.2/done.txt", Seen::Idle),
    ("droid", "droid-0.225.2/trust.txt", Seen::Login),
];

#[test]
fn every_captured_screen_reads_as_what_it_showed() {
    for (cli, file, seen) in SCREENS {
        let screen = fixture(file);
        let r = sense(&screen, &patterns(cli));
        let e = r.evidence.clone();
        let why = format!("{file}: {r:?}");
        assert_eq!(e.text_says_idle, *seen == Seen::Idle, "idle: {why}");
        assert_eq!(e.spinner, *seen == Seen::Busy, "busy: {why}");
        assert_eq!(e.dialog, *seen == Seen::Dialog, "dialog: {why}");
        assert_eq!(r.evidence.typed_not_submitted, *seen == Seen::Typed, "typed: {why}");
        assert_eq!(e.login_or_trust, *seen == Seen::Login, "login: {why}");
        assert!(!e.quota_text, "{why}");
        match seen {
            Seen::Dialog => assert_eq!(r.composer, None, "a dialog hides the composer: {why}"),
            Seen::Login => assert_eq!(r.composer, None, "no input prompt: {why}"),
            Seen::Typed => {}
            Seen::Idle | Seen::Busy => assert_eq!(r.composer.as_deref(), Some(""), "{why}"),
        }
        // What set each field is named.
        let named = |key: &str| r.matched.iter().any(|m| m.key == key);
        assert_eq!(e.dialog, named("dialog"), "{why}");
        assert_eq!(e.spinner, named("busy") || named("spinner"), "{why}");
        if e.text_says_idle && !["gemini", "qwen", "droid"].contains(cli) {
            assert!(named("idle"), "{why}");
        }
    }
}

#[test]
fn a_typed_composer_holds_the_typed_text_not_the_echo_of_an_earlier_prompt() {
    let r = sense(&fixture("claude-2.1.332/typed.txt"), &patterns("claude"));
    assert_eq!(
        r.composer.as_deref(),
        Some("please RUNBASH: echo hi > /tmp/hookline-e2e-SANDBOX/project/out.txt")
    );
    // Busy: the earlier prompt's echo "❯ please RUNBASH..." is on screen, the composer is empty.
    let busy = fixture("claude-2.1.332/busy.txt");
    assert!(busy.contains("❯ please RUNBASH"));
    assert_eq!(sense(&busy, &patterns("claude")).composer.as_deref(), Some(""));
    let menu = sense(&fixture("claude-2.1.197/menu.txt"), &patterns("claude"));
    assert_eq!(menu.composer.as_deref(), Some("/compact"));
    let gemini = sense(&fixture("gemini-0.61.0/typed.txt"), &patterns("gemini"));
    assert_eq!(
        gemini.composer.as_deref(),
        Some("please RUNBASH: echo hi > /tmp/hookline-e2e-SANDBOX/project/out.txt")
    );
}

#[test]
fn qwen_and_droid_composers_hold_what_was_typed_and_a_delivery_shows_in_them() {
    let typed = "please RUNBASH: echo hi > /tmp/hookline-e2e-SANDBOX/project/out.txt";
    for (cli, file) in [("qwen", "qwen-0.24.4/typed.txt"), ("droid", "droid-0.225.2/typed.txt")] {
        let patterns = patterns(cli);
        let composer = sense(&fixture(file), &patterns).composer.unwrap();
        // Qwen draws its cursor as a zero-width space after the text.
        assert_eq!(composer.trim_end_matches('\u{200b}').trim_end(), typed, "{file}");
        assert!(composer_shows(&composer, typed, &patterns), "{file}");
    }
    // The echo of a submitted prompt ("  > please …", indented) is not Qwen's composer.
    let done = fixture("qwen-0.24.4/done.txt");
    assert!(done.contains("  > please RUNBASH"));
    assert_eq!(sense(&done, &patterns("qwen")).composer.as_deref(), Some(""));
}

#[test]
fn a_profile_without_patterns_senses_nothing() {
    for (_, file, _) in SCREENS {
        let r = sense(&fixture(file), &PanePatterns::default());
        assert_eq!(r.evidence, PaneEvidence::default(), "{file}");
        assert_eq!(r.composer, None);
        assert!(!r.evidence.typed_not_submitted && r.matched.is_empty());
    }
}

#[test]
fn escape_sequences_and_control_characters_are_stripped() {
    let raw = "\u{1b}[1;32m❯\u{1b}[0m hi\u{1b}]0;title\u{7}\r\n\u{1b}]8;;http://x\u{1b}\\link\u{1b}(B\u{9b}2Jx\u{7}\u{0}\ty";
    assert_eq!(strip_escapes(raw), "❯ hi\nlinkx\ty");
    // Colour codes around a marker do not hide it.
    let screen = "\u{1b}[2m✶\u{1b}[0m \u{1b}[1mThinking…\u{1b}[0m (\u{1b}[3mesc to interrupt\u{1b}[0m)\n❯ \n";
    let r = sense(screen, &patterns("claude"));
    assert!(r.evidence.spinner);
    assert!(r.matched.iter().any(|m| m.key == "spinner" && m.pattern == "✶"), "{r:?}");
}

#[test]
fn a_spinner_glyph_needs_a_word_in_progress() {
    let claude = patterns("claude");
    for line in ["✻ Brewed for 0s · done 9:57 AM", "✻ Crunched for 0s", "* a bullet point"] {
        assert!(!sense(&format!("{line}\n❯ \n"), &claude).evidence.spinner, "{line}");
    }
    for line in ["✽ Razzmatazzing…", "  · Vibing… (3s)", "* Noodling… (0s · ↓ 8 tokens)"]
    {
        assert!(sense(&format!("{line}\n❯ \n"), &claude).evidence.spinner, "{line}");
    }
}

#[test]
fn readings_combine_so_that_presence_wins() {
    let claude = patterns("claude");
    let idle = sense(&fixture("claude-2.1.332/idle.txt"), &claude);
    let busy = sense(&fixture("claude-2.1.332/busy.txt"), &claude);
    let dialog = sense(&fixture("claude-2.1.332/dialog.txt"), &claude);
    let typed = sense(&fixture("claude-2.1.332/typed.txt"), &claude);
    let both = combine(vec![idle.clone(), busy.clone(), idle.clone()]);
    assert!(both.evidence.spinner && !both.evidence.text_says_idle);
    let both = combine(vec![idle.clone(), dialog]);
    assert!(both.evidence.dialog && both.composer.is_none());
    let both = combine(vec![idle.clone(), typed]);
    assert!(both.evidence.typed_not_submitted);
    assert_eq!(combine(vec![idle.clone(), idle.clone()]), idle);
}

#[test]
fn the_composer_shows_a_delivery_by_its_first_line_or_a_folded_paste() {
    let claude = patterns("claude");
    let text = "please RUNBASH: echo hi > /tmp/hookline-e2e-SANDBOX/project/out.txt";
    assert!(composer_shows(text, text, &claude));
    assert!(composer_shows("please   RUNBASH: echo hi", "please RUNBASH: echo hi\nmore", &claude));
    assert!(composer_shows("[Pasted text #1 +12 lines]", "anything", &claude));
    assert!(!composer_shows("", text, &claude));
    assert!(!composer_shows("something else", text, &claude));
}

#[test]
fn a_pane_tmux_cannot_reach_is_an_error_that_names_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::on_socket(dir.path().join("no-server"), "work:1.0");
    let e = pane.capture().unwrap_err();
    assert!(matches!(&e, Error::Tmux { target, .. } if target == "work:1.0"), "{e:?}");
    assert_eq!(e.to_string(), "cannot capture tmux pane \"work:1.0\"");
    let Error::Tmux { source: crate::errors::TmuxProblem::Failed { stderr, .. }, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(!stderr.is_empty(), "tmux says why it failed on stderr");
    let cause = std::error::Error::source(&e).expect("what tmux said");
    assert_eq!(cause.to_string(), *stderr);
    assert!(crate::errors::chain(&e).ends_with(stderr.as_str()), "{}", crate::errors::chain(&e));
    assert!(e.fix().unwrap().contains("--tmux-socket"));
}

#[test]
fn the_api_rate_limit_error_claude_displays_reads_as_quota_text() {
    // The `delta` Claude Code 2.1.332 displayed for a 429 (its MessageDisplay hook payload,
    // ../shared/fixtures/claude-code/2.1.332/MessageDisplay-api_error-headless.json).
    let shown = "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit (mock)";
    let screen = format!("● {shown}\n────\n❯ \n────\n  ? for shortcuts\n");
    let r = sense(&screen, &patterns("claude"));
    assert!(r.evidence.quota_text, "{r:?}");
    assert!(r.matched.iter().any(|m| m.key == "quota" && m.pattern == "Request rejected (429)"));
}
