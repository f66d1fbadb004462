/**
 * Section 0: the daemon as a separate process next to the bare relay (`lib/relay.ts`), the floor for any daemon that
 * adds a process between the provider and its clients. The fake provider runs on a worker thread, the SSE clients
 * and the direct reader on the main thread; relay and daemon are child processes, fresh for every run, and the runs
 * alternate (relay, daemon, relay, ...). Each figure is the median over the runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "../testing/daemon.js";
import { SseClient } from "../testing/sse.js";
import { now, sleep } from "./lib/clock.js";
import { AGENTD_BIN, bootDaemon, tempDir } from "./lib/daemon.js";
import { WorkerRpc } from "./lib/rpc.js";
import { median, summarize } from "./lib/stats.js";
import { newReception, type Reception, readDirect, recordTurn } from "./lib/streams.js";
import { seedHistory } from "./ttft.js";

const RELAY = fileURLToPath(new URL("./lib/relay.js", import.meta.url));
const STATIC_BYTES = fileURLToPath(new URL("./lib/static-bytes.js", import.meta.url));
const LONG = 2000;
const LONG_TURNS = 20;
const SHORT = 100;
const TOTAL_TURNS = 150;
const TTFT_REPS = 10;
const HISTORY = 1000;
/** Paced turns (issue 27): PACED tokens PACED_GAP_MS apart, PACED_TURNS of them, in a warm process. */
const PACED = 500;
export const PACED_GAP_MS = 2;
const PACED_TURNS = 2;

export type EngineName = "relay" | "daemon";

/** Figures of one fresh process (ms, bytes). "added" = through the process minus read directly, same run. */
export interface RunFigures {
  /** Spawn until the first request, sent as soon as the process says it is ready, is answered. */
  coldMs: number;
  rssIdle: number;
  rssAfterLong: number;
  rssAfterAll: number;
  firstTurnAddedTtft: number;
  freshAddedTtft: number;
  /** Daemon only (the relay keeps no history): a session of HISTORY messages. */
  historyAddedTtft: number;
  /** Per-token latency (provider write -> client read) through the process; `direct`: read directly, same run. */
  firstLong: { p50: number; p99: number };
  warm: { p50: number; p99: number };
  /** The paced turns pooled (PACED_TURNS of PACED tokens, PACED_GAP_MS apart), after the long turns. */
  paced: { p50: number; p99: number };
  directFirstLong: { p50: number; p99: number };
  directWarm: { p50: number; p99: number };
  cpuFirstLong: number;
  cpuWarm: number;
  /** Process CPU of the first request (open a stream: create a session, subscribe), and of the first 3-token turn. */
  cpuFirstRequest: number;
  cpuFirstTurn: number;
}

export interface ProcessResult {
  runs: number;
  relay: RunFigures[];
  daemon: RunFigures[];
  /** Whether `agentd serve` ran the bundle (dist/bundle, `npm run build`) or the compiled modules (a bare tsc). */
  bundled: boolean;
}

interface Stream {
  open(): Promise<SseClient>;
  chat(text: string): Promise<void>;
}

interface Engine {
  pid: number;
  newStream(): Promise<Stream>;
  historyStream?: Stream;
  stop(): Promise<void>;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
  return { ...env, AGENTD_LOG_LEVEL: "warn", ...extra };
}

export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** utime + stime of a process in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Spawns a process and waits (polling every 2 ms) until `readyFile` exists. */
async function spawnReady(
  args: string[],
  env: NodeJS.ProcessEnv,
  readyFile: string,
): Promise<{ child: ChildProcess; ms: number; t0: number }> {
  const t0 = now();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  while (!existsSync(readyFile)) {
    const problem =
      child.exitCode !== null
        ? `process exited before it was ready: ${err}`
        : now() - t0 > 15_000
          ? `not ready within 15 s: ${err}`
          : undefined;
    if (problem) {
      await stopChild(child);
      throw new Error(problem);
    }
    await sleep(2);
  }
  return { child, ms: now() - t0, t0 };
}

