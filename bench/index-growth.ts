/**
 * Section 4d: the event loop while the message index grows. Messages appended one by one to a session of a fresh
 * SQLite store, each awaited until durable as a turn awaits it, with the event loop's delay sampled every
 * millisecond: a write that merges the full-text index's segments inside itself stops every session's stream for
 * as long. The store as it runs (segments merged in small steps between writes, plugins/storage-sqlite/index-merger.ts)
 * next to the same store with FTS5 merging inside the writes (`automerge = 4`, FTS5's default and the store before).
 */
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import Database from "better-sqlite3";
import { openSqliteStore } from "../plugins/storage-sqlite/store.js";
import { now } from "./lib/clock.js";
import { tempDir } from "./lib/daemon.js";
import { int, ms, printTable } from "./lib/stats.js";
import { record } from "./storage.js";

interface LoopFigures {
  p99: number;
  p999: number;
  max: number;
  seconds: number;
}

export interface IndexGrowthResult {
  messages: number;
  between: LoopFigures;
  inside: LoopFigures;
}

/** Text like a conversation's: 60 words from a 20,000-word vocabulary, common words far more often. */
function texts(): () => string {
  const vocabulary = Array.from({ length: 20_000 }, (_, i) => `w${((i * 7919) % 100_003).toString(36)}x${i % 7}`);
  let seed = 1;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  return () => Array.from({ length: 60 }, () => vocabulary[Math.floor(next() ** 2 * vocabulary.length)]).join(" ");
}

async function appendAll(messages: number, mergeInside: boolean): Promise<LoopFigures> {
  const file = join(tempDir("agentd-bench-index-"), "agentd.db");
  openSqliteStore(file).close();
  if (mergeInside) {
    const db = new Database(file);
    db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 4)");
    db.close();
  }
  const store = openSqliteStore(file);
  try {
    const session = record(0, "/");
    store.createSession(session);
    const text = texts();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const t0 = now();
    for (let i = 0; i < messages; i++) {
      await store.appendMessage(session.id, { role: i % 2 === 0 ? "user" : "assistant", content: text() });
    }
    await store.indexMerged();
    delay.disable();
    const f = (ns: number) => ns / 1e6;
    return {
      p99: f(delay.percentile(99)),
      p999: f(delay.percentile(99.9)),
      max: f(delay.max),
      seconds: (now() - t0) / 1000,
    };
  } finally {
    store.close();
  }
}

export async function indexGrowthBench(messages: number): Promise<IndexGrowthResult> {
  const inside = await appendAll(messages, true);
  const between = await appendAll(messages, false);
  return { messages, between, inside };
}

export function printIndexGrowth(r: IndexGrowthResult): void {
  const row = (label: string, f: LoopFigures) => [label, ms(f.p99), ms(f.p999), ms(f.max), f.seconds.toFixed(1)];
  printTable(
    `4d. The event loop while ${int(r.messages)} messages are appended one by one (SQLite; delay in ms)`,
    ["index merged", "p99", "p99.9", "max", "seconds"],
    [row("inside the writes (FTS5 automerge; baseline)", r.inside), row("between the writes (the store)", r.between)],
    ["The delay is how late a 1 ms timer ran: every session's stream waits as long. It grows with the index."],
  );
}
