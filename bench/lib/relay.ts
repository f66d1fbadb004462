/**
 * The bare relay of the benchmark: the floor for any daemon that adds a process between the model provider and its
 * clients. Plain `node:http`, nothing else loaded: `GET /events/{key}` subscribes an SSE client (a `status` frame
 * first, like the daemon); `POST /chat/{key}` answers 202, forwards its body to the provider's
 * `/chat/completions`, and writes each streamed delta as one `token` frame to every subscriber of the key, then `end`.
 *
 * Run as `node relay.js <providerUrl> <readyFile> [--batched]`: it writes `{port}` to readyFile once listening. With
 * `--batched` the frames of one tick go to each subscriber in one write (on `process.nextTick`), as the daemon sends
 * them: the floor of a fan-out to many clients, where a write per frame and client falls behind.
 */
import { renameSync, writeFileSync } from "node:fs";
import { createServer, request, type ServerResponse } from "node:http";

const [providerUrl, readyFile, mode] = process.argv.slice(2) as [string, string, string | undefined];
const batched = mode === "--batched";
const provider = new URL(`${providerUrl.replace(/\/$/, "")}/chat/completions`);
const subscribers = new Map<string, Set<ServerResponse>>();
let seq = 0;

/** Batched: the frames of this tick, by key (every subscriber of a key is sent the same ones). */
const queued = new Map<string, string[]>();

function publish(key: string, event: Record<string, unknown>): void {
  const frame = `id: ${++seq}\ndata: ${JSON.stringify(event)}\n\n`;
  if (!batched) {
    for (const res of subscribers.get(key) ?? []) res.write(frame);
    return;
  }
  const frames = queued.get(key);
  if (frames) frames.push(frame);
  else if (queued.set(key, [frame]).size === 1) process.nextTick(flush);
}

function flush(): void {
  for (const [key, frames] of queued) {
    const data = frames.join("");
    for (const res of subscribers.get(key) ?? []) res.write(data);
  }
  queued.clear();
}

function forward(key: string, body: string): void {
  const req = request(
    provider,
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer relay",
        "content-length": Buffer.byteLength(body),
      },
    },
    (res) => {
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (chunk: string) => {
        buf += chunk;
        let idx = buf.indexOf("\n\n");
        while (idx >= 0) {
          const block = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          idx = buf.indexOf("\n\n");
          if (!block.startsWith("data: ") || block === "data: [DONE]") continue;
          const json = JSON.parse(block.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
          const text = json.choices?.[0]?.delta?.content;
          if (text) publish(key, { type: "token", text });
        }
      });
      res.on("end", () => publish(key, { type: "end" }));
    },
  );
  req.on("error", (err) => publish(key, { type: "error", message: err.message }));
  req.end(body);
}

const server = createServer((req, res) => {
  const [, route, key = ""] = (req.url ?? "").split("/");
  if (req.method === "GET" && route === "events") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`data: ${JSON.stringify({ type: "status", status: "idle" })}\n\n`);
    const set = subscribers.get(key) ?? new Set<ServerResponse>();
    subscribers.set(key, set);
    set.add(res);
    req.on("close", () => set.delete(res));
    return;
  }
  if (req.method === "POST" && route === "chat") {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      res.writeHead(202).end();
      forward(key, body);
    });
    return;
  }
  res.writeHead(req.url === "/health" ? 200 : 404).end();
});

server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  // Written whole (a rename): the bench reads it as soon as it exists.
  writeFileSync(`${readyFile}.tmp`, JSON.stringify({ port: typeof addr === "object" && addr ? addr.port : 0 }));
  renameSync(`${readyFile}.tmp`, readyFile);
});
process.on("SIGTERM", () => process.exit(0));