/** What a client waits for at start-up: from the spawn until its first request (sent once ready) is answered. */
async function firstAnswered(t0: number, url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`first request: ${res.status}`);
  return now() - t0;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await exited;
}

/** The bare relay process (lib/relay.ts); `batched`: one write per client and tick. */
export async function startRelay(
  providerUrl: string,
  batched = false,
): Promise<Engine & { coldMs: number; base: string }> {
  const dir = tempDir("agentd-bench-relay-");
  const ready = join(dir, "ready.json");
  const args = [RELAY, providerUrl, ready, ...(batched ? ["--batched"] : [])];
  const { child, t0 } = await spawnReady(args, cleanEnv({}), ready);
  const { port } = JSON.parse(readFileSync(ready, "utf8")) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const coldMs = await firstAnswered(t0, `${base}/health`);
  let k = 0;
  return {
    coldMs,
    base,
    pid: child.pid as number,
    async newStream() {
      const key = `s${++k}`;
      return {
        open: () => SseClient.open(`${base}/events/${key}`),
        async chat(text: string) {
          const res = await fetch(`${base}/chat/${key}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: text }], stream: true }),
          });
          if (res.status !== 202) throw new Error(`relay chat: ${res.status}`);
          await res.arrayBuffer();
        },
      };
    },
    stop: () => stopChild(child),
  };
}

/** A bare node:http process answering `GET /<i>` with the bytes of `files[i]` (lib/static-bytes.ts). */
export async function startStaticBytes(files: string[]): Promise<{ base: string; stop: () => Promise<void> }> {
  const ready = join(tempDir("agentd-bench-static-"), "ready.json");
  const { child } = await spawnReady([STATIC_BYTES, ready, ...files], cleanEnv({}), ready);
  const { port } = JSON.parse(readFileSync(ready, "utf8")) as { port: number };
  return { base: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

function daemonStream(api: ApiClient, id: string): Stream {
  return {
    open: () => api.sse(`/sessions/${id}/events`),
    async chat(text: string) {
      const res = await api.post(`/sessions/${id}/chat`, { text });
      if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
    },
  };
}

/** `agentd serve` on `home` as a child process, once it has written `server.json`; a client of it. */
export async function spawnAgentd(
  home: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; t0: number; api: ApiClient; stop: () => Promise<void> }> {
  const { child, t0 } = await spawnReady(
    [AGENTD_BIN, "serve", "--port", "0", "--home", home],
    cleanEnv(env),
    join(home, "server.json"),
  );
  // server.json is written whole (a rename): readable as soon as it exists.
  const info = JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as { url: string; token: string };
  return { child, t0, api: new ApiClient(info.url, info.token), stop: () => stopChild(child) };
}

async function startAgentd(providerUrl: string, cwd: string): Promise<Engine & { coldMs: number }> {
  const home = tempDir("agentd-bench-proc-");
  // A session of HISTORY messages, written through the store by an in-process daemon on the same home beforehand.
  const seed = await bootDaemon({ home });
  const historyId = await seed.api.createSession({ cwd, title: "history" });
  seedHistory(seed, historyId, HISTORY);
  await seed.cleanup();
  const { child, t0, api } = await spawnAgentd(home, {
    OPENAI_BASE_URL: providerUrl,
    OPENAI_API_KEY: "bench-key",
    AGENTD_MODEL: "fake-model",
  });
  const coldMs = await firstAnswered(t0, `${api.api}/sessions`, { authorization: `Bearer ${api.token}` });
  return {
    coldMs,
    pid: child.pid as number,
    historyStream: daemonStream(api, historyId),
    async newStream() {
      return daemonStream(api, await api.createSession({ cwd }));
    },
    stop: () => stopChild(child),
  };
}

interface TurnResult {
  r: Reception;
  sent: Float64Array;
  ttft: number;
}

let tag = 0;

/** One scripted n-token turn through the engine on an open client, the tokens `gapMs` apart. */
async function turn(provider: WorkerRpc, s: Stream, c: SseClient, n: number, gapMs = 0): Promise<TurnResult> {
  const key = `turn ${++tag}`;
  await provider.call("script", { keys: [key], n, gapMs });
  const r = newReception(n);
  const done = recordTurn(c, r);
  const start = now();
  await s.chat(key);
  await done;
  const [sent] = await provider.call<Float64Array[]>("stamps", { keys: [key] });
  return { r, sent: sent as Float64Array, ttft: r.first - start };
}

/** The very request body the engine last sent, replayed directly to the provider: its time to first token. */
async function directReplay(provider: WorkerRpc, url: string, n: number): Promise<TurnResult> {
  const body = (await provider.call("lastBody")) as { messages: Array<{ role: string; content?: unknown }> };
  const key = String(body.messages.at(-1)?.content);
  await provider.call("script", { keys: [key], n, gapMs: 0 });
  const r = newReception(n);
  const { start } = await readDirect(url, body, r);
  const [sent] = await provider.call<Float64Array[]>("stamps", { keys: [key] });
  return { r, sent: sent as Float64Array, ttft: r.first - start };
}

function lat(t: TurnResult): number[] {
  const out: number[] = [];
  for (let i = 0; i < t.sent.length; i++) {
    const g = t.r.got[i] as number;
    if (!Number.isNaN(g)) out.push(g - (t.sent[i] as number));
  }
  return out;
}

function percentiles(xs: number[]): { p50: number; p99: number } {
  const a = summarize(xs);
  return { p50: a.p50, p99: a.p99 };
}

function checkAll(t: TurnResult, what: string): void {
  const lost = t.r.got.filter((g) => Number.isNaN(g)).length;
  if (lost > 0 || t.r.duplicates > 0) throw new Error(`${what}: ${lost} tokens missing, ${t.r.duplicates} duplicated`);
}

async function oneRun(provider: WorkerRpc, url: string, name: EngineName, cwd: string): Promise<RunFigures> {
  const e = name === "relay" ? await startRelay(url) : await startAgentd(url, cwd);
  try {
    await sleep(300);
    const rssIdle = rssOf(e.pid);

    // The very first turn of the fresh process (SSE already open), against the same request read directly.
    const cpuStart = cpuMsOf(e.pid);
    let s = await e.newStream();
    let c = await s.open();
    await c.waitForType("status");
    const cpuOpened = cpuMsOf(e.pid);
    const first = await turn(provider, s, c, 3);
    const cpuFirstTurn = cpuMsOf(e.pid) - cpuOpened;
    const firstTurnAddedTtft = first.ttft - (await directReplay(provider, url, 3)).ttft;
    c.close();

    // Fresh streams (sessions) of a warm process.
    const fresh: number[] = [];
    for (let i = 0; i < TTFT_REPS; i++) {
      const fs = await e.newStream();
      const fc = await fs.open();
      await fc.waitForType("status");
      const t = await turn(provider, fs, fc, 3);
      fresh.push(t.ttft - (await directReplay(provider, url, 3)).ttft);
      fc.close();
    }
    let historyAddedTtft = Number.NaN;
    if (e.historyStream) {
      const hc = await e.historyStream.open();
      await hc.waitForType("status");
      const hist: number[] = [];
      for (let i = 0; i < TTFT_REPS; i++) {
        const t = await turn(provider, e.historyStream, hc, 3);
        hist.push(t.ttft - (await directReplay(provider, url, 3)).ttft);
      }
      hc.close();
      historyAddedTtft = median(hist);
    }

    // Long turns at full speed, each right after the same length read directly.
    s = await e.newStream();
    c = await s.open();
    await c.waitForType("status");
    const throughLat: number[][] = [];
    const directLat: number[][] = [];
    const cpu: number[] = [];
    for (let i = 0; i < LONG_TURNS; i++) {
      const d = await directReplayLong(provider, url, LONG);
      directLat.push(lat(d));
      const cpu0 = cpuMsOf(e.pid);
      const t = await turn(provider, s, c, LONG);
      cpu.push(cpuMsOf(e.pid) - cpu0);
      checkAll(t, `${name} long turn ${i + 1}`);
      throughLat.push(lat(t));
    }
    c.close();
    await sleep(200);
    const rssAfterLong = rssOf(e.pid);

    // Paced turns, as a provider streams at its own pace: each token's way through the process alone.
    s = await e.newStream();
    c = await s.open();
    await c.waitForType("status");
    const pacedLat: number[] = [];
    for (let i = 0; i < PACED_TURNS; i++) {
      const t = await turn(provider, s, c, PACED, PACED_GAP_MS);
      checkAll(t, `${name} paced turn ${i + 1}`);
      pacedLat.push(...lat(t));
    }
    c.close();

    // Short turns up to TOTAL_TURNS in all, ten per stream (session).
    const done = 1 + TTFT_REPS * (e.historyStream ? 2 : 1) + LONG_TURNS + PACED_TURNS;
    for (let i = done; i < TOTAL_TURNS; i += 10) {
      const ss = await e.newStream();
      const sc = await ss.open();
      await sc.waitForType("status");
      for (let j = i; j < Math.min(i + 10, TOTAL_TURNS); j++) checkAll(await turn(provider, ss, sc, SHORT), name);
      sc.close();
    }
    await sleep(200);
    const rssAfterAll = rssOf(e.pid);
    const warmFrom = Math.min(10, LONG_TURNS - 1);
    return {
      coldMs: e.coldMs,
      rssIdle,
      rssAfterLong,
      rssAfterAll,
      firstTurnAddedTtft,
      freshAddedTtft: median(fresh),
      historyAddedTtft,
      firstLong: percentiles(throughLat[0] as number[]),
      warm: percentiles(throughLat.slice(warmFrom).flat()),
      paced: percentiles(pacedLat),
      directFirstLong: percentiles(directLat[0] as number[]),
      directWarm: percentiles(directLat.slice(warmFrom).flat()),
      cpuFirstLong: cpu[0] as number,
      cpuFirstRequest: cpuOpened - cpuStart,
      cpuFirstTurn,
      cpuWarm: cpu.slice(warmFrom).reduce((a, b) => a + b, 0) / (LONG_TURNS - warmFrom),
    };
  } finally {
    await e.stop();
  }
}

/** A long stream read directly (small body), as the per-token latency baseline of the next turn. */
async function directReplayLong(provider: WorkerRpc, url: string, n: number): Promise<TurnResult> {
  const key = `direct ${++tag}`;
  await provider.call("script", { keys: [key], n, gapMs: 0 });
  const r = newReception(n);
  const body = { model: "fake-model", messages: [{ role: "user", content: key }], stream: true };
  const { start } = await readDirect(url, body, r);
  const [sent] = await provider.call<Float64Array[]>("stamps", { keys: [key] });
  return { r, sent: sent as Float64Array, ttft: r.first - start };
}

/** `runs` fresh relays and `runs` fresh daemons, alternating. */
export async function processBench(cwd: string, runs: number): Promise<ProcessResult> {
  const provider = new WorkerRpc(new URL("./lib/provider-worker.js", import.meta.url));
  const bundled = /from ?"\.\/runtime\.js"/.test(
    readFileSync(fileURLToPath(new URL("../bundle/daemon.js", import.meta.url)), "utf8"),
  );
  const out: ProcessResult = { runs, relay: [], daemon: [], bundled };
  try {
    const url = await provider.call<string>("start");
    // Warm the provider and the client side once.
    await directReplayLong(provider, url, 300);
    for (let i = 0; i < runs; i++) {
      out.relay.push(await oneRun(provider, url, "relay", cwd));
      out.daemon.push(await oneRun(provider, url, "daemon", cwd));
    }
    return out;
  } finally {
    await provider.call("close").catch(() => undefined);
    await provider.terminate();
  }
}

/** Median over runs of one figure. */
export function med<T>(rs: T[], pick: (r: T) => number): number {
  return median(rs.map(pick));
}
