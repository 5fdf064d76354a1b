//! End-to-end scenarios against the real Claude Code CLI, offline.
//!
//! Each pinned version ([`Pin::Primary`] 2.1.332, [`Pin::Second`] 2.1.197, both overridable,
//! see `hookline_tests::claude_install`) runs the same scenarios, in a module named after the
//! pin; every failure message starts with `[claude <version> <scenario>]`. The CLI is installed
//! from npm into a cache on first use, talks to a mock API on 127.0.0.1, runs in a private tmux
//! server for the interactive scenarios, and calls the workspace's built relay for every hook,
//! registered by the built `hookline install claude --scope project`. The built `hookline
//! watch --cursor e2e` follows the events directory; a `hookline::state::Tracker`, started
//! before the CLI, folds what it prints: each step asserts the native events, their canonical
//! events, the state after each and after the step, and the input slot.
//!
//! ```text
//! bash tests/e2e-prereqs.sh            # tmux, node, npm
//! cargo build --workspace              # the relay and hookline the CLI will call
//! cargo test -p hookline-tests --test e2e_claude
//! ```
//!
//! Each passing scenario prints (with `--nocapture`) and writes to `target/hookline-e2e/` per
//! step the native events, the canonical event and state rule for each, the states and the input
//! slot, then what `hookline install` printed and the API calls the CLI made.
//! `legacy_relay` installs the older Python relay's hook beside hookline's and follows both
//! directories with `hookline serve`: one input slot per stop.
//! `HOOKLINE_E2E_KEEP=1` keeps the sandboxes (each holds `launch-N.sh` to rerun the CLI by
//! hand).

mod classifier;
mod deliver;
mod headless;
mod interactive;
mod interrupt;
mod legacy_relay;
mod settings_warning;
mod stall;

use hookline_tests::claude_install::{CLAUDE, Installed, PRIMARY_VERSION, Pin};
use hookline_tests::npm_install;
use hookline_tests::version::Version;

/// The pinned version, installed (or found in the cache).
fn installed(pin: Pin) -> Installed {
    CLAUDE.installed(pin.version())
}

/// The installer fails loudly when npm cannot reach the registry: the suite never skips.
#[test]
fn an_unreachable_registry_fails_the_install_with_a_message_that_says_so() {
    npm_install::check_unreachable_registry_fails_loudly(&CLAUDE, Version::lit(PRIMARY_VERSION));
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
            fn prompts_delivered_and_confirmed_and_a_dialog_refused() {
                deliver::run(&installed($pin));
            }

            #[test]
            fn headless_run_with_a_denied_tool() {
                headless::run(&installed($pin));
            }

            #[test]
            fn the_older_relay_beside_hooklines_gives_one_slot_per_stop() {
                legacy_relay::run(&installed($pin));
            }

            #[test]
            fn every_event_install_registers_is_accepted_by_the_cli() {
                settings_warning::run(&installed($pin));
            }
        }
    )*};
}

scenarios!(primary => Pin::Primary, second => Pin::Second);

/// Esc at a streaming turn and at a permission dialog, then API errors: no hook fires, the
/// transcript holds the markers (2.1.332, whose transcript the fixtures come from).
mod interrupt_primary {
    use super::*;

    #[test]
    fn esc_while_an_answer_streams_fires_nothing_and_leaves_the_marker() {
        interrupt::while_streaming(&installed(Pin::Primary));
    }

    #[test]
    fn esc_at_a_permission_dialog_fires_nothing_and_leaves_the_rejection() {
        interrupt::at_permission_dialog(&installed(Pin::Primary));
    }

    #[test]
    fn api_errors_end_the_turn_with_stop_failure_and_an_error_entry() {
        interrupt::api_errors(&installed(Pin::Primary));
    }
}

/// `stall` at the end of real turns: the stop payload's `background_tasks` and the task hooks
/// as 2.1.332 sends them (the second pin predates the task tools' ToolSearch shape).
mod stall_primary {
    use super::*;

    #[test]
    fn a_background_command_gates_stall_until_it_ended() {
        stall::background_task(&installed(Pin::Primary));
    }

    #[test]
    fn a_task_list_left_open_allows_stall_quoting_the_item() {
        stall::open_task(&installed(Pin::Primary));
    }

    #[test]
    fn the_real_cli_as_classifier_is_held_by_the_act_gate() {
        classifier::run(&installed(Pin::Primary));
    }
}
