import { join } from "node:path";
import { emptyUsage, type SessionRecord } from "../core/session-types.js";
import { newSessionId } from "../core/sessions.js";
import { type SessionStore, SessionStoreToken } from "../core/store.js";
import { openSqliteStore } from "../plugins/storage-sqlite/store.js";
import { startTestDaemon } from "../testing/daemon.js";
import { type FloorTimed, timeAgainstFloor } from "./floor.js";
import { now } from "./lib/clock.js";
import { bootDaemon } from "./lib/daemon.js";
import { int, ms, printTable, type Summary, summarize } from "./lib/stats.js";
import { timeGet, WARMUP } from "./lib/timed-get.js";
import { spawnAgentd } from "./process.js";

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];

/** A session record for the benches, written through the store directly (titles cycle through WORDS). */
export function record(i: number, cwd: string): SessionRecord {
  const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
  return {
    id: newSessionId(),
    title: `bench session ${i} ${WORDS[i % WORDS.length]}`,
    pinned: i % 500 === 0,
    persona: "default",
    model: "fake-model",
    cwd,
    mode: "build",
    isSandbox: false,
    shareToken: null,
    messageCount: 0,
    usage: emptyUsage(),
    createdAt: at,
    updatedAt: at,
    meta: {},
  };
}

const LIST_PATHS = [
  ["GET /server/identity (floor)", "/server/identity"],
  ["GET /sessions?limit=50", "/sessions?limit=50"],
  ["GET /sessions?q=delta&limit=50", "/sessions?q=delta&limit=50"],
  ["GET /sessions (plain array, all)", "/sessions"],
] as const;

export interface ListResult {
  /**
   * `bigCpu`: CPU time of the whole bench process (daemon and client) per request, less sensitive to load.
   * `spawned`: the larger count against `agentd serve` in its own process, as a client meets it (the goals' figure);
   * `spawnedCpu`: that daemon's CPU per request (mean, in 10 ms ticks).
   * `bare`: the same client against a bare node:http process sending the very answers `agentd serve` gave (the floor:
   * what a client's reading and parsing of them costs).
   */
  rows: Array<{
    label: string;
    small: Summary;
    big: Summary;
    bigCpu: Summary;
    validated: Summary;
    bigBytes: number;
    spawned: Summary;
    spawnedCpu: number;
    bare: Summary;
  }>;
  insertMs: number;
  count: number;
}

/** GET /sessions at 10 sessions (baseline) and at `count`, the sessions written through the store directly. */
export async function listBench(cwd: string, count: number, reps: number): Promise<ListResult> {
  const bd = await bootDaemon();
  const small = new Map<string, Summary>();
  const big = new Map<string, { s: Summary; bytes: number; cpu: Summary }>();
  let insertMs = 0;
  try {
    const store: SessionStore = bd.daemon.services.get(SessionStoreToken);
    for (let i = 0; i < 10; i++) store.createSession(record(i, cwd));
    for (const [label, path] of LIST_PATHS) small.set(label, (await timeGet(bd.api, path, reps)).s);
    const t0 = now();
    for (let i = 10; i < count; i++) store.createSession(record(i, cwd));
    insertMs = now() - t0;
    for (const [label, path] of LIST_PATHS) big.set(label, await timeGet(bd.api, path, reps));
  } finally {
    await bd.cleanup();
  }
  // The same home under the test harness, which also validates every response against its schema.
  const td = await startTestDaemon({ home: bd.home });
  const validated = new Map<string, Summary>();
  try {
    for (const [label, path] of LIST_PATHS) validated.set(label, (await timeGet(td, path, Math.min(reps, 10))).s);
  } finally {
    await td.stop();
  }
  // And under `agentd serve`, a client of it here: in one process the client's garbage and allocations (a 2.7 MiB
  // answer parsed) and the daemon's share one heap and one malloc, and move each other's figures.
  const daemon = await spawnAgentd(bd.home);
  let spawned: FloorTimed[];
  try {
    spawned = await timeAgainstFloor(
      daemon,
      LIST_PATHS.map(([, path]) => path),
      reps,
    );
  } finally {
    await daemon.stop();
  }
  return {
    insertMs,
    count,
    rows: LIST_PATHS.map(([label], i) => ({
      label,
      small: small.get(label) as Summary,
      big: big.get(label)?.s as Summary,
      bigCpu: big.get(label)?.cpu as Summary,
      validated: validated.get(label) as Summary,
      bigBytes: big.get(label)?.bytes ?? 0,
      spawned: spawned[i]?.served as Summary,
      spawnedCpu: spawned[i]?.cpu ?? Number.NaN,
      bare: spawned[i]?.bare as Summary,
    })),
  };
}

