//! hookline integration tests.

mod decide;
mod install;
mod prune;
mod serve;
mod watch;
