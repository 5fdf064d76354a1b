"""Typed views of the wire formats (schemas/*.schema.json in the hookline repository).

Each class keeps the members it names and the whole JSON object in `raw`, so members this
version does not know are never lost and never an error. String-valued members (`verdict`,
`state`, `kind`, ...) stay `str`, so a value added by a newer hookline reads fine; compare them
with the enums below, whose members equal their wire strings (`Verdict.ALLOW == "allow"`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, List, Optional, Type, TypeVar

T = TypeVar("T")


class Question(str, Enum):
    """What `decide` is asked."""

    INPUT = "input"
    NUDGE = "nudge"
    CRASHED = "crashed"
    ENV_FAULT = "env-fault"
    ESCALATE = "escalate"
    STALL = "stall"


class Verdict(str, Enum):
    """A decision's verdict."""

    ALLOW = "allow"
    WITHHOLD = "withhold"


class Action(str, Enum):
    """What to do about a decision."""

    PROCEED = "proceed"
    FALL_BACK = "fall_back"
    HOLD = "hold"
    PAUSE = "pause"
    ESCALATE = "escalate"


class StateKind(str, Enum):
    """A session's state. `unknown` is never idle."""

    UNKNOWN = "unknown"
    ACTIVE = "active"
    CHILD_COMMAND = "child_command"
    WAITING_ON_HUMAN = "waiting_on_human"
    IDLE = "idle"
    ENV_FAULT = "env_fault"
    ENDED = "ended"


def _build(cls: Type[T], data: Dict[str, Any], **overrides: Any) -> T:
    """`cls` from a JSON object: the members it names (missing ones take their defaults),
    the rest kept in `raw` only."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values = {k: v for k, v in data.items() if k in names and k != "raw"}
    values.update(overrides)
    return cls(raw=data, **values)  # type: ignore[call-arg]


@dataclass
class Info:
    """`hello`'s answer: who is serving."""

    protocol: int = 0
    version: str = ""
    generation: int = 0
    started_ns: int = 0
    events_dir: str = ""
    journal: Optional[str] = None
    policy: Dict[str, Any] = field(default_factory=dict)
    watching: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Info":
        return _build(cls, data)


@dataclass
class Slot:
    """An input slot: the right to deliver one input (or nudge) to an idle session, once."""

    session_id: Optional[str] = None
    tag: Optional[str] = None
    generation: int = 0
    epoch: int = 0
    seq: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Slot":
        return _build(cls, data)


@dataclass
class View:
    """A session's view (`state`, `sessions`, `hookline status --json`). `authoritative` is
    false for replayed history, which is shown but never authorizes anything."""

    session_id: Optional[str] = None
    tag: Optional[str] = None
    host: Optional[str] = None
    cli: str = ""
    cwd: Optional[str] = None
    state: str = StateKind.UNKNOWN.value
    detail: Optional[str] = None
    since: str = ""
    since_ns: int = 0
    age_ms: int = 0
    age: str = ""
    generation: int = 0
    epoch: int = 0
    seq: int = 0
    authoritative: bool = False
    replayed: bool = True
    fresh: bool = False
    host_pid: Optional[int] = None
    input: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "View":
        return _build(cls, data)


@dataclass
class Event:
    """A canonical event, as `hookline watch` prints it. Members of a particular `kind`
    (`source`, `reason`, `tool`, ...) are in `raw`."""

    kind: str = ""
    v: int = 0
    cli: str = ""
    session_id: Optional[str] = None
    tag: Optional[str] = None
    host: Optional[str] = None
    agent_id: Optional[str] = None
    turn_id: Optional[str] = None
    cwd: Optional[str] = None
    transcript_path: Optional[str] = None
    native: Optional[str] = None
    rule: str = ""
    ts_ns: int = 0
    host_pid: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Event":
        return _build(cls, data)


@dataclass
class Decision:
    """A decision. When `allowed` and the question was `input` or `nudge` (not a peek), the
    idle's slot was taken for this caller alone, as the lease `lease`: deliver exactly once
    (`deliver(..., lease=d.lease)`), or give it back with `release(d.lease)`."""

    question: str = ""
    session: str = ""
    verdict: str = Verdict.WITHHOLD.value
    action: str = Action.FALL_BACK.value
    signal: str = "none"
    rule: str = ""
    reason: str = ""
    state: Optional[str] = None
    at_ns: int = 0
    retry_after_ms: Optional[int] = None
    slot: Optional[Slot] = None
    lease: Optional[str] = None
    nudge_text: Optional[str] = None
    evidence: Dict[str, Any] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def allowed(self) -> bool:
        """Whether the verdict is `allow`: go ahead with what the question asks."""
        return self.verdict == Verdict.ALLOW

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Decision":
        slot = data.get("slot")
        return _build(cls, data, slot=Slot.from_json(slot) if slot else None)


@dataclass
class SlotGrant:
    """`take_input_slot`'s answer: the slot and its `lease`, or the refusal (`refusal` is its
    kind: `no_such_session`, `not_idle`, `replayed`, `predates_generation`, `stale`,
    `already_taken`, ...)."""

    granted: bool = False
    slot: Optional[Slot] = None
    lease: Optional[str] = None
    refusal: Optional[str] = None
    reason: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "SlotGrant":
        slot = data.get("slot")
        refusal = data.get("refusal")
        return _build(
            cls,
            data,
            slot=Slot.from_json(slot) if slot else None,
            refusal=refusal.get("refusal") if isinstance(refusal, dict) else refusal,
        )


@dataclass
class NextEvent:
    """`next_event`'s answer: the session's oldest event not handed out yet (`None` when the
    wait timed out, or when `transcript`: its state changed with no event, its transcript
    making it more careful), how many were lost before they were asked for, and its view."""

    event: Optional[Event] = None
    timed_out: bool = False
    transcript: bool = False
    dropped: int = 0
    view: Optional[View] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "NextEvent":
        event = data.get("event")
        view = data.get("view")
        return _build(
            cls,
            data,
            event=Event.from_json(event) if event else None,
            view=View.from_json(view) if view else None,
        )


def views(items: List[Dict[str, Any]]) -> List[View]:
    """Views from a JSON array of them."""
    return [View.from_json(v) for v in items]
