import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import pg from "pg";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { PostgresSessionStore } from "../plugins/storage-postgres/store.js";
import {
  type ApiClient,
  type DaemonProcess,
  makeTempHome,
  spawnDaemon,
  startTestDaemon,
  type TestDaemon,
} from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import type { SseClient, SseFrame } from "../testing/sse.js";
import { gatedTool } from "./support/gated-tool.js";
import { pgCluster } from "./support/postgres.js";
import { sessionRecord } from "./support/session-record.js";

type Json = Record<string, unknown>;

/** A lease that runs out quickly, so a dead owner's turn is taken over within the test's patience. */
const LEASE_MS = "1500";

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** Polls `fn` until it holds (another daemon learns of a lease through the database), failing at the deadline. */
async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ends(d: ApiClient, id: string): Promise<Json[]> {
  const events = (await d.get(`/sessions/${id}/events/history`)).body.events as Array<{ type: string; payload: Json }>;
  return events.filter((e) => e.type === "end").map((e) => e.payload);
}

const idle = (f: SseFrame) => f.json?.type === "session_update" && f.json.session?.status === "idle";

/**
 * One owner per running turn in a team of daemons on one PostgreSQL database: control posted to a daemon that does
 * not run the turn reaches the one that does, two chats at once make one turn, and a dead owner's turn is ended
 * once by a survivor, which then takes new turns.
 */
