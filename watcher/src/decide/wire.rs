//! What a decider remembers, as a checkpoint holds it ([`crate::engine::checkpoint`]).

use serde::{Deserialize, Serialize};

/// What a decider remembers of a session from its events (not from its decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    pub host_first_seen: Option<(u32, u64)>,
    pub quota: Option<super::QuotaNotice>,
}
