import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ReaderResult } from "./lib/client-worker.js";
import { now, sleep } from "./lib/clock.js";
import { type BenchDaemon, bootDaemon } from "./lib/daemon.js";
import { WorkerRpc } from "./lib/rpc.js";
import { int, mib, ms, printTable, type Summary, signedMs, summarize } from "./lib/stats.js";
import { latencies, missing } from "./lib/streams.js";
import { startRelay } from "./process.js";
import { directBody } from "./streaming.js";

/* ---------- 3. many sessions, many clients (the load benchmark; 1 and 2 are in streaming.ts) ---------- */

export interface LoadResult {
  sessions: number;
  clientsPerSession: number;
  n: number;
  gapMs: number;
  direct: { latency: Summary; ttfb: Summary };
  /** The same streams through the bare relay process (`lib/relay.ts`), the same clients. */
  relay?: { latency: Summary; ttft: Summary; received: number; duplicates: number };
  daemon: { latency: Summary; ttft: Summary };
  expected: number;
  received: number;
  lost: number;
  duplicates: number;
  errors: string[];
  /** Main-thread (daemon + provider) event-loop utilisation during each phase, 0..1. */
  elu: { direct: number; daemon: number };
  memBefore: NodeJS.MemoryUsage;
  memAfter: NodeJS.MemoryUsage;
  peakRss: number;
}

let gcFn: (() => void) | undefined;
/** A full GC before reading the heap, so before/after compare live data rather than garbage timing. */
function collect(): void {
  if (!gcFn) {
    setFlagsFromString("--expose-gc");
    gcFn = runInNewContext("gc") as () => void;
  }
  gcFn();
}

const toReception = (r: ReaderResult) => ({ got: r.got, duplicates: r.duplicates, first: r.first });

/**
 * `sessions` sessions streaming at once, each watched by `clientsPerSession` SSE clients, against as many direct
 * streams. The fake provider and the clients each run on a worker thread, so the main thread is the daemon's alone.
 */
export async function manyStreams(
  cwd: string,
  opts: { sessions: number; clientsPerSession: number; n: number; gapMs: number },
): Promise<LoadResult> {
  const { sessions, clientsPerSession, n, gapMs } = opts;
  const provider = new WorkerRpc(new URL("./lib/provider-worker.js", import.meta.url));
  const clients = new WorkerRpc(new URL("./lib/client-worker.js", import.meta.url));
  let bd: BenchDaemon | undefined;
  try {
    const url = await provider.call<string>("start");
    // Baseline: the same number of concurrent streams read directly, on the same client thread.
    const directKeys = Array.from({ length: sessions }, (_, k) => `direct ${k}`);
    await provider.call("script", { keys: directKeys, n, gapMs });
    let elu = performance.eventLoopUtilization();
    const directRes = await clients.call<ReaderResult[]>("direct", {
      n,
      jobs: directKeys.map((key) => ({ key, url, body: directBody(key) })),
    });
    const directElu = performance.eventLoopUtilization(elu).utilization;
    const directSent = await provider.call<Float64Array[]>("stamps", { keys: directKeys });
    const dLat: number[] = [];
    const ttfb: number[] = [];
    directRes.forEach((r, k) => {
      dLat.push(...latencies(directSent[k] as Float64Array, toReception(r)));
      ttfb.push(r.first - (r.start as number));
    });

    const relay = await relayLoad(provider, clients, url, opts);

    // Through the daemon.
    bd = await bootDaemon({ providerUrl: url });
    const api = bd.api;
    const ids: string[] = [];
    for (let k = 0; k < sessions; k++) ids.push(await api.createSession({ cwd, title: `load ${k}` }));
    await clients.call("open", {
      clients: ids.flatMap((id, k) =>
        Array.from({ length: clientsPerSession }, (_, j) => ({
          key: `${k}/${j}`,
          url: `${api.api}/sessions/${id}/events`,
          token: api.token,
        })),
      ),
    });
    const keys = ids.map((_, k) => `load ${k}`);
    await provider.call("script", { keys, n, gapMs });
    collect();
    const memBefore = process.memoryUsage();
    let peakRss = memBefore.rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, 100);
    await clients.call("arm", { n });
    elu = performance.eventLoopUtilization();
    const posted: number[] = [];
    await Promise.all(
      ids.map(async (id, k) => {
        posted[k] = now();
        const res = await api.post(`/sessions/${id}/chat`, { text: keys[k] });
        if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
      }),
    );
    const results = await clients.call<ReaderResult[]>("collect");
    const loadElu = performance.eventLoopUtilization(elu).utilization;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    await waitIdle(bd);
    collect();
    const memAfter = process.memoryUsage();
    const sent = await provider.call<Float64Array[]>("stamps", { keys });

    const lat: number[] = [];
    const ttft: number[] = [];
    let received = 0;
    let duplicates = 0;
    const errors: string[] = [];
    for (const r of results) {
      const k = Number(r.key.split("/")[0]);
      const rec = toReception(r);
      lat.push(...latencies(sent[k] as Float64Array, rec));
      ttft.push(r.first - (posted[k] as number));
      received += n - missing(rec);
      duplicates += r.duplicates;
      if (r.error) errors.push(`${r.key}: ${r.error}`);
    }
    const expected = sessions * clientsPerSession * n;
    return {
      sessions,
      clientsPerSession,
      n,
      gapMs,
      direct: { latency: summarize(dLat), ttfb: summarize(ttfb) },
      relay,
      daemon: { latency: summarize(lat), ttft: summarize(ttft) },
      expected,
      received,
      lost: expected - received,
      duplicates,
      errors,
      elu: { direct: directElu, daemon: loadElu },
      memBefore,
      memAfter,
      peakRss,
    };
  } finally {
    await clients.call("close").catch(() => undefined);
    await bd?.cleanup();
    await provider.call("close").catch(() => undefined);
    await Promise.all([clients.terminate(), provider.terminate()]);
  }
}

