// hookline's Pi extension: hands the Pi coding agent's session lifecycle to hookline-relay,
// which records it for hookline (profiles/pi.toml maps it to canonical events).
//
// Installed as one file in Pi's extension folder (`~/.pi/agent/extensions/hookline.ts`, or a
// project's `.pi/extensions/hookline.ts`), which Pi loads at start, with @HOOKLINE_RELAY@
// replaced by the relay's absolute path and @HOOKLINE_CLI@ by the profile's name, each as a
// JSON string. Pi has no command hooks: this is the whole integration.
//
// What it sends, each as one run of `hookline-relay --cli <CLI> --event <name>` with one JSON
// object on stdin: `{hook_event_name, session_id, session_file, cwd, has_ui, pid, is_idle}` and
// the event's own fields, trimmed of what is large (system prompts, message lists):
// - `session_start` {reason}, `session_shutdown` {reason}, `session_compact`;
// - `before_agent_start` {prompt}: a prompt starts the agent;
// - `agent_start` {retry}: `retry` is true when no `before_agent_start` came since the last
//   `agent_end`, which is how Pi's automatic retry after an API error starts;
// - `tool_execution_start` {toolCallId, toolName}, `tool_execution_end` {toolCallId,
//   toolName, isError};
// - `agent_end` {stop_reason, error_message, error_status}, read from the last assistant
//   message (`stop`, `aborted` after Esc, `error` with the API's status);
// - `hookline.dialog_open` {dialog, title, tool} and `hookline.dialog_close` {dialog,
//   answered}, made here: Pi has no approval dialog of its own, but every extension asks
//   through one shared `ctx.ui`, whose select/confirm/input/editor/custom this extension wraps.
//   `tool` is the tool running when the dialog opened (a gate asking before it runs).
//
// Pi's events carry no session id: it is read from the context (`ctx.sessionManager`) and
// kept, because a context goes stale (every property throws) once its session is shut down.
// Events that arrive after `session_shutdown` and before the next `session_start` (the end of
// an aborted turn) are not sent: their session has ended.
//
// It never throws and never changes what Pi does: every handler only reads and returns nothing.
// Pi awaits handlers inside its agent loop, so they queue the relay run and return at once;
// relay runs are chained, so events reach the relay in the order Pi produced them. Only
// `session_shutdown` waits for the queue, since Pi exits once it returns.
import { spawn } from "node:child_process";

const RELAY = "@HOOKLINE_RELAY@";
const CLI = "@HOOKLINE_CLI@";

// A relay that has not finished by then is left to finish on its own (it bounds its own wait).
const RELAY_TIMEOUT_MS = 5000;

// Pi's shared UI methods that wait for the human's answer.
const DIALOGS = ["select", "confirm", "input", "editor", "custom"];
const WRAPPED = Symbol.for("hookline.pi.dialogs");

// The longest text sent for a prompt, a dialog title or an error message.
const TEXT_MAX = 2000;

let queue = Promise.resolve();

