#!/usr/bin/env python3
"""A hook relay as projects ship them today, the benchmark's baseline: stdlib only.

Reads the hook's JSON from stdin, wraps it in an envelope, writes it to a temp file in the
events directory (O_EXCL, O_NOFOLLOW, 0600) and renames it into place. Prints nothing and
exits 0 whatever happens. It does less than hookline-relay (no sequence lock, no size cap,
no stdin deadline), so the comparison flatters it.
"""

import json
import os
import sys
import time


def events_dir():
    explicit = os.environ.get("HOOKLINE_EVENTS_DIR")
    if explicit:
        return explicit
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.environ["HOME"], ".local", "state"
    )
    return os.path.join(state, "hookline", "events")


def main():
    ts_ns = time.time_ns()
    raw = sys.stdin.buffer.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    envelope = {"v": 1, "ts_ns": ts_ns, "cli": "claude", "pid": os.getpid(), "ppid": os.getppid()}
    try:
        payload = json.loads(raw)
        envelope["event"] = payload.get("hook_event_name") if isinstance(payload, dict) else None
        envelope["payload"] = payload
    except ValueError as e:
        envelope["error"] = str(e)
        envelope["raw"] = raw.decode("utf-8", "backslashreplace")
    envelope["tag"] = os.environ.get("HOOKLINE_TAG")

    directory = events_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    name = "%020d-%010d.json" % (ts_ns, os.getpid())
    temp = os.path.join(directory, "." + name + ".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(envelope, f)
        f.write("\n")
    os.rename(temp, os.path.join(directory, name))


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        pass
    sys.exit(0)
