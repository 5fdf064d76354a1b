//! End-to-end scenarios against the real Codex CLI, offline.
//!
//! The pinned version (`@openai/codex` 0.171.0, overridable with `$HOOKLINE_E2E_CODEX_VERSION`)
//! is installed from npm into the cache on first use (`hookline_tests::npm_install`), talks to
//! a mock of the OpenAI Responses API on 127.0.0.1, runs with a throwaway `HOME` and
//! `CODEX_HOME`, and calls the workspace's built relay for every hook, registered by the built
//! `hookline install codex`. Every failure message starts with `[codex <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_codex -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls Codex made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes (each
//! holds `launch-N.sh` to rerun a command by hand).

mod headless;
mod interactive;
mod interrupt;
mod trusted;

use hookline_tests::npm_install::{self, CODEX, Installed};

/// The pinned version, installed (or found in the cache).
fn installed() -> Installed {
    CODEX.installed(CODEX.version())
}

/// The installer fails loudly when npm cannot reach the registry: the suite never skips.
#[test]
fn an_unreachable_registry_fails_the_install_with_a_message_that_says_so() {
    npm_install::check_unreachable_registry_fails_loudly(&CODEX, CODEX.version());
}

#[test]
fn interactive_prompt_delivered_and_confirmed() {
    interactive::delivered(&installed());
}

#[test]
fn interactive_approved() {
    interactive::approved(&installed());
}

#[test]
fn interactive_approved_with_notify_wired_too() {
    interactive::approved_with_notify(&installed());
}

#[test]
fn interactive_denied_with_escape() {
    interactive::denied(&installed());
}

#[test]
fn headless_exec_runs_a_sandboxed_command() {
    headless::run(&installed(), headless::Case::Sandboxed);
}

#[test]
fn headless_exec_rejects_an_escalation() {
    headless::run(&installed(), headless::Case::Escalated);
}

#[test]
fn doctor_reports_untrusted_hooks_then_trusted_ones_fire_in_the_daemon() {
    trusted::run(&installed());
}

#[test]
fn interrupt_esc_mid_stream_and_api_errors() {
    interrupt::run(&installed());
}
