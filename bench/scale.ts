/**
 * Section 8: a daemon that stays fast as its work grows (issue 27, part 2). The same figures on a home with few
 * sessions (the baseline) and on one with many, in the same run: restart to ready (the daemon started on the home
 * until its first GET /sessions?limit=50 is answered), the first page of the listing, and a search for a word in a
 * fifth of the titles and for one in a single session. On the embedded SQLite store (the sessions written through
 * the store) and on PostgreSQL (a throwaway cluster as the tests start it; the rows inserted in batches of 10,000).
 */
import pg from "pg";
import { SessionStoreToken } from "../core/store.js";
import type { SqliteSessionStore } from "../plugins/storage-sqlite/store.js";
import { pgCluster } from "../test/support/postgres.js";
import { type FloorTimed, timeAgainstFloor } from "./floor.js";
import { now } from "./lib/clock.js";
import { bootDaemon, tempDir } from "./lib/daemon.js";
import { int, ms, printTable, type Summary, summarize } from "./lib/stats.js";
import { spawnAgentd } from "./process.js";
import { record } from "./storage.js";

/** The bench's sessions: a word in a fifth of the titles (`delta-3`), one in a single title. */
function seedRecord(i: number, count: number, cwd: string) {
  const rare = i === Math.floor(count / 2);
  return { ...record(i, cwd), title: rare ? `needle-${count} session` : `session ${i} delta-${i % 5}` };
}

/** Where a scale run keeps its sessions: a home (SQLite), or a home and a database. */
interface ScaleStore {
  home: string;
  env: Record<string, string>;
}

async function seedSqlite(count: number, cwd: string): Promise<ScaleStore> {
  const home = tempDir("agentd-bench-scale-");
  const bd = await bootDaemon({ home });
  try {
    const store = bd.daemon.services.get(SessionStoreToken) as SqliteSessionStore;
    store.batch(() => {
      for (let i = 0; i < count; i++) store.createSession(seedRecord(i, count, cwd));
    });
    // As a daemon that created them one by one leaves its indexes: merged between the writes.
    await store.indexMerged();
  } finally {
    await bd.cleanup();
  }
  return { home, env: {} };
}

async function seedPostgres(url: string, count: number, cwd: string): Promise<ScaleStore> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let from = 0; from < count; from += 10_000) {
      const rows = Array.from({ length: Math.min(10_000, count - from) }, (_, k) => seedRecord(from + k, count, cwd));
      const col = <K extends keyof (typeof rows)[0]>(k: K) => rows.map((r) => r[k]);
      await c.query(
        `INSERT INTO sessions (id, title, pinned, persona, model, cwd, usage, created_at, updated_at)
          SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[])`,
        [
          col("id"),
          col("title"),
          rows.map((r) => (r.pinned ? 1 : 0)),
          col("persona"),
          col("model"),
          col("cwd"),
          rows.map((r) => JSON.stringify(r.usage)),
          col("createdAt"),
          col("updatedAt"),
        ],
      );
    }
    await c.query("ANALYZE sessions");
  } finally {
    await c.end();
  }
  return { home: tempDir("agentd-bench-scale-"), env: { AGENTD_DATABASE_URL: url } };
}

export interface ScaleFigures {
  ready: Summary;
  list: Summary;
  common: Summary;
  rare: Summary;
}

export interface ScaleResult {
  store: "sqlite" | "postgres";
  small: number;
  big: number;
  figures: { small: ScaleFigures; big: ScaleFigures };
}

async function measure(at: ScaleStore, count: number, restarts: number, reps: number): Promise<ScaleFigures> {
  const ready: number[] = [];
  const times = { list: [] as number[], common: [] as number[], rare: [] as number[] };
  const paths = {
    list: "/sessions?limit=50",
    common: "/sessions?q=delta-3&limit=50",
    rare: `/sessions?q=needle-${count}&limit=50`,
  };
  for (let r = 0; r < restarts; r++) {
    const t0 = now();
    const bd = await bootDaemon(at);
    try {
      const first = await bd.api.get(paths.list);
      ready.push(now() - t0);
      if (first.status !== 200 || first.body.total !== count) throw new Error(`listing: ${first.status}`);
      for (const key of ["list", "common", "rare"] as const) {
        for (let i = 0; i < reps; i++) {
          const t = now();
          const res = await bd.api.get(paths[key]);
          times[key].push(now() - t);
          if (res.status !== 200) throw new Error(`GET ${paths[key]}: ${res.status}`);
          if (key === "rare" && res.body.total !== 1) throw new Error(`rare search found ${res.body.total}`);
        }
      }
    } finally {
      await bd.cleanup();
    }
  }
  return {
    ready: summarize(ready),
    list: summarize(times.list),
    common: summarize(times.common),
    rare: summarize(times.rare),
  };
}

