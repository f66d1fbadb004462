/**
 * Section 10, a team: two daemons on one PostgreSQL database (the test harness's throwaway cluster). One turn runs on
 * A; a client of A and a client of B watch it. Per token: when it left the provider, when each client had it. The
 * client on A is the baseline; the figure is what B's client adds (the doorbell, B's read of the rows). The same
 * turn on one daemon on SQLite is shown for reference: what the database's append adds to A's own client.
 */

import { pgCluster } from "../test/support/postgres.js";
import type { FakeProvider } from "../testing/fake-provider.js";
import { type BenchDaemon, bootDaemon } from "./lib/daemon.js";
import { int, ms, printTable, type Summary, signedMs, summarize } from "./lib/stats.js";
import { latencies, missing, newReception, type Reception, recordTurn, stampedTurn } from "./lib/streams.js";

export interface TeamResult {
  n: number;
  gapMs: number;
  sqlite: Summary;
  onA: Summary;
  onB: Summary;
  /** Per token: B's client's latency minus A's client's. */
  added: Summary;
  received: { sqlite: number; onA: number; onB: number };
  duplicates: number;
}

/** One turn on `owner`, watched by one client of each daemon in `watchers`; the receptions, in that order. */
async function watchTurn(
  fake: FakeProvider,
  owner: BenchDaemon,
  watchers: BenchDaemon[],
  cwd: string,
  n: number,
  gapMs: number,
): Promise<{ sent: Float64Array; got: Reception[] }> {
  const id = await owner.api.createSession({ cwd });
  const clients = await Promise.all(watchers.map((d) => d.api.sse(`/sessions/${id}/events`)));
  for (const c of clients) await c.waitForType("status");
  const t = stampedTurn(n, gapMs);
  fake.script(t.turn);
  const got = clients.map(() => newReception(n));
  const done = clients.map((c, i) => recordTurn(c, got[i] as Reception));
  const res = await owner.api.post(`/sessions/${id}/chat`, { text: "stream" });
  if (res.status !== 202) throw new Error(`chat: ${res.status} ${res.text}`);
  await Promise.all(done);
  for (const c of clients) c.close();
  return { sent: t.sent, got };
}

export async function teamBench(fake: FakeProvider, cwd: string, n: number, gapMs: number): Promise<TeamResult> {
  const url = await (await pgCluster()).createDatabase(undefined, { migrated: true });
  const solo = await bootDaemon({ providerUrl: fake.url });
  let sqlite: { sent: Float64Array; got: Reception[] };
  try {
    await watchTurn(fake, solo, [solo], cwd, 200, 0);
    sqlite = await watchTurn(fake, solo, [solo], cwd, n, gapMs);
  } finally {
    await solo.cleanup();
  }
  const env = { AGENTD_DATABASE_URL: url };
  const a = await bootDaemon({ providerUrl: fake.url, env });
  const b = await bootDaemon({ providerUrl: fake.url, env });
  try {
    await watchTurn(fake, a, [a, b], cwd, 200, 0);
    const { sent, got } = await watchTurn(fake, a, [a, b], cwd, n, gapMs);
    const [ra, rb] = got as [Reception, Reception];
    const added: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = (rb.got[i] as number) - (ra.got[i] as number);
      if (Number.isFinite(d)) added.push(d);
    }
    const sq = sqlite.got[0] as Reception;
    return {
      n,
      gapMs,
      sqlite: summarize(latencies(sqlite.sent, sq)),
      onA: summarize(latencies(sent, ra)),
      onB: summarize(latencies(sent, rb)),
      added: summarize(added),
      received: { sqlite: n - missing(sq), onA: n - missing(ra), onB: n - missing(rb) },
      duplicates: sq.duplicates + ra.duplicates + rb.duplicates,
    };
  } finally {
    await Promise.all([a.cleanup(), b.cleanup()]);
  }
}

export function printTeam(r: TeamResult): void {
  const row = (label: string, got: number, s: Summary) => [
    label,
    `${int(got)}/${int(r.n)}`,
    ms(s.p50),
    ms(s.p99),
    ms(s.max),
  ];
  printTable(
    `10. team: a turn on A (PostgreSQL) watched from A and from B, ${int(r.n)} tokens, ${r.gapMs} ms apart`,
    ["path", "received", "p50", "p99", "max"],
    [
      row("one daemon on SQLite: its client (reference)", r.received.sqlite, r.sqlite),
      row("A on PostgreSQL: A's client (baseline)", r.received.onA, r.onA),
      row("A on PostgreSQL: B's client", r.received.onB, r.onB),
      [
        "added for B's client, per token (B - A)",
        "",
        signedMs(r.added.p50),
        signedMs(r.added.p99),
        signedMs(r.added.max),
      ],
    ],
    [
      "Latency: the provider writing a token -> the client parsing its frame. Clients and daemons share this process.",
      `Goal: B's client p99 at most 10 ms more than A's: ${r.onB.p99 - r.onA.p99 <= 10 ? "met" : "NOT met"} ` +
        `(${signedMs(r.onB.p99 - r.onA.p99)}). Duplicated tokens: ${int(r.duplicates)}.`,
    ],
  );
}
