//! docs/profiles.md lists every key of a profile file: the keys are read from the wire types
//! themselves, by deserializing a [`wire::ProfileFile`] from a deserializer that records the
//! fields each struct asks for.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde::de::value::{Error, StrDeserializer};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::wire;

/// Records the dotted path of every struct field it is asked for. A list is walked as one
/// element (its path is the list's), a free-form table as one key named `<>`, which records the
/// table itself: its keys are payload or canonical field names, documented in prose.
struct Probe<'a> {
    path: String,
    keys: &'a RefCell<BTreeSet<String>>,
}

impl<'a> Probe<'a> {
    fn at(&self, path: String) -> Probe<'a> {
        Probe { path, keys: self.keys }
    }
}

struct Fields<'a, 'p> {
    probe: &'p Probe<'a>,
    fields: std::slice::Iter<'static, &'static str>,
    current: Option<&'static str>,
}

impl<'de> MapAccess<'de> for Fields<'_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(field) = self.fields.next() else { return Ok(None) };
        self.current = Some(field);
        seed.deserialize(StrDeserializer::<Error>::new(field)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let field = self.current.take().expect("a key first");
        let path = if self.probe.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.probe.path)
        };
        self.probe.keys.borrow_mut().insert(path.clone());
        seed.deserialize(self.probe.at(path))
    }
}

struct One<'a, 'p> {
    probe: &'p Probe<'a>,
    done: bool,
}

impl<'de> SeqAccess<'de> for One<'_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        seed.deserialize(self.probe.at(self.probe.path.clone())).map(Some)
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(de::Error::custom(format!("{}: cannot introspect an untyped value", self.path)))
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(false)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u32(0)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(0)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(One { probe: &self, done: false })
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        // A free-form table: its keys are data, not schema. Recorded, not entered.
        v.visit_map(de::value::MapDeserializer::new(std::iter::empty::<((), ())>()))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_map(Fields { probe: &self, fields: fields.iter(), current: None })
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("")
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct enum
    }
}

/// Every key path a profile file may hold, from the wire types.
fn wire_keys() -> BTreeSet<String> {
    let keys = RefCell::new(BTreeSet::new());
    wire::ProfileFile::deserialize(Probe { path: String::new(), keys: &keys }).unwrap();
    keys.into_inner()
}

/// The keys that hold a value rather than a table of further keys.
fn leaf_keys(keys: &BTreeSet<String>) -> Vec<&String> {
    keys.iter().filter(|k| !keys.iter().any(|other| other.starts_with(&format!("{k}.")))).collect()
}

#[test]
fn the_wire_types_have_the_keys_the_shipped_profiles_use() {
    let keys = wire_keys();
    // A sanity check of the probe itself: nested tables, lists of tables, renamed fields.
    for key in ["version", "versions.min", "map.when", "holes.stale-after", "install.events.since"]
    {
        assert!(keys.contains(key), "{key} not found in {keys:?}");
    }
}

#[test]
fn the_profile_reference_lists_every_key_and_only_keys() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/profiles.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let keys = wire_keys();
    let leaves = leaf_keys(&keys);
    for key in &leaves {
        assert!(doc.contains(&format!("| `{key}` |")), "docs/profiles.md has no row for `{key}`");
    }
    let rows =
        doc.lines().filter_map(|l| l.strip_prefix("| `")).filter_map(|l| l.split('`').next());
    let mut documented = 0;
    for row in rows {
        documented += 1;
        // `map.from.<field>.as` documents a key inside a free-form table's value.
        let known = keys.contains(row)
            || row.split_once(".<").is_some_and(|(table, _)| keys.contains(table));
        assert!(known, "docs/profiles.md documents `{row}`, which no profile can hold");
    }
    assert!(documented >= leaves.len(), "{documented} rows for {} keys", leaves.len());
}
