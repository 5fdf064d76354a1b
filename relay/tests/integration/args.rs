//! The command line: `hookline-relay [--cli NAME] [--event NAME] [JSON]`. Bad arguments are
//! recorded in the diagnostics file and never cost the event.

use crate::util::{Sandbox, fixture};

#[test]
fn event_overrides_the_payload_and_cli_is_recorded() {
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .args(["--cli", "copilot", "--event", "preToolUse"])
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    let e = sandbox.only_event().envelope;
    assert_eq!(e.cli, "copilot");
    assert_eq!(e.event.as_deref(), Some("preToolUse"));
    assert_eq!(e.payload.unwrap()["hook_event_name"], "PreToolUse", "the payload is untouched");
}

#[test]
fn the_equals_form_works_too() {
    let sandbox = Sandbox::new();
    sandbox.relay().args(["--cli=gemini", "--event=BeforeTool"]).input("{}").run();
    let e = sandbox.only_event().envelope;
    assert_eq!((e.cli.as_str(), e.event.as_deref()), ("gemini", Some("BeforeTool")));
}

#[test]
fn unknown_flags_are_noted_and_the_stdin_payload_still_recorded() {
    let sandbox = Sandbox::new();
    sandbox
        .relay()
        .args(["--verbose", "--tag", "task-1", "--cli", "claude"])
        .input(fixture("claude-code/PreToolUse.json"))
        .run();
    let e = sandbox.only_event().envelope;
    assert_eq!(e.error, None, "{e:?}");
    assert_eq!(e.event.as_deref(), Some("PreToolUse"));
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("--verbose")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("--tag")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("task-1")), "{notes:?}");
}

#[test]
fn a_flag_missing_its_value_is_noted_and_the_event_written() {
    for flag in ["--event", "--cli"] {
        let sandbox = Sandbox::new();
        sandbox.relay().arg(flag).input(fixture("claude-code/PreToolUse.json")).run();
        let e = sandbox.only_event().envelope;
        assert_eq!((e.cli.as_str(), e.event.as_deref()), ("claude", Some("PreToolUse")));
        let notes = sandbox.diagnostic_messages();
        assert!(notes.iter().any(|m| m == &format!("{flag} needs a value")), "{notes:?}");
    }
}

#[test]
fn overlong_names_are_clipped_not_refused() {
    let sandbox = Sandbox::new();
    let long = "n".repeat(10_000);
    sandbox.relay().args(["--cli", &long, "--event", &long]).input("{}").run();
    let e = sandbox.only_event().envelope;
    assert_eq!(e.cli.len(), 64);
    assert_eq!(e.event.map(|e| e.len()), Some(64));
}

/// Runs `hookline-relay ARGS REDIRECT` under `script`, so that its stdin, stdout and stderr are
/// a real terminal (a pty), as when a person types it; returns what reached the terminal.
fn on_a_terminal(sandbox: &Sandbox, args_and_redirect: &str) -> String {
    let command = format!("'{}' {args_and_redirect}", crate::util::relay().display());
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &sandbox.home)
        .env("HOOKLINE_EVENTS_DIR", &sandbox.events)
        .current_dir(sandbox.root())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("`script` (util-linux) runs a command on a pty");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_at_a_terminal_prints_the_usage_on_stderr_and_writes_nothing() {
    let sandbox = Sandbox::new();
    for flag in ["--help", "-h"] {
        let stderr = on_a_terminal(&sandbox, &format!("{flag} --cli codex >/dev/null"));
        assert!(stderr.contains("usage: hookline-relay [--cli NAME]"), "{flag}: {stderr:?}");
        assert!(stderr.contains("--event NAME"), "{stderr:?}");
        let stdout = on_a_terminal(&sandbox, &format!("{flag} 2>/dev/null"));
        assert_eq!(stdout, "", "{flag}: nothing on stdout");
    }
    sandbox.assert_untouched();
}

#[test]
fn help_as_a_hook_stays_silent_and_the_event_is_written() {
    let sandbox = Sandbox::new();
    sandbox.relay().args(["--help", "-h"]).input(fixture("claude-code/PreToolUse.json")).run();
    let e = sandbox.only_event().envelope;
    assert_eq!(e.event.as_deref(), Some("PreToolUse"));
    let notes = sandbox.diagnostic_messages();
    assert!(notes.iter().any(|m| m.contains("\"--help\" ignored")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("\"-h\" ignored")), "{notes:?}");
}
