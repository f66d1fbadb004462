import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { get, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { makeTempHome, spawnDaemon } from "../../../testing/daemon.js";
import { startFakeProvider, tokens } from "../../../testing/fake-provider.js";

/**
 * A counting SSE consumer: keeps only each frame's id and type (a stalled client of a 6 MB message must not cost
 * the test process the message 50 times), and can start paused (it reads nothing until `resume`).
 */
class CountingClient {
  readonly seqs: number[] = [];
  readonly types: string[] = [];
  /** The sequence number of the first `end` frame (NaN before it). */
  endSeq = Number.NaN;
  private buf = "";
  private res: IncomingMessage | undefined;
  private waiters: Array<{ pred: () => boolean; resolve: () => void }> = [];

  static open(url: string, token: string, paused: boolean): Promise<CountingClient> {
    const c = new CountingClient();
    return new Promise((resolve, reject) => {
      const req = get(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } }, (res) => {
        c.res = res;
        res.setEncoding("utf8");
        if (paused) res.pause();
        res.on("data", (chunk: string) => c.feed(chunk));
        resolve(c);
      });
      req.on("error", reject);
    });
  }

  private feed(chunk: string): void {
    this.buf += chunk;
    for (let end = this.buf.indexOf("\n\n"); end >= 0; end = this.buf.indexOf("\n\n")) {
      const frame = this.buf.slice(0, end);
      this.buf = this.buf.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(frame);
      const type = /^data: \{"type":"([a-z_]+)"/m.exec(frame);
      if (!type) continue;
      this.types.push(type[1] as string);
      if (id) this.seqs.push(Number(id[1]));
      if (id && type[1] === "end" && Number.isNaN(this.endSeq)) this.endSeq = Number(id[1]);
    }
    for (const w of [...this.waiters]) {
      if (w.pred()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  waitFor(pred: () => boolean): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  waitEnd(): Promise<void> {
    return this.waitFor(() => this.types.includes("end"));
  }

  resume(): void {
    this.res?.resume();
  }

  close(): void {
    this.res?.destroy();
  }
}

function rssOf(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface SlowStats {
  clients: number;
  messageBytes: number;
  queueBytes: number;
  baselineRss: number;
  peakRss: number;
  /** The bound the peak is held to (docs/reliability.md gives the formula). */
  bound: number;
  fastClientEnded: boolean;
  caughtUpExactly: number;
}

/**
 * `clients` SSE clients stop reading while one turn streams a `messageBytes` answer (token deltas, then one
 * `assistant_message` frame of that size); one more client keeps reading. The daemon runs as a child process so
 * its own peak RSS (VmHWM, reset after warm-up) is measured.
 */
export async function runSlowConsumers(opts: {
  clients: number;
  messageBytes: number;
  /** Bytes per token delta (default 1200). */
  pieceBytes?: number;
}): Promise<SlowStats> {
  const queueBytes = 1024 * 1024;
  const fake = await startFakeProvider();
  const home = makeTempHome("agentd-slow-");
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" },
      server: { sseQueueBytes: queueBytes },
    }),
  );
  const p = await spawnDaemon(home);
  const pid = p.child.pid as number;
  const stalled: CountingClient[] = [];
  let fast: CountingClient | undefined;
  try {
    const id = (await p.client.post("/sessions", {})).body.id as string;
    const url = `${p.info.url}/api/v1/sessions/${id}/events`;
    // Warm-up: one small turn loads every lazy module and prepares the statements.
    const warm = await CountingClient.open(url, p.info.token, false);
    await p.client.post(`/sessions/${id}/chat`, { text: "warm up" });
    await warm.waitEnd();
    warm.close();

    fast = await CountingClient.open(url, p.info.token, false);
    for (let i = 0; i < opts.clients; i++) stalled.push(await CountingClient.open(url, p.info.token, true));
    // Clients are attached once the first frame has come for the fast one (each gets its status frame at once).
    const first = fast;
    await first.waitFor(() => first.types.length > 0);
    global.gc?.();
    const baselineRss = rssOf(pid, "VmRSS");
    writeFileSync(`/proc/${pid}/clear_refs`, "5");

    const piece = opts.pieceBytes ?? 1200;
    const n = Math.ceil(opts.messageBytes / piece);
    fake.script(tokens(n, { token: "x".repeat(piece) }));
    await p.client.post(`/sessions/${id}/chat`, { text: "a long answer please" });
    await fast.waitEnd();
    const fastClientEnded = true;
    const peakRss = rssOf(pid, "VmHWM");

    // Every stalled client, once it reads again, gets exactly the fast client's frames up to the turn's `end`: no
    // gap, no duplicate. (What follows `end`, the idle status and summaries, may still be on its way to either.)
    let caughtUpExactly = 0;
    const end = fast.endSeq;
    const want = fast.seqs.filter((s) => s > 0 && s <= end);
    for (const c of stalled) {
      c.resume();
      await c.waitEnd();
      const got = c.seqs.filter((s) => s <= end);
      const same = got.length === want.length && got.every((s, i) => s === want[i]);
      const contiguous = got.every((s, i) => i === 0 || s === (got[i - 1] as number) + 1);
      if (same && contiguous) caughtUpExactly++;
      c.close();
    }
    const bound = baselineRss + opts.clients * queueBytes * 2 + 12 * opts.messageBytes + 64 * 1024 * 1024;
    return {
      clients: opts.clients,
      messageBytes: n * piece,
      queueBytes,
      baselineRss,
      peakRss,
      bound,
      fastClientEnded,
      caughtUpExactly,
    };
  } finally {
    for (const c of stalled) c.close();
    fast?.close();
    p.child.kill("SIGTERM");
    await p.exited;
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}