/** The load through the bare relay process: as many streams and clients, the same provider and client threads. */
async function relayLoad(
  provider: WorkerRpc,
  clients: WorkerRpc,
  url: string,
  opts: { sessions: number; clientsPerSession: number; n: number; gapMs: number },
): Promise<LoadResult["relay"]> {
  const { sessions, clientsPerSession, n } = opts;
  const relay = await startRelay(url);
  try {
    const keys = Array.from({ length: sessions }, (_, k) => `relay ${k}`);
    await clients.call("open", {
      clients: keys.flatMap((key, k) =>
        Array.from({ length: clientsPerSession }, (_, j) => ({
          key: `${k}/${j}`,
          url: `${relay.base}/events/${encodeURIComponent(key)}`,
          token: "",
        })),
      ),
    });
    await provider.call("script", { keys, n, gapMs: opts.gapMs });
    await clients.call("arm", { n });
    const posted: number[] = [];
    await Promise.all(
      keys.map(async (key, k) => {
        posted[k] = now();
        const res = await fetch(`${relay.base}/chat/${encodeURIComponent(key)}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directBody(key)),
        });
        if (res.status !== 202) throw new Error(`relay chat: ${res.status}`);
        await res.arrayBuffer();
      }),
    );
    const results = await clients.call<ReaderResult[]>("collect");
    const sent = await provider.call<Float64Array[]>("stamps", { keys });
    const lat: number[] = [];
    const ttft: number[] = [];
    let received = 0;
    let duplicates = 0;
    for (const r of results) {
      const k = Number(r.key.split("/")[0]);
      const rec = toReception(r);
      lat.push(...latencies(sent[k] as Float64Array, rec));
      ttft.push(r.first - (posted[k] as number));
      received += n - missing(rec);
      duplicates += r.duplicates;
    }
    return { latency: summarize(lat), ttft: summarize(ttft), received, duplicates };
  } finally {
    await clients.call("close").catch(() => undefined);
    await relay.stop();
  }
}

/** The turns have ended for the clients; wait until the daemon also reports every session idle. */
async function waitIdle(bd: BenchDaemon): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const res = await bd.api.get("/server/status");
    if (res.body?.sessions?.running === 0) return;
    await sleep(10);
  }
}

export function printLoad(r: LoadResult): void {
  const clients = r.sessions * r.clientsPerSession;
  const row = (label: string, a: number, b: number) => [label, ms(a), ms(b), signedMs(b - a)];
  const pct = (v: number) => `${(v * 100).toFixed(0)}%`;
  printTable(
    `3. Load: ${r.sessions} sessions streaming ${int(r.n)} tokens each (${r.gapMs} ms apart) at once, ` +
      `${r.clientsPerSession} SSE clients per session (${clients} clients) (ms)`,
    ["metric", "direct (baseline)", "daemon", "added"],
    [
      row("per-token latency p50", r.direct.latency.p50, r.daemon.latency.p50),
      row("per-token latency p99", r.direct.latency.p99, r.daemon.latency.p99),
      row("per-token latency max", r.direct.latency.max, r.daemon.latency.max),
      row("time to first token p50", r.direct.ttfb.p50, r.daemon.ttft.p50),
      row("time to first token p99", r.direct.ttfb.p99, r.daemon.ttft.p99),
      ...(r.relay
        ? [
            row("bare relay process: per-token latency p50", r.direct.latency.p50, r.relay.latency.p50),
            row("bare relay process: per-token latency p99", r.direct.latency.p99, r.relay.latency.p99),
            row("bare relay process: time to first token p50", r.direct.ttfb.p50, r.relay.ttft.p50),
          ]
        : []),
    ],
    [
      `direct: ${r.sessions} concurrent fetch() streams from the fake provider. Provider and clients run on two worker threads.`,
      `main thread (the daemon alone) busy ${pct(r.elu.daemon)} during the daemon run (${pct(r.elu.direct)} during the direct run).`,
      `tokens delivered: ${int(r.received)}/${int(r.expected)} (lost ${int(r.lost)}, duplicated ${int(r.duplicates)}) ` +
        `over ${clients} clients`,
      `memory (whole process, after a full GC): RSS ${mib(r.memBefore.rss)} -> ${mib(r.memAfter.rss)} MiB ` +
        `(peak ${mib(r.peakRss)}), main heap ${mib(r.memBefore.heapUsed)} -> ${mib(r.memAfter.heapUsed)} MiB`,
      ...(r.relay
        ? [`bare relay: ${int(r.relay.received)}/${int(r.expected)} tokens (duplicated ${int(r.relay.duplicates)})`]
        : []),
      ...r.errors.slice(0, 5).map((e) => `client error: ${e}`),
    ],
  );
}
