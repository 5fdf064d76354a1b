"""What the client sends and how it reads replies it does not fully know, against a stand-in
server (fake_serve.py): an op the real binary may not have yet (`deliver`), members from a
newer hookline, a server of another protocol version."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import hookline
from hookline.aio import AsyncClient

FAKE = Path(__file__).with_name("fake_serve.py")


def test_deliver_sends_its_members_and_returns_the_reply():
    from hookline import _protocol as p

    with hookline.Client.spawn(hookline=FAKE) as client:
        reply = client.deliver("task-1", "next prompt", target="%3", confirm_timeout_ms=500)
        # The tmux server is always named: this process's own, never the daemon's default.
        assert reply["echo"] == {
            "op": "deliver",
            "session": "task-1",
            "tmux": {"target": "%3", "socket": p.caller_tmux_socket()},
            "text": "next prompt",
            "confirm_timeout_ms": 500,
            "id": reply["id"],
        }
        full = client.deliver("task-1", "x", target="w:1.0", socket="/tmp/s", wait_ms=100,
                              heal_after_ms=900)
        assert full["echo"] == {"op": "deliver", "session": "task-1",
                                "tmux": {"target": "w:1.0", "socket": "/tmp/s"}, "text": "x",
                                "wait_ms": 100, "heal_after_ms": 900, "id": full["id"]}
        nudge = client.deliver("task-1", target="%3", nudge=True, lease="l-1")
        assert (nudge["echo"]["question"], nudge["echo"]["lease"]) == ("nudge", "l-1")
        assert "text" not in nudge["echo"]
        with pytest.raises(ValueError, match="needs a text"):
            client.deliver("task-1", target="%3")


def test_members_a_newer_hookline_adds_are_kept_not_refused():
    with hookline.Client.spawn(hookline=FAKE) as client:
        assert client.info.version == "9.9.9"
        assert client.info.raw["from_the_future"] == {"nested": [1, 2]}
        decision = client.decide("s", hookline.Question.STALL, expect={"generation": 7, "epoch": 2})
        assert decision.raw["echo"]["expect"] == {"generation": 7, "epoch": 2}
        assert decision.raw["echo"]["question"] == "stall"
        assert decision.allowed and decision.signal == "a_new_signal"
        assert decision.raw["confidence"] == 0.5
        assert decision.slot is not None and decision.slot.epoch == 2
        assert decision.slot.raw["lease"] == "new"


def test_a_server_of_another_protocol_is_refused():
    env = dict(os.environ, FAKE_PROTOCOL="1")
    with pytest.raises(hookline.ProtocolError, match="protocol 1"):
        hookline.Client.spawn(hookline=FAKE, env=env)

    async def spawn():
        await AsyncClient.spawn(hookline=FAKE, env=env)

    with pytest.raises(hookline.ProtocolError, match="protocol 1"):
        asyncio.run(spawn())


def test_async_deliver_sends_the_same_request():
    async def main():
        async with await AsyncClient.spawn(hookline=FAKE) as client:
            return await client.deliver("task-1", "hi", target="%1")

    reply = asyncio.run(main())
    assert reply["echo"]["op"] == "deliver" and reply["echo"]["tmux"]["target"] == "%1"


def test_a_reply_that_comes_too_late_is_a_timeout_and_then_skipped():
    with hookline.Client.spawn(hookline=FAKE) as client:
        with pytest.raises(hookline.Timeout):
            client.request("slow", timeout=0.2, seconds=0.5)
        # The late reply arrives before this one's; it answers an earlier id and is skipped.
        again = client.request("echo_me", n=1)
        assert again["echo"]["op"] == "echo_me" and again["echo"]["n"] == 1


def test_async_a_reply_that_comes_too_late_is_a_timeout_and_then_skipped():
    async def main():
        async with await AsyncClient.spawn(hookline=FAKE) as client:
            with pytest.raises(hookline.Timeout):
                await client.request("slow", timeout=0.2, seconds=0.5)
            return await client.request("echo_me", n=2)

    again = asyncio.run(main())
    assert again["echo"]["op"] == "echo_me" and again["echo"]["n"] == 2


def test_a_decide_waits_for_the_classifier_consult_the_servers_policy_names():
    from hookline import _protocol as p

    assert p.parse_duration("30s") == 30.0
    assert p.parse_duration("1m30s") == 90.0
    assert p.parse_duration("500ms") == 0.5
    for bad in ["", "30", "s", "1.5s", "30 s", "1w"]:
        assert p.parse_duration(bad) is None, bad
    # No classifier (off, or a server that says nothing of it): the plain reply timeout.
    assert p.decide_timeout({}) == p.REPLY_TIMEOUT
    off = {"policy": {"classifier.command": None, "classifier.timeout": "30s"}}
    assert p.decide_timeout(off) == p.REPLY_TIMEOUT
    # A classifier: its timeout on top, as the Rust client allows.
    on = {"policy": {"classifier.command": ["judge"], "classifier.timeout": "45s"}}
    assert p.decide_timeout(on) == p.REPLY_TIMEOUT + 45.0
    garbled = {"policy": {"classifier.command": ["judge"], "classifier.timeout": "soon"}}
    assert p.decide_timeout(garbled) == p.REPLY_TIMEOUT
