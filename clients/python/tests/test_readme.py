"""The README's orchestrator example, run as written against the real daemon."""

from __future__ import annotations

import re
import threading
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def example() -> str:
    text = README.read_text()
    marker = text.index("<!-- tested: tests/test_readme.py")
    return re.search(r"```python\n(.*?)```", text[marker:], re.S).group(1)


def test_the_readme_orchestrator_delivers_once_after_a_live_stop(sandbox, monkeypatch):
    sandbox.start_daemon()
    monkeypatch.setenv("HOOKLINE_EVENTS_DIR", str(sandbox.events_dir))
    calls = []
    names = ["deliver_next_prompt", "existing_behaviour", "pause_run", "page_human"]
    scope = {name: (lambda arg, name=name: calls.append((name, arg))) for name in names}
    turn = threading.Timer(0.3, sandbox.turn, ("live-42", "task-42"))
    turn.start()
    try:
        exec(compile(example(), str(README), "exec"), scope)
    finally:
        turn.join()
    assert calls == [("deliver_next_prompt", "task-42")]
