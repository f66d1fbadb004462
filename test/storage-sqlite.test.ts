import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "chai";
import type { PluginContext } from "../core/plugin.js";
import { emptyUsage, type NewMessage, type SessionRecord } from "../core/session-types.js";
import { type SessionStore, SessionStoreToken } from "../core/store.js";
import storagePlugin from "../plugins/storage-sqlite/index.js";
import { MIGRATIONS, migrate, SCHEMA_VERSION } from "../plugins/storage-sqlite/migrations.js";
import { openSqliteStore, type SqliteSessionStore } from "../plugins/storage-sqlite/store.js";
import { sessionRecord } from "./support/session-record.js";

const session = sessionRecord;

const at = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
const ids = (r: { sessions: SessionRecord[] }) => r.sessions.map((s) => s.id);
const texts = (ms: { content: unknown }[]) => ms.map((m) => m.content);

/** A session with `turns` user/assistant exchanges, each with a tool step in between. */
function seedTurns(store: SessionStore, id: string, turns: number): void {
  for (let i = 0; i < turns; i++) {
    store.appendMessage(id, { role: "user", content: `q${i}` });
    store.appendMessage(id, {
      role: "assistant",
      content: null,
      toolCalls: [{ id: `c${i}`, name: "ls", arguments: "{}" }],
    });
    store.appendMessage(id, { role: "tool", content: "out", toolCallId: `c${i}`, toolName: "ls" });
    store.appendMessage(id, { role: "assistant", content: `a${i}` });
  }
}

