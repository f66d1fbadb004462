import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ApiClient } from "../testing/daemon.js";
import type { ReaderResult } from "./lib/client-worker.js";
import { now, sleep } from "./lib/clock.js";
import { bootDaemon, tempDir } from "./lib/daemon.js";
import { WorkerRpc } from "./lib/rpc.js";
import { int, mib, ms, printTable, type Summary, signedMs, summarize } from "./lib/stats.js";
import { latencies, missing } from "./lib/streams.js";
import { rssOf, spawnAgentd, startRelay } from "./process.js";
import { directBody } from "./streaming.js";

/* ---------- 3. many sessions, many clients (the load benchmark; 1 and 2 are in streaming.ts) ---------- */

export interface LoadResult {
  sessions: number;
  clientsPerSession: number;
  n: number;
  gapMs: number;
  /** The daemon ran as `agentd serve` in a process of its own (else in this process, on the main thread). */
  spawned: boolean;
  direct: { latency: Summary; ttfb: Summary };
  /** The same streams through the bare relay process (`lib/relay.ts`), the same clients. */
  relay?: RelayFigures;
  /** With `spawn`: the relay writing each client once per tick (as the daemon does), the floor of a fan-out. */
  relayBatched?: RelayFigures;
  /** The daemon's first turn on these sessions (of a fresh daemon), and with `turns` > 1 the later ones together. */
  daemon: { latency: Summary; ttft: Summary; later?: Summary };
  expected: number;
  received: number;
  lost: number;
  duplicates: number;
  errors: string[];
  /** In-process only: main-thread (daemon + provider) event-loop utilisation during each phase, 0..1. */
  elu?: { direct: number; daemon: number };
  /** The daemon's RSS before the turns and after them, and its peak (in process: this process's, after a full GC). */
  mem: { rssBefore: number; rssAfter: number; peakRss: number; heapBefore?: number; heapAfter?: number };
}

interface RelayFigures {
  latency: Summary;
  ttft: Summary;
  received: number;
  duplicates: number;
}

