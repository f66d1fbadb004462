import Database from "better-sqlite3";
import { expect } from "chai";
import { emptyUsage, type SessionRecord } from "../core/session-types.js";
import type { SqliteSessionStore } from "../plugins/storage-sqlite/store.js";
import { at, ids, session, sqliteStoreFixture } from "./support/storage-sqlite.js";

describe("storage-sqlite: SessionStore on SQLite", () => {
  const fx = sqliteStoreFixture();

  describe("sessions", () => {
    it("round-trips a record with its JSON fields, updates and deletes it", () => {
      const usage = { ...emptyUsage(), promptTokens: 12, cost: 0.5 };
      const rec = session("s1", {
        title: "T",
        pinned: true,
        isSandbox: true,
        usage,
        meta: { todos: [{ content: "a", status: "pending" }] },
      });
      fx.store.createSession(rec);
      expect(fx.store.getSession("s1")).to.deep.equal(rec);
      expect(fx.store.getSession("nope")).to.equal(undefined);

      const upd = fx.store.updateSession("s1", { title: null, mode: "plan", meta: { turnCap: 7 }, shareToken: "tok" });
      expect(upd).to.include({ title: null, mode: "plan", shareToken: "tok", createdAt: rec.createdAt });
      expect(upd?.updatedAt).to.be.a("string").and.not.equal(rec.updatedAt);
      expect(fx.store.getSession("s1")).to.deep.equal(upd);
      expect(fx.store.findByShareToken("tok")?.id).to.equal("s1");
      expect(fx.store.findByShareToken("other")).to.equal(undefined);
      const kept = fx.store.updateSession("s1", { pinned: false, updatedAt: at(5) });
      expect(kept?.updatedAt).to.equal(at(5));
      expect(fx.store.updateSession("nope", { title: "x" })).to.equal(undefined);

      expect(fx.store.deleteSession("s1")).to.equal(true);
      expect(fx.store.getSession("s1")).to.equal(undefined);
      expect(fx.store.deleteSession("s1")).to.equal(false);
    });

    it("lists entries with exactly the listing's fields of listSessions, in step with every write", () => {
      const fields = ["id", "title", "pinned", "persona", "model", "cwd", "mode", "isSandbox", "messageCount"] as const;
      const project = (r: SessionRecord) => {
        const o: Record<string, unknown> = {};
        for (const k of [...fields, "createdAt", "updatedAt"] as const) o[k] = r[k];
        return o;
      };
      const same = (q: Parameters<SqliteSessionStore["listSessions"]>[0] = {}) => {
        const full = fx.store.listSessions(q);
        const entries = fx.store.listEntries(q);
        expect(entries.total).to.equal(full.total);
        expect(entries.sessions).to.deep.equal(full.sessions.map(project));
      };
      fx.store.createSession(session("a", { title: "alpha", updatedAt: at(1), usage: { ...emptyUsage(), cost: 1 } }));
      fx.store.createSession(session("b", { pinned: true, isSandbox: true, mode: "plan", meta: { turnCap: 20 } }));
      same();
      same({ limit: 1, offset: 1 });
      fx.store.appendMessage("a", { role: "user", content: "hello" });
      same();
      fx.store.updateSession("b", { title: "beta", pinned: false, mode: "build" });
      same();
      fx.store.createSession(session("c", { updatedAt: at(9) }));
      same();
      same({ q: "beta" });
      fx.store.appendMessage("c", { role: "user", content: "x" });
      fx.store.truncateMessages("c", 1);
      same();
      fx.store.deleteSession("a");
      same();
      // More changed rows than are read one by one: the whole page is read again.
      for (let i = 0; i < 100; i++) fx.store.createSession(session(`n${i}`, { updatedAt: at(100 + i) }));
      same();
      for (let i = 0; i < 100; i += 3) fx.store.updateSession(`n${i}`, { title: `t${i}` });
      same();
    });

    it("keeps at most 20,000 listing entries in memory, however many sessions are paged through", () => {
      fx.store.batch(() => {
        for (let i = 0; i < 20_500; i++) fx.store.createSession(session(`p${i}`, { updatedAt: at(i) }));
      });
      const kept = () => (fx.store as unknown as { listing: { entries: Map<string, unknown> } }).listing.entries.size;
      const listed: string[] = [];
      for (let offset = 0; offset < 20_500; offset += 200) {
        listed.push(...fx.store.listEntries({ limit: 200, offset }).sessions.map((e) => e.id));
      }
      expect(listed).to.deep.equal(Array.from({ length: 20_500 }, (_, i) => `p${20_499 - i}`));
      expect(kept()).to.equal(20_000);
      // The first page again, its entries dropped meanwhile, and one of them changed: read again, as written.
      fx.store.updateSession("p20499", { title: "changed" });
      const first = fx.store.listEntries({ limit: 50 }).sessions;
      expect(first.map((e) => e.id)).to.deep.equal(listed.slice(0, 50));
      expect(first[0]?.title).to.equal("changed");
      expect(kept()).to.equal(20_000);
    });

    it("lists pinned first, then most recently updated, with paging and a total", () => {
      fx.store.createSession(session("old", { updatedAt: at(1) }));
      fx.store.createSession(session("new", { updatedAt: at(3) }));
      fx.store.createSession(session("mid", { updatedAt: at(2) }));
      fx.store.createSession(session("pin", { updatedAt: at(0), pinned: true }));
      expect(fx.store.listSessions({})).to.deep.include({ total: 4 });
      expect(ids(fx.store.listSessions({}))).to.deep.equal(["pin", "new", "mid", "old"]);
      const page = fx.store.listSessions({ limit: 2, offset: 1 });
      expect(ids(page)).to.deep.equal(["new", "mid"]);
      expect(page.total).to.equal(4);
      expect(ids(fx.store.listSessions({ offset: 3 }))).to.deep.equal(["old"]);
    });

    it("searches titles and message text (every term somewhere in the session, prefix match)", () => {
      fx.store.createSession(session("a", { title: "Refactor the parser", updatedAt: at(1) }));
      fx.store.createSession(session("b", { title: "Other", updatedAt: at(2) }));
      fx.store.createSession(session("c", { title: "100% done_ok", updatedAt: at(3) }));
      fx.store.appendMessage("b", { role: "user", content: "please fix the tokenizer" });
      fx.store.appendMessage("b", { role: "assistant", content: [{ type: "text", text: "Fixed the café lexer" }] });
      fx.store.appendMessage("c", {
        role: "tool",
        content: "tokenizer in tool output is not indexed",
        toolCallId: "x",
      });

      expect(ids(fx.store.listSessions({ q: "parser" }))).to.deep.equal(["a"]);
      expect(ids(fx.store.listSessions({ q: "PARS" }))).to.deep.equal(["a"]);
      expect(ids(fx.store.listSessions({ q: "tokeni" }))).to.deep.equal(["b"]);
      // Terms may be found in different messages, and diacritics are folded.
      expect(ids(fx.store.listSessions({ q: "tokenizer cafe" }))).to.deep.equal(["b"]);
      expect(ids(fx.store.listSessions({ q: "tokenizer parser" }))).to.deep.equal([]);
      // LIKE wildcards in the input are literal.
      expect(ids(fx.store.listSessions({ q: "100%" }))).to.deep.equal(["c"]);
      expect(ids(fx.store.listSessions({ q: "%" }))).to.deep.equal(["c"]);
      expect(ids(fx.store.listSessions({ q: "e_o" }))).to.deep.equal(["c"]);
      expect(fx.store.listSessions({ q: "the", limit: 1 })).to.deep.include({ total: 2 });
      expect(ids(fx.store.listSessions({ q: "   " }))).to.have.length(3);
    });

    it("finds titles through their index: a substring, renamed and deleted sessions, few and many matches", () => {
      fx.store.createSession(session("a", { title: "Refactor the Parser", updatedAt: at(1) }));
      fx.store.createSession(session("b", { title: "untitled", updatedAt: at(2) }));
      expect(ids(fx.store.listSessions({ q: "ARSE" }))).to.deep.equal(["a"]);
      fx.store.updateSession("b", { title: "sparse matrix" });
      expect(ids(fx.store.listSessions({ q: "arse" }))).to.deep.equal(["b", "a"]);
      fx.store.deleteSession("a");
      expect(fx.store.listSessions({ q: "arse" })).to.deep.include({ total: 1 });
      // More matches than are looked up one by one: the page is met walking the list order; the same answer.
      fx.store.batch(() => {
        for (let i = 0; i < 2100; i++) {
          fx.store.createSession(session(`m${i}`, { title: `match ${i}`, updatedAt: at(10 + i), pinned: i === 7 }));
        }
      });
      const many = fx.store.listEntries({ q: "atch", limit: 3, offset: 1 });
      expect(many.total).to.equal(2100);
      expect(many.sessions.map((e) => e.id)).to.deep.equal(["m2099", "m2098", "m2097"]);
      expect(ids(fx.store.listSessions({ q: "atch 1", limit: 2 }))).to.deep.equal(["m2091", "m2081"]);
      expect(fx.store.listSessions({ q: "match 20", limit: 1 }).total).to.equal(140);
      // The unfiltered total follows creates and deletes.
      expect(fx.store.listEntries({ limit: 1 }).total).to.equal(2101);
      fx.store.deleteSession("m5");
      expect(fx.store.listEntries({ limit: 1 }).total).to.equal(2100);
    });

    it("finds sessions by working directory through its index: in it, below it, paged; distinct directories", () => {
      const dirs = ["/p", "/p/a", "/p/a/b", "/p-old", "/p!x", "/pq", "/q", "/"];
      fx.store.batch(() => {
        dirs.forEach((cwd, i) => {
          fx.store.createSession(session(`s${i}a`, { cwd }));
          fx.store.createSession(session(`s${i}b`, { cwd }));
        });
      });
      const idsOf = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
      expect(fx.store.sessionsInDirectory("/p", { below: false, limit: 10 })).to.deep.equal([
        { id: "s0a", cwd: "/p" },
        { id: "s0b", cwd: "/p" },
      ]);
      expect(
        idsOf(fx.store.sessionsInDirectory("/p", { below: false, after: { cwd: "/p", id: "s0a" }, limit: 10 })),
      ).to.deep.equal(["s0b"]);
      // Below: the directory and its subdirectories, never its siblings "/p-old", "/p!x" or "/pq".
      const below = idsOf(fx.store.sessionsInDirectory("/p", { below: true, limit: 10 }));
      expect(below).to.deep.equal(["s0a", "s0b", "s1a", "s1b", "s2a", "s2b"]);
      // In pages: each starts after the last one of the previous page.
      const paged: string[] = [];
      for (let after: { id: string; cwd: string } | undefined; ; ) {
        const page = fx.store.sessionsInDirectory("/p", { below: true, after, limit: 4 });
        paged.push(...idsOf(page));
        if (page.length < 4) break;
        after = page.at(-1);
      }
      expect(paged).to.deep.equal(below);
      expect(fx.store.sessionsInDirectory("/", { below: true, limit: 100 })).to.have.length(16);
      expect(fx.store.sessionsInDirectory("/nothing", { below: true, limit: 10 })).to.deep.equal([]);
      // Which of some directories (a path and its ancestors) a session works in.
      expect(fx.store.usedDirectories(["/p/a/b/c", "/p/a/b", "/p/a", "/p", "/"])).to.deep.equal([
        "/",
        "/p",
        "/p/a",
        "/p/a/b",
      ]);
      expect(fx.store.usedDirectories(["/x/y", "/x"])).to.deep.equal([]);
      expect(fx.store.usedDirectories([])).to.deep.equal([]);
      // Every directory once, in order, in pages.
      const sorted = [...dirs].sort();
      expect(fx.store.distinctDirectories("", 100)).to.deep.equal(sorted);
      expect(fx.store.distinctDirectories("", 3)).to.deep.equal(sorted.slice(0, 3));
      expect(fx.store.distinctDirectories(sorted[2] as string, 3)).to.deep.equal(sorted.slice(3, 6));
      // The queries seek the index: none reads every session.
      const plans = [
        "SELECT id, cwd FROM sessions WHERE cwd = 'x' AND id > '' ORDER BY id LIMIT 5",
        `SELECT id, cwd FROM sessions WHERE cwd >= '/p' AND cwd < '/p0' AND (cwd = '/p' OR cwd >= '/p/')
          AND (cwd, id) > ('', '') ORDER BY cwd, id LIMIT 5`,
      ];
      const db = new Database(fx.file, { readonly: true });
      try {
        for (const sql of plans) {
          const detail = db
            .prepare(`EXPLAIN QUERY PLAN ${sql}`)
            .all()
            .map((r) => (r as { detail: string }).detail)
            .join("; ");
          expect(detail, sql).to.match(/SEARCH sessions USING (COVERING )?INDEX sessions_cwd/);
          expect(detail, sql).to.not.match(/TEMP B-TREE/);
        }
      } finally {
        db.close();
      }
    });

    it("counts a search's total through the indexes exactly as the titles' LIKE and the messages match", () => {
      fx.store.createSession(session("t", { title: "Fix the DELTA-3 build", updatedAt: at(1) }));
      fx.store.createSession(session("both", { title: "delta-3 again", updatedAt: at(2) }));
      fx.store.createSession(session("msg", { title: null, updatedAt: at(3) }));
      // LIKE folds ASCII letters only: the Kelvin sign and a dotted capital I are not "k" and "i".
      fx.store.createSession(session("kelvin", { title: "\u212Aelvin \u0130nk", updatedAt: at(4) }));
      fx.store.createSession(session("accent", { title: "Édition Ünique", updatedAt: at(5) }));
      fx.store.appendMessage("both", { role: "user", content: "delta-3 is here too" });
      fx.store.appendMessage("msg", { role: "assistant", content: "about Delta-3 only" });
      const found = (q: string) => {
        const r = fx.store.listEntries({ q, limit: 10 });
        return { total: r.total, ids: r.sessions.map((e) => e.id) };
      };
      expect(found("delta-3")).to.deep.equal({ total: 3, ids: ["msg", "both", "t"] });
      expect(found("DELTA-3")).to.deep.equal({ total: 3, ids: ["msg", "both", "t"] });
      expect(found("kelvin")).to.deep.equal({ total: 0, ids: [] });
      expect(found("ink")).to.deep.equal({ total: 0, ids: [] });
      expect(found("\u212Aelv")).to.deep.equal({ total: 1, ids: ["kelvin"] });
      expect(found("édition")).to.deep.equal({ total: 0, ids: [] });
      expect(found("Édition")).to.deep.equal({ total: 1, ids: ["accent"] });
      // A renamed title is counted by its new text only.
      fx.store.updateSession("t", { title: "Other" });
      expect(found("delta-3")).to.deep.equal({ total: 2, ids: ["msg", "both"] });
      // The same totals as the walk over every session counts them (several terms take that path).
      expect(fx.store.listEntries({ q: "delta-3 delta-3", limit: 1 }).total).to.equal(2);
    });

    it("never lets hostile search input reach SQL or FTS syntax", () => {
      fx.store.createSession(session("a", { title: 'say "hi"' }));
      fx.store.appendMessage("a", { role: "user", content: 'foo"bar and NEAR(x y)' });
      const hostile = [
        'foo"bar',
        "AND(",
        '"',
        "*",
        "NEAR(",
        "a OR b",
        "'; DROP TABLE sessions; --",
        "^x",
        "-",
        "()",
        ":",
        "\\",
      ];
      for (const q of hostile) {
        expect(() => fx.store.listSessions({ q }), q).to.not.throw();
        expect(() => fx.store.searchMessages(q), q).to.not.throw();
      }
      expect(ids(fx.store.listSessions({ q: 'foo"bar' }))).to.deep.equal(["a"]);
      expect(ids(fx.store.listSessions({ q: '"hi"' }))).to.deep.equal(["a"]);
      expect(fx.store.searchMessages("NEAR(").map((h) => h.sessionId)).to.deep.equal(["a"]);
      expect(fx.store.getSession("a")).to.not.equal(undefined);
    });
  });
});
