/**
 * Section 11: the team server's store (issue 25). The same figures on the embedded SQLite store and on PostgreSQL
 * (a throwaway cluster on this machine, as the tests start it: test/support/postgres.ts), interleaved: the append of
 * one message as a turn writes it (settled: durable), and the first page of the listing of 1,000 sessions over HTTP.
 */

import { type SessionStore, SessionStoreToken } from "../core/store.js";
import { pgCluster } from "../test/support/postgres.js";
import { now } from "./lib/clock.js";
import { type BenchDaemon, bootDaemon } from "./lib/daemon.js";
import { ms, printTable, type Summary, summarize } from "./lib/stats.js";
import { record } from "./storage.js";

const SESSIONS = 1000;

export interface TeamStoreResult {
  append: { sqlite: Summary; postgres: Summary };
  list: { sqlite: Summary; postgres: Summary };
  appends: number;
}

async function seeded(
  env: Record<string, string>,
  cwd: string,
): Promise<{ bd: BenchDaemon; store: SessionStore; id: string }> {
  const bd = await bootDaemon({ env });
  const store = bd.daemon.services.get(SessionStoreToken);
  for (let i = 0; i < SESSIONS; i++) await store.createSession(record(i, cwd));
  const id = await bd.api.createSession({ cwd, title: "appends" });
  return { bd, store, id };
}

export async function teamStoreBench(cwd: string, appends: number, lists: number): Promise<TeamStoreResult> {
  const pg = await pgCluster();
  const engines = {
    sqlite: await seeded({}, cwd),
    postgres: await seeded({ AGENTD_DATABASE_URL: await pg.createDatabase(undefined, { migrated: true }) }, cwd),
  };
  try {
    const append = { sqlite: [] as number[], postgres: [] as number[] };
    const list = { sqlite: [] as number[], postgres: [] as number[] };
    for (let i = 0; i < appends; i++) {
      for (const name of ["sqlite", "postgres"] as const) {
        const e = engines[name];
        const t0 = now();
        await e.store.appendMessage(e.id, { role: i % 2 ? "assistant" : "user", content: `message ${i} of the bench` });
        append[name].push(now() - t0);
      }
    }
    for (let i = 0; i < lists; i++) {
      for (const name of ["sqlite", "postgres"] as const) {
        const t0 = now();
        const res = await engines[name].bd.api.get("/sessions?limit=50");
        list[name].push(now() - t0);
        if (res.status !== 200 || res.body.total !== SESSIONS + 1) throw new Error(`${name} listing: ${res.status}`);
      }
    }
    const tail = (xs: number[]) => summarize(xs.slice(5));
    return {
      append: { sqlite: tail(append.sqlite), postgres: tail(append.postgres) },
      list: { sqlite: tail(list.sqlite), postgres: tail(list.postgres) },
      appends,
    };
  } finally {
    await engines.sqlite.bd.cleanup();
    await engines.postgres.bd.cleanup();
  }
}

export function printTeamStore(r: TeamStoreResult): void {
  const row = (label: string, s: { sqlite: Summary; postgres: Summary }) => [
    label,
    `${ms(s.sqlite.p50)} / ${ms(s.sqlite.p99)}`,
    `${ms(s.postgres.p50)} / ${ms(s.postgres.p99)}`,
  ];
  printTable(
    "11. team server store: SQLite next to PostgreSQL (ms, p50 / p99)",
    ["figure", "SQLite (embedded)", "PostgreSQL (local cluster)"],
    [
      row(`append one message, settled (durable), ${r.appends} each`, r.append),
      row(`GET /sessions?limit=50 of ${SESSIONS.toLocaleString("en-US")} sessions`, r.list),
    ],
    [
      "Interleaved in one process. The PostgreSQL cluster is the tests' throwaway one on this machine, with fsync off: its",
      "appends skip the disk flush SQLite's do (fdatasync of the WAL), and a network server adds its round trip.",
    ],
  );
}
