//! `hookline serve`: the decision layer for any language, as JSON lines.
//!
//! * [`protocol`]: the requests and replies, typed;
//! * [`hub`]: the decider and the `next_event` queues, shared between the thread that applies
//!   events and the ones that answer;
//! * [`server`]: the request loop, [`server::run`] over any reader and writer;
//! * [`lines`]: its request lines, read with a bound.

pub mod hub;
pub mod lines;
pub mod protocol;
pub mod server;