export function printList(r: ListResult, reps: number): void {
  printTable(
    `4b. Session list over HTTP (ms, p50 of ${reps} calls after ${WARMUP} warm-up calls)`,
    [
      "request",
      "10 sessions",
      `${int(r.count)} sessions`,
      "p99",
      "ratio",
      "CPU p50",
      "response",
      "with test validation",
      "agentd serve: p50 / its CPU",
      "same bytes, bare node",
    ],
    r.rows.map((x) => [
      x.label,
      ms(x.small.p50),
      ms(x.big.p50),
      ms(x.big.p99),
      `${(x.big.p50 / x.small.p50).toFixed(1)}x`,
      ms(x.bigCpu.p50),
      `${(x.bigBytes / 1024).toFixed(0)} KiB`,
      ms(x.validated.p50),
      `${ms(x.spawned.p50)} / ${ms(x.spawnedCpu)}`,
      ms(x.bare.p50),
    ]),
    [
      `${int(r.count)} sessions written with SessionStore.createSession in ${ms(r.insertMs)} ms ` +
        `(${ms((r.insertMs * 1000) / (r.count - 10))} µs each).`,
      "CPU p50: process CPU time per request at the larger count (daemon and the bench's client together).",
      "with test validation: same home under startTestDaemon, which validates responses against their schemas.",
      "agentd serve: same home, the daemon in its own process (the goals' figure), its CPU per request (10 ms ticks).",
      "same bytes, bare node: agentd serve's answers sent by a bare node:http process, called in turn with it (the floor).",
    ],
  );
}

export interface AppendResult {
  small: Summary;
  big: Summary;
  readSmall: Summary;
  readBig: Summary;
  /** The first read of each session on a fresh connection: no in-memory working set yet (SQLite only). */
  coldSmall: Summary;
  coldBig: Summary;
  bigCount: number;
  appends: number;
}

/** SessionStore.appendMessage on a session holding 10 messages vs one holding `bigCount`, interleaved. */
export async function appendBench(cwd: string, bigCount: number, appends: number): Promise<AppendResult> {
  const bd = await bootDaemon();
  try {
    const store: SessionStore = bd.daemon.services.get(SessionStoreToken);
    const a = record(0, cwd);
    const b = record(1, cwd);
    store.createSession(a);
    store.createSession(b);
    const msg = (i: number) => ({
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: `message ${i}: the quick brown fox jumps over the lazy dog in src/file${i % 97}.ts`,
    });
    for (let i = 0; i < 10; i++) store.appendMessage(a.id, msg(i));
    for (let i = 0; i < bigCount; i++) store.appendMessage(b.id, msg(i));
    // What every model call of a turn reads: the whole in-context history. Not interleaved: the garbage of a
    // 10,000-row read would land in the timing of the small one.
    const timeReads = (id: string, reps: number) =>
      Array.from({ length: reps }, () => {
        const t0 = process.hrtime.bigint();
        store.contextMessages(id);
        return Number(process.hrtime.bigint() - t0) / 1e6;
      });
    const readSmall = timeReads(a.id, 50);
    const readBig = timeReads(b.id, 20);
    // The store keeps the working sets it has read in memory; a fresh connection shows the first read of a session.
    const timeColdReads = (id: string, reps: number) =>
      Array.from({ length: reps }, () => {
        const fresh = openSqliteStore(join(bd.home, "agentd.db"));
        try {
          const t0 = process.hrtime.bigint();
          fresh.contextMessages(id);
          return Number(process.hrtime.bigint() - t0) / 1e6;
        } finally {
          fresh.close();
        }
      });
    const coldSmall = timeColdReads(a.id, 12);
    const coldBig = timeColdReads(b.id, 7);
    const small: number[] = [];
    const big: number[] = [];
    for (let i = 0; i < appends; i++) {
      for (const [id, out] of [
        [a.id, small],
        [b.id, big],
      ] as const) {
        const t0 = process.hrtime.bigint();
        store.appendMessage(id, msg(i));
        out.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    return {
      small: summarize(small.slice(10)),
      big: summarize(big.slice(10)),
      readSmall: summarize(readSmall.slice(2)),
      readBig: summarize(readBig.slice(2)),
      coldSmall: summarize(coldSmall.slice(2)),
      coldBig: summarize(coldBig.slice(2)),
      bigCount,
      appends,
    };
  } finally {
    await bd.cleanup();
  }
}

export function printAppend(r: AppendResult): void {
  const row = (label: string, s: Summary, l: Summary) => [
    label,
    ms(s.p50),
    ms(s.p99),
    ms(s.mean),
    ms(l.p50),
    `${(l.p50 / s.p50).toFixed(2)}x`,
  ];
  printTable(
    `4c. Message append and context read (ms; SessionStore directly, SQLite on the daemon's home)`,
    ["operation", "at 10 p50", "at 10 p99", "at 10 mean", `at ${int(r.bigCount)} p50`, "ratio"],
    [
      row(`appendMessage (${r.appends} appends each, interleaved: 10 -> ${r.appends + 10} messages)`, r.small, r.big),
      [`  at ${int(r.bigCount)}: p99 ${ms(r.big.p99)}, mean ${ms(r.big.mean)}`, "", "", "", "", ""],
      row("contextMessages (whole history read per model call)", r.readSmall, r.readBig),
      row("contextMessages, first read of the session (not yet in memory)", r.coldSmall, r.coldBig),
    ],
  );
}