/** The daemon the load runs through: its API, its RSS, and how to stop it. */
interface LoadDaemon {
  api: ApiClient;
  rss(): number;
  /** A full GC first where the daemon is this process; its heap then. */
  settle(): number | undefined;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

async function inProcessDaemon(url: string): Promise<LoadDaemon> {
  const bd = await bootDaemon({ providerUrl: url });
  return {
    api: bd.api,
    rss: () => process.memoryUsage.rss(),
    settle() {
      collect();
      return process.memoryUsage().heapUsed;
    },
    idle: () => waitIdle(bd.api),
    stop: () => bd.cleanup(),
  };
}

/** `agentd serve` as a client meets it: a fresh process of its own (bench/process.ts). */
async function spawnedDaemon(url: string): Promise<LoadDaemon> {
  const d = await spawnAgentd(tempDir("agentd-bench-fanout-"), {
    OPENAI_BASE_URL: url,
    OPENAI_API_KEY: "bench-key",
    AGENTD_MODEL: "fake-model",
  });
  const pid = d.child.pid as number;
  return { api: d.api, rss: () => rssOf(pid), settle: () => undefined, idle: () => waitIdle(d.api), stop: d.stop };
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
 * streams. The fake provider and the clients each run on a worker thread; the daemon runs on the main thread, or with
 * `spawn` as `agentd serve` in its own process. `turns` turns are run one after the other on the same clients.
 */
export async function manyStreams(
  cwd: string,
  opts: { sessions: number; clientsPerSession: number; n: number; gapMs: number; spawn?: boolean; turns?: number },
): Promise<LoadResult> {
  const { sessions, clientsPerSession, n, gapMs } = opts;
  const turns = opts.turns ?? 1;
  const provider = new WorkerRpc(new URL("./lib/provider-worker.js", import.meta.url));
  const clients = new WorkerRpc(new URL("./lib/client-worker.js", import.meta.url));
  let daemon: LoadDaemon | undefined;
  try {
    const url = await provider.call<string>("start");
    // Baseline: the same number of concurrent streams read directly, on the same client thread.
    const directKeys = Array.from({ length: sessions }, (_, k) => `direct ${k}`);
    await provider.call("script", { keys: directKeys, n, gapMs });
    const eluDirect = performance.eventLoopUtilization();
    const directRes = await clients.call<ReaderResult[]>("direct", {
      n,
      jobs: directKeys.map((key) => ({ key, url, body: directBody(key) })),
    });
    const directElu = performance.eventLoopUtilization(eluDirect).utilization;
    const directSent = await provider.call<Float64Array[]>("stamps", { keys: directKeys });
    const dLat: number[] = [];
    const ttfb: number[] = [];
    directRes.forEach((r, k) => {
      dLat.push(...latencies(directSent[k] as Float64Array, toReception(r)));
      ttfb.push(r.first - (r.start as number));
    });

    const relay = await relayLoad(provider, clients, url, opts);
    const relayBatched = opts.spawn ? await relayLoad(provider, clients, url, opts, true) : undefined;

    // Through the daemon.
    daemon = opts.spawn ? await spawnedDaemon(url) : await inProcessDaemon(url);
    const d = daemon;
    const ids: string[] = [];
    for (let k = 0; k < sessions; k++) ids.push(await d.api.createSession({ cwd, title: `load ${k}` }));
    await clients.call("open", {
      clients: ids.flatMap((id, k) =>
        Array.from({ length: clientsPerSession }, (_, j) => ({
          key: `${k}/${j}`,
          url: `${d.api.api}/sessions/${id}/events`,
          token: d.api.token,
        })),
      ),
    });
    const heapBefore = d.settle();
    const rssBefore = d.rss();
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, d.rss());
    }, 100);
    const lat: number[][] = [];
    const ttft: number[] = [];
    let received = 0;
    let duplicates = 0;
    const errors: string[] = [];
    let firstTurnElu = 0;
    for (let t = 0; t < turns; t++) {
      const keys = ids.map((_, k) => `load ${k} turn ${t}`);
      await provider.call("script", { keys, n, gapMs });
      await clients.call("arm", { n });
      const eluTurn = performance.eventLoopUtilization();
      const posted: number[] = [];
      await Promise.all(
        ids.map(async (id, k) => {
          posted[k] = now();
          const res = await d.api.post(`/sessions/${id}/chat`, { text: keys[k] });
          if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
        }),
      );
      const results = await clients.call<ReaderResult[]>("collect");
      if (t === 0) firstTurnElu = performance.eventLoopUtilization(eluTurn).utilization;
      await d.idle();
      const got = tally(results, await provider.call<Float64Array[]>("stamps", { keys }), posted, n);
      lat.push(got.lat);
      if (t === 0) ttft.push(...got.ttft);
      received += got.received;
      duplicates += got.duplicates;
      errors.push(...got.errors.map((e) => `turn ${t + 1}, ${e}`));
    }
    clearInterval(sampler);
    peakRss = Math.max(peakRss, d.rss());
    const heapAfter = d.settle();
    const rssAfter = d.rss();
    const expected = turns * sessions * clientsPerSession * n;
    return {
      sessions,
      clientsPerSession,
      n,
      gapMs,
      spawned: opts.spawn === true,
      direct: { latency: summarize(dLat), ttfb: summarize(ttfb) },
      relay,
      relayBatched,
      daemon: {
        latency: summarize(lat[0] as number[]),
        ttft: summarize(ttft),
        later: turns > 1 ? summarize(lat.slice(1).flat()) : undefined,
      },
      expected,
      received,
      lost: expected - received,
      duplicates,
      errors,
      elu: opts.spawn ? undefined : { direct: directElu, daemon: firstTurnElu },
      mem: { rssBefore, rssAfter, peakRss, heapBefore, heapAfter },
    };
  } finally {
    await clients.call("close").catch(() => undefined);
    await daemon?.stop();
    await provider.call("close").catch(() => undefined);
    await Promise.all([clients.terminate(), provider.terminate()]);
  }
}

/**
 * What the clients of one turn got (keys `<stream>/<client>`): per-token latencies against the provider's stamps of
 * their stream, time to first token from their stream's `POST`, tokens received and duplicated, client errors.
 */
function tally(results: ReaderResult[], sent: Float64Array[], posted: number[], n: number) {
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
  return { lat, ttft, received, duplicates, errors };
}

/** The load through the bare relay process: as many streams and clients, the same provider and client threads. */
async function relayLoad(
  provider: WorkerRpc,
  clients: WorkerRpc,
  url: string,
  opts: { sessions: number; clientsPerSession: number; n: number; gapMs: number },
  batched = false,
): Promise<RelayFigures> {
  const { sessions, clientsPerSession, n } = opts;
  const relay = await startRelay(url, batched);
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
    const { lat, ttft, received, duplicates } = tally(
      results,
      await provider.call<Float64Array[]>("stamps", { keys }),
      posted,
      n,
    );
    return { latency: summarize(lat), ttft: summarize(ttft), received, duplicates };
  } finally {
    await clients.call("close").catch(() => undefined);
    await relay.stop();
  }
}

