//! Leases: an idle's single input slot, handed out once, held by a requester until it is
//! consumed (something was typed under it) or released (given back, the slot free again).
//!
//! An allowed `input` or `nudge` takes the slot as a lease with an id ([`LeaseId`]). The id
//! goes back to the requester in the decision; `hookline deliver --lease ID` types under it,
//! `hookline lease release ID` gives it back. A lease is the idle's: when the session leaves
//! that idle (a new turn, a dialog, a session end) the lease is void and the next idle brings
//! a slot of its own. A consumed lease never comes back. Leases do not expire unless the
//! policy's `input.lease-expires-after` says so.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::Question;
use crate::state::Slot;

/// How many spent leases are remembered, to tell "used" and "released" from "unknown".
const SPENT_KEPT: usize = 4096;

/// A lease's id: `l-` and 24 hex digits, unique to the generation that handed it out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct LeaseId(String);

impl LeaseId {
    /// A new id: random, so that no other requester can guess it.
    fn new() -> LeaseId {
        let mut bytes = [0u8; 12];
        if !fill_random(&mut bytes) {
            // No /dev/urandom: the clock, the pid and a counter are still unique.
            use std::sync::atomic::{AtomicU64, Ordering};
            static COUNT: AtomicU64 = AtomicU64::new(0);
            let n = crate::format::clock::now_ns()
                ^ (u64::from(std::process::id()) << 32)
                ^ COUNT.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            bytes[..8].copy_from_slice(&n.to_le_bytes());
            bytes[8..].copy_from_slice(&COUNT.load(Ordering::Relaxed).to_le_bytes()[..4]);
        }
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        LeaseId(format!("l-{hex}"))
    }

    /// The id as given on the wire and on the command line.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for LeaseId {
    fn from(text: &str) -> LeaseId {
        LeaseId(text.trim().to_owned())
    }
}

impl From<String> for LeaseId {
    fn from(text: String) -> LeaseId {
        LeaseId::from(text.as_str())
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn fill_random(bytes: &mut [u8]) -> bool {
    use std::io::Read;
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(bytes)).is_ok()
}

/// A lease held: which idle's slot, for which question, since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Lease {
    /// Its id.
    pub id: LeaseId,
    /// The name the requester gave the session (its id or tag, exactly).
    pub session: String,
    /// The key the session is stored under.
    pub key: String,
    /// The question whose allow took it: `input` or `nudge`.
    pub question: Question,
    /// The slot: the generation, epoch and idle it belongs to.
    pub slot: Slot,
    /// When it was taken, in nanoseconds since the Unix epoch.
    pub taken_ns: u64,
}

/// What became of a lease that is no longer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Spent {
    /// Something was typed under it.
    Consumed,
    /// Its holder gave it back.
    Released,
    /// The session left the idle it belonged to.
    Void,
    /// It was held longer than `input.lease-expires-after`.
    Expired,
}

impl Spent {
    /// The word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Spent::Consumed => "used",
            Spent::Released => "released",
            Spent::Void => "void: the session left the idle it belonged to",
            Spent::Expired => "expired (input.lease-expires-after)",
        }
    }
}

/// Why a lease cannot be used or released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LeaseProblem {
    /// No lease of this generation has that id (a typo, or a lease of a daemon that has
    /// restarted since).
    Unknown {
        /// The id given.
        id: LeaseId,
    },
    /// It is no longer held.
    Spent {
        /// The id given.
        id: LeaseId,
        /// What became of it.
        spent: Spent,
    },
    /// It is another session's.
    OtherSession {
        /// The id given.
        id: LeaseId,
        /// The session it is for.
        holds: String,
        /// The session it was presented for.
        asked: String,
    },
    /// It was taken by another question (a `nudge` lease presented for an `input`, or the
    /// other way round).
    OtherQuestion {
        /// The id given.
        id: LeaseId,
        /// The question that took it.
        taken_by: Question,
    },
}

impl fmt::Display for LeaseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseProblem::Unknown { id } => write!(
                f,
                "no lease {id} in this generation (a typo, or a lease of a daemon that restarted \
                 since: leases do not survive a restart)"
            ),
            LeaseProblem::Spent { id, spent } => write!(f, "lease {id} is {}", spent.as_str()),
            LeaseProblem::OtherSession { id, holds, asked } => {
                write!(f, "lease {id} is for session {holds:?}, not {asked:?}")
            }
            LeaseProblem::OtherQuestion { id, taken_by } => {
                write!(f, "lease {id} was taken by a {taken_by} decision")
            }
        }
    }
}

