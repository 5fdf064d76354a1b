//! hookline integration tests.

mod install;
mod watch;
