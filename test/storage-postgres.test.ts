import { rmSync } from "node:fs";
import { expect } from "chai";
import pg from "pg";
import { EventBusToken } from "../core/index.js";
import { redactUrl } from "../plugins/storage-postgres/connection.js";
import { PG_SCHEMA_VERSION } from "../plugins/storage-postgres/migrations.js";
import { PostgresSessionStore } from "../plugins/storage-postgres/store.js";
import { type DaemonProcess, makeTempHome, spawnDaemon, startTestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, turn } from "../testing/fake-provider.js";
import { type PgCluster, pgCluster } from "./support/postgres.js";
import { sessionRecord } from "./support/session-record.js";

const session = sessionRecord;

const at = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
const ids = (r: { sessions: { id: string }[] }) => r.sessions.map((s) => s.id);

async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/**
 * storage-postgres on a throwaway cluster the harness starts itself (test/support/postgres.ts): the store's
 * contract, its migrations, and a daemon selecting it with AGENTD_DATABASE_URL or `database.url`.
 */
describe("storage-postgres: SessionStore on PostgreSQL", function () {
  this.timeout(60_000);
  let cluster: PgCluster;
  before(async () => {
    cluster = await pgCluster();
  });

  describe("the store", () => {
    let url: string;
    let store: PostgresSessionStore;
    beforeEach(async () => {
      url = await cluster.createDatabase();
      store = new PostgresSessionStore({ url });
      await store.opened();
    });
    afterEach(() => store.close());

    it("round-trips a record with its JSON fields, updates and deletes it", async () => {
      const rec = session("a", { title: "T\0itle", meta: { todos: [{ content: "x", status: "pending" }] } });
      await store.createSession(rec);
      expect(await store.getSession("a")).to.deep.equal({ ...rec, title: "T\uFFFDitle" });
      const next = await store.updateSession("a", { pinned: true, mode: "plan", shareToken: "tok" });
      expect(next).to.include({ pinned: true, mode: "plan", shareToken: "tok" });
      expect(next?.updatedAt).to.not.equal(rec.updatedAt);
      expect(await store.getSession("a")).to.deep.equal(next);
      expect((await store.findByShareToken("tok"))?.id).to.equal("a");
      expect(await store.updateSession("missing", { title: "x" })).to.equal(undefined);
      expect(await store.deleteSession("a")).to.equal(true);
      expect(await store.deleteSession("a")).to.equal(false);
      expect(await store.getSession("a")).to.equal(undefined);
    });

    it("lists pinned first, then most recently updated, with paging, a total and the listing's fields", async () => {
      await store.createSession(session("a", { updatedAt: at(1) }));
      await store.createSession(session("b", { updatedAt: at(3) }));
      await store.createSession(session("c", { updatedAt: at(2), pinned: true }));
      expect(ids(await store.listSessions({}))).to.deep.equal(["c", "b", "a"]);
      const page = await store.listSessions({ limit: 1, offset: 1 });
      expect(page.total).to.equal(3);
      expect(ids(page)).to.deep.equal(["b"]);
      // The unfiltered total is a counter the database keeps: exact with two daemons creating at once, and deletes.
      const other = new PostgresSessionStore({ url });
      try {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).createSession(session(`n${i}`))),
        );
      } finally {
        await other.close();
      }
      expect((await store.listEntries({ limit: 1 })).total).to.equal(23);
      await store.deleteSession("n0");
      await store.deleteSession("missing");
      expect((await store.listEntries({ limit: 1 })).total).to.equal(22);
      expect((await store.listEntries({ q: "zzz", limit: 1 })).total).to.equal(0);
      for (let i = 1; i < 20; i++) await store.deleteSession(`n${i}`);
      const entries = await store.listEntries({});
      const full = await store.listSessions({});
      expect(entries.sessions[0]).to.deep.equal({
        id: "c",
        title: null,
        pinned: true,
        persona: "default",
        model: "m",
        cwd: "/tmp",
        mode: "build",
        isSandbox: false,
        messageCount: 0,
        createdAt: full.sessions[0]?.createdAt,
        updatedAt: at(2),
      });
    });

    it("searches titles and message text with PostgreSQL's text search (prefix, diacritics folded)", async () => {
      await store.createSession(session("a", { title: "Refactor the parser", updatedAt: at(1) }));
      await store.createSession(session("b", { title: "Other", updatedAt: at(2) }));
      await store.createSession(session("c", { title: "100% done_ok", updatedAt: at(3) }));
      await store.appendMessage("b", { role: "user", content: "please fix the tokenizer" });
      await store.appendMessage("b", { role: "assistant", content: [{ type: "text", text: "Fixed the café lexer" }] });
      await store.appendMessage("c", { role: "tool", content: "tokenizer in tool output", toolCallId: "x" });

      expect(ids(await store.listSessions({ q: "parser" }))).to.deep.equal(["a"]);
      expect(ids(await store.listSessions({ q: "PARS" }))).to.deep.equal(["a"]);
      expect(ids(await store.listSessions({ q: "tokeni" }))).to.deep.equal(["b"]);
      expect(ids(await store.listSessions({ q: "tokenizer cafe" }))).to.deep.equal(["b"]);
      expect(ids(await store.listSessions({ q: "tokenizer parser" }))).to.deep.equal([]);
      expect(ids(await store.listSessions({ q: "100%" }))).to.deep.equal(["c"]);
      expect(ids(await store.listSessions({ q: "e_o" }))).to.deep.equal(["c"]);
      expect(await store.listSessions({ q: "the", limit: 1 })).to.deep.include({ total: 2 });
      expect(ids(await store.listSessions({ q: "   " }))).to.have.length(3);
    });

    it("never lets hostile search input reach SQL or tsquery syntax", async () => {
      await store.createSession(session("a", { title: 'say "hi"' }));
      await store.appendMessage("a", { role: "user", content: "foo'bar & !x | (y) <-> z:* it's" });
      const hostile = ["'", "&", "!", "|", "(", ")", "<->", ":*", "'; DROP TABLE sessions; --", "\\", "a:b", "\0x"];
      for (const q of hostile) {
        await store.listSessions({ q });
        await store.searchMessages(q);
      }
      expect(ids(await store.listSessions({ q: "foo'bar" }))).to.deep.equal(["a"]);
      expect(ids(await store.listSessions({ q: '"hi"' }))).to.deep.equal(["a"]);
      expect((await store.searchMessages("it's")).map((h) => h.sessionId)).to.deep.equal(["a"]);
      expect(await store.getSession("a")).to.not.equal(undefined);
    });

    it("answers searches from the GIN index, not a scan of the messages", async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        // A handful of rows makes a sequential scan cheapest; without it the index must be able to answer.
        await c.query("SET enable_seqscan = off");
        const plan = await c.query("EXPLAIN SELECT id FROM messages WHERE search @@ agentd_prefix_query('fox')");
        expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).to.match(/Index Scan on messages_search/);
      } finally {
        await c.end();
      }
    });

    it("finds sessions by working directory from its index, byte-wise whatever the locale", async () => {
      const dirs = { a: "/p", b: "/p/a", c: "/p/a", d: "/p-old", e: "/P/x", f: "/pq", g: "/" };
      for (const [id, cwd] of Object.entries(dirs)) await store.createSession(session(id, { cwd }));
      const below = async (dir: string, limit: number) => {
        const out: string[] = [];
        for (let after: { id: string; cwd: string } | undefined; ; ) {
          const page = await store.sessionsInDirectory(dir, { below: true, after, limit });
          out.push(...page.map((r) => `${r.id}:${r.cwd}`));
          if (page.length < limit) return out;
          after = page.at(-1);
        }
      };
      expect(await below("/p", 1)).to.deep.equal(["a:/p", "b:/p/a", "c:/p/a"]);
      expect(await below("/", 2)).to.have.length(7);
      const at = await store.sessionsInDirectory("/p/a", { below: false, after: { cwd: "/p/a", id: "b" }, limit: 5 });
      expect(at).to.deep.equal([{ id: "c", cwd: "/p/a" }]);
      expect(await store.usedDirectories(["/p/a/z", "/p/a", "/p", "/"])).to.deep.equal(["/", "/p", "/p/a"]);
      expect(await store.distinctDirectories("", 100)).to.deep.equal(["/", "/P/x", "/p", "/p-old", "/p/a", "/pq"]);
      expect(await store.distinctDirectories("/p", 2)).to.deep.equal(["/p-old", "/p/a"]);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query("SET enable_seqscan = off");
        const plan = await c.query(
          `EXPLAIN SELECT id, cwd FROM sessions WHERE cwd COLLATE "C" >= '/p' AND cwd COLLATE "C" < '/p0'
            ORDER BY cwd COLLATE "C", id LIMIT 5`,
        );
        expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).to.match(/Index (Only )?Scan using sessions_cwd/);
      } finally {
        await c.end();
      }
    });

    it("assigns dense message seqs, counts, pages history and truncates without reusing a seq", async () => {
      await store.createSession(session("s"));
      for (let i = 0; i < 3; i++) {
        await store.appendMessage("s", { role: "user", content: `q${i}`, clientMessageId: `cm${i}` });
        await store.appendMessage("s", {
          role: "assistant",
          content: null,
          toolCalls: [{ id: `c${i}`, name: "ls", arguments: "{}" }],
        });
        await store.appendMessage("s", { role: "tool", content: "out", toolCallId: `c${i}`, toolName: "ls" });
        await store.appendMessage("s", { role: "assistant", content: `a${i}`, thinking: "hmm" });
      }
      expect((await store.getSession("s"))?.messageCount).to.equal(6);
      const page = await store.historyPage("s", 1);
      expect(page.messages.map((m) => m.seq)).to.deep.equal([9, 10, 11, 12]);
      expect(page).to.include({ oldestSeq: 9, hasMoreHistory: true });
      expect((await store.historyPage("s", 1, 9)).messages.map((m) => m.seq)).to.deep.equal([5, 6, 7, 8]);
      expect(page.messages[3]).to.include({ role: "assistant", content: "a2", thinking: "hmm" });
      expect(page.messages[1]?.toolCalls).to.deep.equal([{ id: "c2", name: "ls", arguments: "{}" }]);
      expect(await store.hasClientMessageId("s", "cm1")).to.equal(true);
      expect(await store.hasClientMessageId("s", "nope")).to.equal(false);
      expect((await store.readMessages("s", 10, 2)).map((m) => m.seq)).to.deep.equal([11, 12]);

      await store.markOutOfContext("s", 8);
      expect((await store.contextMessages("s")).map((m) => m.seq)).to.deep.equal([9, 10, 11, 12]);
      await store.truncateMessages("s", 9);
      expect((await store.getSession("s"))?.messageCount).to.equal(4);
      expect((await store.appendMessage("s", { role: "user", content: "again" })).seq).to.equal(13);
      await store.appendMessages("s", [
        { role: "user", content: "x" },
        { role: "assistant", content: "y" },
      ]);
      expect((await store.readMessages("s", 12, 10)).map((m) => m.seq)).to.deep.equal([13, 14, 15]);
      const missing = await store.appendMessage("nope", { role: "user", content: "x" }).catch((e: Error) => e);
      expect(missing).to.be.instanceOf(Error).with.property("status", 404);
    });

    it("keeps seqs dense and unique when two stores (two daemons) append to one session at once", async () => {
      const other = new PostgresSessionStore({ url });
      try {
        await store.createSession(session("s"));
        const appends = [];
        for (let i = 0; i < 40; i++) {
          appends.push((i % 2 ? store : other).appendMessage("s", { role: "user", content: `m${i}` }));
        }
        const seqs = (await Promise.all(appends)).map((m) => m.seq).sort((a, b) => a - b);
        expect(seqs).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
        expect((await other.getSession("s"))?.messageCount).to.equal(40);
      } finally {
        await other.close();
      }
    });

    it("searches message text with snippets, newest first, scoped by session", async () => {
      await store.createSession(session("s"));
      await store.createSession(session("t", { title: "Second" }));
      const long = `${"filler ".repeat(40)}the quick brown fox jumps ${"filler ".repeat(40)}`;
      await store.appendMessage("s", { role: "user", content: long });
      await store.appendMessage("t", { role: "assistant", content: "a fox again" });
      await store.appendMessage("t", { role: "tool", content: "fox in tool output", toolCallId: "c" });
      const hits = await store.searchMessages("fox");
      expect(hits.map((h) => [h.sessionId, h.seq])).to.deep.equal([
        ["t", 1],
        ["s", 1],
      ]);
      expect(hits[0]).to.include({ sessionTitle: "Second", role: "assistant", snippet: "a fox again" });
      expect(hits[1]?.snippet).to.contain("fox");
      expect(hits[1]?.snippet.length).to.be.lessThan(long.length / 2);
      expect((await store.searchMessages("quick fox")).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect((await store.searchMessages("fox", { sessionId: "s" })).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect((await store.searchMessages("fox", { excludeSessionId: "t" })).map((h) => h.sessionId)).to.deep.equal([
        "s",
      ]);
      expect(await store.searchMessages("fox", { limit: 1 })).to.have.length(1);
      expect(await store.searchMessages("  ")).to.deep.equal([]);
    });

    it("appends event batches, ignores duplicate seqs, reads durable-only, keeps the feed; delete cascades", async () => {
      await store.createSession(session("s"));
      const ev = (seq: number, ephemeral = false) => ({ seq, ts: at(seq), type: "x", json: `{"n":${seq}}`, ephemeral });
      await store.appendBatch({
        sessions: [{ sessionId: "s", events: [ev(1), ev(2, true), ev(3)] }],
        feed: [{ seq: 1, ts: at(1), type: "f", json: "{}" }],
      });
      await store.appendEvents("s", [ev(3), ev(4)]);
      expect((await store.readEvents("s", 0, 10)).map((e) => e.seq)).to.deep.equal([1, 2, 3, 4]);
      expect((await store.readEvents("s", 0, 10, { durableOnly: true })).map((e) => e.seq)).to.deep.equal([1, 3, 4]);
      expect(await store.readEvents("s", 1, 1)).to.deep.equal([{ seq: 2, ts: at(2), type: "x", json: '{"n":2}' }]);
      await store.appendFeed({ seq: 2, ts: at(2), type: "g", json: "{}" });
      expect(await store.feedSeq()).to.equal(2);
      expect((await store.readFeed(0, 5)).map((e) => e.type)).to.deep.equal(["f", "g"]);
      expect(await store.eventSeqReserved("s")).to.equal(0);
      await store.reserveEventSeq("s", 1000);
      expect(await store.eventSeqReserved("s")).to.equal(1000);
      // A failing batch is rolled back as a whole.
      const failed = await store
        .appendBatch({
          sessions: [
            { sessionId: "s", events: [ev(5)] },
            { sessionId: "gone", events: [ev(1)] },
          ],
          feed: [],
        })
        .catch((e: Error) => e);
      expect(failed).to.be.instanceOf(Error);
      expect((await store.readEvents("s", 4, 10)).map((e) => e.seq)).to.deep.equal([]);
      await store.appendMessage("s", { role: "user", content: "hello" });
      await store.deleteSession("s");
      const left = await query<{ n: number }>(
        url,
        "SELECT (SELECT COUNT(*) FROM messages)::int + (SELECT COUNT(*) FROM events)::int AS n",
      );
      expect(left[0]?.n).to.equal(0);
    });
  });

  describe("migrations", () => {
    it("two stores opening one new database at once migrate it once, under the advisory lock", async () => {
      const url = await cluster.createDatabase();
      const stores = [1, 2, 3].map(() => new PostgresSessionStore({ url }));
      try {
        await Promise.all(stores.map((s) => s.opened()));
        const rows = await query<{ version: number }>(url, "SELECT version FROM agentd_schema");
        expect(rows).to.deep.equal([{ version: PG_SCHEMA_VERSION }]);
        await stores[0]?.createSession(session("a"));
        expect((await stores[2]?.getSession("a"))?.id).to.equal("a");
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it("refuses a database written by a newer agentd, and reports a failing step by its description", async () => {
      const newer = await cluster.createDatabase();
      await query(
        newer,
        "CREATE TABLE agentd_schema (version INTEGER NOT NULL); INSERT INTO agentd_schema VALUES (99)",
      );
      const a = new PostgresSessionStore({ url: newer });
      const e1 = await a.opened().catch((e: Error) => e);
      expect(e1?.message).to.match(/schema version 99.*newer agentd/);
      await a.close();

      const clash = await cluster.createDatabase();
      await query(clash, "CREATE TABLE feed (x INTEGER)");
      const b = new PostgresSessionStore({ url: clash });
      const e2 = await b.opened().catch((e: Error) => e);
      expect(e2?.message).to.match(/migrating to version 1 \(sessions, messages.*\) failed: relation "feed" already/);
      await b.close();
      // The failed step left nothing behind: version 0, no half-made tables.
      expect(await query(clash, "SELECT version FROM agentd_schema")).to.deep.equal([{ version: 0 }]);
      expect(await query(clash, "SELECT 1 FROM pg_tables WHERE tablename = 'sessions'")).to.deep.equal([]);
    });
  });

  describe("a daemon on PostgreSQL", () => {
    let fake: FakeProvider;
    beforeEach(async () => {
      fake = await startFakeProvider();
    });
    afterEach(() => fake.close());

    it("keeps its sessions in the database AGENTD_DATABASE_URL names; SQLite is left alone", async () => {
      const url = await cluster.createDatabase();
      const d = await startTestDaemon({
        env: { AGENTD_DATABASE_URL: url },
        config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } },
      });
      try {
        const plugins = (await d.get("/server/status")).body.plugins as Array<{ id: string; state: string }>;
        expect(plugins.find((p) => p.id === "storage-postgres")?.state).to.equal("active");
        expect(plugins.find((p) => p.id === "storage-sqlite")?.state).to.equal("disabled");
        const id = await d.createSession({ title: "on postgres" });
        const sse = await d.sse(`/sessions/${id}/events`);
        fake.script(turn({ content: "stored answer" }));
        expect((await d.post(`/sessions/${id}/chat`, { text: "hello postgres" })).status).to.equal(202);
        await sse.waitForType("end");
        sse.close();
        expect((await d.get("/sessions?q=postgres")).body.map((s: { id: string }) => s.id)).to.deep.equal([id]);
        const rows = await query<{ role: string }>(
          url,
          "SELECT role FROM messages WHERE session_id = $1 ORDER BY seq",
          [id],
        );
        expect(rows.map((r) => r.role)).to.deep.equal(["user", "assistant"]);
      } finally {
        await d.cleanup();
      }
    });

    it("reconnects by itself after the server restarted, and says whether it is connected meanwhile", async () => {
      const url = await cluster.createDatabase();
      const d = await startTestDaemon({ env: { AGENTD_DATABASE_URL: url } });
      try {
        const id = await d.createSession({ title: "kept across a restart" });
        expect((await d.get("/server/status")).body.database).to.deep.include({ kind: "postgres", connected: true });
        await cluster.stop();
        try {
          const during = await d.get("/sessions");
          expect(during.status).to.equal(503);
          expect(during.body.error).to.match(
            /^the database postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is unavailable: /,
          );
          expect((await d.get("/server/status")).body.database.connected).to.equal(false);
        } finally {
          await cluster.start();
        }
        const after = await d.get("/sessions");
        expect(after.status).to.equal(200);
        expect(after.body.map((s: { id: string }) => s.id)).to.deep.equal([id]);
        expect((await d.get("/server/status")).body.database.connected).to.equal(true);
      } finally {
        await d.cleanup();
      }
    });

    it("a server restart mid-turn: the turn ends with an error, nothing acknowledged is lost, the next turn works", async () => {
      const url = await cluster.createDatabase(undefined, { migrated: true });
      const d = await startTestDaemon({
        env: { AGENTD_DATABASE_URL: url },
        config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } },
      });
      try {
        const id = await d.createSession({ title: "restarted under a turn" });
        const sse = await d.sse(`/sessions/${id}/events`);
        let release: () => void = () => {};
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        fake.script(turn({ content: "half an answer" }, { waitFor: held }, { content: " and the rest" }));
        expect((await d.post(`/sessions/${id}/chat`, { text: "acknowledged question" })).status).to.equal(202);
        await sse.waitFor((f) => f.json.type === "token");
        // The turn's end, as the daemon's plugins see it (its stream's frames need the database: it numbers them).
        const ended = new Promise<string>((resolve) => {
          const sub = d.daemon.services.get(EventBusToken).on("turn.ended", (e) => {
            if (e.sessionId !== id) return;
            sub.dispose();
            resolve(e.reason);
          });
        });
        await cluster.stop();
        try {
          release();
          expect(await ended).to.equal("error");
        } finally {
          await cluster.start();
        }
        // The events published while the server was away waited, in order, and reach the client once it is back.
        const end = await sse.waitForType("end", 30_000);
        sse.close();
        // Exactly one end, an error: the answer could not be stored while the server was away.
        expect(end?.json.reason).to.equal("error");
        // The daemon reconnects by itself: the acknowledged message is there, and the next turn runs and is stored.
        const again = await d.sse(`/sessions/${id}/events`);
        fake.script(turn({ content: "second answer" }));
        const second = await d.post(`/sessions/${id}/chat`, { text: "after the restart" });
        expect(second.status, JSON.stringify(second.body)).to.equal(202);
        await again.waitForType("end", 30_000);
        again.close();
        const rows = await query<{ role: string; content: string }>(
          url,
          "SELECT role, content FROM messages WHERE session_id = $1 ORDER BY seq",
          [id],
        );
        // (content is stored as JSON)
        expect(rows.filter((r) => r.role === "user").map((r) => JSON.parse(r.content))).to.deep.equal([
          "acknowledged question",
          "after the restart",
        ]);
        expect(rows.at(-1)?.role).to.equal("assistant");
        expect(JSON.parse(rows.at(-1)?.content ?? "null")).to.equal("second answer");
        const ends = (await d.get(`/sessions/${id}/events/history`)).body.events.filter(
          (e: { type: string }) => e.type === "end",
        );
        expect(ends).to.have.length(2);
      } finally {
        await d.cleanup();
      }
    });

    it("two `agentd serve` started at once on an empty database: one migrates, both serve the same sessions", async () => {
      const url = await cluster.createDatabase();
      const homes = [makeTempHome(), makeTempHome()];
      const daemons = await Promise.all(homes.map((home) => spawnDaemon(home, { AGENTD_DATABASE_URL: url })));
      try {
        expect(await query(url, "SELECT version FROM agentd_schema")).to.deep.equal([{ version: PG_SCHEMA_VERSION }]);
        const [a, b] = daemons as [DaemonProcess, DaemonProcess];
        const id = await a.client.createSession({ title: "made on A" });
        expect((await b.client.get(`/sessions/${id}`)).body.title).to.equal("made on A");
      } finally {
        for (const p of daemons) {
          p.child.kill("SIGTERM");
          await p.exited;
        }
        for (const home of homes) rmSync(home, { recursive: true, force: true });
      }
    });

    it("takes the URL from the config key database.url", async () => {
      const url = await cluster.createDatabase();
      const d = await startTestDaemon({ config: { database: { url } } });
      try {
        const id = await d.createSession({ title: "from config" });
        expect(await query(url, "SELECT title FROM sessions WHERE id = $1", [id])).to.deep.equal([
          { title: "from config" },
        ]);
      } finally {
        await d.cleanup();
      }
    });

    it("does not start on an unreachable server or a wrong URL: one line, the URL redacted, the cause", async () => {
      const home = makeTempHome();
      try {
        const refused = `postgres://agentd:s3cret-pw@127.0.0.1:${cluster.port + 1}/nodb`;
        const p = await spawnDaemon(home, { AGENTD_DATABASE_URL: refused }).then(
          () => {
            throw new Error("the daemon started");
          },
          (e: Error) => e,
        );
        expect(p.message).to.contain("cannot use the database postgres://agentd:***@127.0.0.1:");
        expect(p.message).to.match(/ECONNREFUSED/);
        expect(p.message).to.not.contain("s3cret-pw");

        const noDb = cluster.url("no_such_database").replace("postgres@", "postgres:pw-xyz@");
        const err = await startTestDaemon({ home, env: { AGENTD_DATABASE_URL: noDb } }).then(
          async (d) => {
            await d.stop();
            return undefined;
          },
          (e: Error) => e,
        );
        expect(err?.message).to.equal(
          `cannot use the database ${redactUrl(noDb)}: database "no_such_database" does not exist`,
        );
        expect(err?.message).to.not.contain("pw-xyz");
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });

    it("does not start when it cannot open its listening connection: one line, the URL redacted, the cause", async () => {
      // A role allowed one connection (superusers ignore limits): the store's calls take it, the LISTEN finds none.
      const role = `one_conn_${process.pid}`;
      const admin = new pg.Client({ connectionString: cluster.url("postgres") });
      await admin.connect();
      await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
      await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
      await admin.end();
      const url = cluster.url(role).replace("postgres@", `${role}:pw-l@`);
      const err = await startTestDaemon({ env: { AGENTD_DATABASE_URL: url } }).then(
        async (d) => {
          await d.cleanup();
          return undefined;
        },
        (e: Error) => e,
      );
      expect(err?.message).to.contain(`cannot listen on the database ${redactUrl(url)}: `);
      expect(err?.message).to.match(/too many connections/);
      expect(err?.message).to.not.contain("pw-l");
    });

    it("refuses a config database.url that is not a postgres:// URL", async () => {
      const err = await startTestDaemon({ config: { database: { url: "mysql://x@y/z" } } }).then(
        async (d) => {
          await d.cleanup();
          return undefined;
        },
        (e: Error) => e,
      );
      expect(err?.message).to.match(/database\.url/);
    });

    it("redacts the password of a URL however it is given", () => {
      expect(redactUrl("postgres://u:p%40ss@h:1/db")).to.equal("postgres://u:***@h:1/db");
      expect(redactUrl("postgresql://h/db?password=x&sslmode=require")).to.equal(
        "postgresql://h/db?password=***&sslmode=require",
      );
      expect(redactUrl("postgres://u@h/db")).to.equal("postgres://u@h/db");
    });
  });
});
