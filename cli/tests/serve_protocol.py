#!/usr/bin/env python3
"""Drives `hookline serve` over its JSON-lines protocol, the way an orchestrator in another
language would, with events written by the real `hookline-relay` from real fixture payloads.

Python 3 standard library only. Run by cli/tests/integration/serve.rs:

    serve_protocol.py --hookline PATH --relay PATH --fixtures DIR

Exits 0 when every check holds; otherwise prints what failed and exits 1.
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

CHECKS = 0


def check(condition, what, reply=None):
    global CHECKS
    CHECKS += 1
    if not condition:
        detail = "" if reply is None else "\n" + json.dumps(reply, indent=2)
        raise AssertionError(what + detail)


class Serve:
    """A running `hookline serve`, answering one JSON line per request."""

    def __init__(self, hookline, events_dir, policy, home):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "XDG_"))}
        env["HOME"] = home
        self.proc = subprocess.Popen(
            [hookline, "serve", "--events-dir", events_dir, "--policy", policy],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, request):
        text = request if isinstance(request, str) else json.dumps(request)
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def reply(self, timeout=15):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no reply within %ss" % timeout)
        if line is None:
            self.proc.wait(timeout=15)
            raise AssertionError("serve closed its stdout early: " + self.proc.stderr.read())
        check(line.endswith("\n"), "a reply is one whole line: %r" % line)
        return json.loads(line)

    def ask(self, request, timeout=15):
        self.send(request)
        return self.reply(timeout)


class Relay:
    """Runs the relay as an agent CLI runs it: the payload on stdin, nothing expected back."""

    def __init__(self, relay, events_dir, fixtures):
        self.relay = relay
        self.events_dir = events_dir
        self.fixtures = fixtures

    def fire(self, fixture=None, session="s1", tag=None, **fields):
        payload = {}
        if fixture:
            with open(os.path.join(self.fixtures, fixture)) as f:
                payload = json.load(f)
        payload.update(fields)
        payload["session_id"] = session
        env = {"PATH": os.environ.get("PATH", ""), "HOOKLINE_EVENTS_DIR": self.events_dir}
        env["CLAUDE_PID"] = str(os.getpid())
        if tag:
            env["HOOKLINE_TAG"] = tag
        out = subprocess.run(
            [self.relay, "--cli", "claude"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        )
        check(
            out.returncode == 0 and out.stdout == "" and out.stderr == "",
            "the relay exits 0 and prints nothing: %r" % (out,),
        )


C = "claude-code/2.1.332/"


def next_kind(serve, session, timeout_ms=10000):
    reply = serve.ask({"op": "next_event", "session": session, "timeout_ms": timeout_ms})
    check(reply["ok"] and not reply["timed_out"], "an event of %s arrives" % session, reply)
    return reply["event"]["kind"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hookline", required=True)
    parser.add_argument("--relay", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hookline-serve-") as tmp:
        events_dir = os.path.join(tmp, "events")
        journal = os.path.join(tmp, "decisions.ndjson")
        policy = os.path.join(tmp, "policy.toml")
        with open(policy, "w") as f:
            f.write('version = 1\n[nudge]\nmin-idle = "1s"\n[journal]\npath = "%s"\n' % journal)
            f.write('[stale]\nclaude.child_command = "3h"\n')
        relay = Relay(args.relay, events_dir, args.fixtures)

        # History: a whole turn before serve starts. Shown, never authorizing.
        relay.fire(C + "UserPromptSubmit.json", session="hist-1", tag="task-hist")
        relay.fire(C + "Stop.json", session="hist-1", tag="task-hist")
        time.sleep(0.05)

        serve = Serve(args.hookline, events_dir, policy, tmp)

        hello = serve.ask({"id": "h", "op": "hello"})
        check(hello["ok"] and hello["id"] == "h" and hello["op"] == "hello", "hello", hello)
        check(hello["protocol"] == 3 and hello["watching"], "protocol 3, watching", hello)
        check(hello["policy"]["nudge.min-idle"] == "1s", "the --policy file is in force", hello)
        check(hello["policy"]["stale.claude.child_command"] == "3h", "so are its [stale] windows", hello)
        check(hello["journal"] == journal, "the journal is the policy's", hello)

        state = serve.ask({"id": 1, "op": "state", "session": "task-hist"})
        view = state["view"]
        check(view["state"] == "idle" and view["replayed"], "history replays as idle", state)
        decision = serve.ask({"id": 2, "op": "decide", "session": "task-hist", "question": "input"})
        d = decision["decision"]
        check(d["verdict"] == "withhold" and d["rule"] == "input-slot-refused", "history never authorizes input", decision)
        check("replayed" in d["reason"], "and says why", decision)

        # A live session, waited for by tag before it has any event.
        serve.send({"id": 3, "op": "next_event", "session": "task-live", "timeout_ms": 10000})
        relay.fire(C + "SessionStart-startup.json", session="live-1", tag="task-live")
        first = serve.reply()
        check(first["id"] == 3 and first["event"]["kind"] == "session_start", "next_event waits for a new session", first)
        check(first["view"]["state"] == "unknown", "a new session is unknown", first)

        for fixture in ["UserPromptSubmit.json", "PreToolUse.json", "PermissionRequest.json"]:
            relay.fire(C + fixture, session="live-1", tag="task-live")
        kinds = [next_kind(serve, "task-live") for _ in range(3)]
        check(kinds == ["turn_start", "tool_start", "permission_request"], "events in order: %s" % kinds)

        nudge = serve.ask({
            "id": 4, "op": "decide", "session": "task-live", "question": "nudge",
            "pane": {"text_says_idle": True},
        })
        d = nudge["decision"]
        check(d["verdict"] == "withhold" and d["action"] == "hold", "no nudge on a permission prompt", nudge)
        check(d["rule"] == "nudge-never-while-waiting-on-human", "because it waits on its human", nudge)
        check(d["signal"] == "structured_event", "said by the structured event", nudge)
        check(not any(f["applied"] for f in d["evidence"]["caller"]), "pane text never allows", nudge)
        crashed = serve.ask({"id": 5, "op": "decide", "session": "live-1", "question": "crashed"})
        check(crashed["decision"]["rule"] == "never-crashed-while-waiting-on-human", "not crashed", crashed)

        relay.fire(C + "PostToolUse.json", session="live-1", tag="task-live")
        relay.fire(C + "Stop.json", session="live-1", tag="task-live")
        check([next_kind(serve, "live-1") for _ in range(2)] == ["tool_end", "stop"], "tool end, stop")
        spinner = serve.ask({
            "id": 6, "op": "decide", "session": "live-1", "question": "input",
            "pane": {"spinner": True},
        })
        d = spinner["decision"]
        check(d["verdict"] == "withhold" and d["signal"] == "pane" and "slot" not in d, "a spinner holds input, slot kept", spinner)
        allow = serve.ask({"id": 7, "op": "decide", "session": "live-1", "question": "input"})
        d = allow["decision"]
        check(d["verdict"] == "allow" and d["action"] == "proceed", "a live idle allows input", allow)
        check(d["slot"]["epoch"] == d["evidence"]["view"]["epoch"], "with its slot", allow)
        again = serve.ask({"id": 8, "op": "take_input_slot", "session": "live-1"})
        check(again["ok"] and again["granted"] is False, "the slot is taken once", again)
        check(again["refusal"]["refusal"] == "already_taken", "and says so", again)

        # The orchestrator's input starts a new turn; once it ends and has been idle past
        # nudge.min-idle, a stall nudge is allowed.
        relay.fire(C + "UserPromptSubmit.json", session="live-1", tag="task-live")
        relay.fire(C + "Stop.json", session="live-1", tag="task-live")
        check([next_kind(serve, "live-1") for _ in range(2)] == ["turn_start", "stop"], "a new turn")
        early = serve.ask({"id": 9, "op": "decide", "session": "live-1", "question": "nudge"})
        check(early["decision"]["rule"] == "nudge-waits-for-min-idle", "a nudge waits for min-idle", early)
        time.sleep(1.2)
        late = serve.ask({"id": 10, "op": "decide", "session": "live-1", "question": "nudge"})
        check(late["decision"]["verdict"] == "allow", "then it is allowed", late)

        # A quota stop pauses.
        relay.fire(C + "UserPromptSubmit.json", session="live-1", tag="task-live")
        relay.fire(None, session="live-1", tag="task-live", hook_event_name="StopFailure", error="rate_limit")
        check([next_kind(serve, "live-1") for _ in range(2)] == ["turn_start", "stop_failure"], "a quota stop")
        fault = serve.ask({"id": 11, "op": "decide", "session": "live-1", "question": "env-fault"})
        d = fault["decision"]
        check(d["verdict"] == "withhold" and d["action"] == "pause", "a quota pauses the run", fault)
        crashed = serve.ask({"id": 12, "op": "decide", "session": "live-1", "question": "crashed"})
        check(crashed["decision"]["action"] == "pause", "and is not a crash", crashed)

        none = serve.ask({"id": 13, "op": "decide", "session": "never-seen", "question": "nudge"})
        d = none["decision"]
        check(d["action"] == "fall_back" and d["signal"] == "none", "no events: no structured signal", none)

        timed = serve.ask({"id": 14, "op": "next_event", "session": "live-1", "timeout_ms": 50})
        check(timed["ok"] and timed["timed_out"] and timed["event"] is None, "next_event times out", timed)

        sessions = serve.ask({"id": 15, "op": "sessions"})
        ids = sorted(v["session_id"] for v in sessions["sessions"])
        check(ids == ["hist-1", "live-1"], "sessions lists both: %s" % ids, sessions)

        # Malformed requests: an error reply each, never silence, never a crash.
        for line, id_, says in [
            ("not json", None, "not JSON"),
            ('{"id": 20}', 20, 'missing "op"'),
            ('{"id": 21, "op": "fly"}', 21, "unknown variant"),
            ('{"id": 22, "op": "decide", "session": "live-1"}', 22, "missing field `question`"),
            ('{"id": 23, "op": "decide", "session": "live-1", "question": "nudge", "pane": {"spiner": true}}', 23, "spiner"),
        ]:
            bad = serve.ask(line)
            check(bad["ok"] is False and bad["id"] == id_ and says in bad["error"], "error reply for %s" % line, bad)
        serve.send("")
        after = serve.ask({"id": 24, "op": "hello"})
        check(after["id"] == 24, "a blank line gets no reply; the next request does", after)

        with open(journal) as f:
            records = [json.loads(line) for line in f]
        rules = {r["rule"] for r in records}
        check("nudge-never-while-waiting-on-human" in rules, "the withheld nudge is journaled: %s" % rules)
        check(all(r["verdict"] == "withhold" for r in records), "only withheld verdicts are journaled")

        serve.proc.stdin.close()
        code = serve.proc.wait(timeout=15)
        stderr = serve.proc.stderr.read()
        check(code == 0, "EOF ends serve cleanly (exit %s): %s" % (code, stderr))
        check("panicked" not in stderr, "no panic: " + stderr)

    print("serve protocol: %d checks passed" % CHECKS)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("serve protocol check failed: %s" % e, file=sys.stderr)
        sys.exit(1)