/** The turns have ended for the clients; wait until the daemon also reports every session idle. */
async function waitIdle(api: ApiClient): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const res = await api.get("/server/status");
    if (res.body?.sessions?.running === 0) return;
    await sleep(10);
  }
}

export function printLoad(r: LoadResult): void {
  const clients = r.sessions * r.clientsPerSession;
  const row = (label: string, a: number, b: number) => [label, ms(a), ms(b), signedMs(b - a)];
  const pct = (v: number) => `${(v * 100).toFixed(0)}%`;
  const where = r.spawned ? "`agentd serve`, a fresh process" : "the daemon in this process";
  const m = r.mem;
  const first = r.daemon.later ? " (first turn)" : "";
  printTable(
    `3. Load: ${r.sessions} sessions streaming ${int(r.n)} tokens each (${r.gapMs} ms apart) at once, ` +
      `${r.clientsPerSession} SSE clients per session (${clients} clients) through ${where} (ms)`,
    ["metric", "direct (baseline)", "daemon", "added"],
    [
      row(`per-token latency p50${first}`, r.direct.latency.p50, r.daemon.latency.p50),
      row(`per-token latency p99${first}`, r.direct.latency.p99, r.daemon.latency.p99),
      row(`per-token latency max${first}`, r.direct.latency.max, r.daemon.latency.max),
      ...(r.daemon.later
        ? [
            row("later turns: per-token latency p50", r.direct.latency.p50, r.daemon.later.p50),
            row("later turns: per-token latency p99", r.direct.latency.p99, r.daemon.later.p99),
          ]
        : []),
      row("time to first token p50", r.direct.ttfb.p50, r.daemon.ttft.p50),
      row("time to first token p99", r.direct.ttfb.p99, r.daemon.ttft.p99),
      ...(r.relay
        ? [
            row("bare relay process: per-token latency p50", r.direct.latency.p50, r.relay.latency.p50),
            row("bare relay process: per-token latency p99", r.direct.latency.p99, r.relay.latency.p99),
            row("bare relay process: time to first token p50", r.direct.ttfb.p50, r.relay.ttft.p50),
          ]
        : []),
      ...(r.relayBatched
        ? [
            row("relay, one write per client and tick: latency p50", r.direct.latency.p50, r.relayBatched.latency.p50),
            row("relay, one write per client and tick: latency p99", r.direct.latency.p99, r.relayBatched.latency.p99),
          ]
        : []),
    ],
    [
      `direct: ${r.sessions} concurrent fetch() streams from the fake provider. Provider and clients run on two worker threads.`,
      ...(r.elu
        ? [
            `main thread (the daemon alone) busy ${pct(r.elu.daemon)} during the daemon's first turn (${pct(r.elu.direct)} during the direct run).`,
          ]
        : []),
      `tokens delivered: ${int(r.received)}/${int(r.expected)} (lost ${int(r.lost)}, duplicated ${int(r.duplicates)}) ` +
        `over ${clients} clients`,
      r.spawned
        ? `daemon RSS: ${mib(m.rssBefore)} -> ${mib(m.rssAfter)} MiB (peak ${mib(m.peakRss)}, sampled every 100 ms)`
        : `memory (whole process, after a full GC): RSS ${mib(m.rssBefore)} -> ${mib(m.rssAfter)} MiB ` +
          `(peak ${mib(m.peakRss)}), main heap ${mib(m.heapBefore ?? 0)} -> ${mib(m.heapAfter ?? 0)} MiB`,
      ...(r.relay
        ? [`bare relay: ${int(r.relay.received)}/${int(clients * r.n)} tokens (duplicated ${int(r.relay.duplicates)})`]
        : []),
      ...(r.relayBatched
        ? [
            `relay writing once per client and tick: ${int(r.relayBatched.received)}/${int(clients * r.n)} tokens ` +
              `(duplicated ${int(r.relayBatched.duplicates)})`,
          ]
        : []),
      ...r.errors.slice(0, 5).map((e) => `client error: ${e}`),
    ],
  );
}
