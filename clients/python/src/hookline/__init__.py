"""A client for hookline's live authority: the daemon of an events directory (`hookline daemon`,
its Unix socket) or a `hookline serve` child, speaking the serve protocol (JSON lines).

    import hookline

    with hookline.Client.connect(events_dir) as client:   # or Client.spawn(events_dir=...)
        decision = client.decide("task-1", hookline.Question.INPUT)
        if decision.allowed:
            ...  # the slot is ours: deliver once

`hookline.aio.AsyncClient` has the same calls for asyncio. Standard library only.
"""

from ._protocol import PROTOCOL_VERSION, REPLY_TIMEOUT, SOCKET, default_events_dir, socket_path
from .client import Client
from .errors import HooklineError, NotRunning, ProtocolError, Refused, Timeout
from .types import (
    Action,
    Decision,
    Event,
    Info,
    NextEvent,
    Question,
    Slot,
    SlotGrant,
    StateKind,
    Verdict,
    View,
)

__version__ = "0.2.1"

__all__ = [
    "Action",
    "Client",
    "Decision",
    "Event",
    "HooklineError",
    "Info",
    "NextEvent",
    "NotRunning",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "Question",
    "REPLY_TIMEOUT",
    "Refused",
    "SOCKET",
    "Slot",
    "SlotGrant",
    "StateKind",
    "Timeout",
    "Verdict",
    "View",
    "default_events_dir",
    "socket_path",
]
