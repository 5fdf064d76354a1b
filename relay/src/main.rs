//! `hookline-relay`: the hook command. Prints nothing and exits 0 on every path.
//!
//! The program lives here, private to the binary: [`args`] (the command line), [`input`]
//! (reading stdin within a size cap and a deadline), [`payload`] (the input understood),
//! [`run`] (the whole run), [`validate`] (checking a JSON object as it arrives), [`diagnostics`]
//! (what a run reports) and [`start`] (the little of std's start-up the relay keeps). The
//! on-disk format it writes is the `hookline_relay` library.
//!
//! The relay defines the C `main` itself (`#![no_main]`): std's start-up, which every call of
//! the hook would pay, reads `/proc/self/maps` and maps a signal stack to report a stack
//! overflow (an abort either way: the relay's stack depth is bounded), and the relay needs
//! none of it but what [`start::init`] does. Arguments and environment are std's as usual
//! (glibc hands them to std before `main`).

// The unit tests keep the test harness's `main`.
#![cfg_attr(not(test), no_main)]

mod args;
mod diagnostics;
mod input;
mod payload;
mod run;
mod start;
mod validate;
#[cfg(test)]
mod xorshift;

use std::ffi::{c_char, c_int};
use std::panic;

use hookline_relay::clock::now_ns;
use hookline_relay::diag::Level;

use crate::diagnostics::Report;

/// The C entry point (`main`; the unit tests keep their harness's): the relay's whole life.
/// Never returns: it exits 0 whatever happened.
#[cfg_attr(not(test), unsafe(export_name = "main"))]
#[cfg_attr(test, allow(dead_code))]
extern "C" fn relay_main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    start::init();
    // The default hook would print the panic to stderr, which the host CLI reads.
    panic::set_hook(Box::new(|_| {}));
    if let Err(panic) = panic::catch_unwind(run::main) {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let _ = panic::catch_unwind(|| {
            let report = Report {
                events_dir: hookline_relay::location::events_dir().ok(),
                notes: vec![(Level::Error, format!("relay panicked: {message}"))],
                ..Report::default()
            };
            diagnostics::record(&report, "", now_ns());
        });
    }
    std::process::exit(0);
}
