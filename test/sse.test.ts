import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { EventSource } from "eventsource";
import type { SessionEvent } from "../core/events.js";
import { SessionEventLogToken } from "../core/sessions.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import type { SseClient } from "../testing/sse.js";

function seqs(c: SseClient, type = "token"): number[] {
  return c.ofType(type).map((f) => Number(f.id));
}

describe("SSE event streams", () => {
  let d: TestDaemon;
  let id: string;
  const publish = (type: string, fields: Record<string, unknown> = {}) =>
    d.daemon.services.get(SessionEventLogToken).publish(id, { type, ...fields } as SessionEvent);
  /** The number of the last event published (once stored: a shared store numbers events as it stores them). */
  const lastSeq = async () => {
    const log = d.daemon.services.get(SessionEventLogToken);
    await log.durable();
    return log.currentSeq(id);
  };

  beforeEach(async () => {
    d = await startTestDaemon({ config: { server: { sseQueueBytes: 65536 } } });
    id = await d.createSession();
  });
  afterEach(async function () {
    // A failure here may be events lost on their way (e.g. a write the store refused): what the daemon logged says.
    if (this.currentTest?.state === "failed") {
      const log = join(d.home, "agentd.log");
      if (existsSync(log)) process.stderr.write(`the daemon's log:\n${readFileSync(log, "utf8").slice(-8000)}\n`);
    }
    await d.cleanup();
  });

  it("starts with a status frame, then live events with their seq as SSE id", async () => {
    const c = await d.sse(`/sessions/${id}/events`);
    const status = await c.waitForType("status");
    expect(status.id).to.equal(undefined);
    expect(status.json).to.include({ sessionId: id, status: "idle", mode: "build" });
    publish("token", { text: "hi" });
    const seq = await lastSeq();
    const tok = await c.waitForType("token");
    expect(tok.id).to.equal(String(seq));
    expect(tok.json).to.deep.include({ type: "token", sessionId: id, seq, text: "hi" });
    c.close();
  });

  it("resumes after Last-Event-ID with no gap and no duplicate", async () => {
    const a = await d.sse(`/sessions/${id}/events`);
    await a.waitForType("status");
    for (let i = 0; i < 50; i++) publish("token", { text: `t${i}` });
    const last = await a.waitFor((f) => f.json?.text === "t49");
    const cut = Number(a.ofType("token")[19]?.id);
    a.close();
    for (let i = 50; i < 80; i++) publish("token", { text: `t${i}` });
    publish("tool_start", { id: "x", name: "probe", args: "{}" });
    const b = await d.sse(`/sessions/${id}/events`, { lastEventId: cut });
    await b.waitForType("tool_start");
    const got = b.ofType("token").map((f) => f.json.text);
    expect(got).to.deep.equal(Array.from({ length: 60 }, (_, i) => `t${i + 20}`));
    const s = seqs(b);
    expect(s[0]).to.equal(cut + 1);
    for (let i = 1; i < s.length; i++) expect(s[i]).to.equal((s[i - 1] ?? 0) + 1);
    expect(Number(last.id)).to.be.lessThan(s.at(-1) ?? 0);
    b.close();
  });

  it("resumes with Last-Event-ID while events keep coming: the replay and the live events meet exactly", async () => {
    for (let i = 0; i < 300; i++) publish("token", { text: `t${i}` });
    publish("token", { text: "cut" });
    const cut = await lastSeq();
    // Events keep being published, one per macrotask, while the client connects and is replayed from the store
    // (with an asynchronous store the reads answer later than the events they must meet).
    let running = true;
    let n = 0;
    const producer = (async () => {
      while (running) {
        publish("token", { text: `live${n++}` });
        await new Promise<void>((r) => setImmediate(r));
      }
    })();
    const b = await d.sse(`/sessions/${id}/events`, { lastEventId: cut - 200 });
    await b.waitFor((f) => f.json?.text === "live50");
    running = false;
    await producer;
    publish("tool_start", { id: "x", name: "probe", args: "{}" });
    const done = await lastSeq();
    await b.waitForType("tool_start");
    const s = b.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
    expect(s).to.deep.equal(Array.from({ length: done - (cut - 200) }, (_, i) => cut - 199 + i));
    b.close();
  });

  it("works with a standard EventSource client, which reconnects by itself with Last-Event-ID", async () => {
    const token = d.token;
    const received: Array<{ id: string; text?: string; type: string }> = [];
    let opened = 0;
    let onMessage: () => void = () => {};
    // The stream never ends on its own; a server-side close of the first connection forces a real reconnect.
    const es = new EventSource(`${d.api}/sessions/${id}/events`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }),
    });
    es.onopen = () => opened++;
    es.onmessage = (ev) => {
      const json = JSON.parse(ev.data);
      received.push({ id: ev.lastEventId, text: json.text, type: json.type });
      onMessage();
    };
    const until = (pred: () => boolean) =>
      new Promise<void>((resolve) => {
        if (pred()) return resolve();
        onMessage = () => pred() && resolve();
      });
    await until(() => received.some((r) => r.type === "status"));
    for (let i = 0; i < 5; i++) publish("token", { text: `a${i}` });
    await until(() => received.filter((r) => r.type === "token").length === 5);
    d.daemon.services.get(SessionEventLogToken).publish(id, { type: "token", text: "a5" });
    await until(() => received.filter((r) => r.type === "token").length === 6);
    d.daemon.reloadToken(); // same token on disk: streams are closed and must re-authenticate

    for (let i = 6; i < 10; i++) publish("token", { text: `a${i}` });
    await until(() => received.filter((r) => r.type === "token").length === 10);
    es.close();
    expect(opened).to.equal(2);
    const texts = received.filter((r) => r.type === "token").map((r) => r.text);
    expect(texts).to.deep.equal(Array.from({ length: 10 }, (_, i) => `a${i}`));
  });

  it("tells a client with an unusable Last-Event-ID to resync", async () => {
    for (const bad of ["abc", "999999"]) {
      const c = await d.sse(`/sessions/${id}/events`, { lastEventId: bad });
      const r = await c.waitForType("resync");
      expect(r.json.reason).to.be.a("string");
      c.close();
    }
  });

  it("sends two clients the identical frames", async () => {
    const a = await d.sse(`/sessions/${id}/events`);
    const b = await d.sse(`/sessions/${id}/events`);
    await Promise.all([a.waitForType("status"), b.waitForType("status")]);
    for (let i = 0; i < 200; i++) {
      if (i % 10 === 9) publish("notice", { message: `x${i}` });
      else publish("token", { text: `x${i}` });
    }
    publish("end", { reason: "stop" });
    await Promise.all([a.waitForType("end"), b.waitForType("end")]);
    const frames = (c: SseClient) => c.frames.filter((f) => f.id !== undefined).map((f) => `${f.id}|${f.data}`);
    expect(frames(a)).to.have.length(201);
    expect(frames(a)).to.deep.equal(frames(b));
    a.close();
    b.close();
  });

  it("bounds the memory of a stalled client and catches it up exactly once when it reads again", async function () {
    // 16 MB of frames go through the store (on PostgreSQL in one append) and are read back twice.
    this.timeout(60_000);
    const stalled = await d.sse(`/sessions/${id}/events`, { paused: true });
    const live = await d.sse(`/sessions/${id}/events`);
    await live.waitForType("status");
    const chunk = "y".repeat(4096);
    const N = 4000; // ~16 MB, far beyond socket buffers and the 64 KiB queue bound
    for (let i = 0; i < N; i++) publish("token", { text: chunk, n: i });
    publish("end", { reason: "stop" });
    const status = await d.get("/server/status");
    expect(status.body.sseClients).to.equal(2);
    // Each client is bounded by its own queue limit (plus at most one frame over it).
    expect(status.body.sseQueuedBytes).to.be.at.most(2 * (65536 + 8192));
    await live.waitForType("end", 30_000);
    stalled.resume();
    await stalled.waitForType("end", 30_000);
    const ns = stalled.ofType("token").map((f) => f.json.n);
    expect(ns).to.have.length(N);
    for (let i = 0; i < N; i++) if (ns[i] !== i) expect.fail(`frame ${i} is n=${ns[i]}`);
    stalled.close();
    live.close();
  });

  it("streams lifecycle events of all sessions on /sessions/events, resumable by Last-Event-ID", async () => {
    const feed = await d.sse("/sessions/events");
    const hello = await feed.waitForType("connected");
    const b = await d.createSession();
    const created = await feed.waitFor((f) => f.json?.type === "session_created" && f.json.sessionId === b);
    expect(created.json.session).to.include({ id: b, status: "idle" });
    await d.post(`/sessions/${b}/rename`, { title: "x" });
    await feed.waitFor((f) => f.json?.type === "session_update" && f.json.session.title === "x");
    feed.close();
    const again = await d.sse("/sessions/events", { lastEventId: hello.json.lastSeq });
    await again.waitFor((f) => f.json?.type === "session_update" && f.json.session.title === "x");
    expect(again.ofType("session_created").map((f) => f.json.sessionId)).to.deep.equal([b]);
    again.close();
  });
});