impl std::error::Error for LeaseProblem {}

/// What a release did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Released {
    /// The slot is free again for the next caller.
    Freed,
    /// The session had already left the idle the lease belonged to: nothing to free (its
    /// next idle brings a slot of its own).
    Void,
}

/// The leases of one generation: those held, and the last spent ones.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    held: HashMap<LeaseId, Lease>,
    spent: HashMap<LeaseId, Spent>,
    spent_order: VecDeque<LeaseId>,
}

impl Leases {
    /// Hands out a lease on `slot`.
    pub(crate) fn take(
        &mut self,
        session: &str,
        key: &str,
        question: Question,
        slot: Slot,
        now_ns: u64,
    ) -> Lease {
        let lease = Lease {
            id: LeaseId::new(),
            session: session.to_owned(),
            key: key.to_owned(),
            question,
            slot,
            taken_ns: now_ns,
        };
        self.held.insert(lease.id.clone(), lease.clone());
        lease
    }

    /// The lease held under `id`, or why there is none.
    pub(crate) fn get(&self, id: &LeaseId) -> Result<&Lease, LeaseProblem> {
        match (self.held.get(id), self.spent.get(id)) {
            (Some(lease), _) => Ok(lease),
            (None, Some(spent)) => Err(LeaseProblem::Spent { id: id.clone(), spent: *spent }),
            (None, None) => Err(LeaseProblem::Unknown { id: id.clone() }),
        }
    }

    /// Ends a lease: it is no longer held, and `spent` says why.
    pub(crate) fn end(&mut self, id: &LeaseId, spent: Spent) -> Option<Lease> {
        let lease = self.held.remove(id)?;
        self.spent.insert(id.clone(), spent);
        self.spent_order.push_back(id.clone());
        while self.spent_order.len() > SPENT_KEPT {
            if let Some(old) = self.spent_order.pop_front() {
                self.spent.remove(&old);
            }
        }
        Some(lease)
    }

    /// The leases held, in no order.
    pub(crate) fn held(&self) -> impl Iterator<Item = &Lease> {
        self.held.values()
    }

    /// The ids of the leases held that `gone` says are over.
    pub(crate) fn over(
        &self,
        mut gone: impl FnMut(&Lease) -> Option<Spent>,
    ) -> Vec<(LeaseId, Spent)> {
        self.held.values().filter_map(|l| gone(l).map(|why| (l.id.clone(), why))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> Slot {
        Slot {
            session_id: Some("s1".into()),
            tag: None,
            generation: 7,
            epoch: 1,
            seq: 3,
            idle_since_ns: 5,
        }
    }

    #[test]
    fn ids_are_unique_and_hard_to_guess() {
        let ids: std::collections::HashSet<_> = (0..1000).map(|_| LeaseId::new()).collect();
        assert_eq!(ids.len(), 1000);
        let one = LeaseId::new();
        assert!(one.as_str().starts_with("l-") && one.as_str().len() == 26, "{one}");
    }

    #[test]
    fn a_spent_lease_says_what_became_of_it_and_an_unknown_one_says_so() {
        let mut leases = Leases::default();
        let lease = leases.take("s1", "claude:s1", Question::Input, slot(), 10);
        assert_eq!(leases.get(&lease.id).unwrap().session, "s1");
        assert!(leases.end(&lease.id, Spent::Consumed).is_some());
        assert_eq!(
            leases.get(&lease.id).unwrap_err(),
            LeaseProblem::Spent { id: lease.id.clone(), spent: Spent::Consumed }
        );
        assert!(leases.end(&lease.id, Spent::Released).is_none(), "ended once only");
        let typo = LeaseId::from("l-nope");
        assert!(leases.get(&typo).unwrap_err().to_string().contains("no lease l-nope"));
    }

    #[test]
    fn spent_leases_are_remembered_within_a_bound() {
        let mut leases = Leases::default();
        let first = leases.take("s1", "k", Question::Input, slot(), 0);
        leases.end(&first.id, Spent::Released);
        for _ in 0..SPENT_KEPT {
            let l = leases.take("s1", "k", Question::Input, slot(), 0);
            leases.end(&l.id, Spent::Consumed);
        }
        assert!(matches!(leases.get(&first.id), Err(LeaseProblem::Unknown { .. })));
        assert_eq!(leases.spent.len(), SPENT_KEPT);
    }
}
