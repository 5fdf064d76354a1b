//! `hookline serve`: the decision layer for any language, as JSON lines.
//!
//! * [`protocol`]: the requests and replies, defined once (both ends and the schemas use it);
//! * [`answer`]: one request answered by a running engine ([`crate::engine::Running`]);
//! * [`server`]: the request loop, [`server::answer`] over any reader and writer;
//! * [`lines`]: its request lines, read with a bound.

pub mod answer;
pub mod lines;
pub mod protocol;
pub mod server;
