import { performance } from "node:perf_hooks";
import { EventBusToken } from "../core/registries.js";
import type { FakeProvider } from "../testing/fake-provider.js";
import { now } from "./lib/clock.js";
import type { BenchDaemon } from "./lib/daemon.js";
import { int, ms, printTable, type Summary, signedMs, summarize } from "./lib/stats.js";
import {
  latencies,
  missing,
  newReception,
  type Reception,
  readDirect,
  receive,
  recordTurn,
  stampedTurn,
  throughput,
} from "./lib/streams.js";

/** A streaming chat request sent straight to the fake provider. */
export const directBody = (tag: string) => ({
  model: "fake-model",
  messages: [{ role: "user", content: tag }],
  stream: true,
});

export interface PathFigures {
  latency: Summary;
  tokensPerSec: number;
  received: number;
}

export interface SingleStreamResult {
  label: string;
  n: number;
  direct: PathFigures;
  daemon: PathFigures;
  /** Per chunk: daemon latency minus direct latency of the same chunk index. */
  paired: Summary;
  /** Chunk written by the provider -> the daemon published its `token` event (after writing it to SSE sockets). */
  toPublish: Summary;
  /** Main-thread busy time (event-loop utilisation) during each run: provider + client (+ daemon). */
  busyMs: { direct: number; daemon: number };
}

function figures(sent: Float64Array, r: Reception): PathFigures {
  return {
    latency: summarize(latencies(sent, r)),
    tokensPerSec: throughput(sent, r),
    received: r.got.length - missing(r),
  };
}

function pairedAdded(
  direct: { sent: Float64Array; r: Reception },
  daemon: { sent: Float64Array; r: Reception },
): Summary {
  const out: number[] = [];
  for (let i = 0; i < daemon.sent.length; i++) {
    const a = (daemon.r.got[i] as number) - (daemon.sent[i] as number);
    const b = (direct.r.got[i] as number) - (direct.sent[i] as number);
    if (Number.isFinite(a) && Number.isFinite(b)) out.push(a - b);
  }
  return summarize(out);
}

/** One n-token stream read directly from the fake provider, then the same through the daemon to one SSE client. */
export async function singleStream(
  fake: FakeProvider,
  bd: BenchDaemon,
  cwd: string,
  label: string,
  n: number,
  gapMs: number,
): Promise<SingleStreamResult> {
  const direct = stampedTurn(n, gapMs);
  fake.script(direct.turn);
  const rd = newReception(n);
  const eluD = performance.eventLoopUtilization();
  await readDirect(fake.url, directBody("direct"), rd);
  const busyDirect = performance.eventLoopUtilization(eluD).active;

  const id = await bd.api.createSession({ cwd });
  const c = await bd.api.sse(`/sessions/${id}/events`);
  await c.waitForType("status");
  const viaDaemon = stampedTurn(n, gapMs);
  fake.script(viaDaemon.turn);
  const rs = newReception(n);
  const pub = newReception(n);
  const sub = bd.daemon.services.get(EventBusToken).on("session.event", (e) => {
    if (e.sessionId === id && e.event.type === "token") receive(pub, String(e.event.text ?? ""), now());
  });
  const done = recordTurn(c, rs);
  const eluS = performance.eventLoopUtilization();
  const res = await bd.api.post(`/sessions/${id}/chat`, { text: "stream" });
  if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
  await done;
  const busyDaemon = performance.eventLoopUtilization(eluS).active;
  sub.dispose();
  c.close();
  return {
    toPublish: summarize(latencies(viaDaemon.sent, pub)),
    busyMs: { direct: busyDirect, daemon: busyDaemon },
    label,
    n,
    direct: figures(direct.sent, rd),
    daemon: figures(viaDaemon.sent, rs),
    paired: pairedAdded({ sent: direct.sent, r: rd }, { sent: viaDaemon.sent, r: rs }),
  };
}

export function printSingle(results: SingleStreamResult[]): void {
  const rows: string[][] = [];
  for (const r of results) {
    const row = (path: string, f: PathFigures, busy: number) => [
      `${r.label}: ${path}`,
      `${f.received}/${r.n}`,
      ms(f.latency.p50),
      ms(f.latency.p99),
      ms(f.latency.max),
      int(f.tokensPerSec),
      int(busy),
    ];
    const added = (path: string, s: Summary) => [
      `${r.label}: ${path}`,
      "",
      signedMs(s.p50),
      signedMs(s.p99),
      signedMs(s.max),
      "",
      "",
    ];
    const pub = r.toPublish;
    rows.push(row("direct (baseline)", r.direct, r.busyMs.direct), row("daemon -> SSE", r.daemon, r.busyMs.daemon));
    rows.push([`${r.label}:   of which to daemon publish`, "", ms(pub.p50), ms(pub.p99), ms(pub.max), "", ""]);
    rows.push(
      added("added by daemon", {
        n: r.n,
        p50: r.daemon.latency.p50 - r.direct.latency.p50,
        p99: r.daemon.latency.p99 - r.direct.latency.p99,
        max: r.daemon.latency.max - r.direct.latency.max,
        mean: Number.NaN,
      }),
    );
    rows.push(added("added, paired per chunk", r.paired));
  }
  printTable(
    "1. Per-token latency: chunk written by the fake provider -> chunk read by the client (ms)",
    ["stream / path", "tokens", "p50", "p99", "max", "tokens/s", "busy ms"],
    rows,
    [
      "direct: a fetch() client streaming from the fake provider; daemon: POST chat, read as `token` events by an SseClient.",
      "to daemon publish: provider write -> SessionEventLog.publish done (frame already written to the SSE socket).",
      "added = daemon percentile - direct percentile; paired = distribution of (daemon - direct) latency of chunk i.",
      "busy ms: main-thread event-loop busy time during the run (provider + client, + daemon on the daemon row).",
    ],
  );
}
