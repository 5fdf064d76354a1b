"""The synchronous client against the real `hookline serve` and `hookline daemon`."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

import hookline
from conftest import HOOKLINE
from hookline import Action, Question, StateKind, Verdict


def test_history_is_shown_but_never_authorizes_input(sandbox, transport):
    sandbox.turn("hist-1", "task-hist")
    client = sandbox.client(transport)

    assert client.info.protocol == hookline.PROTOCOL_VERSION
    assert client.info.watching is True
    assert Path(client.info.events_dir) == sandbox.events_dir
    view = client.state("task-hist")
    assert view is not None
    assert (view.session_id, view.tag, view.cli) == ("hist-1", "task-hist", "claude")
    assert view.state == StateKind.IDLE and view.replayed and not view.authoritative

    decision = client.decide("task-hist", Question.INPUT)
    assert not decision.allowed
    assert decision.verdict == Verdict.WITHHOLD
    assert decision.rule == "input-slot-refused"
    assert "replayed" in decision.reason
    assert decision.slot is None
    assert decision.raw["evidence"] == decision.evidence

    grant = client.take_input_slot("task-hist")
    assert (grant.granted, grant.slot, grant.refusal) == (False, None, "replayed")
    assert [v.session_id for v in client.sessions()] == ["hist-1"]


def test_a_live_stop_allows_input_once(sandbox, transport):
    client = sandbox.client(transport)
    sandbox.turn("live-1", "task-live")

    kinds = [client.next_event("task-live", timeout=10).event.kind for _ in range(2)]
    assert kinds == ["turn_start", "stop"]

    first = client.decide("task-live", "input", {"pane": {"spinner": False}})
    assert first.allowed and first.action == Action.PROCEED
    assert first.slot is not None and first.slot.session_id == "live-1"
    assert first.slot.epoch == first.evidence["view"]["epoch"]

    again = client.decide("task-live", Question.INPUT)
    assert not again.allowed and again.slot is None
    grant = client.take_input_slot("live-1")
    assert (grant.granted, grant.refusal) == (False, "already_taken")
    assert grant.reason


def test_the_daemon_gives_the_slot_to_one_client_only(sandbox):
    sandbox.start_daemon()
    a, b = sandbox.connect(), sandbox.connect()
    assert a.info.generation == b.info.generation
    sandbox.turn("live-2", "task-two")
    assert [a.next_event("live-2", 10).event.kind for _ in range(2)] == ["turn_start", "stop"]

    decisions = [c.decide("task-two", Question.INPUT) for c in (a, b, a)]
    assert [d.allowed for d in decisions] == [True, False, False]


def test_next_event_waits_for_an_event_and_returns_it(sandbox, transport):
    client = sandbox.client(transport)
    fire = threading.Timer(0.5, sandbox.fire, ("UserPromptSubmit.json", "late-1", "task-late"))
    started = time.monotonic()
    fire.start()
    try:
        answer = client.next_event("task-late", timeout=15)
    finally:
        fire.join()
    assert time.monotonic() - started >= 0.5
    assert not answer.timed_out and answer.dropped == 0
    assert answer.event is not None
    assert (answer.event.kind, answer.event.session_id, answer.event.tag) == (
        "turn_start",
        "late-1",
        "task-late",
    )
    assert answer.event.cli == "claude" and answer.event.ts_ns > 0
    assert answer.view is not None and answer.view.state == StateKind.ACTIVE


def test_next_event_times_out_without_an_event(sandbox, transport):
    client = sandbox.client(transport)
    started = time.monotonic()
    answer = client.next_event("nobody", timeout=0.3)
    assert time.monotonic() - started >= 0.3
    assert answer.timed_out and answer.event is None and answer.view is None


def test_events_yields_the_live_events_in_order(sandbox, transport):
    client = sandbox.client(transport)
    sandbox.turn("iter-1", "task-iter")
    sandbox.turn("iter-1", "task-iter")
    kinds = []
    for event in client.events("task-iter", wait=10):
        kinds.append(event.kind)
        if len(kinds) == 4:
            break
    assert kinds == ["turn_start", "stop", "turn_start", "stop"]


def test_changes_hand_out_each_live_event_once_with_its_view_and_explain_shows_them(
    sandbox, transport
):
    client = sandbox.client(transport)
    start = client.changes()
    assert start["changes"] == [] and start["missed"] == 0
    sandbox.turn("feed-1", "task-feed")
    seen = []
    after = start["last"]
    while len(seen) < 2:
        answer = client.changes(after, timeout=15, sessions=True)
        assert answer["generation"] == client.info.generation
        seen.extend(answer["changes"])
        after = answer["last"]
    assert [c["event"]["kind"] for c in seen] == ["turn_start", "stop"]
    assert [c["seq"] for c in seen] == [start["last"] + 1, start["last"] + 2]
    assert seen[-1]["view"]["state"] == StateKind.IDLE.value and seen[-1]["view"]["host"] is None
    assert any(v["tag"] == "task-feed" for v in answer["sessions"])
    explained = client.explain("task-feed")
    assert explained["view"]["state"] == StateKind.IDLE.value
    assert [t["evidence"]["kind"] for t in explained["transitions"]][-2:] == ["turn_start", "stop"]


def test_no_daemon_is_not_running(sandbox):
    sandbox.fire("UserPromptSubmit.json", "s1", "t1")  # the directory exists, nobody serves it
    with pytest.raises(hookline.NotRunning) as raised:
        hookline.Client.connect(sandbox.events_dir)
    assert str(sandbox.events_dir / hookline.SOCKET) in str(raised.value)
    with pytest.raises(hookline.NotRunning):
        hookline.Client.connect(socket=sandbox.tmp / "missing.sock")


def test_a_hookline_that_cannot_run_is_not_running(sandbox):
    with pytest.raises(hookline.NotRunning) as raised:
        hookline.Client.spawn(sandbox.events_dir, hookline=sandbox.tmp / "no-such-hookline")
    assert "no-such-hookline" in str(raised.value)


def test_a_serve_that_exits_at_once_is_a_protocol_error(sandbox):
    bad_policy = sandbox.tmp / "policy.toml"
    bad_policy.write_text("this is = not toml [\n")
    with pytest.raises(hookline.ProtocolError) as raised:
        hookline.Client.spawn(
            sandbox.events_dir,
            hookline=HOOKLINE,
            args=["--policy", str(bad_policy)],
            env=sandbox.env,
            stderr=subprocess.DEVNULL,
        )
    assert "exited (2)" in str(raised.value)


def test_requests_serve_refuses_raise_refused(sandbox, transport):
    client = sandbox.client(transport)
    with pytest.raises(hookline.Refused) as raised:
        client.request("fly")
    assert "unknown variant" in raised.value.error
    assert raised.value.reply["ok"] is False
    with pytest.raises(hookline.Refused) as raised:
        client.decide("s1", "input", {"pane": {"spiner": True}})
    assert "spiner" in raised.value.error
    # The connection stays usable after a refusal.
    assert client.hello().protocol == hookline.PROTOCOL_VERSION


def test_evidence_names_only_what_decide_takes(sandbox):
    client = sandbox.spawn()
    with pytest.raises(ValueError, match="windowdead"):
        client.decide("s1", "input", {"windowdead": True})
