//! End-to-end scenarios against the real Qwen Code, offline.
//!
//! The pinned version (`@qwen-code/qwen-code` 0.24.4, overridable with
//! `$HOOKLINE_E2E_QWEN_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), talks to a mock of the Chat Completions API on 127.0.0.1
//! through its OpenAI auth, with a throwaway `HOME`, and calls the workspace's built relay for
//! every hook, registered by the built `hookline install qwen --scope user`. After every step
//! `hookline status` must say what the library's tracker says. Every failure message starts
//! with `[qwen <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_qwen -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls Qwen made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes.

mod errors;
mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(QWEN);

#[test]
fn interactive_escape_while_the_approved_command_runs_then_api_errors() {
    errors::run(&installed());
}

#[test]
fn headless_prompt_in_yolo_mode_runs_the_command() {
    headless::run(&installed());
}
