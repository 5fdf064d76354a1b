//! End-to-end scenarios against the real OpenCode, offline.
//!
//! The pinned version (`opencode-ai` 1.18.33, overridable with
//! `$HOOKLINE_E2E_OPENCODE_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), talks to a mock of the Chat Completions API on 127.0.0.1
//! configured as an OpenAI-compatible provider, runs with a throwaway `HOME` and XDG folders,
//! and calls the workspace's built relay through hookline's plugin (`profiles/opencode-plugin.js`),
//! which the test writes into OpenCode's user plugin folder. Every failure message starts with
//! `[opencode <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay the plugin will call
//! cargo test -p hookline-tests --test e2e_opencode -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls OpenCode made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes.

mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(OPENCODE);

#[test]
fn headless_run_runs_an_allowed_command() {
    headless::run(&installed(), headless::Case::Allowed);
}

#[test]
fn headless_run_rejects_a_permission_ask() {
    headless::run(&installed(), headless::Case::Ask);
}
