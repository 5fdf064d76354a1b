//! hookline integration tests.

mod daemon;
mod decide;
mod demo;
mod docs;
mod echo;
mod install;
mod lossless;
mod profiles;
mod prune;
mod schemas;
mod serve;
mod status;
mod supervise;
mod watch;
