/** Worker thread holding many stream readers (SSE clients of the daemon, or direct provider readers). */
import { SseClient } from "../../testing/sse.js";
import { serveRpc } from "./rpc.js";
import { newReception, type Reception, readDirect, recordTurn } from "./streams.js";

export interface ReaderResult {
  key: string;
  got: Float64Array;
  duplicates: number;
  first: number;
  /** Direct readers: when the request was sent. */
  start?: number;
  error?: string;
}

const clients = new Map<string, SseClient>();
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
        const sse = await SseClient.open(c.url, { token: c.token });
        if (sse.status !== 200) throw new Error(`SSE ${c.url} answered ${sse.status}`);
        await sse.waitForType("status");
        clients.set(c.key, sse);
      }),
    );
    return clients.size;
  },
  /** Starts recording the next turn on every open client (the reply comes once all are listening). */
  arm(args: { n: number }) {
    armed = Promise.all(
      [...clients].map(([key, c]) => {
        const r = newReception(args.n);
        return recordTurn(c, r, { trim: true }).then(
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
