import { expect } from "chai";
import pg from "pg";
import { countSql, listFilter, pgTerms } from "../plugins/storage-postgres/search.js";
import { PostgresSessionStore } from "../plugins/storage-postgres/store.js";
import { at, ids, pgClusterFixture, query, session } from "./support/storage-postgres.js";

describe("storage-postgres: SessionStore on PostgreSQL", function () {
  this.timeout(60_000);
  const fx = pgClusterFixture();

  describe("the store", () => {
    let url: string;
    let store: PostgresSessionStore;
    beforeEach(async () => {
      url = await fx.cluster.createDatabase();
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

    it("finds titles from the trigram index, not a scan of the sessions, with the listing's meaning", async () => {
      await store.createSession(session("a", { title: "Refactor the Parser", updatedAt: at(1) }));
      await store.createSession(session("b", { title: "docs", updatedAt: at(2) }));
      await store.createSession(session("c", { title: "100% done_", updatedAt: at(3) }));
      await store.createSession(session("d", { title: "ÉCOLE", updatedAt: at(4) }));
      await store.appendMessage("b", { role: "user", content: "the parser is slow" });
      expect(ids(await store.listSessions({ q: "PARSER" }))).to.deep.equal(["b", "a"]);
      // Letters fold as SQLite's LIKE folds them: ASCII only, so the two stores list the same sessions.
      expect(ids(await store.listSessions({ q: "ÉCOLE" }))).to.deep.equal(["d"]);
      expect(ids(await store.listSessions({ q: "Écol" }))).to.deep.equal(["d"]);
      expect(ids(await store.listSessions({ q: "école" }))).to.deep.equal([]);
      expect((await store.listSessions({ q: "pars", limit: 1 })).total).to.equal(2);
      expect(ids(await store.listSessions({ q: "% done_" }))).to.deep.equal(["c"]);
      expect(ids(await store.listSessions({ q: "0%" }))).to.deep.equal(["c"]);
      const { where, params } = filterOf("parser");
      const text = await planOf(url, `SELECT COUNT(*) FROM sessions s ${where}`, params);
      expect(text).to.match(/Index Scan on sessions_title_trgm/);
      expect(text).to.match(/Index Scan on messages_search/);
    });

    it("counts a one-word search's titles from their own table, which a trigger keeps as the sessions change", async () => {
      await store.createSession(session("a", { title: "Zebra crossing", updatedAt: at(1) }));
      await store.createSession(session("b", { updatedAt: at(2) })); // no title: found by its message only
      await store.appendMessage("b", { role: "user", content: "a zebra here" });
      await store.createSession(session("c", { title: "zebra twice", updatedAt: at(3) }));
      await store.appendMessage("c", { role: "user", content: "zebra in a message too" });
      await store.createSession(session("d", { title: "other", updatedAt: at(4) }));
      await store.updateSession("d", { title: "ZEBRA renamed" });
      await store.createSession(session("e", { title: "zebra gone", updatedAt: at(5) }));
      await store.deleteSession("e");
      await store.createSession(session("f", { title: "no match", updatedAt: at(6) }));
      const found = await store.listSessions({ q: "zebra", limit: 2 });
      expect(found.total).to.equal(4);
      expect(ids(await store.listSessions({ q: "zebra" }))).to.deep.equal(["d", "c", "b", "a"]);
      expect((await store.listSessions({ q: "zebra crossing", limit: 1 })).total).to.equal(1);
      expect((await store.listSessions({ q: "%", limit: 1 })).total).to.equal(0);
      expect(await query(url, "SELECT session_id, title FROM session_titles ORDER BY session_id")).to.deep.equal([
        { session_id: "a", title: "zebra crossing" },
        { session_id: "b", title: "" },
        { session_id: "c", title: "zebra twice" },
        { session_id: "d", title: "zebra renamed" },
        { session_id: "f", title: "no match" },
      ]);
      const { terms, where, params } = filterOf("zebra");
      expect(await planOf(url, countSql(terms, where), params)).to.match(/Index Scan on session_titles_trgm/);
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
});

/** A listing's condition for `q`, as the store builds it, with its parameters. */
function filterOf(q: string) {
  const terms = pgTerms(q);
  const params: unknown[] = [];
  const where = listFilter(terms, (v) => {
    params.push(v);
    return `$${params.length}`;
  });
  return { terms, where, params };
}

/** The plan PostgreSQL chooses for `sql` when it may not scan a table whole. */
async function planOf(url: string, sql: string, params: unknown[]): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("SET enable_seqscan = off");
    const plan = await c.query(`EXPLAIN ${sql}`, params);
    return plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
  } finally {
    await c.end();
  }
}
