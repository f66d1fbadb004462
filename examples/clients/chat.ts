/**
 * A minimal agentd client: reads the running daemon's server.json, creates a session in the current directory,
 * sends one message and prints the streamed answer and tool activity until the turn ends.
 *
 *   node dist/examples/clients/chat.js "What does this project do?"
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

interface ServerInfo {
  url: string;
  token: string;
}

const home = process.env.AGENTD_HOME ?? join(homedir(), ".agentd");
const info = JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as ServerInfo;
const api = `${info.url}/api/v1`;
const headers = { authorization: `Bearer ${info.token}`, "content-type": "application/json" };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${api}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.error ?? ""}`);
  return json;
}

/** Reads SSE frames (`data:` lines) from the session's stream and hands each parsed event to `onEvent`. */
async function follow(sessionId: string, signal: AbortSignal, onEvent: (e: Record<string, unknown>) => boolean) {
  const res = await fetch(`${api}/sessions/${sessionId}/events`, { headers, signal });
  if (!res.body) throw new Error("no event stream");
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("\n");
      if (data && !onEvent(JSON.parse(data))) return;
    }
  }
}

async function main() {
  const text = process.argv.slice(2).join(" ").trim();
  if (!text) {
    console.error('usage: node dist/examples/clients/chat.js "<message>"');
    process.exit(2);
  }
  const { id } = await call<{ id: string }>("POST", "/sessions", { cwd: process.cwd() });
  const ctrl = new AbortController();
  let reason = "";
  let connected: () => void = () => {};
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const done = follow(id, ctrl.signal, (e) => {
    connected(); // the first frame (the session's state) says the stream is live: nothing can be missed now
    if (e.type === "token") process.stdout.write(String(e.text));
    else if (e.type === "tool_start") process.stdout.write(`\n[${e.name}] ${e.args}\n`);
    else if (e.type === "tool_end") process.stdout.write(`[${e.name}: ${e.status}]\n`);
    else if (e.type === "bash_confirm")
      process.stdout.write(`\n[confirmation needed: ${e.command}: answer with POST bash-confirm]\n`);
    else if (e.type === "error") process.stderr.write(`\nerror: ${e.message}\n`);
    else if (e.type === "end") {
      reason = String(e.reason);
      return false;
    }
    return true;
  });
  await ready;
  await call("POST", `/sessions/${id}/chat`, { text });
  await done;
  ctrl.abort();
  process.stdout.write(`\n(session ${id}, turn ended: ${reason})\n`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
