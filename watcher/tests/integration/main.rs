//! hookline integration tests.

mod decide;
mod demo;
mod docs;
mod echo;
mod install;
mod profiles;
mod prune;
mod serve;
mod status;
mod watch;