export async function scaleBench(
  cwd: string,
  small: number,
  big: number,
  store: "sqlite" | "postgres",
): Promise<ScaleResult> {
  let stores: { small: ScaleStore; big: ScaleStore };
  if (store === "sqlite") stores = { small: await seedSqlite(small, cwd), big: await seedSqlite(big, cwd) };
  else {
    const cluster = await pgCluster();
    const db = () => cluster.createDatabase(undefined, { migrated: true });
    stores = { small: await seedPostgres(await db(), small, cwd), big: await seedPostgres(await db(), big, cwd) };
  }
  // Interleaved, so the machine's load weighs on both alike.
  const runs = { small: [] as ScaleFigures[], big: [] as ScaleFigures[] };
  for (let round = 0; round < 3; round++) {
    runs.small.push(await measure(stores.small, small, 1, 10));
    runs.big.push(await measure(stores.big, big, 1, 10));
  }
  const merge = (list: ScaleFigures[]): ScaleFigures => {
    const pick = (k: keyof ScaleFigures) => summarize(list.map((f) => f[k].p50));
    return { ready: pick("ready"), list: pick("list"), common: pick("common"), rare: pick("rare") };
  };
  return { store, small, big, figures: { small: merge(runs.small), big: merge(runs.big) } };
}

export function printScale(r: ScaleResult): void {
  const { small, big } = r.figures;
  const row = (label: string, k: keyof ScaleFigures) => [label, ms(small[k].p50), ms(big[k].p50)];
  printTable(
    `8. scale on ${r.store === "sqlite" ? "SQLite" : "PostgreSQL"}: ${int(r.small)} sessions (baseline) vs ${int(r.big)}; ` +
      "median of 3 rounds (p50 of 10 requests each); ms",
    ["figure", `${int(r.small)}`, `${int(r.big)}`],
    [
      row("restart to ready (start -> first GET /sessions answered)", "ready"),
      row("GET /sessions?limit=50", "list"),
      row("GET /sessions?q=<word in a fifth of the titles>&limit=50", "common"),
      row("GET /sessions?q=<word in one title>&limit=50", "rare"),
    ],
    ["Goal: flat in the number of sessions (the two columns alike)."],
  );
}

export interface WholeReadResult {
  messages: number;
  recent: Summary;
  whole: Summary;
  /** The daemon's process CPU per whole read (10 ms ticks, averaged over the reads, warm-ups included). */
  wholeCpu: number;
  bytes: number;
  /** The same answers from a bare node:http process, called in turn with the daemon (the floor). */
  recentBare: Summary;
  wholeBare: Summary;
}

/** A home with one session of `messages` messages (turns of a user message, a tool call, its result and an answer). */
async function seedLongSession(cwd: string, messages: number): Promise<{ home: string; id: string }> {
  const home = tempDir("agentd-bench-long-");
  const bd = await bootDaemon({ home });
  try {
    const id = await bd.api.createSession({ cwd, title: "a long session" });
    const store = bd.daemon.services.get(SessionStoreToken) as SqliteSessionStore;
    store.batch(() => {
      for (let i = 0; i < messages; i++) {
        const call = `c${i - (i % 4) + 1}`;
        const path = `src/module${i % 50}.ts`;
        if (i % 4 === 0) store.appendMessage(id, { role: "user", content: `please look at ${path} (${i})` });
        else if (i % 4 === 1)
          store.appendMessage(id, {
            role: "assistant",
            content: "",
            toolCalls: [{ id: call, name: "read", arguments: JSON.stringify({ path }) }],
          });
        else if (i % 4 === 2)
          store.appendMessage(id, {
            role: "tool",
            toolCallId: call,
            toolName: "read",
            content: "export const x = 1;\n".repeat(40),
          });
        else store.appendMessage(id, { role: "assistant", content: `Done with ${path}. `.repeat(20) });
      }
    });
    return { home, id };
  } finally {
    await bd.cleanup();
  }
}

/**
 * The session read whole (`?turns=<all>`) next to its first page (`GET /sessions/{id}`, the recent turns), as a
 * client sees them: `agentd serve` in its own process, the requests (and the client's parse of the JSON) here.
 */
export async function wholeReadBench(cwd: string, messages: number, reps: number): Promise<WholeReadResult> {
  const { home, id } = await seedLongSession(cwd, messages);
  const daemon = await spawnAgentd(home);
  try {
    const [recent, whole] = (await timeAgainstFloor(
      daemon,
      [`/sessions/${id}`, `/sessions/${id}?turns=${messages}`],
      reps,
    )) as [FloorTimed, FloorTimed];
    return {
      messages,
      recent: recent.served,
      whole: whole.served,
      wholeCpu: whole.cpu,
      bytes: whole.bytes,
      recentBare: recent.bare,
      wholeBare: whole.bare,
    };
  } finally {
    await daemon.stop();
  }
}

export function printWholeRead(r: WholeReadResult): void {
  printTable(
    `8b. a ${int(r.messages)}-message session over HTTP (ms; the whole read is ${int(r.bytes / 1024)} KiB of JSON)`,
    ["figure", "p50", "p99", "same bytes, bare node: p50"],
    [
      ["GET /sessions/{id} (recent turns, baseline)", ms(r.recent.p50), ms(r.recent.p99), ms(r.recentBare.p50)],
      [`GET /sessions/{id}?turns=${r.messages} (whole)`, ms(r.whole.p50), ms(r.whole.p99), ms(r.wholeBare.p50)],
      ["daemon process CPU per whole read (mean)", ms(r.wholeCpu), "", ""],
    ],
    [
      "Goal: the whole read <= 150 ms (issue 27). agentd serve in its own process; the client's JSON parse is " +
        "included. Same bytes, bare node: the daemon's answer sent by a bare node:http process, called in turn (the " +
        "floor).",
    ],
  );
}
