//! Echoes: the same native event of the same session, reported again by another producer.
//!
//! While a project migrates from the older Python relay both relays fire for every hook, so a
//! `Stop` arrives once from the events directory and once from the legacy directory. Cursor
//! runs Claude's hooks beside its own, and two hookline installs at different scopes each run
//! the relay: one native event, several copies. The first copy handed out is the event; every
//! later copy is an *echo* of it, handed out too, with [`Event::echo_of`] naming the first
//! copy's origin. A tracker never lets an echo open an input slot or change a state, but to a
//! more careful one (see [`crate::state`]).
//!
//! A later copy `E` is an echo of an earlier one `X` when all of these hold (the rule
//! `docs/events.md` states, section "The legacy directory, and echoes"):
//!
//! * **same session**: the same session id; for events without one, the same tag;
//! * **same CLI family**: the same profile, or one of them read from a legacy directory (the
//!   older relay does not say which CLI fired it);
//! * **same event**: the same subagent (none, or the same `agent_id`), and
//!   * both written by hookline's relay: the same kind, the same native event name and an
//!     identical payload (equal as JSON values, whatever the order of the keys), or
//!   * one of them from a legacy directory, which keeps no payload: the same kind (and
//!     compaction phase) or the same hook (native names equal up to case), read from another
//!     directory, and `X` is no echo itself and has not already been paired with a copy from
//!     `E`'s directory (each hook call of one producer pairs with one of each other producer;
//!     the nearest in time wins);
//! * **close in time**: their `ts_ns` (when each producer ran) are at most [`WINDOW`] apart;
//! * **same turn**: no event of the session lies strictly between the two in time that
//!   starts or ends what they belong to: a `turn_start` for the events of a turn (so two
//!   `stop`s of two turns are never one), a `stop` or `stop_failure` for a `turn_start`, a
//!   `session_end` for a `session_start` and the reverse.
//!
//! Echoes are recognised among the events one reader hands out: a consumer that restarts
//! from its cursor between two copies does not see the second one marked (`serve`, `status`
//! and `decide` rebuild their tracker from the whole directory, so they do).

pub(crate) mod wire;

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hasher};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::canonical::{CompactPhase, Event, Kind, KindName, SourceRef};

/// The longest time between two copies of one event: the producers of one hook run at
/// nearly the same time (the older relay starts a Python interpreter), so a few seconds cover
/// a loaded machine, while the events of one turn that could look alike are told apart by the
/// turn boundaries, not by time.
pub const WINDOW: Duration = Duration::from_secs(5);

/// Copies remembered per session: a burst of tool events cannot make the memory grow, and
/// the copies an echo repeats are among the last few of its session.
const PER_SESSION: usize = 32;
/// Events between two sweeps of the sessions not heard of for a while.
const SWEEP_EVERY: u64 = 1024;

/// The digest of a payload, equal for payloads equal as JSON values (the order of an
/// object's keys does not count). Not a cryptographic hash: it only tells apart the copies of
/// one session within seconds of each other. Each member of an object is hashed on its own and
/// the members' hashes are summed, so no key is sorted and nothing is allocated.
pub fn payload_digest(payload: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    match payload {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            hasher.write_u8(3);
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => hasher.write_u64(u),
                (None, Some(i)) => hasher.write_i64(i),
                (None, None) => hasher.write_u64(n.as_f64().unwrap_or(f64::NAN).to_bits()),
            }
        }
        Value::String(s) => {
            hasher.write_u8(4);
            hasher.write(s.as_bytes());
        }
        Value::Array(items) => {
            hasher.write_u8(5);
            hasher.write_usize(items.len());
            for item in items {
                hasher.write_u64(payload_digest(item));
            }
        }
        Value::Object(map) => {
            hasher.write_u8(6);
            hasher.write_usize(map.len());
            let members = map.iter().fold(0u64, |sum, (key, value)| {
                let mut member = DefaultHasher::new();
                member.write(key.as_bytes());
                member.write_u64(payload_digest(value));
                sum.wrapping_add(member.finish())
            });
            hasher.write_u64(members);
        }
    }
    hasher.finish()
}

