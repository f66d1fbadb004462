/**
 * Worker thread holding many stream readers (SSE clients of the daemon or the relay, or direct provider readers).
 * One thread reads every client, so each costs as little as a client can: plain `node:http`, frames split on their
 * blank line, a frame's type read from its first bytes (`{"type":"token"`), and only token frames looked into, for
 * their `text`. Parsing every frame's JSON (what a full client does, e.g. testing/sse.ts) made this thread, not the
 * server, the bottleneck with 1,000 clients on one session (docs/benchmarks.md).
 */
import { request } from "node:http";
import { now } from "./clock.js";
import { serveRpc } from "./rpc.js";
import { newReception, type Reception, readDirect, receive } from "./streams.js";

export interface ReaderResult {
  key: string;
  got: Float64Array;
  duplicates: number;
  first: number;
  /** Direct readers: when the request was sent. */
  start?: number;
  error?: string;
}

const TYPE_PREFIX = '{"type":"';
const TEXT_KEY = '"text":"';

/** One SSE client of a stream, reading the frames' types and the token frames' text. */
class LeanReader {
  private rest = "";
  private onFrame: ((type: string, data: string) => void) | undefined;
  private onEnd: ((err?: Error) => void) | undefined;
  private destroy: () => void = () => {};

  /** Opens the stream and waits for its first frame (`status`). */
  static open(url: string, token: string): Promise<LeanReader> {
    const r = new LeanReader();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (token) headers.authorization = `Bearer ${token}`;
      const req = request(url, { headers }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`SSE ${url} answered ${res.statusCode}`));
          return;
        }
        res.setEncoding("utf8");
        r.onFrame = (type) => {
          if (type !== "status") return;
          r.onFrame = undefined;
          resolve(r);
        };
        res.on("data", (chunk: string) => r.feed(chunk));
        res.on("close", () => {
          reject(new Error(`SSE ${url} closed before its first frame`)); // no-op once open
          r.onEnd?.(new Error("the stream closed before the turn's end"));
        });
      });
      req.on("error", (err) => {
        reject(err);
        r.onEnd?.(err);
      });
      req.end();
      r.destroy = () => req.destroy();
    });
  }

  private feed(chunk: string): void {
    const buf = this.rest + chunk;
    let from = 0;
    for (let at = buf.indexOf("\n\n"); at !== -1; at = buf.indexOf("\n\n", from)) {
      const data = buf.indexOf("data: ", from);
      if (data !== -1 && data < at && buf.startsWith(TYPE_PREFIX, data + 6)) {
        const start = data + 6 + TYPE_PREFIX.length;
        this.onFrame?.(buf.slice(start, buf.indexOf('"', start)), buf.slice(data + 6, at));
      }
      from = at + 2;
    }
    this.rest = buf.slice(from);
  }

  /** Records the token frames of the next turn into `r`, until its `end` frame. */
  record(r: Reception, timeoutMs = 120_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`no end frame within ${timeoutMs} ms`)), timeoutMs);
      const done = (err?: Error) => {
        clearTimeout(timer);
        this.onFrame = undefined;
        this.onEnd = undefined;
        if (err) reject(err);
        else resolve();
      };
      this.onEnd = done;
      this.onFrame = (type, data) => {
        if (type === "token") {
          const at = data.indexOf(TEXT_KEY);
          if (at !== -1) {
            const from = at + TEXT_KEY.length;
            receive(r, data.slice(from, data.indexOf('"', from)), now());
          }
        } else if (type === "end") done();
      };
    });
  }

  close(): void {
    this.onFrame = undefined;
    this.onEnd = undefined;
    this.destroy();
  }
}

const clients = new Map<string, LeanReader>();
let armed: Promise<ReaderResult[]> | undefined;
const result = (key: string, r: Reception, extra: Partial<ReaderResult> = {}): ReaderResult => ({
  key,
  got: r.got,
  duplicates: r.duplicates,
  first: r.first,
  ...extra,
});

serveRpc({
  async open(args: { clients: Array<{ key: string; url: string; token: string }> }) {
    await Promise.all(
      args.clients.map(async (c) => {
        clients.set(c.key, await LeanReader.open(c.url, c.token));
      }),
    );
    return clients.size;
  },
  /** Starts recording the next turn on every open client (the reply comes once all are listening). */
  arm(args: { n: number }) {
    armed = Promise.all(
      [...clients].map(([key, c]) => {
        const r = newReception(args.n);
        return c.record(r).then(
          () => result(key, r),
          (err: Error) => result(key, r, { error: err.message.slice(0, 300) }),
        );
      }),
    );
    return true;
  },
  collect() {
    if (!armed) throw new Error("collect before arm");
    return armed;
  },
  direct(args: { n: number; jobs: Array<{ key: string; url: string; body: unknown }> }) {
    return Promise.all(
      args.jobs.map(async (j) => {
        const r = newReception(args.n);
        const { start } = await readDirect(j.url, j.body, r);
        return result(j.key, r, { start });
      }),
    );
  },
  close() {
    for (const c of clients.values()) c.close();
    clients.clear();
    return true;
  },
});
