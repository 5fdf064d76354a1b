#!/usr/bin/env python3
"""A stand-in for `hookline serve` that answers every request with what it was sent (`echo`),
plus members no hookline has yet: for the client's own encoding and tolerance, which the real
binary cannot show (an op it does not have yet, a protocol version it does not speak).
`FAKE_PROTOCOL` is the protocol version its hello says; a `slow` request is answered after
`seconds`."""

import json
import os
import sys
import time

for line in sys.stdin:
    request = json.loads(line)
    reply = {"id": request.get("id"), "op": request.get("op"), "ok": True, "echo": request}
    reply["from_the_future"] = {"nested": [1, 2]}
    if request.get("op") == "slow":
        time.sleep(request.get("seconds", 0))
    if request.get("op") == "hello":
        reply.update(protocol=int(os.environ.get("FAKE_PROTOCOL", "3")), version="9.9.9",
                     generation=7, started_ns=1, events_dir="/nowhere", journal=None,
                     policy={}, watching=True)
    elif request.get("op") == "decide":
        reply["decision"] = {"question": request["question"], "session": request["session"],
                             "verdict": "allow", "action": "proceed", "signal": "a_new_signal",
                             "rule": "r", "reason": "why", "state": "idle", "at_ns": 5,
                             "slot": {"session_id": "s", "tag": None, "generation": 7,
                                      "epoch": 2, "seq": 3, "lease": "new"},
                             "evidence": {}, "confidence": 0.5, "echo": request}
    print(json.dumps(reply), flush=True)
