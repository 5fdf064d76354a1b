//! hookline integration tests: the `hookline` binary, run as a user or an orchestrator runs it.

mod checkpoint;
mod daemon;
mod decide;
mod demo;
mod echo;
mod errors;
#[cfg(feature = "nats")]
mod fleet;
mod install;
mod lossless;
mod profiles;
mod prune;
mod schemas;
mod serve;
mod status;
mod supervise;
mod watch;
mod web;
