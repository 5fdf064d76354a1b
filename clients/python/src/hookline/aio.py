"""The asyncio client: the same calls as `hookline.Client`, awaited.

    client = await AsyncClient.connect(events_dir)       # or AsyncClient.spawn(...)
    decision = await client.decide("task-1", "input")
    async for event in client.events("task-1"):
        ...
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Sequence, Union

from . import _protocol as p
from .errors import HooklineError, NotRunning, ProtocolError, Refused, Timeout
from .types import Decision, Event, Info, NextEvent, Question, SlotGrant, View, views


class AsyncClient:
    """A connection to hookline's live authority, for asyncio. Requests go one at a time
    (concurrent calls of one client wait their turn), each waiting for its reply (10 s at most,
    beyond a `next_event`'s own wait): open one client per task that waits on `next_event`.
    Every exception is a `HooklineError` and means no live authority answered."""

    def __init__(
        self,
        where: str,
        reader: asyncio.StreamReader,
        writer: Optional[asyncio.StreamWriter],
        process: Optional[asyncio.subprocess.Process] = None,
    ) -> None:
        """Use `connect` or `spawn`."""
        self.where = where
        self._reader = reader
        self._writer = writer
        self._process = process
        self._next_id = 1
        self._lock = asyncio.Lock()
        self._connected_ns = time.time_ns()
        self._info = Info()

    @classmethod
    async def connect(
        cls,
        events_dir: Optional[p.PathLike] = None,
        *,
        socket: Optional[p.PathLike] = None,
    ) -> "AsyncClient":
        """Connects to the daemon of `events_dir` (the relay's default when `None`), or to the
        one listening on `socket`, and says hello. `NotRunning` when no daemon listens there."""
        path = Path(socket) if socket is not None else p.socket_path(events_dir)
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=p.MAX_LINE)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            raise NotRunning(str(path), f"no hookline daemon answers here ({e.strerror})") from e
        except OSError as e:
            raise HooklineError(str(path), f"cannot connect: {e}") from e
        return await cls(str(path), reader, writer)._hello()

    @classmethod
    async def spawn(
        cls,
        events_dir: Optional[p.PathLike] = None,
        *,
        hookline: p.PathLike = "hookline",
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        stderr: Any = None,
    ) -> "AsyncClient":
        """Starts `hookline serve` and says hello; see `hookline.Client.spawn`."""
        argv = [os.fspath(hookline), "serve"]
        if events_dir is not None:
            argv += ["--events-dir", os.fspath(events_dir)]
        argv += list(args)
        where = " ".join(argv)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                limit=p.MAX_LINE,
            )
        except OSError as e:
            raise NotRunning(
                where, f"cannot run {argv[0]} ({e.strerror}): install hookline or pass hookline=PATH"
            ) from e
        assert process.stdout is not None and process.stdin is not None
        return await cls(where, process.stdout, process.stdin, process)._hello()

    async def _hello(self) -> "AsyncClient":
        try:
            reply = await self._call({"op": "hello"}, p.REPLY_TIMEOUT)
            p.check_hello(self.where, reply)
        except BaseException:
            await self.close()
            raise
        self._info = Info.from_json(reply)
        self._decide_timeout = p.decide_timeout(reply)
        return self

    # The ops.

    @property
    def info(self) -> Info:
        """What the server said about itself when the connection opened."""
        return self._info

    async def hello(self) -> Info:
        """Asks again who is serving."""
        return Info.from_json(await self._call({"op": "hello"}, p.REPLY_TIMEOUT))

    async def decide(
        self,
        session: str,
        question: Union[Question, str],
        evidence: Optional[Mapping[str, Any]] = None,
        *,
        expect: Optional[Mapping[str, Any]] = None,
        peek: bool = False,
    ) -> Decision:
        """A decision of the live generation; see `hookline.Client.decide`."""
        request = p.decide_request(session, question, evidence, expect, peek)
        reply = await self._call(request, self._decide_timeout)
        return Decision.from_json(p.member(self.where, reply, "decision"))

    async def take_input_slot(
        self, session: str, *, expect: Optional[Mapping[str, Any]] = None
    ) -> SlotGrant:
        """Takes a session's input slot directly, as a lease; see
        `hookline.Client.take_input_slot`."""
        reply = await self._call(p.slot_request(session, expect), p.REPLY_TIMEOUT)
        grant = SlotGrant.from_json(reply)
        if grant.granted != (grant.slot is not None and grant.lease is not None):
            raise ProtocolError(self.where, f"a take_input_slot reply that does not add up: {reply}")
        return grant

    async def release(self, lease: str) -> str:
        """Gives a lease back; see `hookline.Client.release`."""
        reply = await self._call({"op": "release", "lease": str(lease)}, p.REPLY_TIMEOUT)
        return str(p.member(self.where, reply, "released"))

    async def leases(self) -> List[Dict[str, Any]]:
        """The leases held, oldest first."""
        reply = await self._call({"op": "leases"}, p.REPLY_TIMEOUT)
        return list(p.member(self.where, reply, "leases"))

    async def lookup(self, name: str) -> Dict[str, Any]:
        """What a name a person typed names; see `hookline.Client.lookup`."""
        return await self._call({"op": "lookup", "session": name}, p.REPLY_TIMEOUT)

    async def changes(
        self, after: Optional[int] = None, timeout: float = 0.0, *, sessions: bool = False
    ) -> Dict[str, Any]:
        """What changed after change `after` (a previous answer's `last`; without it nothing is
        handed out and `last` says where the feed is), waiting up to `timeout` seconds for the
        first: `changes` (each `seq`, `event`, `view`), `missed`, `generation`, and every
        session's view as `sessions` when asked for. Display only: it takes nothing."""
        request = p.changes_request(after, timeout, sessions)
        return await self._call(request, timeout + p.REPLY_TIMEOUT)

    async def explain(self, session: str) -> Dict[str, Any]:
        """A session's `view` (by exact id or tag) and its last `transitions`, oldest first."""
        return await self._call({"op": "explain", "session": session}, p.REPLY_TIMEOUT)

    async def reload(self) -> Dict[str, Any]:
        """Asks the server to read its policy and profiles again, keeping its generation."""
        return await self._call({"op": "reload"}, p.REPLY_TIMEOUT)

    async def state(self, session: str) -> Optional[View]:
        """A session's view; `None` when no event was seen for it."""
        reply = await self._call({"op": "state", "session": session}, p.REPLY_TIMEOUT)
        view = p.member(self.where, reply, "view")
        return View.from_json(view) if view else None

    async def sessions(self) -> List[View]:
        """Every session's view, most recent first."""
        reply = await self._call({"op": "sessions"}, p.REPLY_TIMEOUT)
        return views(p.member(self.where, reply, "sessions"))

    async def next_event(
        self, session: str, timeout: float = 0.0, *, after_ns: Optional[int] = None
    ) -> NextEvent:
        """The session's next live event, waiting up to `timeout` seconds; see
        `hookline.Client.next_event`."""
        request = p.next_request(session, timeout, after_ns)
        return NextEvent.from_json(await self._call(request, timeout + p.REPLY_TIMEOUT))

    async def events(
        self, session: str, wait: float = 30.0, *, only_new: bool = True
    ) -> AsyncIterator[Event]:
        """The session's live events as they arrive, for ever; see `hookline.Client.events`."""
        after = self._connected_ns if only_new else None
        while True:
            answer = await self.next_event(session, wait, after_ns=after)
            if answer.event is not None:
                yield answer.event

    async def deliver(
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
        """Asks the server to deliver `text`; see `hookline.Client.deliver`."""
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
        return await self._call(request, p.deliver_timeout(wait_ms, confirm_timeout_ms))

    async def request(
        self, op: str, timeout: float = p.REPLY_TIMEOUT, **fields: Any
    ) -> Dict[str, Any]:
        """Any request, returning the whole reply."""
        return await self._call(dict(fields, op=op), timeout)

    async def close(self) -> None:
        """Closes the connection; a spawned `serve` is waited for (killed after 10 s)."""
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
            self._writer = None
        if self._process is not None:
            try:
                await asyncio.wait_for(self._process.wait(), p.REPLY_TIMEOUT)
            except asyncio.TimeoutError:
                self._process.kill()
                await self._process.wait()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # The wire.

    async def _call(self, request: Mapping[str, Any], timeout: float) -> Dict[str, Any]:
        async with self._lock:
            if self._writer is None:
                raise HooklineError(self.where, "the client is closed")
            request_id = self._next_id
            self._next_id += 1
            try:
                self._writer.write(p.encode(request, request_id))
                await self._writer.drain()
            except OSError as e:
                # A daemon that refused the connection wrote why before closing it.
                try:
                    said = await asyncio.wait_for(self._reader.readline(), 1.0)
                    p.decode(self.where, said, request_id)
                except Refused as refused:
                    raise refused from e
                except (HooklineError, asyncio.TimeoutError, ValueError):
                    pass
                raise HooklineError(self.where, f"cannot send a request: {e}") from e
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Timeout(self.where, "no reply in time")
                try:
                    line = await asyncio.wait_for(self._reader.readline(), left)
                except asyncio.TimeoutError:
                    raise Timeout(self.where, "no reply in time") from None
                except ValueError as e:  # longer than the limit
                    raise ProtocolError(self.where, f"a reply line too long ({e})") from e
                except OSError as e:
                    raise HooklineError(self.where, f"cannot read a reply: {e}") from e
                if not line.endswith(b"\n"):
                    raise ProtocolError(self.where, await self._closed_why())
                reply = p.decode(self.where, line, request_id)
                if reply is not None:
                    return reply

    async def _closed_why(self) -> str:
        if self._process is None:
            return "it closed the connection before replying"
        try:
            code = await asyncio.wait_for(self._process.wait(), 5)
        except asyncio.TimeoutError:
            return "it closed its stdout before replying"
        return f"it exited ({code}) before replying: see its stderr"
