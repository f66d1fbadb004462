import { SessionStoreToken } from "../core/store.js";
import type { FakeProvider } from "../testing/fake-provider.js";
import { now } from "./lib/clock.js";
import type { BenchDaemon } from "./lib/daemon.js";
import { ms, printTable, type Summary, signedMs, summarize } from "./lib/stats.js";
import { newReception, readDirect, recordTurn, stampedTurn } from "./lib/streams.js";

interface Breakdown {
  /** Request sent -> the provider writes the first chunk. */
  toProvider: Summary;
  /** First chunk written -> read by the client. */
  back: Summary;
  total: Summary;
}

export interface TtftCase {
  label: string;
  messages: number;
  requestKiB: number;
  direct: Breakdown;
  daemon: Breakdown;
}

function breakdown(samples: Array<{ start: number; sent: number; first: number }>): Breakdown {
  return {
    toProvider: summarize(samples.map((s) => s.sent - s.start)),
    back: summarize(samples.map((s) => s.first - s.sent)),
    total: summarize(samples.map((s) => s.first - s.start)),
  };
}

/** Writes `count` alternating user/assistant messages straight into the store (much faster than running turns). */
export function seedHistory(bd: BenchDaemon, sessionId: string, count: number): void {
  const store = bd.daemon.services.get(SessionStoreToken);
  for (let i = 0; i < count; i++) {
    const role = i % 2 === 0 ? "user" : "assistant";
    const content = `${role} message ${i}: please look at src/module${i % 50}.ts and refactor it.`;
    store.appendMessage(sessionId, { role, content });
  }
}

/**
 * Time from `POST /sessions/{id}/chat` to the first `token` event on an already open SSE stream, against the
 * fake provider's own time to first chunk for the very request body the daemon sent (replayed directly).
 */
export async function ttftCase(
  fake: FakeProvider,
  bd: BenchDaemon,
  cwd: string,
  label: string,
  history: number,
  reps: number,
): Promise<TtftCase> {
  let id = "";
  const fresh = history === 0;
  if (!fresh) {
    id = await bd.api.createSession({ cwd, title: label });
    seedHistory(bd, id, history);
  }
  const daemon: Array<{ start: number; sent: number; first: number }> = [];
  const direct: Array<{ start: number; sent: number; first: number }> = [];
  let requestBytes = 0;
  for (let rep = -1; rep < reps; rep++) {
    if (fresh) id = await bd.api.createSession({ cwd });
    const c = await bd.api.sse(`/sessions/${id}/events`);
    await c.waitForType("status");
    const t = stampedTurn(3, 0);
    fake.script(t.turn);
    const r = newReception(3);
    const done = recordTurn(c, r);
    const start = now();
    const res = await bd.api.post(`/sessions/${id}/chat`, { text: `question ${rep}` });
    if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
    await done;
    c.close();

    // The same request body, straight to the provider.
    const body = fake.requests.at(-1);
    requestBytes = JSON.stringify(body).length;
    const d = stampedTurn(3, 0);
    fake.script(d.turn);
    const rd = newReception(3);
    const { start: dStart } = await readDirect(fake.url, body, rd);
    if (rep < 0) continue; // warm-up
    daemon.push({ start, sent: t.sent[0] as number, first: r.first });
    direct.push({ start: dStart, sent: d.sent[0] as number, first: rd.first });
  }
  return {
    label,
    messages: history,
    requestKiB: requestBytes / 1024,
    direct: breakdown(direct),
    daemon: breakdown(daemon),
  };
}

export function printTtft(cases: TtftCase[], reps: number): void {
  const rows: string[][] = [];
  for (const c of cases) {
    const row = (path: string, b: Breakdown) => [
      `${c.label}: ${path}`,
      ms(b.toProvider.p50),
      ms(b.back.p50),
      ms(b.total.p50),
      ms(b.total.p99),
    ];
    rows.push(row(`direct (same ${c.requestKiB.toFixed(0)} KiB request)`, c.direct), row("daemon", c.daemon));
    rows.push([
      `${c.label}: added by daemon`,
      signedMs(c.daemon.toProvider.p50 - c.direct.toProvider.p50),
      signedMs(c.daemon.back.p50 - c.direct.back.p50),
      signedMs(c.daemon.total.p50 - c.direct.total.p50),
      signedMs(c.daemon.total.p99 - c.direct.total.p99),
    ]);
  }
  printTable(
    `2. Time to first token (ms, ${reps} turns each after a warm-up)`,
    ["session / path", "to provider p50", "back p50", "TTFT p50", "TTFT p99"],
    rows,
    [
      "daemon: POST chat sent -> first `token` event read by an SseClient;",
      "direct: the very request the daemon sent to the provider, replayed with fetch().",
      "to provider = until the fake provider writes the first chunk; back = from that write to the client.",
      "History seeded with SessionStore.appendMessage (not by running turns); each measured turn adds 2 messages.",
    ],
  );
}
