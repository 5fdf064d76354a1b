//! hookline integration tests.

mod decide;
mod demo;
mod docs;
mod install;
mod profiles;
mod prune;
mod serve;
mod status;
mod supervise;
mod watch;
