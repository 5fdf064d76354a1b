"""What the sync and async clients share: the requests of each op, the checks on replies, and
where the daemon's socket is. Neither I/O nor state lives here."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

from .errors import ProtocolError, Refused
from .types import Question

#: The protocol version this client speaks (`hello`'s `protocol`).
PROTOCOL_VERSION = 3
#: How long a reply may take, beyond the wait a `next_event` (or `deliver`) asked for.
REPLY_TIMEOUT = 10.0
#: The daemon's socket, in the events directory.
SOCKET = ".hookline.sock"
#: The longest `next_event` wait the protocol accepts, in seconds.
MAX_WAIT = 600.0
#: The longest reply line read.
MAX_LINE = 64 << 20

PathLike = Union[str, "os.PathLike[str]"]


def default_events_dir() -> Path:
    """The relay's events directory: `$HOOKLINE_EVENTS_DIR`, else
    `$XDG_STATE_HOME/hookline/events`, else `~/.local/state/hookline/events`."""
    explicit = os.environ.get("HOOKLINE_EVENTS_DIR")
    if explicit:
        return Path(explicit)
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "hookline" / "events"
    return Path.home() / ".local" / "state" / "hookline" / "events"


def socket_path(events_dir: Optional[PathLike]) -> Path:
    """The daemon's socket of `events_dir` (the default one when `None`)."""
    base = Path(events_dir) if events_dir is not None else default_events_dir()
    return base / SOCKET


def encode(request: Mapping[str, Any], request_id: int) -> bytes:
    """One request line, with our `id`."""
    if not isinstance(request, Mapping) or "op" not in request:
        raise TypeError("a request is a mapping with an \"op\"")
    line = dict(request)
    line["id"] = request_id
    return (json.dumps(line, separators=(",", ":")) + "\n").encode()


def decode(where: str, line: bytes, request_id: int) -> Optional[Dict[str, Any]]:
    """The reply in `line` when it answers `request_id` (`None` when it answers an earlier
    request whose caller gave up waiting). An `"ok": false` reply raises `Refused`; so does an
    error about the connection itself (`id` null)."""
    try:
        reply = json.loads(line)
    except ValueError as e:
        raise ProtocolError(where, f"a reply that is not JSON ({e}): {line[:200]!r}") from None
    if not isinstance(reply, dict):
        raise ProtocolError(where, f"a reply that is not a JSON object: {line[:200]!r}")
    if reply.get("id") is not None and reply.get("id") != request_id:
        return None
    if reply.get("ok") is not True:
        raise Refused(where, str(reply.get("error", "no reason given")), reply)
    return reply


def member(where: str, reply: Dict[str, Any], name: str) -> Any:
    """A member every reply of that op carries."""
    if name not in reply:
        raise ProtocolError(where, f"a {reply.get('op')} reply without {name!r}: {reply}")
    return reply[name]


