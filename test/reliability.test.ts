import { expect } from "chai";
import { SessionEventLog, SyncEventBus, silentLogger } from "../core/index.js";
import { openSqliteStore } from "../plugins/storage-sqlite/store.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import { sessionRecord } from "./support/session-record.js";
import { rawRequest } from "./support/stress/http.js";
import { deref, operations } from "./support/stress/openapi-ops.js";

/** The defects the reliability audit found (issue 14), each checked black-box against the real daemon. */
describe("reliability: defects found by fuzzing and stress", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let id: string;
  const auth = () => ({ authorization: `Bearer ${d.token}` });

  before(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } } });
    id = await d.createSession();
  });
  after(async () => {
    await d.cleanup();
    await fake.close();
  });

  it("answers 400 to a malformed percent-encoding in a path parameter", async () => {
    for (const bad of ["%zz", "%", "%E0%A4%A", "%C0%AF", "a%ZZb"]) {
      for (const path of [`/api/v1/sessions/${bad}`, `/api/v1/sessions/${bad}/history`]) {
        const res = await rawRequest(d.baseUrl, "GET", path, auth());
        expect(res.status, `${path}: ${res.text}`).to.equal(400);
        expect(JSON.parse(res.text).error).to.be.a("string");
      }
    }
  });

  it("answers 400 (not 500) to a body whose Content-Encoding does not match its bytes", async () => {
    for (const enc of ["gzip", "deflate", "br"]) {
      const res = await rawRequest(
        d.baseUrl,
        "POST",
        `/api/v1/sessions/${id}/rename`,
        { ...auth(), "content-type": "application/json", "content-encoding": enc },
        JSON.stringify({ title: "x" }),
      );
      expect(res.status, `${enc}: ${res.text}`).to.equal(400);
      expect(JSON.parse(res.text).error).to.be.a("string");
    }
    const unknown = await rawRequest(
      d.baseUrl,
      "POST",
      `/api/v1/sessions/${id}/rename`,
      { ...auth(), "content-type": "application/json", "content-encoding": "zstd-ish" },
      JSON.stringify({ title: "x" }),
    );
    expect(unknown.status).to.equal(415);
  });

  it("answers 400 to integers past what the store can hold", async () => {
    const huge = "9223372036854775808";
    for (const path of [
      `/sessions?offset=${huge}`,
      `/sessions/${id}/events/history?after=${huge}`,
      `/sessions/${id}/history?before=${huge}`,
      `/sessions/${id}/image?seq=${huge}&idx=0`,
      `/sessions?offset=-1`,
      `/sessions?offset=1e400`,
    ]) {
      const res = await d.get(path);
      expect(res.status, `${path}: ${res.text}`).to.equal(400);
    }
    expect((await d.get("/sessions?offset=0")).status).to.equal(200);
    // A NUL in a search ends an FTS5 string early: it separates words like a space (was a 500).
    expect((await d.get("/sessions?q=a%00b")).status).to.equal(200);
  });

  it("bounds every integer a request schema takes (path, query and body), in the served document", async () => {
    const doc = (await d.get("/openapi.json")).body;
    const unbounded: string[] = [];
    const walk = (s0: unknown, where: string, depth = 0): void => {
      const s = deref(doc, s0);
      if (!s || typeof s !== "object" || depth > 30) return;
      const numeric = s.type === "integer" || s.type === "number";
      const fixed = s.const !== undefined || Array.isArray(s.enum);
      if (numeric && !fixed && (s.minimum === undefined || s.maximum === undefined)) {
        unbounded.push(where);
      }
      for (const k of ["anyOf", "oneOf", "allOf"]) for (const x of s[k] ?? []) walk(x, where, depth + 1);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${where}.${k}`, depth + 1);
      if (s.items) walk(s.items, `${where}[]`, depth + 1);
      if (s.additionalProperties && typeof s.additionalProperties === "object") {
        walk(s.additionalProperties, `${where}{}`, depth + 1);
      }
    };
    for (const op of operations(doc)) {
      for (const p of op.params) walk(p.schema, `${op.method} ${op.path} ${p.in}:${p.name}`);
      if (op.body) walk(op.body, `${op.method} ${op.path} body`);
    }
    expect(unbounded).to.deep.equal([]);
  });

  it("answers HEAD on both event streams with the headers and ends", async () => {
    for (const path of [`/api/v1/sessions/${id}/events`, "/api/v1/sessions/events"]) {
      const res = await rawRequest(d.baseUrl, "HEAD", path, auth());
      expect(res.status).to.equal(200);
      expect(res.headers["content-type"]).to.match(/^text\/event-stream/);
      expect(res.text).to.equal("");
    }
    // Authentication still applies.
    expect((await rawRequest(d.baseUrl, "HEAD", `/api/v1/sessions/${id}/events`, {})).status).to.equal(401);
  });

  it("keeps seq the event's number in assistant_message and gives the message's as messageSeq", async () => {
    const sid = await d.createSession();
    const sse = await d.sse(`/sessions/${sid}/events`);
    try {
      fake.script(tools([{ name: "todo_write", args: { todos: [] }, id: "c1" }]), text("done"));
      await d.post(`/sessions/${sid}/chat`, { text: "go" });
      await sse.waitForType("end");
      const msgs = sse.ofType("assistant_message");
      expect(msgs).to.have.length(2);
      for (const f of msgs) expect(f.json.seq).to.equal(Number(f.id));
      const history = (await d.get(`/sessions/${sid}`)).body.messages as Array<{ role: string; seq: number }>;
      const assistantSeqs = history.filter((m) => m.role === "assistant").map((m) => m.seq);
      expect(msgs.map((f) => f.json.messageSeq)).to.deep.equal(assistantSeqs);
    } finally {
      sse.close();
    }
  });
});

/** Defect 8: what is kept per session is bounded, and bounding it never breaks the sequence numbers. */
describe("reliability: bounded per-session memory", () => {
  it("keeps the sequence state of a bounded number of sessions and continues every sequence exactly", async () => {
    const store = openSqliteStore(":memory:");
    const log = new SessionEventLog(store, new SyncEventBus(silentLogger), silentLogger);
    const at = "2024-01-01T00:00:00.000Z";
    const ids = Array.from({ length: 5000 }, (_, i) => `s${i}`);
    for (const id of ids) {
      store.createSession(sessionRecord(id, { createdAt: at, updatedAt: at }));
    }
    // One event per session per tick, as the daemon writes them (the log flushes at the end of every tick).
    const publish = (id: string, message: string) => {
      const seq = log.publish(id, { type: "notice", message });
      log.flushAll();
      return seq;
    };
    const first = ids.map((id) => publish(id, "one"));
    const second = ids.map((id) => publish(id, "two"));
    expect(second).to.deep.equal(first.map((s) => s + 1));
    expect((log as unknown as { seqs: Map<string, unknown> }).seqs.size).to.be.at.most(2000);
    await log.close();
    store.close();
  });
});
