//! End-to-end scenarios against the real Kilo Code CLI, offline.
//!
//! The pinned version (`@kilocode/cli` 7.7.7, overridable with `$HOOKLINE_E2E_KILO_VERSION`) is
//! installed from npm into the cache on first use (`hookline_tests::npm_install`), talks to a
//! mock of the Chat Completions API on 127.0.0.1 configured as an OpenAI-compatible provider,
//! runs with a throwaway `HOME` and XDG folders, and calls the workspace's built relay through
//! hookline's OpenCode plugin, which `hookline install kilo --scope user` writes into Kilo's
//! plugin folder told to say `--cli kilo`. At the moments that matter, `hookline status
//! --json` must read the session as the live tracker does. Every failure message starts with
//! `[kilo <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay the plugin will call
//! cargo test -p hookline-tests --test e2e_kilo -- --nocapture
//! ```

mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(KILO);

#[test]
fn interactive_esc_during_an_approved_command_then_an_api_error() {
    interactive::esc_and_api_error(&installed());
}

#[test]
fn headless_run_runs_an_allowed_command() {
    headless::run(&installed());
}
