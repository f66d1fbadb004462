import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { expect } from "chai";
import { type DaemonProcess, makeTempHome, spawnDaemon } from "../../../testing/daemon.js";
import { type ChatRequestBody, type FakeProvider, startFakeProvider, turn } from "../../../testing/fake-provider.js";
import type { SseClient, SseFrame } from "../../../testing/sse.js";
import asyncStorePlugin from "../async-store.js";
import { type Rng, seededRng } from "./rng.js";

/** Where a cycle kills the daemon. */
export type KillPoint = "after-202" | "streaming" | "tool" | "compaction" | "random" | "announced";
export const KILL_POINTS: KillPoint[] = ["after-202", "streaming", "tool", "compaction", "random", "announced"];

/** The session store of the daemon under test: the built-in SQLite one, or the asynchronous test store on a file. */
export type CrashStore = "sqlite" | "async";

export interface CrashStats {
  cycles: number;
  byPoint: Record<string, number>;
  acceptedTurns: number;
  recoveredEnds: number;
  lostMessages: number;
  /** Messages (and tool results) a live client was shown complete, with their number, that the store lacks. */
  lostAnnounced: number;
  /** How many such announcements were checked. */
  announcedChecked: number;
  integrityFailures: number;
  /** What was lost, for the failure message. */
  losses: string[];
}

interface Accepted {
  sessionId: string;
  clientMessageId: string;
}

const never = new Promise<never>(() => {});
const lastUserText = (b: ChatRequestBody) => JSON.stringify(b.messages.filter((m) => m.role === "user").at(-1) ?? "");
const isSummary = (b: ChatRequestBody) => JSON.stringify(b.messages[0] ?? "").includes("You summarise");

/**
 * SIGKILL at chosen points of turns (the instant after the 202, while streaming, during a tool, during compaction,
 * or after a random delay), restart, and check what the daemon promises: every acknowledged message is stored,
 * every accepted turn has exactly one `end`, no session is left running, `PRAGMA integrity_check` is ok and the
 * event sequence numbers keep growing.
 */
export async function runCrashCycles(opts: {
  cycles: number;
  seed: number;
  points?: KillPoint[];
  store?: CrashStore;
}): Promise<CrashStats> {
  const rng = seededRng(opts.seed);
  const fake = await startFakeProvider();
  const home = makeTempHome("agentd-crash-");
  // A small context window makes the second turn of a "compaction" cycle compact first.
  const config = { provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" }, contextWindow: 1000 };
  writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, ...storeConfig(home, opts.store) }));
  const dbFile = join(home, opts.store === "async" ? ASYNC_DB : "agentd.db");
  const accepted: Accepted[] = [];
  const turnsPerSession = new Map<string, number>();
  const stats: CrashStats = {
    cycles: 0,
    byPoint: {},
    acceptedTurns: 0,
    recoveredEnds: 0,
    lostMessages: 0,
    lostAnnounced: 0,
    announcedChecked: 0,
    integrityFailures: 0,
    losses: [],
  };
  const announced: SseFrame[][] = [];
  const accept = (sessionId: string, clientMessageId: string) => {
    accepted.push({ sessionId, clientMessageId });
    turnsPerSession.set(sessionId, (turnsPerSession.get(sessionId) ?? 0) + 1);
    stats.acceptedTurns++;
  };
  let p: DaemonProcess | undefined;
  try {
    p = await spawnDaemon(home);
    for (let i = 0; i < opts.cycles; i++) {
      const points = opts.points ?? KILL_POINTS;
      const point = points[i % points.length] as KillPoint;
      const tag = `cycle-${i}-${rng.int(1e9)}`;
      const id = (await p.client.post("/sessions", {})).body.id as string;
      const sse = await p.client.sse(`/sessions/${id}/events`);
      try {
        await killDuring(point, p, sse, fake, id, tag, rng, accept);
        await p.exited;
      } finally {
        sse.close();
      }
      // Every frame the client got left the daemon before it died (the kill may land a few frames after the one
      // that triggered it).
      announced.push(sse.frames.slice());
      stats.cycles++;
      stats.byPoint[point] = (stats.byPoint[point] ?? 0) + 1;
      if (!integrityOk(dbFile)) stats.integrityFailures++;
      p = await spawnDaemon(home);
      const check = await verify(p, accepted, turnsPerSession);
      stats.lostMessages += check.lost;
      stats.recoveredEnds = check.recovered;
      const shown = await verifyAnnounced(p, id, announced.at(-1) ?? []);
      stats.announcedChecked += shown.checked;
      stats.lostAnnounced += shown.lost.length;
      stats.losses.push(...shown.lost.map((l) => `cycle ${i} (${point}): ${l}`));
    }
  } finally {
    if (p) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
  return stats;
}

