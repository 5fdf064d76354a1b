//! The reader's memory of copies handed out as a checkpoint holds it
//! ([`crate::engine::checkpoint`]): its own types, apart from [`super::Echoes`], so that a
//! field added to the domain type never changes the file by accident.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::canonical::{CompactPhase, KindName, SourceRef};

/// The reader's memory of copies handed out (see [`super`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Echoes {
    pub by_id: BTreeMap<String, Vec<Copy>>,
    pub by_tag: BTreeMap<String, Vec<Copy>>,
    pub dirs: Vec<PathBuf>,
    pub names: Vec<String>,
    pub newest_ns: u64,
    pub seen: u64,
}

/// One copy remembered; `dir`, `cli`, `native` and `paired` index [`Echoes::dirs`] and
/// [`Echoes::names`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copy {
    pub dir: usize,
    pub seq: u64,
    pub file: String,
    pub legacy: bool,
    pub original: Option<SourceRef>,
    pub cli: usize,
    pub native: Option<usize>,
    pub agent_id: Option<String>,
    pub kind: KindName,
    pub phase: Option<CompactPhase>,
    pub digest: Option<u64>,
    pub ts_ns: u64,
    pub paired: Vec<usize>,
}
