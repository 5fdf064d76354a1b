//! `hookline serve`: the decision layer for any language, as JSON lines.
//!
//! * [`crate::protocol`]: the requests and replies, defined once (both ends and the schemas use
//!   it), a module of its own below the engine that answers them;
//! * [`answer`]: one request answered by a running engine ([`crate::engine::Running`]);
//! * [`server`]: the request loop, [`server::answer`] over any reader and writer;
//! * [`lines`]: its request lines, read with a bound.

pub mod answer;
pub mod lines;
pub mod server;
