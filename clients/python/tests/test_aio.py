"""The asyncio client against the real `hookline serve` and `hookline daemon`."""

from __future__ import annotations

import asyncio
import time

import pytest

import hookline
from hookline import Question, StateKind, Verdict
from hookline.aio import AsyncClient


def test_history_is_shown_but_never_authorizes_input(sandbox, transport):
    sandbox.turn("hist-1", "task-hist")

    async def main():
        async with await sandbox.aclient(transport) as client:
            assert client.info.protocol == hookline.PROTOCOL_VERSION
            view = await client.state("task-hist")
            decision = await client.decide("task-hist", Question.INPUT)
            grant = await client.take_input_slot("task-hist")
            return view, decision, grant

    view, decision, grant = asyncio.run(main())
    assert view is not None and view.state == StateKind.IDLE and view.replayed
    assert decision.verdict == Verdict.WITHHOLD and decision.rule == "input-slot-refused"
    assert decision.slot is None
    assert (grant.granted, grant.refusal) == (False, "replayed")


def test_a_live_stop_allows_input_once(sandbox, transport):
    async def main():
        async with await sandbox.aclient(transport) as client:
            await asyncio.get_running_loop().run_in_executor(
                None, sandbox.turn, "live-1", "task-live"
            )
            kinds = []
            async for event in client.events("task-live", wait=10):
                kinds.append(event.kind)
                if len(kinds) == 2:
                    break
            first = await client.decide("task-live", "input", {"pane": {"spinner": False}})
            again = await client.decide("task-live", "input")
            sessions = await client.sessions()
            return kinds, first, again, sessions

    kinds, first, again, sessions = asyncio.run(main())
    assert kinds == ["turn_start", "stop"]
    assert first.allowed and first.slot is not None
    assert first.slot.epoch == first.evidence["view"]["epoch"]
    assert not again.allowed and again.slot is None
    assert [(v.session_id, v.authoritative) for v in sessions] == [("live-1", True)]


def test_next_event_waits_while_other_tasks_run(sandbox, transport):
    async def main():
        async with await sandbox.aclient(transport) as client:
            loop = asyncio.get_running_loop()
            started = time.monotonic()
            waiting = asyncio.ensure_future(client.next_event("task-late", timeout=15))
            await asyncio.sleep(0.5)
            assert not waiting.done()
            await loop.run_in_executor(
                None, sandbox.fire, "UserPromptSubmit.json", "late-1", "task-late"
            )
            answer = await waiting
            return time.monotonic() - started, answer

    elapsed, answer = asyncio.run(main())
    assert elapsed >= 0.5
    assert not answer.timed_out and answer.event is not None
    assert (answer.event.kind, answer.event.tag) == ("turn_start", "task-late")


def test_next_event_times_out_without_an_event(sandbox, transport):
    async def main():
        async with await sandbox.aclient(transport) as client:
            return await client.next_event("nobody", timeout=0.2)

    answer = asyncio.run(main())
    assert answer.timed_out and answer.event is None


def test_no_daemon_is_not_running(sandbox):
    with pytest.raises(hookline.NotRunning) as raised:
        asyncio.run(AsyncClient.connect(sandbox.events_dir))
    assert hookline.SOCKET in str(raised.value)


def test_requests_serve_refuses_raise_refused(sandbox, transport):
    async def main():
        async with await sandbox.aclient(transport) as client:
            with pytest.raises(hookline.Refused) as raised:
                await client.request("fly")
            return raised.value, await client.hello()

    refused, info = asyncio.run(main())
    assert "unknown variant" in refused.error
    assert info.watching
