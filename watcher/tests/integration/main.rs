//! hookline integration tests.

mod checkpoint;
mod classifier;
mod daemon;
mod decide;
mod demo;
mod docs;
mod echo;
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
