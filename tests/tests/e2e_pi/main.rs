//! End-to-end scenarios against the real Pi coding agent, offline.
//!
//! The pinned version (`@mariozechner/pi-coding-agent` 0.73.1, overridable with
//! `$HOOKLINE_E2E_PI_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), talks to a mock of the Chat Completions API on 127.0.0.1
//! configured as a custom provider, runs with a throwaway `HOME`, and calls the workspace's
//! built relay through hookline's extension (`profiles/pi-extension.ts`), which `hookline
//! install pi --scope user` writes into Pi's extension folder. The TUI scenarios load the
//! permission gate Pi ships as an example (Pi has no approval dialog of its own). At the
//! moments that matter, `hookline status --json` must read the session as the live tracker
//! does. Every failure message starts with `[pi <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay the extension will call
//! cargo test -p hookline-tests --test e2e_pi -- --nocapture
//! ```

mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(PI);

#[test]
fn interactive_esc_during_a_command_then_an_api_error_retried_once() {
    interactive::esc_and_api_error(&installed());
}

#[test]
fn headless_print_runs_a_command() {
    headless::run(&installed());
}
