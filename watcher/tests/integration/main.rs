//! hookline integration tests.

mod decide;
mod install;
mod serve;
mod watch;
