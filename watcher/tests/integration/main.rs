//! hookline integration tests.

mod decide;
mod demo;
mod install;
mod profiles;
mod serve;
mod status;
mod watch;
