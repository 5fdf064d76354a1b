// hookline's OpenCode plugin: hands OpenCode's session lifecycle to hookline-relay, which
// records it for hookline (profiles/opencode.toml maps it to canonical events). Kilo Code, an
// OpenCode fork, loads it unchanged (profiles/kilo.toml).
//
// Installed as one file in the CLI's plugin folder (`~/.config/opencode/plugins/` or a
// project's `.opencode/plugins/`; Kilo Code: `~/.config/kilo/plugins/`, `.kilo/plugins/`), with
// @HOOKLINE_RELAY@ replaced by the relay's absolute path and @HOOKLINE_CLI@ by the profile's
// name (`opencode`, `kilo`), each as a JSON string: the events of each CLI are recorded under
// its own name. Neither CLI has command hooks: this is the whole integration.
//
// What it sends, each as one run of `hookline-relay --cli <CLI> --event <name>` with a JSON
// object on stdin:
// - the bus events in EVENTS, as the CLI gives them (`{id, type, properties}`), and
//   `session.status` when it says the CLI is retrying a failed API request
//   (`properties.status.type` "retry"; the busy/idle ones are left out);
// - the hooks `chat.message` (a prompt was submitted), `tool.execute.before` and
//   `tool.execute.after`, as `{type: <hook name>, input, output}`;
// - `hookline.exit` when the CLI's process is gone (it fires nothing on exit): a
//   small `sh` started here holds a pipe from this process, keeps the last line written to it
//   (`{type, properties: {sessionID, sessionIDs, pid, directory}}`, rewritten whenever a session
//   is seen) and hands it to the relay once the pipe closes.
//
// It never throws and never changes what the CLI does: every hook only reads. Relay runs are
// chained, so events reach the relay in the order the CLI produced them.
import { spawn } from "node:child_process";

const RELAY = "@HOOKLINE_RELAY@";
const CLI = "@HOOKLINE_CLI@";

// Lifecycle bus events. Left out on purpose: message.* and session.updated/diff/status fire
// many times per turn and carry no state the ones here do not (session.status busy/idle
// doubles session.idle; its "retry" is sent, see isRetry).
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
      const child = spawn(RELAY, ["--cli", CLI, "--event", name], {
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
  '[ -n "$last" ] && printf "%s\\n" "$last" | "$1" --cli "$2" --event hookline.exit';

function startSentinel(directory) {
  const sessions = [];
  let pipe = null;
  try {
    const child = spawn("/bin/sh", ["-c", SENTINEL, "hookline-opencode-exit", RELAY, CLI], {
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

// `session.status` saying a failed API request will be tried again: the only sign of an API
// error while the CLI retries (session.error comes only once it gives up).
function isRetry(event) {
  return event.type === "session.status" && event.properties?.status?.type === "retry";
}

export const Hookline = async ({ directory }) => {
  const seen = startSentinel(directory);
  const hook = (name) => async (input, output) => {
    seen(input?.sessionID);
    await send(name, { type: name, input, output });
  };
  return {
    event: async ({ event }) => {
      if (!event || !(EVENTS.has(event.type) || isRetry(event))) return;
      seen(event.properties?.sessionID);
      send(event.type, event);
    },
    "chat.message": hook("chat.message"),
    "tool.execute.before": hook("tool.execute.before"),
    "tool.execute.after": hook("tool.execute.after"),
  };
};