describe("storage-sqlite: SessionStore on SQLite", () => {
  let dir: string;
  let file: string;
  let store: SqliteSessionStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agentd-sqlite-"));
    file = join(dir, "agentd.db");
    store = openSqliteStore(file);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

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
      store.createSession(rec);
      expect(store.getSession("s1")).to.deep.equal(rec);
      expect(store.getSession("nope")).to.equal(undefined);

      const upd = store.updateSession("s1", { title: null, mode: "plan", meta: { turnCap: 7 }, shareToken: "tok" });
      expect(upd).to.include({ title: null, mode: "plan", shareToken: "tok", createdAt: rec.createdAt });
      expect(upd?.updatedAt).to.be.a("string").and.not.equal(rec.updatedAt);
      expect(store.getSession("s1")).to.deep.equal(upd);
      expect(store.findByShareToken("tok")?.id).to.equal("s1");
      expect(store.findByShareToken("other")).to.equal(undefined);
      const kept = store.updateSession("s1", { pinned: false, updatedAt: at(5) });
      expect(kept?.updatedAt).to.equal(at(5));
      expect(store.updateSession("nope", { title: "x" })).to.equal(undefined);

      expect(store.deleteSession("s1")).to.equal(true);
      expect(store.getSession("s1")).to.equal(undefined);
      expect(store.deleteSession("s1")).to.equal(false);
    });

    it("lists entries with exactly the listing's fields of listSessions, in step with every write", () => {
      const fields = ["id", "title", "pinned", "persona", "model", "cwd", "mode", "isSandbox", "messageCount"] as const;
      const project = (r: SessionRecord) => {
        const o: Record<string, unknown> = {};
        for (const k of [...fields, "createdAt", "updatedAt"] as const) o[k] = r[k];
        return o;
      };
      const same = (q: Parameters<SqliteSessionStore["listSessions"]>[0] = {}) => {
        const full = store.listSessions(q);
        const entries = store.listEntries(q);
        expect(entries.total).to.equal(full.total);
        expect(entries.sessions).to.deep.equal(full.sessions.map(project));
      };
      store.createSession(session("a", { title: "alpha", updatedAt: at(1), usage: { ...emptyUsage(), cost: 1 } }));
      store.createSession(session("b", { pinned: true, isSandbox: true, mode: "plan", meta: { turnCap: 20 } }));
      same();
      same({ limit: 1, offset: 1 });
      store.appendMessage("a", { role: "user", content: "hello" });
      same();
      store.updateSession("b", { title: "beta", pinned: false, mode: "build" });
      same();
      store.createSession(session("c", { updatedAt: at(9) }));
      same();
      same({ q: "beta" });
      store.appendMessage("c", { role: "user", content: "x" });
      store.truncateMessages("c", 1);
      same();
      store.deleteSession("a");
      same();
      // More changed rows than are read one by one: the whole page is read again.
      for (let i = 0; i < 100; i++) store.createSession(session(`n${i}`, { updatedAt: at(100 + i) }));
      same();
      for (let i = 0; i < 100; i += 3) store.updateSession(`n${i}`, { title: `t${i}` });
      same();
    });

    it("lists pinned first, then most recently updated, with paging and a total", () => {
      store.createSession(session("old", { updatedAt: at(1) }));
      store.createSession(session("new", { updatedAt: at(3) }));
      store.createSession(session("mid", { updatedAt: at(2) }));
      store.createSession(session("pin", { updatedAt: at(0), pinned: true }));
      expect(store.listSessions({})).to.deep.include({ total: 4 });
      expect(ids(store.listSessions({}))).to.deep.equal(["pin", "new", "mid", "old"]);
      const page = store.listSessions({ limit: 2, offset: 1 });
      expect(ids(page)).to.deep.equal(["new", "mid"]);
      expect(page.total).to.equal(4);
      expect(ids(store.listSessions({ offset: 3 }))).to.deep.equal(["old"]);
    });

    it("searches titles and message text (every term somewhere in the session, prefix match)", () => {
      store.createSession(session("a", { title: "Refactor the parser", updatedAt: at(1) }));
      store.createSession(session("b", { title: "Other", updatedAt: at(2) }));
      store.createSession(session("c", { title: "100% done_ok", updatedAt: at(3) }));
      store.appendMessage("b", { role: "user", content: "please fix the tokenizer" });
      store.appendMessage("b", { role: "assistant", content: [{ type: "text", text: "Fixed the café lexer" }] });
      store.appendMessage("c", { role: "tool", content: "tokenizer in tool output is not indexed", toolCallId: "x" });

      expect(ids(store.listSessions({ q: "parser" }))).to.deep.equal(["a"]);
      expect(ids(store.listSessions({ q: "PARS" }))).to.deep.equal(["a"]);
      expect(ids(store.listSessions({ q: "tokeni" }))).to.deep.equal(["b"]);
      // Terms may be found in different messages, and diacritics are folded.
      expect(ids(store.listSessions({ q: "tokenizer cafe" }))).to.deep.equal(["b"]);
      expect(ids(store.listSessions({ q: "tokenizer parser" }))).to.deep.equal([]);
      // LIKE wildcards in the input are literal.
      expect(ids(store.listSessions({ q: "100%" }))).to.deep.equal(["c"]);
      expect(ids(store.listSessions({ q: "%" }))).to.deep.equal(["c"]);
      expect(ids(store.listSessions({ q: "e_o" }))).to.deep.equal(["c"]);
      expect(store.listSessions({ q: "the", limit: 1 })).to.deep.include({ total: 2 });
      expect(ids(store.listSessions({ q: "   " }))).to.have.length(3);
    });

    it("finds titles through their index: a substring, renamed and deleted sessions, few and many matches", () => {
      store.createSession(session("a", { title: "Refactor the Parser", updatedAt: at(1) }));
      store.createSession(session("b", { title: "untitled", updatedAt: at(2) }));
      expect(ids(store.listSessions({ q: "ARSE" }))).to.deep.equal(["a"]);
      store.updateSession("b", { title: "sparse matrix" });
      expect(ids(store.listSessions({ q: "arse" }))).to.deep.equal(["b", "a"]);
      store.deleteSession("a");
      expect(store.listSessions({ q: "arse" })).to.deep.include({ total: 1 });
      // More matches than are looked up one by one: the page is met walking the list order; the same answer.
      store.batch(() => {
        for (let i = 0; i < 2100; i++) {
          store.createSession(session(`m${i}`, { title: `match ${i}`, updatedAt: at(10 + i), pinned: i === 7 }));
        }
      });
      const many = store.listEntries({ q: "atch", limit: 3, offset: 1 });
      expect(many.total).to.equal(2100);
      expect(many.sessions.map((e) => e.id)).to.deep.equal(["m2099", "m2098", "m2097"]);
      expect(ids(store.listSessions({ q: "atch 1", limit: 2 }))).to.deep.equal(["m2091", "m2081"]);
      expect(store.listSessions({ q: "match 20", limit: 1 }).total).to.equal(140);
      // The unfiltered total follows creates and deletes.
      expect(store.listEntries({ limit: 1 }).total).to.equal(2101);
      store.deleteSession("m5");
      expect(store.listEntries({ limit: 1 }).total).to.equal(2100);
    });

    it("finds sessions by working directory through its index: in it, below it, paged; distinct directories", () => {
      const dirs = ["/p", "/p/a", "/p/a/b", "/p-old", "/p!x", "/pq", "/q", "/"];
      store.batch(() => {
        dirs.forEach((cwd, i) => {
          store.createSession(session(`s${i}a`, { cwd }));
          store.createSession(session(`s${i}b`, { cwd }));
        });
      });
      const idsOf = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
      expect(store.sessionsInDirectory("/p", { below: false, limit: 10 })).to.deep.equal([
        { id: "s0a", cwd: "/p" },
        { id: "s0b", cwd: "/p" },
      ]);
      expect(
        idsOf(store.sessionsInDirectory("/p", { below: false, after: { cwd: "/p", id: "s0a" }, limit: 10 })),
      ).to.deep.equal(["s0b"]);
      // Below: the directory and its subdirectories, never its siblings "/p-old", "/p!x" or "/pq".
      const below = idsOf(store.sessionsInDirectory("/p", { below: true, limit: 10 }));
      expect(below).to.deep.equal(["s0a", "s0b", "s1a", "s1b", "s2a", "s2b"]);
      // In pages: each starts after the last one of the previous page.
      const paged: string[] = [];
      for (let after: { id: string; cwd: string } | undefined; ; ) {
        const page = store.sessionsInDirectory("/p", { below: true, after, limit: 4 });
        paged.push(...idsOf(page));
        if (page.length < 4) break;
        after = page.at(-1);
      }
      expect(paged).to.deep.equal(below);
      expect(store.sessionsInDirectory("/", { below: true, limit: 100 })).to.have.length(16);
      expect(store.sessionsInDirectory("/nothing", { below: true, limit: 10 })).to.deep.equal([]);
      // Which of some directories (a path and its ancestors) a session works in.
      expect(store.usedDirectories(["/p/a/b/c", "/p/a/b", "/p/a", "/p", "/"])).to.deep.equal([
        "/",
        "/p",
        "/p/a",
        "/p/a/b",
      ]);
      expect(store.usedDirectories(["/x/y", "/x"])).to.deep.equal([]);
      expect(store.usedDirectories([])).to.deep.equal([]);
      // Every directory once, in order, in pages.
      const sorted = [...dirs].sort();
      expect(store.distinctDirectories("", 100)).to.deep.equal(sorted);
      expect(store.distinctDirectories("", 3)).to.deep.equal(sorted.slice(0, 3));
      expect(store.distinctDirectories(sorted[2] as string, 3)).to.deep.equal(sorted.slice(3, 6));
      // The queries seek the index: none reads every session.
      const plans = [
        "SELECT id, cwd FROM sessions WHERE cwd = 'x' AND id > '' ORDER BY id LIMIT 5",
        `SELECT id, cwd FROM sessions WHERE cwd >= '/p' AND cwd < '/p0' AND (cwd = '/p' OR cwd >= '/p/')
          AND (cwd, id) > ('', '') ORDER BY cwd, id LIMIT 5`,
      ];
      const db = new Database(file, { readonly: true });
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
      store.createSession(session("t", { title: "Fix the DELTA-3 build", updatedAt: at(1) }));
      store.createSession(session("both", { title: "delta-3 again", updatedAt: at(2) }));
      store.createSession(session("msg", { title: null, updatedAt: at(3) }));
      // LIKE folds ASCII letters only: the Kelvin sign and a dotted capital I are not "k" and "i".
      store.createSession(session("kelvin", { title: "\u212Aelvin \u0130nk", updatedAt: at(4) }));
      store.createSession(session("accent", { title: "Édition Ünique", updatedAt: at(5) }));
      store.appendMessage("both", { role: "user", content: "delta-3 is here too" });
      store.appendMessage("msg", { role: "assistant", content: "about Delta-3 only" });
      const found = (q: string) => {
        const r = store.listEntries({ q, limit: 10 });
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
      store.updateSession("t", { title: "Other" });
      expect(found("delta-3")).to.deep.equal({ total: 2, ids: ["msg", "both"] });
      // The same totals as the walk over every session counts them (several terms take that path).
      expect(store.listEntries({ q: "delta-3 delta-3", limit: 1 }).total).to.equal(2);
    });

    it("never lets hostile search input reach SQL or FTS syntax", () => {
      store.createSession(session("a", { title: 'say "hi"' }));
      store.appendMessage("a", { role: "user", content: 'foo"bar and NEAR(x y)' });
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
        expect(() => store.listSessions({ q }), q).to.not.throw();
        expect(() => store.searchMessages(q), q).to.not.throw();
      }
      expect(ids(store.listSessions({ q: 'foo"bar' }))).to.deep.equal(["a"]);
      expect(ids(store.listSessions({ q: '"hi"' }))).to.deep.equal(["a"]);
      expect(store.searchMessages("NEAR(").map((h) => h.sessionId)).to.deep.equal(["a"]);
      expect(store.getSession("a")).to.not.equal(undefined);
    });
  });

  describe("messages", () => {
    beforeEach(() => store.createSession(session("s")));

    it("stores every field, assigns seqs and counts only user and texted assistant messages", async () => {
      const before = store.getSession("s")?.updatedAt ?? "";
      const full: NewMessage = {
        role: "assistant",
        content: "done",
        toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a"}' }],
        thinking: "hmm",
        meta: { turnMeta: { ms: 3 } },
        createdAt: at(9),
      };
      const m1 = await store.appendMessage("s", { role: "user", content: "hi", clientMessageId: "cm-1" });
      const m2 = await store.appendMessage("s", full);
      store.appendMessage("s", {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c2", name: "ls", arguments: "{}" }],
      });
      store.appendMessage("s", { role: "assistant", content: "  " });
      store.appendMessage("s", {
        role: "tool",
        content: "result",
        toolCallId: "c2",
        toolName: "ls",
        meta: { error: true },
      });
      store.appendMessage("s", { role: "user", content: [{ type: "image_url", image_url: { url: "data:x" } }] });
      store.appendMessage("s", { role: "system", content: "prompt" });
      expect(m1).to.include({ seq: 1, inContext: true, clientMessageId: "cm-1" });
      expect(m2).to.deep.equal({ ...full, seq: 2, inContext: true, createdAt: at(9) });

      const rec = store.getSession("s");
      expect(rec?.messageCount).to.equal(3);
      expect(rec?.updatedAt).to.be.a("string").and.not.equal(before);
      const page = store.historyPage("s", 10);
      expect(page.messages[1]).to.deep.equal(m2);
      expect(page.messages[4]).to.include({ role: "tool", toolCallId: "c2", toolName: "ls" });
      expect(page.messages[4]?.meta).to.deep.equal({ error: true });
      expect(page.messages.map((m) => m.seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
      expect(() => store.appendMessage("missing", { role: "user", content: "x" })).to.throw(/Session not found/);
    });

    it("pages history by user turns, backwards with beforeSeq", () => {
      store.appendMessage("s", { role: "system", content: "prompt" });
      seedTurns(store, "s", 5); // seqs 2..21, turn i starts at 2 + 4i
      const p1 = store.historyPage("s", 2);
      expect(texts(p1.messages)).to.deep.equal(["q3", null, "out", "a3", "q4", null, "out", "a4"]);
      expect(p1).to.include({ oldestSeq: 14, hasMoreHistory: true });
      const p2 = store.historyPage("s", 2, p1.oldestSeq ?? 0);
      expect(texts(p2.messages)).to.deep.equal(["q1", null, "out", "a1", "q2", null, "out", "a2"]);
      expect(p2).to.include({ oldestSeq: 6, hasMoreHistory: true });
      // Fewer turns left than asked for: the page reaches back to the first row (the system prompt).
      const p3 = store.historyPage("s", 2, p2.oldestSeq ?? 0);
      expect(texts(p3.messages)).to.deep.equal(["prompt", "q0", null, "out", "a0"]);
      expect(p3).to.include({ oldestSeq: 1, hasMoreHistory: false });
      expect(store.historyPage("s", 2, 1)).to.deep.equal({ messages: [], oldestSeq: null, hasMoreHistory: false });
      expect(store.historyPage("s", 0).messages).to.have.length(21);
      expect(store.historyPage("s", -1, 6).messages).to.have.length(5);
      expect(store.historyPage("nope", 3)).to.deep.equal({ messages: [], oldestSeq: null, hasMoreHistory: false });
    });

    it("tracks the in-context working set", () => {
      seedTurns(store, "s", 3);
      store.appendMessage("s", { role: "system", content: "summary", inContext: false });
      expect(store.contextMessages("s")).to.have.length(12);
      store.markOutOfContext("s", 4);
      const ctx = store.contextMessages("s");
      expect(ctx.map((m) => m.seq)).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12]);
      expect(ctx.every((m) => m.inContext)).to.equal(true);
      expect(store.historyPage("s", 10).messages[0]).to.include({ seq: 1, inContext: false });
      store.markOutOfContext("s");
      expect(store.contextMessages("s")).to.deep.equal([]);
      expect(store.historyPage("s", 10).messages).to.have.length(13);
    });

    it("truncates (undo): recounts, unindexes, and never reuses a seq", async () => {
      store.appendMessage("s", { role: "user", content: "alpha question" });
      store.appendMessage("s", { role: "assistant", content: "alpha answer" });
      store.appendMessage("s", { role: "user", content: "beta question", clientMessageId: "b" });
      store.appendMessage("s", { role: "assistant", content: "beta answer" });
      expect(store.getSession("s")?.messageCount).to.equal(4);
      store.truncateMessages("s", 3);
      expect(store.getSession("s")?.messageCount).to.equal(2);
      expect(texts(store.historyPage("s", 10).messages)).to.deep.equal(["alpha question", "alpha answer"]);
      expect(store.searchMessages("beta")).to.deep.equal([]);
      expect(store.hasClientMessageId("s", "b")).to.equal(false);
      expect((await store.appendMessage("s", { role: "user", content: "again" })).seq).to.equal(5);
    });

    it("finds a message by client message id", () => {
      store.appendMessage("s", { role: "user", content: "x", clientMessageId: "abc" });
      store.createSession(session("t"));
      expect(store.hasClientMessageId("s", "abc")).to.equal(true);
      expect(store.hasClientMessageId("s", "abd")).to.equal(false);
      expect(store.hasClientMessageId("t", "abc")).to.equal(false);
    });

    it("searches message text with snippets, newest first, scoped by session", () => {
      store.createSession(session("t", { title: "Second" }));
      const long = `${"filler ".repeat(40)}the quick brown fox jumps ${"filler ".repeat(40)}`;
      store.appendMessage("s", { role: "user", content: long });
      store.appendMessage("t", { role: "assistant", content: "a fox again" });
      store.appendMessage("t", { role: "tool", content: "fox in tool output", toolCallId: "c" });
      const hits = store.searchMessages("fox");
      expect(hits.map((h) => [h.sessionId, h.seq])).to.deep.equal([
        ["t", 1],
        ["s", 1],
      ]);
      expect(hits[0]).to.include({ sessionTitle: "Second", role: "assistant", snippet: "a fox again" });
      expect(hits[1]?.snippet).to.contain("fox").and.contain("…");
      expect(hits[1]?.snippet.length).to.be.lessThan(long.length / 2);
      expect(hits[1]?.sessionTitle).to.equal(null);
      expect(store.searchMessages("quick fox").map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(store.searchMessages("fox", { sessionId: "s" }).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(store.searchMessages("fox", { excludeSessionId: "t" }).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(store.searchMessages("fox", { limit: 1 })).to.have.length(1);
      expect(store.searchMessages("  ")).to.deep.equal([]);
    });
  });

  describe("events and feed", () => {
    beforeEach(() => store.createSession(session("s")));
    const ev = (seq: number, ephemeral = false) => ({
      seq,
      ts: at(seq),
      type: ephemeral ? "token" : "x",
      json: `{"seq":${seq}}`,
      ephemeral,
    });

    it("appends batches, ignores duplicate seqs and reads durable-only on request", () => {
      store.appendEvents("s", [ev(1), ev(2, true), ev(3, true), ev(4)]);
      store.appendEvents("s", [ev(4), ev(5)]);
      store.appendEvents("s", []);
      expect(store.readEvents("s", 0, 100).map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(store.readEvents("s", 0, 100)[0]).to.deep.equal({ seq: 1, ts: at(1), type: "x", json: '{"seq":1}' });
      expect(store.readEvents("s", 1, 2).map((e) => e.seq)).to.deep.equal([2, 3]);
      expect(store.readEvents("s", 0, 100, { durableOnly: true }).map((e) => e.seq)).to.deep.equal([1, 4, 5]);
      expect(store.readEvents("s", 5, 100)).to.deep.equal([]);
      expect(store.readEvents("s", 0, 0)).to.deep.equal([]);
    });

    it("keeps the event seq reservation per session", () => {
      expect(store.eventSeqReserved("s")).to.equal(0);
      store.reserveEventSeq("s", 1000);
      expect(store.eventSeqReserved("s")).to.equal(1000);
      expect(store.eventSeqReserved("nope")).to.equal(0);
      expect(() => store.reserveEventSeq("nope", 5)).to.not.throw();
    });

    it("deleting a session removes its messages, events and search rows", () => {
      store.appendMessage("s", { role: "user", content: "zebra" });
      store.appendEvents("s", [ev(1)]);
      store.reserveEventSeq("s", 1000);
      store.deleteSession("s");
      expect(store.readEvents("s", 0, 10)).to.deep.equal([]);
      expect(store.searchMessages("zebra")).to.deep.equal([]);
      store.createSession(session("s"));
      expect(store.historyPage("s", 5).messages).to.deep.equal([]);
      expect(store.eventSeqReserved("s")).to.equal(0);
    });

    it("keeps the global feed in order", () => {
      expect(store.feedSeq()).to.equal(0);
      store.appendFeed({ seq: 1, ts: at(1), type: "session_created", json: "{}" });
      store.appendFeed({ seq: 2, ts: at(2), type: "session_update", json: '{"a":1}' });
      expect(store.feedSeq()).to.equal(2);
      expect(store.readFeed(0, 10).map((e) => e.type)).to.deep.equal(["session_created", "session_update"]);
      expect(store.readFeed(1, 10)).to.deep.equal([{ seq: 2, ts: at(2), type: "session_update", json: '{"a":1}' }]);
      expect(store.readFeed(0, 1)).to.have.length(1);
    });
  });

  describe("file, schema and plugin", () => {
    it("keeps everything across close and reopen; close is idempotent", async () => {
      store.createSession(session("s", { title: "kept" }));
      store.appendMessage("s", { role: "user", content: "persisted words" });
      store.appendEvents("s", [{ seq: 1, ts: at(1), type: "x", json: "{}", ephemeral: false }]);
      store.appendFeed({ seq: 7, ts: at(1), type: "x", json: "{}" });
      store.close();
      store.close();
      store = openSqliteStore(file);
      expect(store.getSession("s")).to.include({ title: "kept", messageCount: 1 });
      expect(store.searchMessages("persisted")).to.have.length(1);
      expect(store.readEvents("s", 0, 10)).to.have.length(1);
      expect(store.feedSeq()).to.equal(7);
      expect((await store.appendMessage("s", { role: "user", content: "next" })).seq).to.equal(2);
    });

    it("records the schema version, uses WAL and refuses a database from a newer version", () => {
      store.close();
      const db = new Database(file);
      expect(db.pragma("user_version", { simple: true })).to.equal(SCHEMA_VERSION);
      expect(db.pragma("journal_mode", { simple: true })).to.equal("wal");
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      db.close();
      expect(() => openSqliteStore(file)).to.throw(/newer agentd/);
      store = openSqliteStore(join(dir, "fresh.db"));
    });

    it("applies each migration in its own transaction and reports the failing step", () => {
      const db = new Database(":memory:");
      const steps = [
        { description: "one", up: (d: Database.Database) => d.exec("CREATE TABLE a (x)") },
        { description: "two", up: (d: Database.Database) => d.exec("CREATE TABLE b (x); CREATE TABLE a (y)") },
      ];
      expect(() => migrate(db, "mem.db", steps)).to.throw(/mem\.db to version 2 \(two\) failed/);
      expect(db.pragma("user_version", { simple: true })).to.equal(1);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).to.deep.equal(["a"]);
      db.close();
    });

    it("keeps the titles of a database from before the exact title index searchable (migration 3)", () => {
      store.close();
      rmSync(file, { force: true });
      const old = new Database(file);
      migrate(old, file, MIGRATIONS.slice(0, 2));
      old
        .prepare(`INSERT INTO sessions (id, title, persona, model, cwd, usage, created_at, updated_at)
          VALUES ('old', 'An OLD Title', 'default', 'm', '/w', '{}', '2024-01-01', '2024-01-01')`)
        .run();
      old.close();
      store = openSqliteStore(file);
      expect(store.listEntries({ q: "old title", limit: 5 }).total).to.equal(1);
      expect(store.listEntries({ q: "OLD TITLE", limit: 5 }).sessions.map((e) => e.id)).to.deep.equal(["old"]);
      expect(store.sessionsInDirectory("/w", { below: true, limit: 5 })).to.deep.equal([{ id: "old", cwd: "/w" }]);
    });

    it("rolls a failed batch back as a whole", () => {
      const failing = () =>
        store.batch(() => {
          store.createSession(session("b1"));
          store.createSession(session("b1"));
        });
      expect(failing).to.throw(/UNIQUE/);
      expect(store.getSession("b1")).to.equal(undefined);
    });

    it("provides the store from <home>/agentd.db and closes it on dispose", () => {
      const provided: unknown[] = [];
      const disposers: (() => void)[] = [];
      const ctx = {
        home: dir,
        services: { provide: (token: unknown, value: unknown) => provided.push(token, value) },
        onDispose: (d: () => void) => disposers.push(d),
      } as unknown as PluginContext;
      // Not required: another storage plugin may take its place (test/storage-plugin.test.ts).
      expect(storagePlugin.manifest.id).to.equal("storage-sqlite");
      expect(storagePlugin.manifest.required).to.not.equal(true);
      expect(storagePlugin.manifest.provides).to.deep.equal([SessionStoreToken.id]);
      storagePlugin.register(ctx);
      expect(provided[0]).to.equal(SessionStoreToken);
      const provStore = provided[1] as SessionStore;
      provStore.createSession(session("via-plugin"));
      for (const d of disposers) d();
      expect(() => provStore.getSession("via-plugin")).to.throw(/not open/);
      expect(store.getSession("via-plugin")?.id).to.equal("via-plugin");
    });
  });

  describe("at scale", () => {
    it("lists one page of 10,000 sessions and pages a 10,000-message session", () => {
      // One commit per batch keeps the seeding fast; each call inside still runs its own (nested) transaction.
      store.batch(() => {
        for (let i = 0; i < 10_000; i++) {
          store.createSession(session(`s${i}`, { updatedAt: at(i), title: i % 1000 === 0 ? `needle ${i}` : `t${i}` }));
        }
      });
      const page = store.listSessions({ limit: 3, offset: 10 });
      expect(page.total).to.equal(10_000);
      expect(ids(page)).to.deep.equal(["s9989", "s9988", "s9987"]);
      const found = store.listSessions({ q: "needle", limit: 2 });
      expect(found.total).to.equal(10);
      expect(ids(found)).to.deep.equal(["s9000", "s8000"]);

      store.batch(() => {
        for (let i = 0; i < 5_000; i++) {
          store.appendMessage("s0", { role: "user", content: `question ${i}` });
          store.appendMessage("s0", { role: "assistant", content: `answer ${i}` });
        }
      });
      expect(store.getSession("s0")?.messageCount).to.equal(10_000);
      const last = store.historyPage("s0", 3);
      expect(texts(last.messages)).to.deep.equal([
        "question 4997",
        "answer 4997",
        "question 4998",
        "answer 4998",
        "question 4999",
        "answer 4999",
      ]);
      expect(last).to.include({ oldestSeq: 9995, hasMoreHistory: true });
      const mid = store.historyPage("s0", 2, 5001);
      expect(mid.messages.map((m) => m.seq)).to.deep.equal([4997, 4998, 4999, 5000]);
      expect(ids(store.listSessions({ limit: 1 }))).to.deep.equal(["s0"]);
    });
  });
});
