"""The dataclasses and enums hold to the committed JSON Schemas (schemas/, generated from the
Rust types): every member a dataclass names is one the schema has, and every enum has exactly
the schema's values. A renamed wire member fails here, not in an orchestrator."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List, Set

import pytest

import hookline
from conftest import REPO

REPLY = json.loads((REPO / "schemas" / "serve-reply.schema.json").read_text())
DEFS: Dict[str, Any] = REPLY["$defs"]


def members(schema: Dict[str, Any]) -> Set[str]:
    """The members of an object schema, across its variants."""
    names = set(schema.get("properties", {}))
    for key in ("oneOf", "anyOf", "allOf"):
        for variant in schema.get(key, []):
            names |= members(variant)
    return names


def values(schema: Dict[str, Any]) -> List[str]:
    out = list(schema.get("enum", []))
    for variant in schema.get("oneOf", []):
        out += [variant["const"]] if "const" in variant else variant.get("enum", [])
    return out


@pytest.mark.parametrize(
    "cls, name",
    [
        (hookline.Info, "Hello"),
        (hookline.Decision, "Decision"),
        (hookline.Slot, "Slot"),
        (hookline.SlotGrant, "SlotAnswer"),
        (hookline.View, "View"),
        (hookline.NextEvent, "NextAnswer"),
        (hookline.Event, "Event"),
    ],
)
def test_every_member_a_dataclass_names_is_in_its_schema(cls, name):
    fields = {f.name for f in dataclasses.fields(cls)} - {"raw"}
    assert fields - members(DEFS[name]) == set()


@pytest.mark.parametrize(
    "enum, name",
    [
        (hookline.Question, "Question"),
        (hookline.Verdict, "Verdict"),
        (hookline.Action, "Action"),
        (hookline.StateKind, "StateKind"),
    ],
)
def test_every_enum_has_the_values_of_its_schema(enum, name):
    assert sorted(e.value for e in enum) == sorted(values(DEFS[name]))


def test_the_event_schema_is_the_one_next_event_hands_out():
    event = json.loads((REPO / "schemas" / "event.schema.json").read_text())
    assert members(event) == members(DEFS["Event"])
