import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "chai";
import type { PluginContext } from "../core/plugin.js";
import { type SessionStore, SessionStoreToken } from "../core/store.js";
import storagePlugin from "../plugins/storage-sqlite/index.js";
import { MIGRATIONS, migrate, SCHEMA_VERSION } from "../plugins/storage-sqlite/migrations.js";
import { openSqliteStore } from "../plugins/storage-sqlite/store.js";
import { at, ids, session, sqliteStoreFixture, texts } from "./support/storage-sqlite.js";

describe("storage-sqlite: SessionStore on SQLite", () => {
  const fx = sqliteStoreFixture();

  describe("file, schema and plugin", () => {
    it("keeps everything across close and reopen; close is idempotent", async () => {
      fx.store.createSession(session("s", { title: "kept" }));
      fx.store.appendMessage("s", { role: "user", content: "persisted words" });
      fx.store.appendEvents("s", [{ seq: 1, ts: at(1), type: "x", json: "{}", ephemeral: false }]);
      fx.store.appendFeed({ seq: 7, ts: at(1), type: "x", json: "{}" });
      fx.store.close();
      fx.store.close();
      fx.store = openSqliteStore(fx.file);
      expect(fx.store.getSession("s")).to.include({ title: "kept", messageCount: 1 });
      expect(fx.store.searchMessages("persisted")).to.have.length(1);
      expect(fx.store.readEvents("s", 0, 10)).to.have.length(1);
      expect(fx.store.feedSeq()).to.equal(7);
      expect((await fx.store.appendMessage("s", { role: "user", content: "next" })).seq).to.equal(2);
    });

    it("merges the full-text indexes after writes, between them, never inside one", async () => {
      const store = openSqliteStore(":memory:");
      try {
        const db = (store as unknown as { db: Database.Database }).db;
        const segments = (index: string) => db.prepare(`SELECT COUNT(DISTINCT segid) FROM ${index}_idx`).pluck().get();
        for (const index of ["messages_fts", "session_titles_fts"]) {
          expect(db.prepare(`SELECT v FROM ${index}_config WHERE k = 'automerge'`).pluck().get()).to.equal(0);
        }
        // In memory a write commits and returns at once: no merge step can run between these.
        for (let i = 0; i < 15; i++) store.createSession(session(`s${i}`, { title: `zebra session ${i}` }));
        for (let i = 0; i < 15; i++) store.appendMessage("s0", { role: "user", content: `zebra number ${i}` });
        expect([segments("messages_fts"), segments("session_titles_fts")]).to.deep.equal([15, 15]);
        await store.indexMerged();
        expect(segments("messages_fts")).to.be.at.most(3);
        expect(segments("session_titles_fts")).to.be.at.most(3);
        expect(store.searchMessages("zebra", { limit: 50 })).to.have.length(15);
        expect(store.searchMessages("number 7")).to.have.length(1);
        expect(store.listEntries({ q: "zebra session", limit: 50 }).total).to.equal(15);
        // s7 by its title; s0 by its title's "session" and its message's "7".
        expect(ids(store.listSessions({ q: "session 7" }))).to.deep.equal(["s0", "s7"]);
      } finally {
        store.close();
      }
    });

    it("resumes merging at the next open when a stop came first, and reads the file through a memory map", async () => {
      // With no turn of the event loop between them each write leaves a segment, and the store closes before a merge.
      for (let i = 0; i < 15; i++) fx.store.createSession(session(`s${i}`, { title: `zebra session ${i}` }));
      fx.store.close();
      const db = new Database(fx.file, { readonly: true });
      const segments = () => db.prepare("SELECT COUNT(DISTINCT segid) FROM session_titles_fts_idx").pluck().get();
      try {
        expect(segments()).to.equal(15);
        fx.store = openSqliteStore(fx.file);
        await fx.store.indexMerged();
        expect(segments()).to.be.at.most(3);
        expect(fx.store.listSessions({ q: "zebra session" }).total).to.equal(15);
        const own = (fx.store as unknown as { db: Database.Database }).db;
        expect(own.pragma("mmap_size", { simple: true })).to.equal(256 * 1024 * 1024);
      } finally {
        db.close();
      }
    });

    it("checkpoints the WAL once the writes pause, and starts it over then, not in the next write", async () => {
      fx.store.createSession(session("w"));
      for (let i = 0; i < 40; i++) await fx.store.appendMessage("w", { role: "user", content: `words ${i}` });
      fx.store.appendEvents("w", [{ seq: 1, ts: at(1), type: "x", json: "{}", ephemeral: true }]);
      // Far below SQLite's own threshold (1,000 pages): without the quiet checkpoint all of it is in the WAL still.
      await fx.store.walCheckpointed();
      // The database file alone holds every write: copied without its WAL, it reads the same.
      const copy = join(fx.dir, "copy.db");
      copyFileSync(fx.file, copy);
      const alone = new Database(copy);
      try {
        expect(alone.prepare("SELECT COUNT(*) FROM messages WHERE session_id = 'w'").pluck().get()).to.equal(40);
        expect(alone.prepare("SELECT COUNT(*) FROM events").pluck().get()).to.equal(1);
      } finally {
        alone.close();
      }
      // The WAL was started over: it holds the one page the restart wrote (the schema version, unchanged), so the
      // next commit appends to it without syncing a new header first.
      const other = new Database(fx.file);
      try {
        const [r] = other.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number }>;
        expect(r?.log).to.equal(1);
        expect(other.pragma("user_version", { simple: true })).to.equal(SCHEMA_VERSION);
      } finally {
        other.close();
      }
    });

    it("records the schema version, uses WAL and refuses a database from a newer version", () => {
      fx.store.close();
      const db = new Database(fx.file);
      expect(db.pragma("user_version", { simple: true })).to.equal(SCHEMA_VERSION);
      expect(db.pragma("journal_mode", { simple: true })).to.equal("wal");
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      db.close();
      expect(() => openSqliteStore(fx.file)).to.throw(/newer agentd/);
      fx.store = openSqliteStore(join(fx.dir, "fresh.db"));
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
      fx.store.close();
      rmSync(fx.file, { force: true });
      const old = new Database(fx.file);
      migrate(old, fx.file, MIGRATIONS.slice(0, 2));
      old
        .prepare(`INSERT INTO sessions (id, title, persona, model, cwd, usage, created_at, updated_at)
          VALUES ('old', 'An OLD Title', 'default', 'm', '/w', '{}', '2024-01-01', '2024-01-01')`)
        .run();
      old.close();
      fx.store = openSqliteStore(fx.file);
      expect(fx.store.listEntries({ q: "old title", limit: 5 }).total).to.equal(1);
      expect(fx.store.listEntries({ q: "OLD TITLE", limit: 5 }).sessions.map((e) => e.id)).to.deep.equal(["old"]);
      expect(fx.store.sessionsInDirectory("/w", { below: true, limit: 5 })).to.deep.equal([{ id: "old", cwd: "/w" }]);
    });

    it("rolls a failed batch back as a whole", () => {
      const failing = () =>
        fx.store.batch(() => {
          fx.store.createSession(session("b1"));
          fx.store.createSession(session("b1"));
        });
      expect(failing).to.throw(/UNIQUE/);
      expect(fx.store.getSession("b1")).to.equal(undefined);
    });

    it("provides the store from <home>/agentd.db and closes it on dispose", () => {
      const provided: unknown[] = [];
      const disposers: (() => void)[] = [];
      const ctx = {
        home: fx.dir,
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
      expect(fx.store.getSession("via-plugin")?.id).to.equal("via-plugin");
    });
  });

  describe("at scale", () => {
    it("lists one page of 10,000 sessions and pages a 10,000-message session", () => {
      // One commit per batch keeps the seeding fast; each call inside still runs its own (nested) transaction.
      fx.store.batch(() => {
        for (let i = 0; i < 10_000; i++) {
          fx.store.createSession(
            session(`s${i}`, { updatedAt: at(i), title: i % 1000 === 0 ? `needle ${i}` : `t${i}` }),
          );
        }
      });
      const page = fx.store.listSessions({ limit: 3, offset: 10 });
      expect(page.total).to.equal(10_000);
      expect(ids(page)).to.deep.equal(["s9989", "s9988", "s9987"]);
      const found = fx.store.listSessions({ q: "needle", limit: 2 });
      expect(found.total).to.equal(10);
      expect(ids(found)).to.deep.equal(["s9000", "s8000"]);

      fx.store.batch(() => {
        for (let i = 0; i < 5_000; i++) {
          fx.store.appendMessage("s0", { role: "user", content: `question ${i}` });
          fx.store.appendMessage("s0", { role: "assistant", content: `answer ${i}` });
        }
      });
      expect(fx.store.getSession("s0")?.messageCount).to.equal(10_000);
      const last = fx.store.historyPage("s0", 3);
      expect(texts(last.messages)).to.deep.equal([
        "question 4997",
        "answer 4997",
        "question 4998",
        "answer 4998",
        "question 4999",
        "answer 4999",
      ]);
      expect(last).to.include({ oldestSeq: 9995, hasMoreHistory: true });
      const mid = fx.store.historyPage("s0", 2, 5001);
      expect(mid.messages.map((m) => m.seq)).to.deep.equal([4997, 4998, 4999, 5000]);
      expect(ids(fx.store.listSessions({ limit: 1 }))).to.deep.equal(["s0"]);
    });
  });
});
