"""The sandbox every test runs in: a temporary events directory, filled by the real
`hookline-relay` from real Claude Code payloads, served by the real `hookline serve` or
`hookline daemon`. The binaries are `$HOOKLINE_BIN` and `$HOOKLINE_RELAY_BIN`, by default the
workspace's target/debug ones (`cargo build --workspace` first; run-tests.sh does)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import hookline
from hookline.aio import AsyncClient

REPO = Path(__file__).resolve().parents[3]
HOOKLINE = Path(os.environ.get("HOOKLINE_BIN", REPO / "target" / "debug" / "hookline"))
RELAY = Path(os.environ.get("HOOKLINE_RELAY_BIN", REPO / "target" / "debug" / "hookline-relay"))
FIXTURES = REPO / "watcher" / "tests" / "fixtures" / "claude-code" / "2.1.332"


def pytest_configure(config: Any) -> None:
    for binary in (HOOKLINE, RELAY):
        if not os.access(binary, os.X_OK):
            raise pytest.UsageError(
                f"{binary} is not built: run `cargo build --workspace` (or set HOOKLINE_BIN and "
                "HOOKLINE_RELAY_BIN)"
            )


class Sandbox:
    """An events directory of its own, the processes serving it, and the clients opened."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.events_dir = tmp / "events"
        # hookline reads nothing of the user running the tests: no HOOKLINE_*, XDG_*, own HOME.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "XDG_"))}
        self.env["HOME"] = str(tmp)
        self.daemon: Optional[subprocess.Popen] = None
        self.clients: List[hookline.Client] = []

    def fire(self, fixture: str, session: str, tag: str) -> None:
        """Runs the relay as Claude Code runs it: the payload on stdin, nothing expected back."""
        payload: Dict[str, Any] = json.loads((FIXTURES / fixture).read_text())
        payload["session_id"] = session
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOOKLINE_EVENTS_DIR": str(self.events_dir),
            "HOOKLINE_TAG": tag,
            "CLAUDE_PID": str(os.getpid()),
        }
        out = subprocess.run(
            [str(RELAY), "--cli", "claude"],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            timeout=30,
        )
        assert (out.returncode, out.stdout, out.stderr) == (0, b"", b""), out

    def turn(self, session: str, tag: str) -> None:
        """A whole turn: the prompt, then the stop."""
        self.fire("UserPromptSubmit.json", session, tag)
        self.fire("Stop.json", session, tag)

    def spawn(self) -> hookline.Client:
        client = hookline.Client.spawn(
            self.events_dir, hookline=HOOKLINE, env=self.env, stderr=subprocess.DEVNULL
        )
        self.clients.append(client)
        return client

    async def aspawn(self) -> AsyncClient:
        return await AsyncClient.spawn(
            self.events_dir, hookline=HOOKLINE, env=self.env, stderr=subprocess.DEVNULL
        )

    def start_daemon(self) -> None:
        """Starts `hookline daemon` and waits until it answers."""
        self.daemon = subprocess.Popen(
            [str(HOOKLINE), "daemon", "--events-dir", str(self.events_dir)],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                hookline.Client.connect(self.events_dir).close()
                return
            except hookline.NotRunning:
                if self.daemon.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the daemon did not start: {self.daemon.communicate()}")
                time.sleep(0.05)

    def connect(self) -> hookline.Client:
        client = hookline.Client.connect(self.events_dir)
        self.clients.append(client)
        return client

    def client(self, transport: str) -> hookline.Client:
        """A client of `transport`: a spawned `serve`, or the daemon (started on first use)."""
        if transport == "serve":
            return self.spawn()
        if self.daemon is None:
            self.start_daemon()
        return self.connect()

    async def aclient(self, transport: str) -> AsyncClient:
        if transport == "serve":
            return await self.aspawn()
        if self.daemon is None:
            self.start_daemon()
        return await AsyncClient.connect(self.events_dir)

    def close(self) -> None:
        for client in self.clients:
            client.close()
        if self.daemon is not None:
            self.daemon.send_signal(signal.SIGTERM)
            _, stderr = self.daemon.communicate(timeout=20)
            assert self.daemon.returncode == 0, stderr
            assert b"panicked" not in stderr, stderr


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path)
    try:
        yield box
    finally:
        box.close()


@pytest.fixture(params=["serve", "daemon"])
def transport(request: Any) -> str:
    """Each test taking it runs once against a spawned `serve`, once against the daemon."""
    return request.param