async function killDuring(
  point: KillPoint,
  p: DaemonProcess,
  sse: SseClient,
  fake: FakeProvider,
  id: string,
  tag: string,
  rng: Rng,
  accept: (sessionId: string, clientMessageId: string) => void,
): Promise<void> {
  const mine = (b: ChatRequestBody) => lastUserText(b).includes(tag) && !isSummary(b);
  const chat = async (text: string, cmid: string) => {
    const res = await p.client.post(`/sessions/${id}/chat`, { text, clientMessageId: cmid });
    expect(res.status, res.text).to.equal(202);
    accept(id, cmid);
  };
  const kill = () => p.child.kill("SIGKILL");
  switch (point) {
    case "after-202":
      fake.scriptFor(mine, turn({ content: "never finishes" }, { waitFor: never }));
      await chat(`hello ${tag}`, `${tag}-a`);
      kill();
      return;
    case "streaming":
      fake.scriptFor(mine, turn({ content: `streaming ${tag}` }, { waitFor: never }));
      await chat(`hello ${tag}`, `${tag}-a`);
      await sse.waitForType("token");
      kill();
      return;
    case "tool": {
      const args = { todos: [{ content: tag, status: "in_progress" }] };
      fake.scriptFor(
        mine,
        turn({ toolCall: { id: `call-${tag}`, name: "todo_write", arguments: JSON.stringify(args) } }),
        turn({ content: "after the tool" }, { waitFor: never }),
      );
      await chat(`use a tool ${tag}`, `${tag}-a`);
      await sse.waitForType("tool_start");
      kill();
      return;
    }
    case "compaction": {
      // A first turn that fills the small context window, then a second one that must compact before its call.
      fake.scriptFor(mine, turn({ content: "noted" }));
      await chat(`${tag} ${"long history ".repeat(400)}`, `${tag}-a`);
      await sse.waitForType("end");
      fake.scriptFor(
        (b) => isSummary(b) && JSON.stringify(b).includes(tag),
        turn({ content: "summary" }, { waitFor: never }),
      );
      const summaryAsked = waitForRequest(fake, (b) => isSummary(b) && JSON.stringify(b).includes(tag));
      await chat(`next ${tag}`, `${tag}-b`);
      await summaryAsked;
      kill();
      return;
    }
    case "random": {
      fake.scriptFor(mine, turn({ content: "a" }, { delayMs: rng.int(20) }, { content: "b" }));
      await chat(`hello ${tag}`, `${tag}-a`);
      await new Promise((r) => setTimeout(r, rng.int(40)));
      kill();
      return;
    }
    case "announced": {
      // A turn of several model calls and tool results, killed the moment the client is shown one of its stored
      // things (the user message, an assistant message, a tool result), chosen at random.
      const todo = (n: number) => ({
        toolCall: {
          id: `call-${tag}-${n}`,
          name: "todo_write",
          arguments: JSON.stringify({ todos: [{ content: `${tag} ${n}`, status: "completed" }] }),
        },
      });
      fake.scriptFor(
        mine,
        turn({ content: `first ${tag}` }, todo(1)),
        turn({ content: `second ${tag}` }, todo(2)),
        turn({ content: `done ${tag}` }),
      );
      const kinds = ["user_message", "assistant_message", "tool_end"];
      const kind = kinds[rng.int(kinds.length)] as string;
      const nth = kind === "user_message" ? 0 : rng.int(kind === "tool_end" ? 2 : 3);
      const shown = sse.waitFor((f) => f.json?.type === kind && sse.ofType(kind).indexOf(f) === nth, 15_000);
      await chat(`work ${tag}`, `${tag}-a`);
      await shown;
      kill();
      return;
    }
  }
}

const ASYNC_DB = "async.db";

/** The config that puts the asynchronous test store (on a file in the home, so it outlives a SIGKILL) in place. */
export function storeConfig(home: string, store: CrashStore | undefined): Record<string, unknown> {
  if (store !== "async") return {};
  const { manifest } = asyncStorePlugin;
  const pkg = join(home, "store-plugin");
  mkdirSync(pkg);
  writeFileSync(
    join(pkg, "package.json"),
    JSON.stringify({
      name: "agentd-test-async-store",
      main: fileURLToPath(new URL("../async-store.js", import.meta.url)),
      agentd: { id: manifest.id, version: manifest.version, provides: manifest.provides, capabilities: ["storage"] },
    }),
  );
  return {
    plugins: [pkg],
    disabledPlugins: ["storage-sqlite"],
    pluginCapabilities: { [manifest.id]: ["storage"] },
    pluginOptions: { [manifest.id]: { file: ASYNC_DB } },
  };
}

