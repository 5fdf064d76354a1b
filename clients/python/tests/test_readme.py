"""The READMEs' orchestrator examples, run as written against the real daemon: this package's
(events written by the relay) and the main README's turn-end loop (a live session: the delivery
tests' fake agent in a private tmux server, typing into it)."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import hookline

from conftest import REPO, RELAY

README = Path(__file__).resolve().parents[1] / "README.md"
MAIN_README = REPO / "README.md"
FAKE_AGENT = Path(
    os.environ.get("HOOKLINE_FAKE_AGENT_BIN", REPO / "target" / "debug" / "fake_agent")
)


def example(readme: Path) -> str:
    text = readme.read_text()
    marker = text.index("<!-- tested: ")
    return re.search(r"```python\n(.*?)```", text[marker:], re.S).group(1)


def recorder(calls: List[Tuple[Any, ...]], names: List[str]) -> Dict[str, Callable[..., None]]:
    return {name: (lambda *args, name=name: calls.append((name, *args))) for name in names}


def test_the_readme_orchestrator_delivers_once_after_a_live_stop(sandbox, monkeypatch):
    sandbox.start_daemon()
    monkeypatch.setenv("HOOKLINE_EVENTS_DIR", str(sandbox.events_dir))
    calls: List[Tuple[Any, ...]] = []
    names = ["deliver_next_prompt", "existing_behaviour", "pause_run", "page_human"]
    scope = recorder(calls, names)
    connected = threading.Event()
    connect = hookline.Client.connect

    def connect_and_say_so(*args: Any, **kwargs: Any) -> hookline.Client:
        client = connect(*args, **kwargs)
        connected.set()
        return client

    monkeypatch.setattr(hookline.Client, "connect", connect_and_say_so)

    def turn() -> None:
        # Only events written after the example connected are its events.
        assert connected.wait(20)
        sandbox.turn("live-42", "task-42")

    driver = threading.Thread(target=turn)
    driver.start()
    try:
        exec(compile(example(README), str(README), "exec"), scope)
    finally:
        driver.join()
    assert len(calls) == 1 and calls[0][:2] == ("deliver_next_prompt", "task-42"), calls
    lease = calls[0][2]
    assert lease.startswith("l-"), calls
    # The lease is the example's alone until it is given back.
    with hookline.Client.connect(sandbox.events_dir) as other:
        assert [held["id"] for held in other.leases()] == [lease]
        assert other.release(lease) == "freed"


class Tmux:
    """A private tmux server: the default one of its own TMUX_TMPDIR."""

    def __init__(self, tmpdir: Path) -> None:
        tmpdir.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        self.env["TMUX_TMPDIR"] = str(tmpdir)

    def __call__(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert out.returncode == 0, out
        return out.stdout

    def wait_for_screen(self, target: str, text: str) -> None:
        deadline = time.monotonic() + 20
        while text not in self("capture-pane", "-p", "-t", target):
            assert time.monotonic() < deadline, self("capture-pane", "-p", "-t", target)
            time.sleep(0.05)


def test_the_main_readme_turn_end_loop_nudges_a_live_session_as_written(sandbox, monkeypatch):
    assert os.access(FAKE_AGENT, os.X_OK), (
        f"{FAKE_AGENT} is not built: run `cargo build --workspace` (or set "
        "HOOKLINE_FAKE_AGENT_BIN)"
    )
    # A short nudge.min-idle: the example's wait_ms waits it out.
    config = sandbox.tmp / ".config" / "hookline"
    config.mkdir(parents=True)
    (config / "policy.toml").write_text('[nudge]\nmin-idle = "1s"\n')
    sandbox.start_daemon()
    # The session: work:1.0 of the caller's default tmux server, launched with
    # HOOKLINE_TAG=task-42; its first turn leaves one of its two tasks open.
    log = sandbox.tmp / "received.bin"
    agent = sandbox.tmp / "agent.sh"
    agent.write_text(
        f"#!/bin/sh\nexec '{FAKE_AGENT}' --log '{log}' --relay '{RELAY}' "
        f"--events-dir '{sandbox.events_dir}' --session sess-42 --tag task-42 --tasks\n"
    )
    agent.chmod(0o755)
    tmux = Tmux(sandbox.tmp / "tmux")
    tmux("new-session", "-d", "-s", "work", "-x", "200", "-y", "50", "cat")
    tmux("new-window", "-d", "-t", "work:1", str(agent))
    try:
        tmux.wait_for_screen("work:1.0", "? for shortcuts")
        monkeypatch.setenv("HOOKLINE_EVENTS_DIR", str(sandbox.events_dir))
        monkeypatch.setenv("TMUX_TMPDIR", tmux.env["TMUX_TMPDIR"])
        monkeypatch.delenv("TMUX", raising=False)
        calls: List[Tuple[Any, ...]] = []

        def your_own_rule(session: str) -> None:
            # The nudged turn finished the list: no structural signal. The session ends here
            # (Ctrl-D), which ends the example's loop.
            calls.append(("your_own_rule", session))
            tmux("send-keys", "-t", "work:1.0", "C-d")

        scope: Dict[str, Any] = {"your_own_rule": your_own_rule}
        scope.update(recorder(calls, ["page_a_human"]))
        connected = threading.Event()
        connect = hookline.Client.connect

        def connect_and_say_so(*args: Any, **kwargs: Any) -> hookline.Client:
            client = connect(*args, **kwargs)
            connected.set()
            return client

        monkeypatch.setattr(hookline.Client, "connect", connect_and_say_so)

        def person() -> None:
            assert connected.wait(20)
            tmux("send-keys", "-t", "work:1.0", "-l", "start the tasks")
            tmux("send-keys", "-t", "work:1.0", "Enter")

        driver = threading.Thread(target=person)
        driver.start()
        try:
            exec(compile(example(MAIN_README), str(MAIN_README), "exec"), scope)
        finally:
            driver.join()
    finally:
        tmux("kill-server")
    assert calls == [("your_own_rule", "task-42")], calls
    received = log.read_bytes().decode()
    paste = re.fullmatch(r"start the tasks\r\x1b\[200~(.*)\x1b\[201~\r\x04", received, re.S)
    assert paste, received
    assert "Second task" in paste.group(1), received