/// The [`payload_digest`] of a payload's JSON text, as the lenient decode
/// ([`rawjson::decode`](crate::format::rawjson::decode)) would give it, computed while the text
/// is parsed, without building its [`Value`]: no map, no vector of values, no copy of a string
/// without escapes. Text serde_json refuses, and an object with a key twice (whose value the
/// decode keeps only once), take the decode. `None` when the text is not JSON.
pub fn payload_text_digest(text: &str) -> Option<u64> {
    let mut parser = serde_json::Deserializer::from_str(text);
    match serde::de::DeserializeSeed::deserialize(DigestSeed, &mut parser) {
        Ok(digest) if parser.end().is_ok() => Some(digest),
        _ => crate::format::rawjson::decode(text).map(|payload| payload_digest(&payload)),
    }
}

/// Digests one JSON value as it is parsed (see [`payload_text_digest`]), each arm writing what
/// [`payload_digest`] writes for the [`Value`] serde_json would have built.
#[derive(Clone, Copy)]
struct DigestSeed;

impl<'de> serde::de::DeserializeSeed<'de> for DigestSeed {
    type Value = u64;

    fn deserialize<D: serde::Deserializer<'de>>(self, parser: D) -> Result<u64, D::Error> {
        parser.deserialize_any(self)
    }
}

fn digest_with(write: impl FnOnce(&mut DefaultHasher)) -> u64 {
    let mut hasher = DefaultHasher::new();
    write(&mut hasher);
    hasher.finish()
}

impl<'de> serde::de::Visitor<'de> for DigestSeed {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<u64, E> {
        Ok(digest_with(|h| h.write_u8(0)))
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<u64, E> {
        Ok(digest_with(|h| h.write_u8(1 + u8::from(b))))
    }

    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<u64, E> {
        Ok(digest_with(|h| {
            h.write_u8(3);
            h.write_u64(u);
        }))
    }

    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<u64, E> {
        // serde_json's `Value` keeps a non-negative integer as unsigned.
        match u64::try_from(i) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Ok(digest_with(|h| {
                h.write_u8(3);
                h.write_i64(i);
            })),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<u64, E> {
        // As `Value`: a float that is not finite is `null`.
        if !f.is_finite() {
            return self.visit_unit();
        }
        Ok(digest_with(|h| {
            h.write_u8(3);
            h.write_u64(f.to_bits());
        }))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<u64, E> {
        Ok(digest_with(|h| {
            h.write_u8(4);
            h.write(s.as_bytes());
        }))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        // The length is written before the items: their digests wait for it.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(DigestSeed)? {
            items.push(item);
        }
        Ok(digest_with(|h| {
            h.write_u8(5);
            h.write_usize(items.len());
            for item in items {
                h.write_u64(item);
            }
        }))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let (mut len, mut members) = (0usize, 0u64);
        // Each key's hash, to notice a key given twice (a false alarm only costs the decode).
        let mut keys = Vec::new();
        while let Some(member) = map.next_key_seed(KeySeed)? {
            let key = member.finish();
            if keys.contains(&key) {
                return Err(serde::de::Error::custom("a key given twice"));
            }
            keys.push(key);
            let mut member = member;
            member.write_u64(map.next_value_seed(DigestSeed)?);
            members = members.wrapping_add(member.finish());
            len += 1;
        }
        Ok(digest_with(|h| {
            h.write_u8(6);
            h.write_usize(len);
            h.write_u64(members);
        }))
    }
}

/// An object's key, read into the hasher of its member (see [`payload_digest`]).
struct KeySeed;

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = DefaultHasher;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        parser: D,
    ) -> Result<DefaultHasher, D::Error> {
        parser.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed {
    type Value = DefaultHasher;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<DefaultHasher, E> {
        let mut member = DefaultHasher::new();
        member.write(key.as_bytes());
        Ok(member)
    }
}

/// One copy handed out, as remembered: small, since a reader keeps the last few of every
/// session it has heard of within the window. Names are indices into [`Echoes::names`],
/// directories into [`Echoes::dirs`].
#[derive(Debug, Clone)]
struct Copy {
    dir: usize,
    seq: u64,
    file: Box<str>,
    legacy: bool,
    /// The first copy, when this one is an echo: an echo is never the original of another.
    original: Option<Box<SourceRef>>,
    cli: usize,
    native: Option<usize>,
    agent_id: Option<Box<str>>,
    kind: KindName,
    phase: Option<CompactPhase>,
    digest: Option<u64>,
    ts_ns: u64,
    /// The directories whose copy was paired with this one without a payload to compare.
    paired: Vec<usize>,
}

fn phase(kind: &Kind) -> Option<CompactPhase> {
    match kind {
        Kind::Compact { phase, .. } => Some(*phase),
        _ => None,
    }
}

/// The kinds that, between two copies in time, make them two events.
fn boundaries(kind: KindName) -> &'static [KindName] {
    match kind {
        KindName::TurnStart => &[KindName::Stop, KindName::StopFailure],
        KindName::SessionStart => &[KindName::SessionEnd],
        KindName::SessionEnd => &[KindName::SessionStart],
        _ => &[KindName::TurnStart],
    }
}

/// How `E` matched `X`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Match {
    /// Identical payloads: the best evidence.
    Payload,
    /// Paired across directories, without a payload to compare.
    Paired,
}

