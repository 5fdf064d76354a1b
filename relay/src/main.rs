//! `hookline-relay`: the hook command. Prints nothing and exits 0 on every path.
//!
//! The program lives here, private to the binary: [`args`] (the command line), [`input`]
//! (reading stdin within a size cap and a deadline), [`payload`] (the input understood),
//! [`run`] (the whole run), [`validate`] (checking a JSON object as it arrives) and [`diagnostics`] (what a run reports). The on-disk format it
//! writes is the `hookline_relay` library.

mod args;
mod diagnostics;
mod input;
mod payload;
mod run;
mod validate;
#[cfg(test)]
mod xorshift;

use std::panic;

use hookline_relay::clock::now_ns;
use hookline_relay::diag::Level;

use crate::diagnostics::Report;

fn main() {
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
