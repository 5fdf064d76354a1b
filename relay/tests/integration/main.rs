//! Spawns the built relay as an agent CLI would: a cleared environment, a payload on stdin (or
//! as the last argument), stdout and stderr captured. Every run goes through
//! [`util::Relay::run`], which fails the test unless the relay exited 0 and printed nothing.

mod util;

mod args;
mod buckets;
mod concurrency;
mod diagnostics;
mod envelope;
mod environment;
mod filesystem;
mod input;
mod kill;
mod linkage;
mod timing;
