//! End-to-end scenarios against the real GitHub Copilot CLI, offline.
//!
//! The pinned version (`@github/copilot` 1.0.102, overridable with
//! `$HOOKLINE_E2E_COPILOT_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), runs in its offline BYOK mode against a mock of the Chat
//! Completions API on 127.0.0.1 (no GitHub account, no token), with a throwaway `HOME` and
//! `COPILOT_HOME`, and calls the workspace's built relay for every hook, registered by the
//! built `hookline install copilot`. Every failure message starts with
//! `[copilot <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_copilot -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls Copilot made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes.

mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(COPILOT);

#[test]
fn interactive_denied_with_a_reason() {
    interactive::denied_with_feedback(&installed());
}

#[test]
fn headless_prompt_with_all_tools_allowed_runs_the_command() {
    headless::run(&installed(), headless::Case::AllowAll);
}

#[test]
fn headless_prompt_denies_a_command_nobody_can_approve() {
    headless::run(&installed(), headless::Case::NoApprover);
}
