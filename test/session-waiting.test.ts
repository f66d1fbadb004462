import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import type { SseClient, SseFrame } from "../testing/sse.js";
import { gatedTool } from "./support/gated-tool.js";
import { askDatabase } from "./support/questions.js";

describe("session summaries say when a session waits for its user (waiting)", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let feed: SseClient;
  let sse: SseClient;
  let id: string;
  let other: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, gatedTool()].map(builtinSource),
    });
    other = await d.createSession({ cwd: d.home });
    id = await d.createSession({ cwd: d.home });
    feed = await d.sse("/sessions/events");
    sse = await d.sse(`/sessions/${id}/events`);
  });
  afterEach(async () => {
    feed?.close();
    sse?.close();
    await d?.cleanup();
    await fake.close();
  });

  const chat = (t: string) => d.post(`/sessions/${id}/chat`, { text: t });
  const isUpdate = (f: SseFrame) => f.json?.type === "session_update" && f.json.session?.id === id;

  /** The session's `waiting` in GET /sessions: a page (listing entries), the plain array, and GET /sessions/{id}. */
  async function listed(): Promise<Array<string | undefined>> {
    const page = await d.get("/sessions?limit=10");
    const all = await d.get("/sessions");
    const one = await d.get(`/sessions/${id}`);
    expect(page.status).to.equal(200);
    const find = (list: Array<{ id: string; waiting?: string }>, sid: string) => list.find((s) => s.id === sid);
    // The other session never waits.
    expect(find(page.body.sessions, other)).to.not.have.property("waiting");
    return [find(page.body.sessions, id)?.waiting, find(all.body, id)?.waiting, one.body.waiting];
  }

  /** In plan mode, a turn writes a plan and calls plan_done: the plan then waits for approval. */
  async function finishPlan(): Promise<void> {
    expect((await d.post(`/sessions/${id}/mode`, { mode: "plan" })).status).to.equal(200);
    const plans = join(d.home, ".agentd", "plans", id);
    mkdirSync(plans, { recursive: true });
    writeFileSync(join(plans, "plan.md"), "# Plan\n- [ ] add the parser\n");
    fake.script(tools([{ name: "plan_done", args: { summary: "parser plan" }, id: "p1" }]));
    await chat("plan it");
  }

  /** No session_update on the session's stream after `from` still claims `kind`. */
  function noStaleClaim(from: number, kind: string): void {
    const stale = sse.frames.slice(from).filter((f) => isUpdate(f) && f.json.session.waiting === kind);
    expect(stale, `session_update with waiting=${kind} after it was resolved`).to.deep.equal([]);
  }

  it("a pending question: listed and announced while pending, cleared and announced again after the answer", async () => {
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
    fake.script(askDatabase(), text("noted"));
    await chat("set it up");
    await sse.waitFor((f) => f.json?.type === "decision_state" && f.json.question);
    const announced = await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "question");
    expect(announced.json.session.status).to.equal("running");
    expect(await listed()).to.deep.equal(["question", "question", "question"]);

    const after = feed.frames.length;
    expect((await d.post(`/sessions/${id}/question`, { values: ["sqlite"] })).status).to.equal(202);
    const cleared = await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    expect(cleared.json.session).to.not.have.property("waiting");
    await sse.waitForType("end");
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
    // On the session's own stream, nothing after the question cleared says it is pending.
    const clearedAt = sse.frames.findIndex((f) => f.json?.type === "decision_state" && !f.json.question);
    expect(clearedAt).to.be.greaterThan(0);
    noStaleClaim(clearedAt, "question");
  });

  it("an aborted question clears too", async () => {
    fake.script(askDatabase());
    await chat("ask me");
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "question");
    const after = feed.frames.length;
    await d.post(`/sessions/${id}/abort`);
    await sse.waitForType("end");
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
    noStaleClaim(
      sse.frames.findIndex((f) => f.json?.type === "decision_state" && !f.json.question),
      "question",
    );
  });

  it("a pending confirmation: listed and announced while pending, cleared after it is allowed", async () => {
    fake.script(tools([{ name: "risky", args: { what: "rm -rf build" }, id: "r1" }]), text("done"));
    await chat("clean up");
    const ask = (await sse.waitForType("bash_confirm")).json;
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "confirmation");
    expect(await listed()).to.deep.equal(["confirmation", "confirmation", "confirmation"]);

    const after = feed.frames.length;
    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true })).status).to.equal(202);
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    await sse.waitForType("end");
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
    noStaleClaim(
      sse.frames.findIndex((f) => f.json?.type === "bash_confirm_resolved"),
      "confirmation",
    );
  });

  it("a confirmation that times out clears", async () => {
    await d.cleanup();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" }, confirmTimeoutMs: 300 },
      builtins: [...builtinPlugins, gatedTool()].map(builtinSource),
    });
    feed.close();
    sse.close();
    id = await d.createSession({ cwd: d.home });
    other = await d.createSession({ cwd: d.home });
    feed = await d.sse("/sessions/events");
    sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "risky", args: { what: "dd" }, id: "r1" }]), text("gave up"));
    await chat("wipe");
    const pending = await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "confirmation");
    const after = feed.frames.indexOf(pending) + 1;
    await sse.waitFor((f) => f.json?.type === "bash_confirm_resolved" && f.json.by === "timeout");
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    await sse.waitForType("end");
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
  });

  it("a finished plan waits for approval after its turn ended; approving it clears", async () => {
    await finishPlan();
    await sse.waitForType("end");
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "plan");
    // The turn's idle summary (announced after the plan was stored) still says so.
    await feed.waitFor((f) => isUpdate(f) && f.json.session.status === "idle" && f.json.session.waiting === "plan");
    expect(await listed()).to.deep.equal(["plan", "plan", "plan"]);

    const after = feed.frames.length;
    expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "done" })).status).to.equal(202);
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
  });

  it("a plan that still awaits approval after a restart is listed as waiting again", async () => {
    await finishPlan();
    const idle = await feed.waitFor(
      (f) => isUpdate(f) && f.json.session.status === "idle" && f.json.session.waiting === "plan",
    );
    const lastSeq = Number(idle.id);
    feed.close();
    sse.close();

    await d.stop();
    d = await startTestDaemon({
      home: d.home,
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
    });
    // A list loaded right after the restart shows it, or (a store whose listing has no metadata) learns it from the
    // feed at once; later listings show it.
    feed = await d.sse("/sessions/events", { lastEventId: lastSeq });
    sse = await d.sse(`/sessions/${other}/events`);
    const first = (await d.get("/sessions?limit=10")).body.sessions as Array<{ id: string; waiting?: string }>;
    if (first.find((s) => s.id === id)?.waiting !== "plan") {
      await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === "plan");
    }
    const page = (await d.get("/sessions?limit=10")).body.sessions as Array<{ id: string; waiting?: string }>;
    expect(page.find((s) => s.id === id)?.waiting).to.equal("plan");
    expect(page.find((s) => s.id === other)).to.not.have.property("waiting");
    // Announced at most once: listing again reads nothing more.
    await d.get("/sessions?limit=10");
    expect(feed.frames.filter((f) => isUpdate(f) && f.json.session.waiting === "plan")).to.have.length.at.most(1);
  });

  it("keeping on planning clears the pending choice for every client; the session stays in plan mode", async () => {
    await finishPlan();
    await sse.waitForType("end");
    await feed.waitFor((f) => isUpdate(f) && f.json.session.status === "idle" && f.json.session.waiting === "plan");

    const after = feed.frames.length;
    const fromStream = sse.frames.length;
    expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "continue" })).status).to.equal(202);
    await feed.waitFor((f) => isUpdate(f) && f.json.session.waiting === undefined, 10_000, after);
    const cleared = await sse.waitFor((f) => f.json?.type === "decision_state", 10_000, fromStream);
    expect(cleared.json.planTransition).to.equal(undefined);
    expect(await listed()).to.deep.equal([undefined, undefined, undefined]);
    const view = (await d.get(`/sessions/${id}`)).body;
    expect(view.mode).to.equal("plan");
    expect(view.planTransition).to.equal(undefined);
    // Nothing is pending any more; an unknown kind is a 400.
    expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "continue" })).status).to.equal(409);
    expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "later" })).status).to.equal(400);
  });
});
