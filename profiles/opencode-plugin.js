// hookline's OpenCode plugin: hands OpenCode's session lifecycle to hookline-relay, which
// records it for hookline (profiles/opencode.toml maps it to canonical events).
//
// Installed as one file in OpenCode's plugin folder (`~/.config/opencode/plugins/` or a
// project's `.opencode/plugins/`), with @HOOKLINE_RELAY@ replaced by the relay's absolute path
// as a JSON string. OpenCode has no command hooks: this is the whole integration.
//
// What it sends, each as one run of `hookline-relay --cli opencode --event <name>` with a JSON
// object on stdin:
// - the bus events in EVENTS, as OpenCode gives them (`{id, type, properties}`);
// - the hooks `chat.message` (a prompt was submitted), `tool.execute.before` and
//   `tool.execute.after`, as `{type: <hook name>, input, output}`;
// - `hookline.exit` when the OpenCode process is gone (OpenCode fires nothing on exit): a
//   small `sh` started here holds a pipe from this process, keeps the last line written to it
//   (`{type, properties: {sessionID, sessionIDs, pid, directory}}`, rewritten whenever a session
//   is seen) and hands it to the relay once the pipe closes.
//
// It never throws and never changes what OpenCode does: every hook only reads. Relay runs are
// chained, so events reach the relay in the order OpenCode produced them.
import { spawn } from "node:child_process";

const RELAY = "@HOOKLINE_RELAY@";

// Lifecycle bus events. Left out on purpose: message.* and session.updated/diff/status fire
// many times per turn and carry no state the ones here do not (session.status busy/idle
// doubles session.idle).
const EVENTS = new Set([
  "session.created",
  "session.idle",
  "session.error",
  "session.compacted",
  "session.deleted",
  "permission.asked",
  "permission.replied",
  "question.asked",
  "question.replied",
  "question.rejected",
]);

// A relay that has not finished by then is left to finish on its own (it bounds its own wait).
const RELAY_TIMEOUT_MS = 5000;

let queue = Promise.resolve();

function runRelay(name, payload) {
  let text;
  try {
    text = JSON.stringify(payload);
  } catch {
    text = JSON.stringify({ type: name, unserializable: true });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, RELAY_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      const child = spawn(RELAY, ["--cli", "opencode", "--event", name], {
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("error", done);
      child.on("close", done);
      child.stdin.on("error", () => {});
      child.stdin.end(text);
    } catch {
      done();
    }
  });
}

function send(name, payload) {
  queue = queue.then(() => runRelay(name, payload)).catch(() => {});
  return queue;
}

// `hookline.exit`: the last line the plugin wrote, handed to the relay when the pipe closes.
const SENTINEL =
  'last=""; while IFS= read -r line; do last=$line; done; ' +
  '[ -n "$last" ] && printf "%s\\n" "$last" | "$1" --cli opencode --event hookline.exit';

function startSentinel(directory) {
  const sessions = [];
  let pipe = null;
  try {
    const child = spawn("/bin/sh", ["-c", SENTINEL, "hookline-opencode-exit", RELAY], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.unref();
    child.stdin.unref?.();
    pipe = child.stdin;
  } catch {
    pipe = null;
  }
  return (sessionID) => {
    if (!pipe || typeof sessionID !== "string" || sessions.includes(sessionID)) return;
    sessions.push(sessionID);
    const line = {
      type: "hookline.exit",
      properties: { sessionID, sessionIDs: sessions, pid: process.pid, directory },
    };
    try {
      pipe.write(JSON.stringify(line) + "\n");
    } catch {}
  };
}

export const Hookline = async ({ directory }) => {
  const seen = startSentinel(directory);
  const hook = (name) => async (input, output) => {
    seen(input?.sessionID);
    await send(name, { type: name, input, output });
  };
  return {
    event: async ({ event }) => {
      if (!event || !EVENTS.has(event.type)) return;
      seen(event.properties?.sessionID);
      send(event.type, event);
    },
    "chat.message": hook("chat.message"),
    "tool.execute.before": hook("tool.execute.before"),
    "tool.execute.after": hook("tool.execute.after"),
  };
};