def check_hello(where: str, reply: Dict[str, Any]) -> None:
    """Refuses a server of another protocol version, as the Rust client does."""
    protocol = reply.get("protocol")
    if protocol != PROTOCOL_VERSION:
        raise ProtocolError(
            where,
            f"it speaks protocol {protocol}, this client speaks {PROTOCOL_VERSION}: "
            "use a client of the same hookline version",
        )


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> Optional[float]:
    """Seconds in a policy duration such as `"500ms"`, `"30s"` or `"1h30m"`; None when it is
    not one."""
    parts = re.findall(r"(\d+)(ms|s|m|h|d)", text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(int(n) * _UNITS[u] for n, u in parts)


def decide_timeout(hello: Dict[str, Any]) -> float:
    """How long a `decide` may take: the reply timeout, plus the classifier consult's
    `classifier.timeout` when the server's policy (as its `hello` gives it) names a
    classifier, since the consult runs inside the request."""
    policy = hello.get("policy") or {}
    if not isinstance(policy, dict) or policy.get("classifier.command") is None:
        return REPLY_TIMEOUT
    timeout = policy.get("classifier.timeout")
    consult = parse_duration(timeout) if isinstance(timeout, str) else None
    return REPLY_TIMEOUT + (consult or 0.0)


def caller_tmux_socket() -> str:
    """The tmux server this process would talk to: `$TMUX`'s (its first comma-separated
    field), else tmux's default socket (`$TMUX_TMPDIR`, else `/tmp`, then
    `tmux-<uid>/default`). Sent with a delivery, so that the daemon types into this server,
    never into its own default."""
    tmux = os.environ.get("TMUX", "")
    socket = tmux.split(",")[0]
    if socket:
        return socket
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return os.path.join(base, f"tmux-{os.getuid()}", "default")


def decide_request(
    session: str,
    question: Union[Question, str],
    evidence: Optional[Mapping[str, Any]],
    expect: Optional[Mapping[str, Any]],
    peek: bool = False,
) -> Dict[str, Any]:
    """`decide`: `evidence` is `{"pane": {...}, "transcript": {...}, "window_dead": bool}`
    (as `hookline decide --evidence`), any of them; `peek` answers taking nothing."""
    request: Dict[str, Any] = {"op": "decide", "session": session, "question": _str(question)}
    if peek:
        request["peek"] = True
    if evidence:
        unknown = set(evidence) - {"pane", "transcript", "window_dead"}
        if unknown:
            raise ValueError(
                f"evidence takes pane, transcript and window_dead, not {sorted(unknown)}"
            )
        request.update(evidence)
    if expect is not None:
        request["expect"] = dict(expect)
    return request


def slot_request(session: str, expect: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """`take_input_slot`."""
    request: Dict[str, Any] = {"op": "take_input_slot", "session": session}
    if expect is not None:
        request["expect"] = dict(expect)
    return request


def changes_request(after: Optional[int], timeout: float, sessions: bool) -> Dict[str, Any]:
    """`changes` after change `after` (none handed out without it), waiting up to `timeout`
    seconds (0 to 600); with every session's view when `sessions`."""
    if not 0 <= timeout <= MAX_WAIT:
        raise ValueError(f"a changes request waits 0 to {MAX_WAIT:g} s, not {timeout}")
    request: Dict[str, Any] = {"op": "changes", "timeout_ms": int(timeout * 1000)}
    if after is not None:
        request["after"] = int(after)
    if sessions:
        request["sessions"] = True
    return request


def next_request(session: str, timeout: float, after_ns: Optional[int] = None) -> Dict[str, Any]:
    """`next_event`, waiting up to `timeout` seconds (0 to 600); with `after_ns`, passing over
    the events written before it."""
    if not 0 <= timeout <= MAX_WAIT:
        raise ValueError(f"a next_event waits 0 to {MAX_WAIT:g} s, not {timeout}")
    request: Dict[str, Any] = {
        "op": "next_event",
        "session": session,
        "timeout_ms": int(timeout * 1000),
    }
    if after_ns is not None:
        request["after_ns"] = int(after_ns)
    return request


def deliver_request(
    session: str,
    text: Optional[str],
    target: str,
    socket: Optional[str],
    wait_ms: Optional[int],
    confirm_timeout_ms: Optional[int],
    heal_after_ms: Optional[int],
    extra: Mapping[str, Any],
    *,
    nudge: bool = False,
    lease: Optional[str] = None,
) -> Dict[str, Any]:
    """`deliver` (schemas/serve-request.schema.json): the pane as `tmux` {target, socket} (the
    socket this process's tmux would use when none is given); a nudge asks `nudge` and, with no
    `text`, types its nudge text; `lease` types under a lease the caller holds. Only the
    optional members given are sent."""
    if text is None and not nudge:
        raise ValueError("deliver needs a text (or nudge=True, to type the nudge's own text)")
    tmux: Dict[str, Any] = {"target": target, "socket": socket or caller_tmux_socket()}
    request: Dict[str, Any] = {"op": "deliver", "session": session, "tmux": tmux}
    if text is not None:
        request["text"] = text
    if nudge:
        request["question"] = "nudge"
    if lease is not None:
        request["lease"] = str(lease)
    for key, value in (
        ("wait_ms", wait_ms),
        ("confirm_timeout_ms", confirm_timeout_ms),
        ("heal_after_ms", heal_after_ms),
    ):
        if value is not None:
            request[key] = value
    request.update(extra)
    return request


def deliver_timeout(wait_ms: Optional[int], confirm_timeout_ms: Optional[int]) -> float:
    """How long a `deliver` reply may take: the wait for an allow, the confirmation (15 s when
    not given, as hookline's default) and the usual margin."""
    confirm = 15_000 if confirm_timeout_ms is None else confirm_timeout_ms
    return REPLY_TIMEOUT + ((wait_ms or 0) + confirm) / 1000


def _str(value: Union[Question, str]) -> str:
    return value.value if isinstance(value, Question) else str(value)
