#!/usr/bin/env python3
"""The older Python relay (bmad-loop's bmad_loop_hook.py), as far as its event files go.

Written for the end-to-end suite from ../shared/reference/legacy-relay.md: a no-op unless
BMAD_LOOP_RUN_DIR and BMAD_LOOP_TASK_ID are set; one flat `<ts_ns>-<task_id>-<event>.json` per
hook call in BMAD_LOOP_EVENTS_DIR (else `<RUN_DIR>/events`), holding
{ts, event, task_id, session_id, transcript_path, cwd}; written as `<final>.tmp` (O_EXCL,
O_NOFOLLOW, 0600, relative to a directory handle) then renamed; nothing on stdout, exit 0.

HOOKLINE_E2E_OLDER_RELAY_DELAY (seconds, default 0) delays a Stop before it is written: a slow
interpreter start, long enough for the test to ask for the input slot between the two copies.
"""
import json
import os
import sys
import time


def first(payload, *keys):
    for key in keys:
        if payload.get(key):
            return payload[key]
    return None


def main():
    event = sys.argv[1] if len(sys.argv) > 1 else "unknown"
    run_dir = os.environ.get("BMAD_LOOP_RUN_DIR")
    task = os.environ.get("BMAD_LOOP_TASK_ID")
    if not run_dir or not task:
        return
    try:
        payload = json.loads(sys.stdin.read() or "null")
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        payload = {}
    if event == "Stop":
        time.sleep(float(os.environ.get("HOOKLINE_E2E_OLDER_RELAY_DELAY", "0")))
    events = os.environ.get("BMAD_LOOP_EVENTS_DIR") or os.path.join(run_dir, "events")
    os.makedirs(events, mode=0o700, exist_ok=True)
    ts_ns = time.time_ns()
    workspaces = payload.get("workspacePaths") or [None]
    record = {
        "ts": ts_ns / 1e9,
        "event": event,
        "task_id": task,
        "session_id": first(payload, "session_id", "conversation_id", "sessionId", "conversationId"),
        "transcript_path": first(payload, "transcript_path", "transcriptPath"),
        "cwd": payload.get("cwd") or workspaces[0],
    }
    final = "%d-%s-%s.json" % (ts_ns, task, event)
    directory = os.open(events, os.O_RDONLY | os.O_DIRECTORY)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(final + ".tmp", flags, 0o600, dir_fd=directory)
        with os.fdopen(fd, "w") as out:
            json.dump(record, out)
        os.rename(final + ".tmp", final, src_dir_fd=directory, dst_dir_fd=directory)
    finally:
        os.close(directory)


if __name__ == "__main__":
    try:
        main()
    except Exception:  # a hook must never fail its CLI
        pass
    sys.exit(0)
