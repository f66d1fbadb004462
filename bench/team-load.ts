/**
 * Section 12, a team under load: 3 daemons on one PostgreSQL database, 20 sessions whose turns run at once (session k
 * on daemon k mod 3), each watched by 10 clients spread over the three daemons. Every client must get every token
 * exactly once. The baseline is the same 20 × 10 on one daemon on SQLite, in the same run.
 */

import { pgCluster } from "../test/support/postgres.js";
import type { ChatRequestBody, FakeProvider } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";
import { type BenchDaemon, bootDaemon } from "./lib/daemon.js";
import { int, ms, printTable, type Summary, summarize } from "./lib/stats.js";
import { latencies, missing, newReception, type Reception, recordTurn, stampedTurn } from "./lib/streams.js";

export interface LoadRun {
  all: Summary;
  /** Clients of the daemon that runs the turn, and clients of the others. */
  owner: Summary;
  others: Summary;
  received: number;
  expected: number;
  duplicates: number;
}

export interface TeamLoadResult {
  daemons: number;
  sessions: number;
  clients: number;
  n: number;
  gapMs: number;
  sqlite: LoadRun;
  postgres: LoadRun;
}

const lastUserText = (body: ChatRequestBody): string => {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
};

/** `sessions` turns at once on `daemons`, each watched by `clients` clients round the daemons. */
async function loadRun(
  fake: FakeProvider,
  daemons: BenchDaemon[],
  cwd: string,
  shape: { sessions: number; clients: number; n: number; gapMs: number },
): Promise<LoadRun> {
  const k = daemons.length;
  const ids = await Promise.all(
    Array.from({ length: shape.sessions }, (_, s) => (daemons[s % k] as BenchDaemon).api.createSession({ cwd })),
  );
  const watchers: Array<{ session: number; owner: boolean; client: SseClient; got: Reception }> = [];
  for (let s = 0; s < shape.sessions; s++) {
    for (let j = 0; j < shape.clients; j++) {
      const d = (s + j) % k;
      const client = await (daemons[d] as BenchDaemon).api.sse(`/sessions/${ids[s]}/events`);
      watchers.push({ session: s, owner: d === s % k, client, got: newReception(shape.n) });
    }
  }
  for (const w of watchers) await w.client.waitForType("status");
  const sent: Float64Array[] = [];
  for (let s = 0; s < shape.sessions; s++) {
    const t = stampedTurn(shape.n, shape.gapMs);
    sent.push(t.sent);
    const tag = `load session ${s}.`;
    fake.scriptFor((body) => lastUserText(body) === tag, t.turn);
  }
  const done = watchers.map((w) => recordTurn(w.client, w.got, { trim: true, timeoutMs: 300_000 }));
  const posted = await Promise.all(
    ids.map((id, s) =>
      (daemons[s % k] as BenchDaemon).api.post(`/sessions/${id}/chat`, { text: `load session ${s}.` }),
    ),
  );
  const refused = posted.find((r) => r.status !== 202);
  if (refused) throw new Error(`chat: ${refused.status} ${refused.text}`);
  await Promise.all(done);
  for (const w of watchers) w.client.close();
  const all: number[] = [];
  const owner: number[] = [];
  const others: number[] = [];
  let received = 0;
  let duplicates = 0;
  for (const w of watchers) {
    const lat = latencies(sent[w.session] as Float64Array, w.got);
    for (const l of lat) all.push(l);
    for (const l of lat) (w.owner ? owner : others).push(l);
    received += shape.n - missing(w.got);
    duplicates += w.got.duplicates;
  }
  return {
    all: summarize(all),
    owner: summarize(owner),
    others: summarize(others),
    received,
    expected: watchers.length * shape.n,
    duplicates,
  };
}

export async function teamLoadBench(
  fake: FakeProvider,
  cwd: string,
  shape: { daemons: number; sessions: number; clients: number; n: number; gapMs: number },
): Promise<TeamLoadResult> {
  const solo = await bootDaemon({ providerUrl: fake.url });
  let sqlite: LoadRun;
  try {
    sqlite = await loadRun(fake, [solo], cwd, shape);
  } finally {
    await solo.cleanup();
  }
  const url = await (await pgCluster()).createDatabase(undefined, { migrated: true });
  const team: BenchDaemon[] = [];
  try {
    for (let i = 0; i < shape.daemons; i++) {
      team.push(await bootDaemon({ providerUrl: fake.url, env: { AGENTD_DATABASE_URL: url } }));
    }
    const postgres = await loadRun(fake, team, cwd, shape);
    return { ...shape, sqlite, postgres };
  } finally {
    await Promise.all(team.map((d) => d.cleanup()));
  }
}

export function printTeamLoad(r: TeamLoadResult): void {
  const row = (label: string, run: LoadRun, s: Summary, counts: boolean) => [
    label,
    counts ? `${int(run.received)}/${int(run.expected)}` : "",
    counts ? int(run.duplicates) : "",
    ms(s.p50),
    ms(s.p99),
    ms(s.max),
  ];
  printTable(
    `12. team under load: ${r.daemons} daemons × ${r.sessions} sessions × ${r.clients} clients, ` +
      `${int(r.n)} tokens per turn, ${r.gapMs} ms apart, all turns at once`,
    ["path", "received", "duplicated", "p50", "p99", "max"],
    [
      row("one daemon on SQLite, every client (baseline)", r.sqlite, r.sqlite.all, true),
      row(`${r.daemons} daemons on PostgreSQL, every client`, r.postgres, r.postgres.all, true),
      row("  clients of the daemon running the turn", r.postgres, r.postgres.owner, false),
      row("  clients of the other daemons", r.postgres, r.postgres.others, false),
    ],
    [
      "Latency: the provider writing a token -> the client parsing its frame. Daemons, provider and clients share this process.",
      `Every token exactly once: ${
        r.sqlite.received === r.sqlite.expected &&
        r.postgres.received === r.postgres.expected &&
        r.sqlite.duplicates + r.postgres.duplicates === 0
          ? "yes"
          : "NO"
      }.`,
    ],
  );
}
