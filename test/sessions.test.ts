import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { SessionServiceToken } from "../core/session-service.js";
import { SessionStoreToken } from "../core/store.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { startFakeProvider } from "../testing/fake-provider.js";
import { sessionRecord } from "./support/session-record.js";

describe("sessions: lifecycle and metadata", () => {
  let d: TestDaemon;
  let cwd: string;
  beforeEach(async () => {
    d = await startTestDaemon({ env: { AGENTD_MODEL: "test-model" } });
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cwd-")));
  });
  afterEach(async () => d.cleanup());

  it("creates a session (201 {id, session}) that survives a restart", async () => {
    const res = await d.post("/sessions", { cwd, title: "  My task  " });
    expect(res.status).to.equal(201);
    const { id, session } = res.body;
    expect(id).to.match(/^[a-z0-9]{10,}$/);
    expect(session).to.include({
      id,
      cwd,
      persona: "default",
      model: "test-model",
      mode: "build",
      status: "idle",
      title: "My task",
    });
    expect(session.messageCount).to.equal(0);

    await d.stop();
    const d2 = await startTestDaemon({ home: d.home });
    try {
      const got = await d2.get(`/sessions/${id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.include({ id, cwd, title: "My task", status: "idle", shareToken: null, streaming: null });
      expect(got.body.messages).to.deep.equal([]);
      const list = await d2.get("/sessions");
      expect(list.body.map((s: { id: string }) => s.id)).to.include(id);
    } finally {
      await d2.stop();
    }
  });

  it("creates sandbox sessions in a scratch directory under the home", async () => {
    const res = await d.post("/sessions", { cwd: "sandbox" });
    expect(res.status).to.equal(201);
    expect(res.body.session.isSandbox).to.equal(true);
    expect(res.body.session.cwd.startsWith(realpathSync(d.home))).to.equal(true);
  });

  it("lists a plain array without paging params and a page with them", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await d.createSession({ cwd, title: `task ${i}` }));
    const plain = await d.get("/sessions");
    expect(plain.body).to.be.an("array").with.length(5);
    const page = await d.get("/sessions?limit=2&offset=1");
    expect(page.body).to.include({ total: 5, limit: 2, offset: 1 });
    expect(page.body.sessions).to.have.length(2);
    const def = await d.get("/sessions?offset=0");
    expect(def.body).to.include({ limit: 50, offset: 0, total: 5 });
    const search = await d.get("/sessions?q=task%203");
    expect(search.body.map((s: { title: string }) => s.title)).to.include("task 3");
    const hostile = await d.get(`/sessions?q=${encodeURIComponent('"AND( NEAR * -')}`);
    expect(hostile.status).to.equal(200);
  });

  it("lists hundreds of sessions as the same JSON as its pages (the long answer is sent in slices)", async () => {
    const store = d.daemon.services.get(SessionStoreToken);
    const title = (i: number) => `long list ${i} \u00e9\u2026\u{1f600} "q" \\`;
    for (let i = 0; i < 600; i++) {
      const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
      await store.createSession(
        sessionRecord(`s${String(i).padStart(4, "0")}`, { cwd, title: title(i), updatedAt: at }),
      );
    }
    const plain = await d.get("/sessions");
    expect(plain.status).to.equal(200);
    expect(plain.body).to.have.length(600);
    expect(plain.body[0]).to.include({ id: "s0599", title: title(599) });
    expect(plain.text).to.equal(JSON.stringify(plain.body));
    expect(plain.headers.get("content-length")).to.equal(String(Buffer.byteLength(plain.text)));
    const paged: unknown[] = [];
    for (let offset = 0; offset < 600; offset += 200) {
      paged.push(...(await d.get(`/sessions?limit=200&offset=${offset}`)).body.sessions);
    }
    expect(plain.body).to.deep.equal(paged);
  });

  it("lists 0, 1, 255, 256 and 257 sessions as one JSON array (the edges of its parts)", async () => {
    const store = d.daemon.services.get(SessionStoreToken);
    let made = 0;
    for (const n of [0, 1, 255, 256, 257]) {
      for (; made < n; made++) await store.createSession(sessionRecord(`e${String(made).padStart(4, "0")}`, { cwd }));
      const plain = await d.get("/sessions");
      expect(plain.text).to.equal(JSON.stringify(plain.body));
      expect(plain.headers.get("content-length")).to.equal(String(Buffer.byteLength(plain.text)));
      const paged: unknown[] = [];
      for (let offset = 0; offset < n; offset += 200) {
        paged.push(...(await d.get(`/sessions?limit=200&offset=${offset}`)).body.sessions);
      }
      expect(plain.body).to.have.length(n).and.to.deep.equal(paged);
    }
  });

  it("lists every session as its pages do after each change (the text kept of unchanged ones is never stale)", async () => {
    const fake = await startFakeProvider();
    const t = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } } });
    try {
      const listed = async () => {
        const plain = await t.get("/sessions");
        expect(plain.body).to.deep.equal((await t.get("/sessions?limit=200")).body.sessions);
        return plain.body as Array<{ id: string; status: string; title?: string; messageCount: number }>;
      };
      const a = await t.createSession({ cwd });
      const b = await t.createSession({ cwd, title: "b" });
      expect((await listed()).map((s) => s.id)).to.deep.equal([b, a]);
      expect((await listed()).map((s) => s.id)).to.deep.equal([b, a]);
      await t.post(`/sessions/${a}/rename`, { title: "renamed" });
      expect((await listed())[0]).to.include({ id: a, title: "renamed" });
      await t.post(`/sessions/${b}/pin`, { pinned: true });
      expect((await listed())[0]).to.include({ id: b, pinned: true });

      // A turn held by the provider: running, then idle with its two messages.
      let release: () => void = () => {};
      fake.script({ steps: [{ waitFor: new Promise<void>((r) => (release = r)) }, { content: "done" }] });
      const sse = await t.sse(`/sessions/${a}/events`);
      expect((await t.post(`/sessions/${a}/chat`, { text: "hello" })).status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "user_message");
      expect((await listed()).find((s) => s.id === a)).to.include({ status: "running", messageCount: 1 });
      release();
      await sse.waitFor((f) => f.json?.type === "session_end");
      sse.close();
      expect((await listed()).find((s) => s.id === a)).to.include({ status: "idle", messageCount: 2 });

      expect((await t.delete(`/sessions/${b}/permanent`)).status).to.equal(200);
      expect((await listed()).map((s) => s.id)).to.deep.equal([a]);
    } finally {
      await t.cleanup();
      await fake.close();
    }
  });

  it("renames, pins (pinned first in the list), shares and revokes", async () => {
    const a = await d.createSession({ cwd });
    const b = await d.createSession({ cwd });
    expect((await d.post(`/sessions/${a}/rename`, { title: `  ${"t".repeat(300)} ` })).body).to.deep.equal({
      ok: true,
      title: "t".repeat(200),
    });
    expect((await d.post(`/sessions/${a}/pin`, { pinned: true })).body).to.deep.equal({ ok: true, pinned: true });
    const list = await d.get("/sessions");
    expect(list.body[0].id).to.equal(a);
    expect(list.body[0].pinned).to.equal(true);
    expect(list.body.find((s: { id: string }) => s.id === b)).to.not.have.property("pinned");

    const share = await d.post(`/sessions/${a}/share`);
    expect(share.status).to.equal(200);
    expect(share.body.token).to.have.length(32);
    expect(share.body.url).to.equal(`/shared/${share.body.token}`);
    expect((await d.post(`/sessions/${a}/share`)).body.token).to.equal(share.body.token);
    expect((await d.get(`/sessions/${a}`)).body.shareToken).to.equal(share.body.token);
    expect((await d.delete(`/sessions/${a}/share`)).body).to.deep.equal({ ok: true });
    expect((await d.delete(`/sessions/${a}/share`)).body).to.deep.equal({ ok: true });
    expect((await d.get(`/sessions/${a}`)).body.shareToken).to.equal(null);
    expect((await d.delete("/sessions/nope/share")).status).to.equal(404);
  });

  it("forks the in-context messages into an independent session", async () => {
    const a = await d.createSession({ cwd, title: "orig" });
    const store = d.daemon.services.get(SessionStoreToken);
    store.appendMessage(a, { role: "user", content: "hello" });
    store.appendMessage(a, { role: "assistant", content: "hi there" });
    const fork = await d.post(`/sessions/${a}/fork`);
    expect(fork.status).to.equal(201);
    expect(fork.body.session).to.include({ title: "orig (fork)", cwd, messageCount: 2 });
    const view = await d.get(`/sessions/${fork.body.id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["hello", "hi there"]);
    store.appendMessage(fork.body.id, { role: "user", content: "only in the fork" });
    expect((await d.get(`/sessions/${a}`)).body.messages).to.have.length(2);
  });

  it("says why a searched session matched: the newest matching message, unless the title holds the terms", async () => {
    const store = d.daemon.services.get(SessionStoreToken);
    const byText = await d.createSession({ cwd, title: "Explain this project" });
    await store.appendMessage(byText, { role: "user", content: "why does the zebrafish parser fail?" });
    await store.appendMessage(byText, { role: "assistant", content: "The zebrafish parser drops the last token." });
    await store.appendMessage(byText, { role: "user", content: "thanks" });
    const byTitle = await d.createSession({ cwd, title: "Zebrafish notes" });
    await store.appendMessage(byTitle, { role: "user", content: "zebrafish again" });
    const other = await d.createSession({ cwd, title: "Explain this project" });
    await store.appendMessage(other, { role: "user", content: "nothing to see" });

    const page = (await d.get("/sessions?q=zebrafish&limit=10")).body;
    const found = new Map(page.sessions.map((s: { id: string }) => [s.id, s]));
    expect([...found.keys()].sort()).to.deep.equal([byText, byTitle].sort());
    expect(found.get(byText)).to.have.nested.property("match.seq", 2);
    expect(found.get(byText)).to.have.nested.property("match.role", "assistant");
    expect((found.get(byText) as { match: { snippet: string } }).match.snippet).to.include("zebrafish parser drops");
    expect(found.get(byTitle)).to.not.have.property("match");
    // Prefix terms match as the list does; a plain listing carries no match.
    expect(
      (await d.get("/sessions?q=zebraf&limit=10")).body.sessions.find((s: { id: string }) => s.id === byText),
    ).to.have.nested.property("match.seq", 2);
    for (const s of (await d.get("/sessions")).body) expect(s).to.not.have.property("match");
  });

  it("pages history by user turns", async () => {
    const a = await d.createSession({ cwd });
    const store = d.daemon.services.get(SessionStoreToken);
    for (let i = 0; i < 5; i++) {
      store.appendMessage(a, { role: "user", content: `q${i}` });
      store.appendMessage(a, { role: "assistant", content: `a${i}` });
    }
    const view = await d.get(`/sessions/${a}?turns=2`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["q3", "a3", "q4", "a4"]);
    expect(view.body.hasMoreHistory).to.equal(true);
    const older = await d.get(`/sessions/${a}/history?before=${view.body.oldestSeq}&turns=2`);
    expect(older.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["q1", "a1", "q2", "a2"]);
    const oldest = await d.get(`/sessions/${a}/history?before=${older.body.oldestSeq}&turns=2`);
    expect(oldest.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["q0", "a0"]);
    expect(oldest.body.hasMoreHistory).to.equal(false);
  });

  it("unloads (data kept) and deletes permanently (gone, announced on the feed)", async () => {
    const a = await d.createSession({ cwd });
    const feed = await d.sse("/sessions/events");
    const stream = await d.sse(`/sessions/${a}/events`);
    await stream.waitForType("status");
    expect((await d.delete(`/sessions/${a}`)).body).to.deep.equal({ ok: true });
    await stream.waitForType("session_closed");
    expect((await d.get(`/sessions/${a}`)).status).to.equal(200);
    expect((await d.delete(`/sessions/${a}/permanent`)).body).to.deep.equal({ ok: true });
    const deleted = await feed.waitForType("session_deleted");
    expect(deleted.json.sessionId).to.equal(a);
    expect((await d.get(`/sessions/${a}`)).status).to.equal(404);
    expect((await d.delete(`/sessions/${a}/permanent`)).status).to.equal(404);
    expect(await d.daemon.services.get(SessionStoreToken).getSession(a)).to.equal(undefined);
    feed.close();
    stream.close();
  });

  it("keeps a durable audit trail at events/history", async () => {
    const a = await d.createSession({ cwd });
    await d.post(`/sessions/${a}/rename`, { title: "renamed" });
    const log = d.daemon.services.get(SessionServiceToken);
    expect((await log.find(a))?.title).to.equal("renamed");
    const hist = await d.get(`/sessions/${a}/events/history`);
    expect(hist.status).to.equal(200);
    const types = hist.body.events.map((e: { type: string }) => e.type);
    expect(types).to.include.members(["session_created", "session_update"]);
    for (const e of hist.body.events) expect(e.payload.type).to.equal(e.type);
    expect((await d.get("/sessions/nope/events/history")).status).to.equal(404);
  });
});
