"""The synchronous client: one connection to a daemon's socket, or one `hookline serve` child."""

from __future__ import annotations

import os
import select
import socket as _socket
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import _protocol as p
from .errors import HooklineError, NotRunning, ProtocolError, Refused, Timeout
from .types import Decision, Event, Info, NextEvent, Question, SlotGrant, View, views


class _Socket:
    """A connection to a daemon's socket."""

    def __init__(self, path: Path) -> None:
        self.where = str(path)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError) as e:
            sock.close()
            raise NotRunning(self.where, f"no hookline daemon answers here ({e.strerror})") from e
        except OSError as e:
            sock.close()
            raise HooklineError(self.where, f"cannot connect: {e}") from e
        self.sock = sock

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self) -> bytes:
        return self.sock.recv(1 << 16)

    def closed_why(self) -> str:
        return "it closed the connection before replying"

    def close(self) -> None:
        self.sock.close()


class _Serve:
    """A `hookline serve` child: requests on its stdin, replies on its stdout."""

    def __init__(self, argv: List[str], env: Optional[Mapping[str, str]], stderr: Any) -> None:
        self.where = " ".join(argv)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                bufsize=0,
            )
        except OSError as e:
            raise NotRunning(
                self.where, f"cannot run {argv[0]} ({e.strerror}): install hookline or pass hookline=PATH"
            ) from e
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout

    def fileno(self) -> int:
        return self.stdout.fileno()

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def recv(self) -> bytes:
        return os.read(self.stdout.fileno(), 1 << 16)

    def closed_why(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it closed its stdout before replying"
        return f"it exited ({code}) before replying: see its stderr"

    def close(self) -> None:
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=p.REPLY_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()


_Transport = Union[_Socket, _Serve]


class Client:
    """A connection to hookline's live authority: the daemon of an events directory
    ([`connect`](#connect)) or a `hookline serve` of this process's own ([`spawn`](#spawn)).

    Requests go one at a time, each waiting for its reply (10 s at most, beyond a
    `next_event`'s own wait or, for `decide`, the server's `classifier.timeout` when it runs a
    classifier); calls from several threads are serialized, so open one client per
    thread that waits on `next_event`. Every exception is a `HooklineError` and means no live
    authority answered: fall back, never to an allow. Use it as a context manager, or `close()`.
    """

    def __init__(self, transport: _Transport) -> None:
        self._transport = transport
        self._buffer = bytearray()
        self._next_id = 1
        self._lock = threading.Lock()
        self._connected_ns = time.time_ns()
        try:
            reply = self._call({"op": "hello"}, p.REPLY_TIMEOUT)
            p.check_hello(self.where, reply)
        except BaseException:
            transport.close()
            raise
        self._info = Info.from_json(reply)
        self._decide_timeout = p.decide_timeout(reply)

    @classmethod
    def connect(
        cls,
        events_dir: Optional[p.PathLike] = None,
        *,
        socket: Optional[p.PathLike] = None,
    ) -> "Client":
        """Connects to the daemon of `events_dir` (the relay's default when `None`), or to the
        one listening on `socket`, and says hello. `NotRunning` when no daemon listens there."""
        path = Path(socket) if socket is not None else p.socket_path(events_dir)
        return cls(_Socket(path))

    @classmethod
    def spawn(
        cls,
        events_dir: Optional[p.PathLike] = None,
        *,
        hookline: p.PathLike = "hookline",
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        stderr: Any = None,
    ) -> "Client":
        """Starts `hookline serve` (`hookline` is the command or its path; `args` more flags,
        e.g. `["--policy", FILE]`) and says hello. Its tracker generation starts now: history
        already in `events_dir` is shown, never authorizing. `stderr` is passed to
        `subprocess.Popen` (inherited by default). `close()` ends it (EOF on its stdin)."""
        argv = [os.fspath(hookline), "serve"]
        if events_dir is not None:
            argv += ["--events-dir", os.fspath(events_dir)]
        argv += list(args)
        return cls(_Serve(argv, env, stderr))

    # The ops.

    @property
    def info(self) -> Info:
        """What the server said about itself when the connection opened."""
        return self._info

    @property
    def where(self) -> str:
        """The socket, or the `serve` command line."""
        return self._transport.where

    def hello(self) -> Info:
        """Asks again who is serving (`watching` turns false when events stop arriving)."""
        return Info.from_json(self._call({"op": "hello"}, p.REPLY_TIMEOUT))

    def decide(
        self,
        session: str,
        question: Union[Question, str],
        evidence: Optional[Mapping[str, Any]] = None,
        *,
        expect: Optional[Mapping[str, Any]] = None,
        peek: bool = False,
    ) -> Decision:
        """A decision of the live generation, the session named exactly. `evidence` is
        `{"pane": {...}, "transcript": {...}, "window_dead": bool}`, any of them; `expect`
        `{"generation": G, "epoch": E}`. An allowed `input` or `nudge` took the idle's slot as
        a lease (`Decision.lease`) for this caller alone: type exactly once under it, or give
        it back with `release`. With `peek`, nothing is taken or counted."""
        request = p.decide_request(session, question, evidence, expect, peek)
        reply = self._call(request, self._decide_timeout)
        return Decision.from_json(p.member(self.where, reply, "decision"))

    def take_input_slot(
        self, session: str, *, expect: Optional[Mapping[str, Any]] = None
    ) -> SlotGrant:
        """Takes a session's input slot directly, as a lease: `granted`, the `slot` and its
        `lease`, or the refusal."""
        reply = self._call(p.slot_request(session, expect), p.REPLY_TIMEOUT)
        grant = SlotGrant.from_json(reply)
        if grant.granted != (grant.slot is not None and grant.lease is not None):
            raise ProtocolError(self.where, f"a take_input_slot reply that does not add up: {reply}")
        return grant

    def release(self, lease: str) -> str:
        """Gives a lease back: `"freed"` (the slot is free again for the next caller) or
        `"void"` (the session had already left that idle). An unknown or spent lease raises
        `Refused`."""
        reply = self._call({"op": "release", "lease": str(lease)}, p.REPLY_TIMEOUT)
        return str(p.member(self.where, reply, "released"))

    def leases(self) -> List[Dict[str, Any]]:
        """The leases held, oldest first."""
        return list(p.member(self.where, self._call({"op": "leases"}, p.REPLY_TIMEOUT), "leases"))

    def lookup(self, name: str) -> Dict[str, Any]:
        """What a name a person typed names: `found` is `exact`, `prefix`, `ambiguous` (see
        `candidates`) or `none` (see `similar`); `name` the session's exact name when one is
        found. Acts take exact names: resolve a person's input here first."""
        return self._call({"op": "lookup", "session": name}, p.REPLY_TIMEOUT)

    def changes(
        self, after: Optional[int] = None, timeout: float = 0.0, *, sessions: bool = False
    ) -> Dict[str, Any]:
        """What changed after change `after` (a previous answer's `last`; without it nothing is
        handed out and `last` says where the feed is), waiting up to `timeout` seconds for the
        first: `changes` (each `seq`, `event`, `view`), `missed`, `generation`, and every
        session's view as `sessions` when asked for. Display only: it takes nothing."""
        request = p.changes_request(after, timeout, sessions)
        return self._call(request, timeout + p.REPLY_TIMEOUT)

    def explain(self, session: str) -> Dict[str, Any]:
        """A session's `view` (by exact id or tag) and its last `transitions`, oldest first."""
        return self._call({"op": "explain", "session": session}, p.REPLY_TIMEOUT)

    def reload(self) -> Dict[str, Any]:
        """Asks the server to read its policy and profiles again, keeping its live generation
        (and every lease)."""
        return self._call({"op": "reload"}, p.REPLY_TIMEOUT)

    def state(self, session: str) -> Optional[View]:
        """A session's view (by exact id or tag); `None` when no event was seen for it."""
        reply = self._call({"op": "state", "session": session}, p.REPLY_TIMEOUT)
        view = p.member(self.where, reply, "view")
        return View.from_json(view) if view else None

    def sessions(self) -> List[View]:
        """Every session's view, most recent first."""
        return views(p.member(self.where, self._call({"op": "sessions"}, p.REPLY_TIMEOUT), "sessions"))

    def next_event(
        self, session: str, timeout: float = 0.0, *, after_ns: Optional[int] = None
    ) -> NextEvent:
        """The session's oldest event that arrived since the server started and was not handed
        out yet, waiting up to `timeout` seconds (at most 600) for one; with `after_ns`, those
        written before it are passed over. The session need not have any event yet: wait for
        it by the tag you launched it with."""
        request = p.next_request(session, timeout, after_ns)
        return NextEvent.from_json(self._call(request, timeout + p.REPLY_TIMEOUT))

    def events(self, session: str, wait: float = 30.0, *, only_new: bool = True) -> Iterator[Event]:
        """The session's live events as they arrive, for ever (break out of the loop), each
        `next_event` waiting up to `wait` seconds. With `only_new` (the default), only those
        written since this client connected: an orchestrator started late never acts on an old
        `stop` the server kept for it."""
        after = self._connected_ns if only_new else None
        while True:
            answer = self.next_event(session, wait, after_ns=after)
            if answer.event is not None:
                yield answer.event

    def deliver(
        self,
        session: str,
        text: Optional[str] = None,
        *,
        target: str,
        socket: Optional[str] = None,
        nudge: bool = False,
        lease: Optional[str] = None,
        wait_ms: Optional[int] = None,
        confirm_timeout_ms: Optional[int] = None,
        heal_after_ms: Optional[int] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Asks the daemon to deliver `text` into the session's tmux pane `target` (on the tmux
        server at `socket`, else this process's own: `$TMUX`, else tmux's default socket):
        the `input` decision (`nudge`: the `nudge` decision, with its policy, and without
        `text` the nudge text it carries), waiting up to `wait_ms` for an allow, under `lease`
        (one you hold from `decide`) or a lease of its own; one bracketed paste and Enter, and
        the proof, the session's next `turn_start`, within `confirm_timeout_ms`. Returns the
        whole reply: its `outcome` is `confirmed`, `refused` (nothing typed) or `unconfirmed`
        (typed, not proven: never retry it blindly). Closing this client (or its process
        dying) before typing starts cancels it: nothing is typed. `extra` members are sent as
        given."""
        request = p.deliver_request(
            session,
            text,
            target,
            socket,
            wait_ms,
            confirm_timeout_ms,
            heal_after_ms,
            extra,
            nudge=nudge,
            lease=lease,
        )
        return self._call(request, p.deliver_timeout(wait_ms, confirm_timeout_ms))

    def request(self, op: str, timeout: float = p.REPLY_TIMEOUT, **fields: Any) -> Dict[str, Any]:
        """Any request (its `op` and members; the `id` is the client's), returning the whole
        reply: for ops this client has no typed call for."""
        return self._call(dict(fields, op=op), timeout)

    def close(self) -> None:
        """Closes the connection (a spawned `serve` ends once its waiting `next_event`s are
        answered)."""
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # The wire.

    def _call(self, request: Mapping[str, Any], timeout: float) -> Dict[str, Any]:
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            line = p.encode(request, request_id)
            try:
                self._transport.send(line)
            except OSError as e:
                # A daemon that refused the connection wrote why before closing it.
                try:
                    said = self._read_line(time.monotonic() + 1.0)
                    p.decode(self.where, said, request_id)
                except HooklineError as refused:
                    if isinstance(refused, Refused):
                        raise refused from e
                raise HooklineError(self.where, f"cannot send a request: {e}") from e
            deadline = time.monotonic() + timeout
            while True:
                reply = p.decode(self.where, self._read_line(deadline), request_id)
                if reply is not None:
                    return reply

    def _read_line(self, deadline: float) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > p.MAX_LINE:
                raise ProtocolError(self.where, f"a reply line longer than {p.MAX_LINE} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(self.where, "no reply in time")
            ready, _, _ = select.select([self._transport.fileno()], [], [], left)
            if not ready:
                raise Timeout(self.where, "no reply in time")
            try:
                data = self._transport.recv()
            except OSError as e:
                raise HooklineError(self.where, f"cannot read a reply: {e}") from e
            if not data:
                raise ProtocolError(self.where, self._transport.closed_why())
            self._buffer += data
