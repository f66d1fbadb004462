import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { EventSource } from "eventsource";
import { Authenticator } from "../host/http/auth.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

/** A project with local resources (a context file and a skill), undecided. */
function makeProject(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "agentd-contract-")));
  execFileSync("git", ["init", "-q", root]);
  writeFileSync(join(root, "AGENTS.md"), "use tabs");
  mkdirSync(join(root, ".agentd", "skills", "deploy"), { recursive: true });
  writeFileSync(join(root, ".agentd", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: d\n---\nbody");
  return root;
}

/** An EventSource client as browsers and cast's client library use it: the token in the query, no headers. */
function eventSource(url: string): { events: Json[]; next(pred: (e: Json) => boolean): Promise<Json>; close(): void } {
  const events: Json[] = [];
  const waiters: Array<{ pred: (e: Json) => boolean; resolve: (e: Json) => void }> = [];
  const es = new EventSource(url);
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    events.push(ev);
    for (const w of [...waiters]) {
      if (w.pred(ev)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(ev);
      }
    }
  };
  return {
    events,
    next: (pred) => {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
    close: () => es.close(),
  };
}

describe("client contract: trust prompt for late clients, query token, fork, command replies, follow-ups", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let root: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } } });
    root = makeProject();
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows the trust prompt to clients that connect after creation, and clears it for all of them", async () => {
    const feed = await d.sse("/sessions/events");
    await feed.waitForType("connected");
    const id = await d.createSession({ cwd: join(root) });
    const other = await d.createSession({ cwd: root });

    // The all-sessions feed carries the prompt in the summary.
    const created = await feed.waitFor((f) => f.json?.type === "session_created" && f.json.sessionId === id);
    expect(created.json.session.projectTrust).to.deep.include({ required: true, path: root });
    expect(created.json.session.projectTrust.resources.skills).to.deep.equal(["deploy"]);
    expect(created.json.session.projectTrust.resources.contextFiles).to.deep.equal(["AGENTS.md"]);

    // A client subscribing after creation sees it in the first frame; so does a second one later.
    const first = await d.sse(`/sessions/${id}/events`);
    const frame1 = await first.waitForType("status");
    expect(frame1.json.projectTrust).to.deep.include({ required: true, path: root });
    const second = await d.sse(`/sessions/${id}/events`);
    expect((await second.waitForType("status")).json.projectTrust.path).to.equal(root);
    expect((await d.get(`/sessions/${id}`)).body.projectTrust.path).to.equal(root);
    const list = (await d.get<Json[]>("/sessions")).body;
    expect(list.find((s: Json) => s.id === id).projectTrust.required).to.equal(true);

    // A session outside any project with resources carries none.
    const plain = await d.createSession({ cwd: d.home });
    expect((await d.get(`/sessions/${plain}`)).body).to.not.have.property("projectTrust");
    expect((await d.get<Json[]>("/sessions")).body.find((s: Json) => s.id === plain)).to.not.have.property(
      "projectTrust",
    );

    // Deciding (here: not trusted) clears it on every session of the project, with one session_update each.
    const from1 = first.frames.length;
    const from2 = second.frames.length;
    const fromFeed = feed.frames.length;
    expect((await d.post("/projects/trust", { cwd: root, trusted: false })).status).to.equal(200);
    const cleared1 = await first.waitFor((f) => f.json?.type === "session_update", 10_000, from1);
    expect(cleared1.json.session).to.not.have.property("projectTrust");
    const cleared2 = await second.waitFor((f) => f.json?.type === "session_update", 10_000, from2);
    expect(cleared2.json.session).to.not.have.property("projectTrust");
    await feed.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === other, 10_000, fromFeed);
    const updates = feed.frames.slice(fromFeed).filter((f) => f.json?.type === "session_update");
    expect(updates.map((f) => f.json.sessionId).sort()).to.deep.equal([id, other].sort());
    expect((await d.get(`/sessions/${id}`)).body).to.not.have.property("projectTrust");
    const late = await d.sse(`/sessions/${id}/events`);
    expect((await late.waitForType("status")).json).to.not.have.property("projectTrust");
    for (const c of [feed, first, second, late]) c.close();
  });

  it("announces a trust prompt that appears on a re-scan (resources added to an undecided project)", async () => {
    const plain = realpathSync(mkdtempSync(join(tmpdir(), "agentd-plain-")));
    try {
      const id = await d.createSession({ cwd: plain });
      expect((await d.get(`/sessions/${id}`)).body).to.not.have.property("projectTrust");
      const feed = await d.sse("/sessions/events");
      await feed.waitForType("connected");
      writeFileSync(join(plain, "AGENTS.md"), "new instructions");
      expect((await d.post("/projects/reload")).status).to.equal(200);
      const update = await feed.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === id);
      expect(update.json.session.projectTrust).to.deep.include({ required: true, path: plain });
      expect(update.json.session.projectTrust.resources.contextFiles).to.deep.equal(["AGENTS.md"]);
      feed.close();
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it("after a restart, finds a project's sessions when asked (a decision, a re-scan, a git directory check)", async () => {
    const nested = join(root, "nested");
    mkdirSync(nested);
    execFileSync("git", ["init", "-q", nested]);
    const sub = join(root, "src");
    mkdirSync(sub);
    const plain = realpathSync(mkdtempSync(join(tmpdir(), "agentd-plain-")));
    try {
      const atRoot = await d.createSession({ cwd: root });
      const inSub = await d.createSession({ cwd: sub });
      const inNested = await d.createSession({ cwd: nested });
      const inPlain = await d.createSession({ cwd: plain });
      const home = d.home;
      await d.stop();
      d = await startTestDaemon({
        home,
        config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      });
      const feed = await d.sse("/sessions/events");
      await feed.waitForType("connected");
      // A decision announces the project's sessions (its root and below, not a nested project's).
      let from = feed.frames.length;
      expect((await d.post("/projects/trust", { cwd: sub, trusted: false })).status).to.equal(200);
      await feed.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === inSub, 10_000, from);
      await feed.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === atRoot, 10_000, from);
      const updated = () =>
        feed.frames
          .slice(from)
          .filter((f) => f.json?.type === "session_update")
          .map((f) => f.json.sessionId);
      // A re-scan announces a prompt that appeared (the plain directory got instructions), and only that one; the
      // re-scan answers after its announcements.
      writeFileSync(join(plain, "AGENTS.md"), "new instructions");
      from = feed.frames.length;
      expect((await d.post("/projects/reload")).status).to.equal(200);
      const update = await feed.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === inPlain);
      expect(update.json.session.projectTrust).to.deep.include({ required: true, path: plain });
      expect(updated()).to.deep.equal([inPlain]);
      expect((await d.get(`/sessions/${inNested}`)).body).to.not.have.property("projectTrust");
      // A directory inside a session's directory may be inspected; one outside every session's may not.
      const inside = await d.get(`/git-info?cwd=${encodeURIComponent(join(nested, "."))}`);
      expect(inside.status).to.equal(200);
      expect(inside.body).to.include({ isGit: true });
      const outside = await d.get(`/git-info?cwd=${encodeURIComponent("/usr/share")}`);
      expect(outside.status).to.equal(400);
      feed.close();
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it("accepts the token in the query on the two event streams only, and never logs it", async () => {
    const id = await d.createSession({ cwd: d.home });
    const token = d.token;
    const session = eventSource(`${d.api}/sessions/${id}/events?token=${encodeURIComponent(token)}`);
    const all = eventSource(`${d.api}/sessions/events?token=${encodeURIComponent(token)}`);
    try {
      expect((await session.next((e) => e.type === "status")).status).to.equal("idle");
      await all.next((e) => e.type === "connected");
      fake.script(text("hello there"));
      expect((await d.post(`/sessions/${id}/chat`, { text: "hi" })).status).to.equal(202);
      await session.next((e) => e.type === "end");
      // The turn is over once the session is announced idle (its summary follows `end`, once stored).
      await session.next((e) => e.type === "session_update" && (e.session as Json)?.status === "idle");
      await all.next((e) => e.type === "session_update" && e.sessionId === id);
      // The same events, in the same order, as a client authenticated by header.
      const audit = (await d.get(`/sessions/${id}/events/history`)).body.events.map((e: Json) => e.type);
      const seen = session.events.filter((e) => e.seq !== undefined && audit.includes(e.type)).map((e) => e.type);
      expect(seen).to.deep.equal(audit.filter((t: string) => seen.includes(t)));
    } finally {
      session.close();
      all.close();
    }
    // A wrong query token, and a query token on any other route, are refused.
    const bad = await fetch(`${d.api}/sessions/${id}/events?token=wrong`);
    expect(bad.status).to.equal(401);
    await bad.body?.cancel();
    for (const path of [`/sessions/${id}`, "/sessions", "/config", `/sessions/${id}/events/history`]) {
      const res = await d.get(`${path}?token=${encodeURIComponent(token)}`, { auth: false });
      expect(res.status, path).to.equal(401);
    }
    await d.stop();
    expect(readFileSync(join(d.home, "agentd.log"), "utf8")).to.not.include(token);
  });

  it("a client that reads the session and then opens its stream from lastSeq misses nothing in between", async () => {
    const id = (await d.post("/sessions", {})).body.id;
    const before = (await d.get(`/sessions/${id}`)).body;
    expect(before.lastSeq).to.be.a("number");
    // Another client acts between the read and the stream (and watches its turn to the end).
    const watcher = await d.sse(`/sessions/${id}/events`);
    fake.script(text("hello there"));
    expect((await d.post(`/sessions/${id}/chat`, { text: "in between" })).status).to.equal(202);
    await watcher.waitForType("end");
    watcher.close();
    // EventSource cannot send Last-Event-ID on its first connection: the query carries it.
    const es = eventSource(`${d.baseUrl}/api/v1/sessions/${id}/events?token=${d.token}&lastEventId=${before.lastSeq}`);
    const user = await es.next((e) => e.type === "user_message");
    expect(user.message.content).to.equal("in between");
    await es.next((e) => e.type === "end");
    es.close();
    // The header wins over the query: a reconnecting EventSource resumes from what it last saw.
    const after = (await d.get(`/sessions/${id}`)).body.lastSeq;
    const resumed = await d.sse(`/sessions/${id}/events?lastEventId=${before.lastSeq}`, { lastEventId: after });
    fake.script(text("again"));
    await d.post(`/sessions/${id}/chat`, { text: "later" });
    expect((await resumed.waitForType("user_message")).json.message.content).to.equal("later");
    await resumed.waitForType("end");
    expect(resumed.ofType("user_message")).to.have.length(1);
    resumed.close();
  });

  it("takes a query token from loopback peers only (constant-time compare)", () => {
    const auth = new Authenticator("the-token");
    const req = (remoteAddress: string) => ({ headers: {}, socket: { remoteAddress } }) as unknown as IncomingMessage;
    expect(auth.authenticateQuery(req("127.0.0.1"), "the-token")).to.equal("bearer");
    expect(auth.authenticateQuery(req("::1"), "the-token")).to.equal("bearer");
    expect(auth.authenticateQuery(req("192.168.1.20"), "the-token")).to.equal(null);
    expect(auth.authenticateQuery(req("127.0.0.1"), "the-token!")).to.equal(null);
    expect(auth.authenticateQuery(req("127.0.0.1"), ["the-token"])).to.equal(null);
    expect(auth.authenticateQuery(req("127.0.0.1"), "")).to.equal(null);
  });

  it("fork answers the full session; command replies carry text in result and data in data", async () => {
    const id = await d.createSession({ cwd: d.home, title: "orig" });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(text("answer"));
    await d.post(`/sessions/${id}/chat`, { text: "question" });
    await sse.waitForType("end");
    sse.close();
    const fork = await d.post(`/sessions/${id}/fork`);
    expect(fork.status).to.equal(201);
    expect(fork.body.id).to.be.a("string").and.not.equal(id);
    expect(fork.body.session.id).to.equal(fork.body.id);
    expect(fork.body.session.messages.map((m: Json) => m.content)).to.deep.equal(["question", "answer"]);
    expect(fork.body.session.usage).to.have.property("totalTokens");
    expect(fork.body.session).to.include({ title: "orig (fork)", status: "idle" });

    const cap = await d.post(`/sessions/${id}/command`, { command: "/turn-cap 37" });
    expect(cap.status).to.equal(200);
    expect(cap.body.result).to.be.a("string").and.include("37");
    expect(cap.body.data).to.include({ turnCap: 37, effective: 37 });
    const abort = await d.post(`/sessions/${id}/command`, { command: "/stop" });
    expect(abort.body).to.include({ command: "/abort", result: "Nothing is running" });
    const global = await d.post("/settings/command", { command: "/help" });
    expect(global.body.result).to.be.a("string").and.include("/turn-cap");
    expect(global.body.data.commands).to.include("/turn-cap");
  });

  it("lists every command name of the spec's table, aliases included, with hints and scope", async () => {
    const list = (await d.get<Json[]>("/commands")).body;
    const byName = new Map(list.map((c: Json) => [c.name, c]));
    const spec = [
      "undo",
      "fork",
      "steer",
      "queue",
      "queue-reset",
      "abort",
      "stop",
      "goal",
      "turn-cap",
      "plan",
      "build",
      "permissions",
      "reload",
      "clear",
      "compact",
      "model",
      "persona",
      "provider",
      "skills",
      "mcp",
      "hooks",
      "rules",
      "reasoning",
      "theme",
      "web",
      "ssh",
      "repo",
      "worktree",
    ];
    for (const name of spec) expect(byName.has(`/${name}`), name).to.equal(true);
    expect(byName.get("/stop")).to.include({ aliasOf: "/abort", scope: "session" });
    expect(byName.get("/stop").description).to.equal(byName.get("/abort").description);
    expect(byName.get("/turn-cap")).to.include({ argumentHint: "[N|reset]", scope: "both", global: true });
    expect(byName.get("/undo")).to.include({ argumentHint: "[--force]", scope: "session" });
    const names = (await d.get<Json[]>("/suggest?q=%2Fst")).body.map((s: Json) => s.value);
    expect(names).to.include.members(["/steer ", "/stop"]);
  });

  it("announces followup_injected when a queued follow-up becomes a turn; a pending question shows in the session", async () => {
    const id = await d.createSession({ cwd: d.home });
    const sse: SseClient = await d.sse(`/sessions/${id}/events`);
    const questions = [
      {
        question: "Which one?",
        options: [
          { label: "A", value: "a" },
          { label: "B", value: "b" },
        ],
      },
    ];
    fake.script(tools([{ name: "question", args: { questions }, id: "q1" }]), text("noted"), text("follow-up done"));
    await d.post(`/sessions/${id}/chat`, { text: "ask me" });
    await sse.waitFor((f) => f.json?.type === "decision_state" && f.json.question);
    // The turn waits (running), and the question is part of the session's present state.
    const view = (await d.get(`/sessions/${id}`)).body;
    expect(view.status).to.equal("running");
    expect(view.question.questions[0].question).to.equal("Which one?");
    expect(
      (await d.post(`/sessions/${id}/followup`, { message: "and then this", clientMessageId: "f-1" })).status,
    ).to.equal(202);
    expect((await d.post(`/sessions/${id}/question`, { values: ["a"] })).status).to.equal(202);
    const injected = await sse.waitForType("followup_injected");
    expect(injected.json.messages).to.have.length(1);
    expect(injected.json.messages[0]).to.include({ role: "user", content: "and then this", clientMessageId: "f-1" });
    const index = sse.frames.indexOf(injected);
    const next = await sse.waitFor((f) => f.json?.type === "user_message", 10_000, index);
    expect(next.json.message.seq).to.equal(injected.json.messages[0].seq);
    await sse.waitFor((f) => f.json?.type === "end", 10_000, index);
    sse.close();
  });
});
