//! End-to-end scenarios against the real Gemini CLI, offline.
//!
//! The pinned version (`@google/gemini-cli` 0.61.0, overridable with
//! `$HOOKLINE_E2E_GEMINI_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), talks to a mock of the Gemini API on 127.0.0.1, runs with a
//! throwaway `HOME` and `GEMINI_CLI_HOME`, and calls the workspace's built relay for every hook,
//! registered by the built `hookline install gemini` into the settings file the test wrote.
//! Every failure message starts with `[gemini <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_gemini -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls Gemini made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes.

mod headless;
mod interactive;
mod interrupt;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(GEMINI);

#[test]
fn interactive_prompt_delivered_and_confirmed() {
    interactive::delivered(&installed());
}

#[test]
fn headless_yolo_runs_the_command() {
    headless::run(&installed());
}

#[test]
fn interrupt_esc_mid_stream_and_api_errors() {
    interrupt::run(&installed());
}