/// An event as [`best_match`] compares it.
struct Incoming<'a> {
    event: &'a Event,
    dir: usize,
    cli: usize,
    native: Option<usize>,
    digest: Option<u64>,
}

/// Recognises echoes among the events of one stream, in the order they are handed out.
#[derive(Debug, Clone, Default)]
pub struct Echoes {
    /// The copies of each session, by session id; of sessions without one, by tag.
    by_id: HashMap<String, Memory>,
    by_tag: HashMap<String, Memory>,
    /// Directories, profile and native names seen, each stored once.
    dirs: Vec<PathBuf>,
    names: Vec<Box<str>>,
    name_index: HashMap<Box<str>, usize>,
    newest_ns: u64,
    seen: u64,
}

impl Echoes {
    /// An empty memory.
    pub fn new() -> Echoes {
        Echoes::default()
    }

    /// Marks `event` ([`Event::echo_of`]) when it repeats a copy handed out before, and
    /// remembers it. `digest` is its payload's [`payload_digest`], when hookline's relay
    /// wrote it with a payload (never for a legacy file, whose payload the older relay
    /// dropped).
    pub fn mark(&mut self, event: &mut Event, digest: Option<u64>) {
        if event.session_id.is_none() && event.tag.is_none() {
            return;
        }
        self.seen += 1;
        self.newest_ns = self.newest_ns.max(event.ts_ns);
        if self.seen.is_multiple_of(SWEEP_EVERY) {
            self.sweep();
        }
        let incoming = Incoming {
            event,
            dir: self.dir(&event.source.dir),
            cli: self.name(&event.cli),
            native: event.native.as_deref().map(|n| self.name(n)),
            digest: digest.filter(|_| !event.source.legacy),
        };
        let memory = match (&event.session_id, &event.tag) {
            (Some(id), _) => memory(&mut self.by_id, id),
            (None, Some(tag)) => memory(&mut self.by_tag, tag),
            (None, None) => return,
        };
        let mut echo_of = None;
        if event.echo_of.is_none()
            && memory.may_match(&incoming)
            && let Some((index, how)) = best_match(&memory.copies, &incoming, &self.names)
        {
            let original = &mut memory.copies[index];
            echo_of = Some(match &original.original {
                Some(first) => (**first).clone(),
                None => SourceRef {
                    dir: self.dirs[original.dir].clone(),
                    seq: original.seq,
                    file: original.file.to_string(),
                    legacy: original.legacy,
                },
            });
            if how == Match::Paired {
                original.paired.push(incoming.dir);
            }
        }
        if memory.copies.len() >= PER_SESSION {
            memory.pop_front();
        }
        memory.push_back(Copy {
            dir: incoming.dir,
            seq: event.source.seq,
            file: event.source.file.as_str().into(),
            legacy: event.source.legacy,
            original: echo_of.clone().or_else(|| event.echo_of.clone()).map(Box::new),
            cli: incoming.cli,
            native: incoming.native,
            agent_id: event.agent_id.as_deref().map(Into::into),
            kind: event.kind.kind_name(),
            phase: phase(&event.kind),
            digest: incoming.digest,
            ts_ns: event.ts_ns,
            paired: Vec::new(),
        });
        if echo_of.is_some() {
            event.echo_of = echo_of;
        }
    }