/** Resolves when the fake provider has received a request matching `pred` (polled: it is another component). */
async function waitForRequest(fake: FakeProvider, pred: (b: ChatRequestBody) => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!fake.requests.some(pred)) {
    if (Date.now() > deadline)
      throw new Error(
        `the expected provider request never arrived: ${fake.requests.map((b) => JSON.stringify(b.messages).slice(0, 300)).join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 5));
  }
}

function integrityOk(file: string): boolean {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.pragma("integrity_check") as Array<{ integrity_check: string }>;
    return rows.length === 1 && rows[0]?.integrity_check === "ok";
  } finally {
    db.close();
  }
}

interface Stored {
  seq: number;
  type: string;
  payload: { recovered?: boolean };
}

async function verify(
  p: DaemonProcess,
  accepted: Accepted[],
  turnsPerSession: Map<string, number>,
): Promise<{ lost: number; recovered: number }> {
  let lost = 0;
  let recovered = 0;
  const bySession = new Map<string, string[]>();
  for (const a of accepted) bySession.set(a.sessionId, [...(bySession.get(a.sessionId) ?? []), a.clientMessageId]);
  for (const [id, cmids] of bySession) {
    const view = await p.client.get(`/sessions/${id}`);
    expect(view.status).to.equal(200);
    expect(view.body.status, `session ${id} left running`).to.equal("idle");
    const have = new Set(
      (view.body.messages as Array<{ clientMessageId?: string }>).map((m) => m.clientMessageId).filter(Boolean),
    );
    for (const c of cmids) if (!have.has(c)) lost++;
    const events: Stored[] = [];
    for (let after = 0; ; ) {
      const page = (await p.client.get(`/sessions/${id}/events/history?after=${after}`)).body.events as Stored[];
      events.push(...page);
      if (page.length === 0) break;
      after = page[page.length - 1]?.seq ?? after;
    }
    const seqs = events.map((e) => e.seq);
    for (let k = 1; k < seqs.length; k++) {
      expect(seqs[k], `sequence numbers of ${id} must keep growing`).to.be.greaterThan(seqs[k - 1] as number);
    }
    const ends = events.filter((e) => e.type === "end");
    expect(ends.length, `ends of ${id}: ${JSON.stringify(ends)}`).to.equal(turnsPerSession.get(id));
    recovered += ends.filter((e) => e.payload.recovered).length;
  }
  expect(lost, "acknowledged messages missing after the crash").to.equal(0);
  return { lost, recovered };
}

interface ShownMessage {
  role: string;
  seq?: number;
  content: unknown;
  toolCalls?: Array<{ id: string; status: string }>;
}

/**
 * What the live client of the killed session was shown as stored must be in the store after the restart: every
 * `user_message` (by its seq), every `assistant_message` (by its messageSeq, with its text) and every `tool_end`
 * (the result of its call). Read through GET /sessions/{id}, as a client reloading the session would.
 */
async function verifyAnnounced(
  p: DaemonProcess,
  id: string,
  frames: SseFrame[],
): Promise<{ checked: number; lost: string[] }> {
  const view = await p.client.get(`/sessions/${id}?turns=100000`);
  expect(view.status).to.equal(200);
  const messages = view.body.messages as ShownMessage[];
  const bySeq = new Map(messages.filter((m) => m.seq !== undefined).map((m) => [m.seq, m]));
  const results = new Map(messages.flatMap((m) => m.toolCalls ?? []).map((c) => [c.id, c.status]));
  const lost: string[] = [];
  let checked = 0;
  for (const f of frames) {
    const e = f.json;
    if (e?.type === "user_message") {
      checked++;
      if (bySeq.get(e.message.seq)?.role !== "user") lost.push(`user message ${e.message.seq}`);
    } else if (e?.type === "assistant_message") {
      checked++;
      const m = bySeq.get(e.messageSeq);
      if (m?.role !== "assistant" || (m.content ?? "") !== (e.content ?? "")) {
        lost.push(`assistant message ${e.messageSeq} ${JSON.stringify(e.content)}`);
      }
    } else if (e?.type === "tool_end") {
      checked++;
      const status = results.get(e.id);
      if (status === undefined || status === "running") lost.push(`tool result of ${e.id}`);
    }
  }
  return { checked, lost };
}
