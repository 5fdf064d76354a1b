//! End-to-end scenarios against the real Claude Code CLI, offline.
//!
//! Each pinned version ([`Pin::Primary`] 2.1.332, [`Pin::Second`] 2.1.197, both overridable,
//! see `hookline_tests::claude_install`) runs the same scenarios, in a module named after the
//! pin; every failure message starts with `[claude <version> <scenario>]`. The CLI is installed
//! from npm into a cache on first use, talks to a mock API on 127.0.0.1, runs in a private tmux
//! server for the interactive scenarios, and calls the workspace's built relay for every hook.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_claude
//! ```
//!
//! Each passing scenario prints (with `--nocapture`) and writes to `target/hookline-e2e/` the
//! native events it saw per step, with the phase 2 canonical placeholders, today's
//! `hookline watch` output for them, and the API calls the CLI made. `HOOKLINE_E2E_KEEP=1`
//! keeps the sandboxes (each holds `launch-N.sh` to rerun the CLI by hand).

mod headless;
mod interactive;
mod npm;
mod settings_warning;

use hookline_tests::claude_install::{self, Installed, Pin};

/// The pinned version, installed (or found in the cache).
fn installed(pin: Pin) -> Installed {
    let version = pin.version();
    claude_install::install(version)
        .unwrap_or_else(|e| panic!("[claude {version}] cannot install the CLI: {e}"))
}

macro_rules! scenarios {
    ($($module:ident => $pin:expr),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn interactive_session_from_launch_to_exit() {
                interactive::run(&installed($pin));
            }

            #[test]
            fn headless_run_with_a_denied_tool() {
                headless::run(&installed($pin));
            }

            #[test]
            fn unknown_event_names_raise_a_warning_listing_the_known_ones() {
                settings_warning::run(&installed($pin));
            }
        }
    )*};
}

scenarios!(primary => Pin::Primary, second => Pin::Second);