    fn dir(&mut self, dir: &std::path::Path) -> usize {
        match self.dirs.iter().position(|d| d == dir) {
            Some(index) => index,
            None => {
                self.dirs.push(dir.to_owned());
                self.dirs.len() - 1
            }
        }
    }

    fn name(&mut self, name: &str) -> usize {
        if let Some(index) = self.name_index.get(name) {
            return *index;
        }
        self.names.push(name.into());
        self.name_index.insert(name.into(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// Forgets the copies more than twice the window older than the newest event, and the
    /// sessions left with none.
    fn sweep(&mut self) {
        let cutoff = self.newest_ns.saturating_sub(2 * WINDOW.as_nanos() as u64);
        for sessions in [&mut self.by_id, &mut self.by_tag] {
            sessions.retain(|_, memory| {
                memory.retain_since(cutoff);
                !memory.copies.is_empty()
            });
        }
    }
}

impl Echoes {
    /// The memory as a checkpoint writes it.
    pub(crate) fn to_wire(&self) -> wire::Echoes {
        let copies = |sessions: &HashMap<String, Memory>| {
            sessions
                .iter()
                .map(|(key, memory)| {
                    (key.clone(), memory.copies.iter().map(copy_to_wire).collect())
                })
                .collect()
        };
        wire::Echoes {
            by_id: copies(&self.by_id),
            by_tag: copies(&self.by_tag),
            dirs: self.dirs.clone(),
            names: self.names.iter().map(|n| n.to_string()).collect(),
            newest_ns: self.newest_ns,
            seen: self.seen,
        }
    }

    /// The memory a checkpoint kept; `None` when an index in it names nothing (damaged).
    pub(crate) fn from_wire(saved: wire::Echoes) -> Option<Echoes> {
        let (dirs, names) = (saved.dirs.len(), saved.names.len());
        let valid = |c: &wire::Copy| {
            c.dir < dirs
                && c.cli < names
                && c.native.is_none_or(|n| n < names)
                && c.paired.iter().all(|d| *d < dirs)
        };
        let copies = |sessions: std::collections::BTreeMap<String, Vec<wire::Copy>>| {
            sessions
                .into_iter()
                .map(|(key, copies)| {
                    copies
                        .into_iter()
                        .map(|c| valid(&c).then(|| copy_from_wire(c)))
                        .collect::<Option<VecDeque<Copy>>>()
                        .map(|copies| (key, Memory::of(copies)))
                })
                .collect::<Option<HashMap<_, _>>>()
        };
        let names: Vec<Box<str>> = saved.names.into_iter().map(Into::into).collect();
        let name_index = names.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
        Some(Echoes {
            by_id: copies(saved.by_id)?,
            by_tag: copies(saved.by_tag)?,
            dirs: saved.dirs,
            names,
            name_index,
            newest_ns: saved.newest_ns,
            seen: saved.seen,
        })
    }
}

fn copy_to_wire(c: &Copy) -> wire::Copy {
    wire::Copy {
        dir: c.dir,
        seq: c.seq,
        file: c.file.to_string(),
        legacy: c.legacy,
        original: c.original.as_deref().cloned(),
        cli: c.cli,
        native: c.native,
        agent_id: c.agent_id.as_deref().map(ToOwned::to_owned),
        kind: c.kind,
        phase: c.phase,
        digest: c.digest,
        ts_ns: c.ts_ns,
        paired: c.paired.clone(),
    }
}

fn copy_from_wire(c: wire::Copy) -> Copy {
    Copy {
        dir: c.dir,
        seq: c.seq,
        file: c.file.into(),
        legacy: c.legacy,
        original: c.original.map(Box::new),
        cli: c.cli,
        native: c.native,
        agent_id: c.agent_id.map(Into::into),
        kind: c.kind,
        phase: c.phase,
        digest: c.digest,
        ts_ns: c.ts_ns,
        paired: c.paired,
    }
}

/// The copies remembered of one session, oldest first, with what [`Memory::may_match`] looks
/// at of each kept beside them: a busy reader compares an event with the copies of its session
/// (up to [`PER_SESSION`], a few KiB, out of the cache when sessions are many), and almost never
/// has to read them.
#[derive(Debug, Clone, Default)]
struct Memory {
    copies: VecDeque<Copy>,
    /// For each copy, in the same order: `None` for a legacy copy (paired without a payload),
    /// else its payload's digest (`Some(None)` when it has none).
    digests: VecDeque<Option<Option<u64>>>,
}

impl Memory {
    fn of(copies: VecDeque<Copy>) -> Memory {
        let digests = copies.iter().map(Memory::digest_of).collect();
        Memory { copies, digests }
    }

    fn digest_of(copy: &Copy) -> Option<Option<u64>> {
        (!copy.legacy).then_some(copy.digest)
    }

    fn push_back(&mut self, copy: Copy) {
        self.digests.push_back(Memory::digest_of(&copy));
        self.copies.push_back(copy);
    }

    fn pop_front(&mut self) {
        self.copies.pop_front();
        self.digests.pop_front();
    }

    /// Forgets the copies older than `cutoff`.
    fn retain_since(&mut self, cutoff: u64) {
        let before = self.copies.len();
        self.copies.retain(|c| c.ts_ns >= cutoff);
        if self.copies.len() != before {
            self.digests = self.copies.iter().map(Memory::digest_of).collect();
        }
    }

    /// False when [`best_match`] would find nothing, told from the digests alone: an event
    /// written by hookline's relay matches only a copy with the same payload digest, or a
    /// legacy copy. True whenever it might (then [`best_match`] decides).
    fn may_match(&self, incoming: &Incoming<'_>) -> bool {
        if incoming.event.source.legacy || incoming.digest.is_none() {
            return true;
        }
        let same = Some(incoming.digest);
        self.digests.iter().any(|digest| digest.is_none() || *digest == same)
    }
}

/// The copies remembered under `key`, found without allocating when there are some.
fn memory<'a>(sessions: &'a mut HashMap<String, Memory>, key: &str) -> &'a mut Memory {
    if !sessions.contains_key(key) {
        sessions.insert(key.to_owned(), Memory::default());
    }
    sessions.get_mut(key).expect("just inserted")
}

/// The copy `incoming` repeats, if any: identical payloads first, then the nearest in time.
fn best_match(
    copies: &VecDeque<Copy>,
    incoming: &Incoming<'_>,
    names: &[Box<str>],
) -> Option<(usize, Match)> {
    let event = incoming.event;
    let window = WINDOW.as_nanos() as u64;
    let kind = event.kind.kind_name();
    let legacy = event.source.legacy;
    let candidates = copies.iter().enumerate().filter_map(|(index, x)| {
        // Between two copies written by hookline's relay only identical payloads match: the
        // digests, compared first, rule out nearly every copy of a busy session at once.
        if !legacy && !x.legacy && (incoming.digest.is_none() || x.digest != incoming.digest) {
            return None;
        }
        let close = x.ts_ns.abs_diff(event.ts_ns) <= window;
        if !close || x.agent_id.as_deref() != event.agent_id.as_deref() {
            return None;
        }
        let same_kind = x.kind == kind && x.phase == phase(&event.kind);
        let how = if !legacy && !x.legacy {
            let identical = incoming.digest.is_some() && x.digest == incoming.digest;
            let same = same_kind && x.native == incoming.native && x.cli == incoming.cli;
            (identical && same).then_some(Match::Payload)?
        } else {
            // The older relay names the hook it was registered for, the native name up to
            // case (`Stop` for Cursor's `stop`), whatever the payload said: Cursor's aborted
            // `stop` is a `waiting_for_input` here and a `Stop` there.
            let same_hook = match (x.native, incoming.native) {
                (Some(a), Some(b)) => names[a].eq_ignore_ascii_case(&names[b]),
                _ => false,
            };
            let other_dir = x.dir != incoming.dir;
            let free = !x.paired.contains(&incoming.dir);
            let pairs = (same_kind || same_hook) && x.original.is_none() && other_dir && free;
            pairs.then_some(Match::Paired)?
        };
        let (lo, hi) = (x.ts_ns.min(event.ts_ns), x.ts_ns.max(event.ts_ns));
        let broken = copies
            .iter()
            .any(|b| boundaries(kind).contains(&b.kind) && lo < b.ts_ns && b.ts_ns < hi);
        (!broken).then_some((index, how, x.ts_ns.abs_diff(event.ts_ns)))
    });
    candidates
        .min_by_key(|(_, how, distance)| (*how, *distance))
        .map(|(index, how, _)| (index, how))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const S: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;

    /// An event of session `s1`, read from `dir` (a legacy one when it starts with
    /// `/legacy`), built from its wire form so that it has every field's default.
    fn event(kind: Kind, native: &str, at: u64, dir: &str, file: &str) -> Event {
        let legacy = dir.starts_with("/legacy");
        let mut wire = serde_json::to_value(kind).unwrap();
        wire.as_object_mut().unwrap().extend(
            json!({
                "v": 1, "cli": if legacy { "legacy" } else { "claude" }, "session_id": "s1",
                "tag": "task-1", "native": native, "rule": "", "ts_ns": at,
                "origin": {"dir": dir, "seq": 0, "file": file, "legacy": legacy},
            })
            .as_object()
            .unwrap()
            .clone(),
        );
        serde_json::from_value(wire).unwrap()
    }

    fn stop() -> Kind {
        serde_json::from_value(json!({"kind": "stop"})).unwrap()
    }

    /// Hands out `events` in order; returns, for each, the file it echoes.
    fn run(events: Vec<(Event, Option<u64>)>) -> Vec<Option<String>> {
        let mut echoes = Echoes::new();
        events
            .into_iter()
            .map(|(mut event, digest)| {
                echoes.mark(&mut event, digest);
                event.echo_of.map(|o| o.file)
            })
            .collect()
    }

    #[test]
    fn a_digest_does_not_depend_on_the_order_of_keys_but_on_every_value() {
        let a = json!({"session_id": "s", "n": [1, {"x": true, "y": null}]});
        let b = json!({"n": [1, {"y": null, "x": true}], "session_id": "s"});
        assert_eq!(payload_digest(&a), payload_digest(&b));
        for other in [
            json!({"session_id": "s", "n": [1, {"x": false, "y": null}]}),
            json!({"session_id": "s", "n": [{"x": true, "y": null}, 1]}),
            json!({"session_id": "s2", "n": [1, {"x": true, "y": null}]}),
            json!({"session_id": "s", "n": [1, {"x": true}]}),
        ] {
            assert_ne!(payload_digest(&a), payload_digest(&other), "{other}");
        }
    }

    #[test]
    fn a_digest_of_the_text_is_the_digest_of_its_decoded_value() {
        let digits = "9".repeat(400);
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let texts = [
            r#"{"session_id":"s","n":[1,{"x":true,"y":null}],"f":-2.5e3,"i":-7,"z":0,"u":18446744073709551615}"#.to_owned(),
            r#"{"e":"tab\t quote\" \u00e9 \ud83d\ude00","k\u0022":"v","":{},"a":[]}"#.to_owned(),
            r#" { "spaced" : [ 1 , 2.0 , -0 , -0.0 , 1e2 ] } "#.to_owned(),
            r#"{"twice":1,"other":2,"twice":3}"#.to_owned(),
            r#"{"lone":"a\ud800b","big":1e999999}"#.to_owned(),
            format!(r#"{{"long":{digits},"deep":{deep}}}"#),
            r#"[1,"two",null,false]"#.to_owned(),
            r#""just a string""#.to_owned(),
        ];
        for text in &texts {
            let decoded = crate::format::rawjson::decode(text).expect(text);
            assert_eq!(payload_text_digest(text), Some(payload_digest(&decoded)), "{text}");
        }
        for text in ["", "{", r#"{"a":}"#, "[1,]x"] {
            assert_eq!(payload_text_digest(text), None, "{text}");
        }
    }

    #[test]
    fn a_legacy_copy_of_a_stop_echoes_it_in_either_order() {
        let relay = event(stop(), "Stop", 10 * S, "/events", "p-stop");
        let legacy = event(stop(), "Stop", 10 * S + 80 * MS, "/legacy", "l-stop");
        let marks = run(vec![(relay.clone(), Some(1)), (legacy.clone(), None)]);
        assert_eq!(marks, [None, Some("p-stop".into())]);
        let marks = run(vec![(legacy, None), (relay, Some(1))]);
        assert_eq!(marks, [None, Some("l-stop".into())]);
    }

    #[test]
    fn a_turn_start_between_two_stops_makes_them_two_events() {
        let marks = run(vec![
            (event(stop(), "Stop", 10 * S, "/events", "p-stop-1"), Some(1)),
            (
                event(Kind::TurnStart, "UserPromptSubmit", 10 * S + 500 * MS, "/events", "p-turn"),
                Some(2),
            ),
            (event(stop(), "Stop", 12 * S, "/events", "p-stop-2"), Some(1)),
            (event(stop(), "Stop", 10 * S + 50 * MS, "/legacy", "l-stop-1"), None),
            (event(stop(), "Stop", 12 * S + 50 * MS, "/legacy", "l-stop-2"), None),
        ]);
        // Even with identical payloads the second stop is an event; each legacy copy echoes
        // the stop of its own turn, though the first arrives after the second turn's stop.
        assert_eq!(marks, [None, None, None, Some("p-stop-1".into()), Some("p-stop-2".into())]);
    }

    #[test]
    fn each_copy_pairs_once_with_each_other_directory() {
        // A Stop hook that blocks makes the agent go on without a prompt: two stops of one
        // turn, told apart by their payloads, each with its legacy copy.
        let marks = run(vec![
            (event(stop(), "Stop", 10 * S, "/events", "p-stop-1"), Some(1)),
            (event(stop(), "Stop", 10 * S + 50 * MS, "/legacy", "l-stop-1"), None),
            (event(stop(), "Stop", 13 * S, "/events", "p-stop-2"), Some(2)),
            (event(stop(), "Stop", 13 * S + 50 * MS, "/legacy", "l-stop-2"), None),
            (event(stop(), "Stop", 10 * S + 60 * MS, "/legacy-b", "b-stop-1"), None),
            (event(stop(), "Stop", 14 * S, "/legacy", "l-stop-3"), None),
        ]);
        assert_eq!(
            marks,
            [
                None,
                Some("p-stop-1".into()),
                None,
                Some("p-stop-2".into()),
                Some("p-stop-1".into()),
                None,
            ]
        );
    }

    #[test]
    fn identical_payloads_of_a_second_registration_are_echoes_and_different_ones_are_not() {
        let mut cursor = event(stop(), "stop", 10 * S, "/events", "cursor");
        cursor.cli = "cursor".into();
        let mut claude = cursor.clone();
        claude.source.file = "claude-settings".into();
        claude.ts_ns += 30 * MS;
        let mut other = claude.clone();
        other.source.file = "other".into();
        other.ts_ns = 13 * S;
        let mut legacy = event(stop(), "Stop", 10 * S + 90 * MS, "/legacy", "legacy");
        legacy.cli = "legacy".into();
        let marks =
            run(vec![(cursor, Some(7)), (claude, Some(7)), (other, Some(8)), (legacy, None)]);
        assert_eq!(marks, [None, Some("cursor".into()), None, Some("cursor".into())]);
    }

    #[test]
    fn copies_further_apart_than_the_window_or_of_other_sessions_or_kinds_are_events() {
        let first = event(stop(), "Stop", 10 * S, "/events", "p-stop");
        let late = event(stop(), "Stop", 10 * S + WINDOW.as_nanos() as u64 + 1, "/legacy", "late");
        let mut other_session = event(stop(), "Stop", 10 * S, "/legacy", "other-session");
        other_session.session_id = Some("s2".into());
        let start =
            event(Kind::SessionStart { source: None }, "SessionStart", 10 * S, "/legacy", "start");
        let mut subagent = event(stop(), "Stop", 10 * S, "/legacy", "subagent");
        subagent.agent_id = Some("a1".into());
        let marks = run(vec![
            (first, Some(1)),
            (late, None),
            (other_session, None),
            (start, None),
            (subagent, None),
        ]);
        assert_eq!(marks, [None, None, None, None, None]);
    }

    #[test]
    fn copies_in_one_legacy_directory_or_without_a_payload_are_events() {
        let marks = run(vec![
            (event(stop(), "Stop", 10 * S, "/legacy", "l-1"), None),
            (event(stop(), "Stop", 10 * S + MS, "/legacy", "l-2"), None),
            (event(stop(), "Stop", 20 * S, "/events", "p-1"), None),
            (event(stop(), "Stop", 20 * S + MS, "/events", "p-2"), None),
        ]);
        assert_eq!(marks, [None, None, None, None]);
    }

    #[test]
    fn a_compaction_phase_and_a_session_end_tell_copies_apart() {
        let pre = Kind::Compact { phase: CompactPhase::Pre, trigger: None };
        let post = Kind::Compact { phase: CompactPhase::Post, trigger: None };
        let marks = run(vec![
            (event(post, "PostCompact", 10 * S, "/events", "post"), Some(1)),
            (event(pre, "PreCompact", 10 * S + MS, "/legacy", "pre"), None),
            (
                event(
                    Kind::SessionStart { source: None },
                    "SessionStart",
                    20 * S,
                    "/events",
                    "start-1",
                ),
                Some(2),
            ),
            (
                event(
                    Kind::SessionEnd { reason: None },
                    "SessionEnd",
                    20 * S + MS,
                    "/events",
                    "end",
                ),
                Some(3),
            ),
            (
                event(
                    Kind::SessionStart { source: None },
                    "SessionStart",
                    20 * S + 2 * MS,
                    "/legacy",
                    "start-2",
                ),
                None,
            ),
        ]);
        assert_eq!(marks, [None, None, None, None, None]);
    }
}