describe("team server: one owner per running turn", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let url: string;
  const streams: SseClient[] = [];
  const watch = async (d: ApiClient, path: string) => {
    const s = await d.sse(path);
    streams.push(s);
    return s;
  };

  beforeEach(async () => {
    fake = await startFakeProvider();
    url = await (await pgCluster()).createDatabase(undefined, { migrated: true });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await fake.close();
  });

  it("the store: one lease at a time, and a stale fence refuses the turn's messages and events", async () => {
    const a = new PostgresSessionStore({ url, leaseTimeoutMs: 60_000 });
    const b = new PostgresSessionStore({ url, leaseTimeoutMs: 60_000 });
    try {
      await a.createSession(sessionRecord("s"));
      const [fromA, fromB] = await Promise.all([a.turnOwnership.claim("s"), b.turnOwnership.claim("s")]);
      expect([fromA.ok, fromB.ok].filter(Boolean)).to.have.length(1);
      const [owner, other] = fromA.ok ? [a, b] : [b, a];
      expect(fromA.ok ? fromB : fromA).to.deep.equal({
        ok: false,
        owner: owner.turnOwnership.daemonId,
        expired: false,
      });
      expect(await other.turnOwnership.leaseOwner("s")).to.equal(owner.turnOwnership.daemonId);
      const event = { ts: "t", type: "notice", head: '{"seq":', tail: "}", ephemeral: false };
      expect(await owner.sharedEvents.append("s", [event])).to.equal(1);
      await owner.appendMessage("s", { role: "user", content: "kept" });
      // Another daemon gets the lease with a newer fence (what a takeover does): the old owner's writes are refused.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query("UPDATE turn_leases SET owner = 'someone else', fence = fence + 1");
      await admin.end();
      expect(await owner.sharedEvents.append("s", [event])).to.equal(undefined);
      let refused: unknown;
      await owner.appendMessage("s", { role: "assistant", content: "late" }).catch((err: unknown) => {
        refused = err;
      });
      expect(refused).to.have.property("status", 409);
      // A daemon holding no lease of the session writes as before.
      expect(await other.sharedEvents.append("s", [event])).to.equal(2);
      expect((await other.readMessages("s", 0, 10)).map((m) => m.content)).to.deep.equal(["kept"]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  describe("two daemons in this process", () => {
    let a: TestDaemon;
    let b: TestDaemon;
    const ran: string[] = [];
    beforeEach(async () => {
      ran.length = 0;
      const start = () =>
        startTestDaemon({
          env: { AGENTD_DATABASE_URL: url, AGENTD_LEASE_TIMEOUT_MS: LEASE_MS },
          config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } },
          builtins: [...builtinPlugins, gatedTool(ran)].map(builtinSource),
        });
      [a, b] = await Promise.all([start(), start()]);
    });
    afterEach(async () => {
      for (const s of streams.splice(0)) s.close();
      await Promise.all([a, b].map((d) => d?.cleanup()));
    });

    it("/server/status names this daemon and lists the team's live daemons", async () => {
      const ids = [a.info.instanceId, b.info.instanceId].sort();
      for (const d of [a, b]) {
        await until("both daemons are listed", async () => {
          const team = (await d.get("/server/status")).body.team as { daemons: Array<{ id: string }> } | undefined;
          return JSON.stringify(team?.daemons.map((x) => x.id).sort()) === JSON.stringify(ids);
        });
        const team = (await d.get("/server/status")).body.team;
        expect(team.daemonId).to.equal(d.info.instanceId);
        expect(team.leaseTimeoutMs).to.equal(Number(LEASE_MS));
        for (const x of team.daemons) {
          expect(x.version).to.be.a("string").and.not.equal("");
          expect(x.host).to.be.a("string").and.not.equal("");
          expect(Date.parse(x.lastHeartbeat)).to.be.a("number").and.not.NaN;
        }
      }
    });

    it("a client of the non-owner sees the turn running; abort posted to it ends the owner's turn", async () => {
      const id = await a.createSession();
      const onA = await watch(a, `/sessions/${id}/events`);
      await onA.waitForType("status");
      fake.script(turn({ content: "working on it" }, { waitFor: new Promise(() => {}) }));
      expect((await a.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
      await onA.waitFor((f) => f.json?.text === "working on it");
      await until(
        "B shows the session running",
        async () => (await b.get(`/sessions/${id}`)).body.status === "running",
      );
      const onB = await watch(b, `/sessions/${id}/events`);
      const first = await onB.waitFor(() => true);
      expect(first.json.status ?? first.json.session?.status).to.equal("running");
      // Refused on B exactly as on A while the turn runs.
      const mode = await b.post(`/sessions/${id}/mode`, { mode: "plan" });
      expect([mode.status, mode.body.code]).to.deep.equal([409, "turn_running"]);
      const aborted = await b.post(`/sessions/${id}/abort`, {});
      expect(aborted.status).to.equal(200);
      expect(aborted.body).to.deep.equal({ ok: true });
      for (const s of [onA, onB]) expect((await s.waitForType("end")).json.reason).to.equal("aborted");
      await onB.waitFor(idle);
      const ended = await ends(b, id);
      expect(ended).to.have.length(1);
      expect(ended[0]).to.deep.include({ reason: "aborted" });
      expect(ended[0]?.recovered).to.equal(undefined);
      // Idle everywhere: B takes the next turn itself.
      fake.script(text("from B"));
      expect((await b.post(`/sessions/${id}/chat`, { text: "again" })).body.status).to.equal("started");
      await onA.waitFor((f) => f.json?.type === "end" && f.json.reason === "stop");
    });

    it("bash-confirm posted to the non-owner reaches the pending command on the owner, with the owner's codes", async () => {
      const id = await a.createSession({ cwd: a.home });
      const onB = await watch(b, `/sessions/${id}/events`);
      await onB.waitForType("status");
      fake.script(tools([{ name: "risky", args: { what: "rm -rf build" }, id: "r1" }]), text("done"));
      expect((await a.post(`/sessions/${id}/chat`, { text: "clean up" })).status).to.equal(202);
      const ask = (await onB.waitForType("bash_confirm")).json;
      // A client that comes to B later learns of the waiting command at once: in its first frame and in the view.
      const late = await watch(b, `/sessions/${id}/events`);
      const first = (await late.waitForType("status")).json;
      expect(first.status).to.equal("running");
      expect(first.pendingConfirmations?.map((c: Json) => c.id)).to.deep.equal([ask.id]);
      const view = (await b.get(`/sessions/${id}`)).body;
      expect(view.pendingConfirmations?.map((c: Json) => [c.id, c.command])).to.deep.equal([[ask.id, ask.command]]);
      const unknown = await b.post(`/sessions/${id}/bash-confirm`, { id: "c_unknown", allow: true });
      expect([unknown.status, unknown.body.code]).to.deep.equal([404, "confirmation_not_found"]);
      expect(ran).to.deep.equal([]);
      expect((await b.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true })).status).to.equal(202);
      const resolved = await onB.waitForType("bash_confirm_resolved");
      expect(resolved.json).to.include({ id: ask.id, allowed: true });
      expect((await onB.waitForType("end")).json.reason).to.equal("stop");
      expect(ran).to.deep.equal(["rm -rf build"]);
      const again = await b.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false });
      expect([again.status, again.body.code]).to.deep.equal([409, "confirmation_resolved"]);
    });

    it("two daemons chat the same idle session at once: one turn, the other message steered into it", async () => {
      const id = await a.createSession();
      const onA = await watch(a, `/sessions/${id}/events`);
      await onA.waitForType("status");
      const held = gate();
      fake.script(turn({ content: "first" }, { waitFor: held.promise }), text("second"));
      const [fromA, fromB] = await Promise.all([
        a.post(`/sessions/${id}/chat`, { text: "from A" }),
        b.post(`/sessions/${id}/chat`, { text: "from B" }),
      ]);
      expect([fromA.status, fromB.status]).to.deep.equal([202, 202]);
      expect([fromA.body.status, fromB.body.status].sort()).to.deep.equal(["started", "steered"]);
      // A retried steer (the same clientMessageId) posted to either daemon is taken once.
      const steer = { message: "also this", clientMessageId: "st-1" };
      const again = [await b.post(`/sessions/${id}/steer`, steer), await b.post(`/sessions/${id}/steer`, steer)];
      expect(again.map((r) => r.status)).to.deep.equal([202, 202]);
      expect(again[0]?.body.status).to.equal("steered");
      held.open();
      await onA.waitFor((f) => f.json?.type === "end");
      await onA.waitFor(idle);
      expect(await ends(a, id)).to.have.length(1);
      const users = (await b.get(`/sessions/${id}`)).body.messages.filter((m: Json) => m.role === "user");
      expect(users.map((m: Json) => m.content).sort()).to.deep.equal(["also this", "from A", "from B"]);
      expect(onA.ofType("status").filter((f) => f.json.status === "running")).to.have.length(1);
    });
  });

  describe("daemons as processes", () => {
    const homes: string[] = [];
    const procs: DaemonProcess[] = [];
    const spawn = async (again?: string, leaseMs = LEASE_MS) => {
      const home = again ?? makeTempHome();
      if (!again) homes.push(home);
      writeFileSync(
        join(home, "config.json"),
        JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } }),
      );
      const p = await spawnDaemon(home, { AGENTD_DATABASE_URL: url, AGENTD_LEASE_TIMEOUT_MS: leaseMs });
      procs.push(p);
      return p;
    };
    afterEach(async () => {
      for (const s of streams.splice(0)) s.close();
      for (const p of procs.splice(0)) {
        p.child.kill("SIGTERM");
        await p.exited;
      }
      for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
    });

    it("the owner killed mid-turn: the survivor ends the turn once (recovered), then runs the next turn", async () => {
      const [a, b] = await Promise.all([spawn(), spawn()]);
      const id = (await a.client.post("/sessions", {})).body.id as string;
      const onB = await watch(b.client, `/sessions/${id}/events`);
      await onB.waitForType("status");
      fake.script(turn({ content: "half way" }, { waitFor: new Promise(() => {}) }));
      const sent = await a.client.post(`/sessions/${id}/chat`, { text: "long job", clientMessageId: "cm-1" });
      expect(sent.body.status).to.equal("started");
      await onB.waitFor((f) => f.json?.text === "half way");
      await until(
        "B shows the turn running",
        async () => (await b.client.get(`/sessions/${id}`)).body.status === "running",
      );
      a.child.kill("SIGKILL");
      await a.exited;
      const end = await onB.waitForType("end", 20_000);
      expect(end.json).to.deep.include({ reason: "aborted", recovered: true });
      await onB.waitFor((f) => f.json?.type === "status" && f.json.status === "idle");
      // The acknowledged message is kept, and the dead turn has exactly one end.
      const view = (await b.client.get(`/sessions/${id}`)).body;
      expect(view.status).to.equal("idle");
      expect(view.messages[0]).to.deep.include({ role: "user", content: "long job", clientMessageId: "cm-1" });
      expect(await ends(b.client, id)).to.have.length(1);
      // The session takes new chats on the survivor.
      fake.script(text("fresh start"));
      expect((await b.client.post(`/sessions/${id}/chat`, { text: "again" })).body.status).to.equal("started");
      const next = await onB.waitFor((f) => f.json?.type === "end" && f.json.reason === "stop", 15_000);
      expect(next.json.recovered).to.equal(undefined);
      const all = await ends(b.client, id);
      expect(all.map((e) => [e.reason, e.recovered === true])).to.deep.equal([
        ["aborted", true],
        ["stop", false],
      ]);
      // And the dead daemon leaves the team.
      await until("only B is listed", async () => {
        const team = (await b.client.get("/server/status")).body.team as { daemons: Array<{ id: string }> };
        return team.daemons.length === 1 && team.daemons[0]?.id === b.info.instanceId;
      });
    });

    it("a daemon restarted on the home of one that was killed takes its session's chats at once", async () => {
      // A lease far longer than the test: the restarted daemon does not wait for it to run out.
      const first = await spawn(undefined, "600000");
      const home = homes[0] as string;
      const id = (await first.client.post("/sessions", {})).body.id as string;
      const sse = await watch(first.client, `/sessions/${id}/events`);
      fake.script(turn({ content: "half way" }, { waitFor: new Promise(() => {}) }));
      expect((await first.client.post(`/sessions/${id}/chat`, { text: "long job" })).body.status).to.equal("started");
      await sse.waitFor((f) => f.json?.text === "half way");
      first.child.kill("SIGKILL");
      await first.exited;
      procs.splice(procs.indexOf(first), 1);
      const second = await spawn(home, "600000");
      const ended = await ends(second.client, id);
      expect(ended).to.have.length(1);
      expect(ended[0]).to.deep.include({ reason: "aborted", recovered: true });
      const live = await watch(second.client, `/sessions/${id}/events`);
      fake.script(text("back again"));
      expect((await second.client.post(`/sessions/${id}/chat`, { text: "again" })).body.status).to.equal("started");
      await live.waitFor((f) => f.json?.type === "end" && f.json.reason === "stop");
      expect(await ends(second.client, id)).to.have.length(2);
    });
  });
});
