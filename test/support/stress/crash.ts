import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "chai";
import { type DaemonProcess, makeTempHome, spawnDaemon } from "../../../testing/daemon.js";
import { type ChatRequestBody, type FakeProvider, startFakeProvider, turn } from "../../../testing/fake-provider.js";
import type { SseClient } from "../../../testing/sse.js";
import { type Rng, seededRng } from "./rng.js";

/** Where a cycle kills the daemon. */
export type KillPoint = "after-202" | "streaming" | "tool" | "compaction" | "random";
export const KILL_POINTS: KillPoint[] = ["after-202", "streaming", "tool", "compaction", "random"];

export interface CrashStats {
  cycles: number;
  byPoint: Record<string, number>;
  acceptedTurns: number;
  recoveredEnds: number;
  lostMessages: number;
  integrityFailures: number;
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
}): Promise<CrashStats> {
  const rng = seededRng(opts.seed);
  const fake = await startFakeProvider();
  const home = makeTempHome("agentd-crash-");
  // A small context window makes the second turn of a "compaction" cycle compact first.
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" }, contextWindow: 1000 }),
  );
  const accepted: Accepted[] = [];
  const turnsPerSession = new Map<string, number>();
  const stats: CrashStats = {
    cycles: 0,
    byPoint: {},
    acceptedTurns: 0,
    recoveredEnds: 0,
    lostMessages: 0,
    integrityFailures: 0,
  };
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
      } finally {
        sse.close();
      }
      await p.exited;
      stats.cycles++;
      stats.byPoint[point] = (stats.byPoint[point] ?? 0) + 1;
      if (!integrityOk(home)) stats.integrityFailures++;
      p = await spawnDaemon(home);
      const check = await verify(p, accepted, turnsPerSession);
      stats.lostMessages += check.lost;
      stats.recoveredEnds = check.recovered;
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
  }
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

function integrityOk(home: string): boolean {
  const db = new Database(join(home, "agentd.db"), { readonly: true });
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
