"""The client's exceptions. Every one of them means no live authority answered the request:
fall back as `hookline decide` does, never to an allow."""

from __future__ import annotations

from typing import Any, Dict, Optional


class HooklineError(Exception):
    """Base of every error this client raises; `where` names the socket or the command."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class NotRunning(HooklineError):
    """No daemon listens on the socket (it is missing, or nobody accepts on it), or
    `hookline serve` could not be started."""


class ProtocolError(HooklineError):
    """The other side said something this client cannot read: a line that is not JSON, a reply
    of the wrong shape, another protocol version, or it closed the connection before replying."""


class Timeout(HooklineError):
    """No reply came in time (10 s beyond a `next_event`'s own wait)."""


class Refused(HooklineError):
    """The other side answered the request with an error (`"ok": false`): a misspelt field, an
    op it does not know (a `deliver` to a hookline built without it), a watcher that stopped,
    or a daemon that refused the connection. `error` is its reason, `reply` the whole reply."""

    def __init__(self, where: str, error: str, reply: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(where, f"refused: {error}")
        self.error = error
        self.reply = reply or {}