function runRelay(name, payload) {
  let text;
  try {
    text = JSON.stringify(payload);
  } catch {
    text = JSON.stringify({ hook_event_name: name, unserializable: true });
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

function clip(text) {
  return typeof text === "string" ? text.slice(0, TEXT_MAX) : undefined;
}

function attempt(read) {
  try {
    return read();
  } catch {
    return undefined;
  }
}

export default function hookline(pi) {
  // What the context said last: kept for the events that come once it is stale.
  const known = { session_id: null, session_file: null, cwd: null, has_ui: false };
  const running = new Map(); // toolCallId -> toolName, for the tools started and not ended
  let ended = false; // session_shutdown sent, no session_start since
  let promptSeen = false; // a before_agent_start since the last agent_end
  let openDialogs = 0;
  let lastCtx = null;

  function identify(ctx) {
    if (ctx) lastCtx = ctx;
    const c = ctx ?? lastCtx;
    if (!c) return;
    const id = attempt(() => c.sessionManager.getSessionId());
    if (typeof id === "string" && id) known.session_id = id;
    const file = attempt(() => c.sessionManager.getSessionFile());
    if (typeof file === "string" && file) known.session_file = file;
    const cwd = attempt(() => c.cwd);
    if (typeof cwd === "string") known.cwd = cwd;
    const hasUI = attempt(() => c.hasUI);
    if (typeof hasUI === "boolean") known.has_ui = hasUI;
  }

  function idle(ctx) {
    const c = ctx ?? lastCtx;
    return c ? attempt(() => c.isIdle()) : undefined;
  }

  function send(name, ctx, fields) {
    if (ended) return queue;
    identify(ctx);
    const payload = {
      hook_event_name: name,
      ...known,
      pid: process.pid,
      ...fields,
      is_idle: idle(ctx),
    };
    queue = queue.then(() => runRelay(name, payload)).catch(() => {});
    return queue;
  }

  function lastTool() {
    let tool;
    for (const name of running.values()) tool = name;
    return tool;
  }

  function wrapDialogs(ui) {
    if (!ui || ui[WRAPPED]) return;
    for (const method of DIALOGS) {
      const original = ui[method];
      if (typeof original !== "function") continue;
      ui[method] = async function (...args) {
        const opened = openDialogs++ === 0;
        if (opened) {
          const title = typeof args[0] === "string" ? clip(args[0]) : undefined;
          send("hookline.dialog_open", null, { dialog: method, title, tool: lastTool() });
        }
        let answer;
        try {
          answer = await original.apply(this, args);
          return answer;
        } finally {
          if (--openDialogs === 0) {
            const answered = answer !== undefined && answer !== false;
            send("hookline.dialog_close", null, { dialog: method, answered });
          }
        }
      };
    }
    try {
      Object.defineProperty(ui, WRAPPED, { value: true });
    } catch {}
  }

  function on(event, handler) {
    try {
      pi.on(event, (payload, ctx) => {
        try {
          handler(payload ?? {}, ctx);
        } catch {}
      });
    } catch {}
  }

  on("session_start", (event, ctx) => {
    ended = false;
    running.clear();
    promptSeen = false;
    if (attempt(() => ctx.hasUI)) wrapDialogs(attempt(() => ctx.ui));
    send("session_start", ctx, { reason: event.reason });
  });

  on("before_agent_start", (event, ctx) => {
    promptSeen = true;
    send("before_agent_start", ctx, { prompt: clip(event.prompt) });
  });

  on("agent_start", (_event, ctx) => {
    send("agent_start", ctx, { retry: !promptSeen });
  });

  on("tool_execution_start", (event, ctx) => {
    running.set(event.toolCallId, event.toolName);
    send("tool_execution_start", ctx, { toolCallId: event.toolCallId, toolName: event.toolName });
  });

  on("tool_execution_end", (event, ctx) => {
    running.delete(event.toolCallId);
    send("tool_execution_end", ctx, {
      toolCallId: event.toolCallId,
      toolName: event.toolName,
      isError: event.isError === true,
    });
  });

  on("agent_end", (event, ctx) => {
    promptSeen = false;
    running.clear();
    const messages = Array.isArray(event.messages) ? event.messages : [];
    const last = [...messages].reverse().find((m) => m && m.role === "assistant");
    const error = clip(last?.errorMessage);
    const status = typeof error === "string" ? /^(\d{3})\b/.exec(error)?.[1] : undefined;
    send("agent_end", ctx, {
      stop_reason: last?.stopReason,
      error_message: error,
      error_status: status,
    });
  });

  on("session_compact", (_event, ctx) => {
    send("session_compact", ctx, {});
  });

  // Pi awaits this handler before it exits: the queue is drained here.
  try {
    pi.on("session_shutdown", async (event, ctx) => {
      try {
        const last = send("session_shutdown", ctx, { reason: event?.reason });
        ended = true;
        await last;
      } catch {}
    });
  } catch {}
}
