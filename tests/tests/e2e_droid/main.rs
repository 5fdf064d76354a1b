//! End-to-end scenarios against the real Factory Droid, offline.
//!
//! The pinned version (the native binary of `@factory/cli-linux-x64` 0.225.2, installed
//! directly: the `@factory/cli` shim is broken on the registry; overridable with
//! `$HOOKLINE_E2E_DROID_VERSION`) is installed from npm into the cache on first use
//! (`hookline_tests::npm_install`), runs in airgap mode with a custom model served by a mock of
//! the Chat Completions API on 127.0.0.1 (no Factory account), with a throwaway `HOME`, and
//! calls the workspace's built relay for every hook, registered by the built
//! `hookline install droid --scope user`. After every step `hookline status` must say what the
//! library's tracker says. Every failure message starts with `[droid <version> <scenario>]`.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_droid -- --nocapture
//! ```
//!
//! Each passing scenario prints, and writes to `target/hookline-e2e/`, its native → canonical →
//! state table and the API calls Droid made. `HOOKLINE_E2E_KEEP=1` keeps the sandboxes.

mod headless;
mod interactive;

// `installed()`, the unreachable-registry test, `interactive_approved` and
// `interactive_denied_with_escape`.
hookline_tests::npm_cli_suite!(DROID);

#[test]
fn interactive_escape_while_the_approved_command_runs_then_api_errors() {
    interactive::interrupted_then_api_errors(&installed());
}

#[test]
fn exec_with_autonomy_high_runs_the_command() {
    headless::run(&installed());
}
