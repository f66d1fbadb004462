import { rmSync } from "node:fs";
import { expect } from "chai";
import pg from "pg";
import { EventBusToken, type SessionEvent } from "../core/index.js";
import { SessionEventLogToken } from "../core/sessions.js";
import { redactUrl } from "../plugins/storage-postgres/connection.js";
import { migratePg, PG_MIGRATIONS, PG_SCHEMA_VERSION } from "../plugins/storage-postgres/migrations.js";
import { PostgresSessionStore } from "../plugins/storage-postgres/store.js";
import { type DaemonProcess, makeTempHome, spawnDaemon, startTestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, turn } from "../testing/fake-provider.js";
import { ids, pgClusterFixture, query, session } from "./support/storage-postgres.js";

describe("storage-postgres: SessionStore on PostgreSQL", function () {
  this.timeout(60_000);
  const fx = pgClusterFixture();

  describe("migrations", () => {
    it("two stores opening one new database at once migrate it once, under the advisory lock", async () => {
      const url = await fx.cluster.createDatabase();
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
      const newer = await fx.cluster.createDatabase();
      await query(
        newer,
        "CREATE TABLE agentd_schema (version INTEGER NOT NULL); INSERT INTO agentd_schema VALUES (99)",
      );
      const a = new PostgresSessionStore({ url: newer });
      const e1 = await a.opened().catch((e: Error) => e);
      expect(e1?.message).to.match(/schema version 99.*newer agentd/);
      await a.close();

      const clash = await fx.cluster.createDatabase();
      await query(clash, "CREATE TABLE feed (x INTEGER)");
      const b = new PostgresSessionStore({ url: clash });
      const e2 = await b.opened().catch((e: Error) => e);
      expect(e2?.message).to.match(/migrating to version 1 \(sessions, messages.*\) failed: relation "feed" already/);
      await b.close();
      // The failed step left nothing behind: version 0, no half-made tables.
      expect(await query(clash, "SELECT version FROM agentd_schema")).to.deep.equal([{ version: 0 }]);
      expect(await query(clash, "SELECT 1 FROM pg_tables WHERE tablename = 'sessions'")).to.deep.equal([]);
    });

    it("an upgraded database's search indexes have no pending list: old entries merged, new ones indexed at once", async () => {
      const url = await fx.cluster.createDatabase();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const pending = async () => {
        const res = await c.query<{ ix: string; n: string }>(
          `SELECT ix, (pgstatginindex(ix::regclass)).pending_tuples AS n
            FROM unnest(ARRAY['sessions_title_trgm', 'messages_search']) AS ix`,
        );
        return Object.fromEntries(res.rows.map((r) => [r.ix, Number(r.n)]));
      };
      let store: PostgresSessionStore | undefined;
      try {
        // The schema before this step, with titles and messages written into it: GIN's fast update keeps them pending.
        const step = PG_MIGRATIONS.findIndex((m) => m.description.startsWith("the search indexes without a pending"));
        expect(step).to.be.greaterThan(0);
        await migratePg(c as unknown as pg.PoolClient, PG_MIGRATIONS.slice(0, step));
        await c.query("CREATE EXTENSION pgstattuple");
        await c.query(
          `INSERT INTO sessions (id, title, persona, model, cwd, usage, created_at, updated_at)
            SELECT 'old' || i, 'old title ' || i, 'default', 'm', '/w', '{}', '2024-01-01', '2024-01-01'
            FROM generate_series(1, 20) AS i`,
        );
        await c.query(
          `INSERT INTO messages (session_id, seq, role, content, created_at, search_text)
            SELECT 'old' || i, 1, 'user', 'about zebras', '2024-01-01', 'about zebras' FROM generate_series(1, 5) AS i`,
        );
        expect(await pending()).to.deep.equal({ sessions_title_trgm: 20, messages_search: 5 });
        store = new PostgresSessionStore({ url });
        await store.opened();
        expect(await pending()).to.deep.equal({ sessions_title_trgm: 0, messages_search: 0 });
        await store.createSession(session("new", { title: "a new title" }));
        await store.updateSession("old1", { title: "renamed" });
        await store.appendMessage("new", { role: "user", content: "zebras again" });
        expect(await pending()).to.deep.equal({ sessions_title_trgm: 0, messages_search: 0 });
        expect((await store.listSessions({ q: "title", limit: 50 })).total).to.equal(20);
        expect(ids(await store.listSessions({ q: "renamed", limit: 50 }))).to.deep.equal(["old1"]);
        expect((await store.listSessions({ q: "zebras", limit: 50 })).total).to.equal(6);
      } finally {
        await store?.close();
        await c.end();
      }
    });
  });

  describe("a daemon on PostgreSQL", () => {
    let fake: FakeProvider;
    beforeEach(async () => {
      fake = await startFakeProvider();
    });
    afterEach(() => fake.close());

    it("keeps its sessions in the database AGENTD_DATABASE_URL names; SQLite is left alone", async () => {
      const url = await fx.cluster.createDatabase();
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

    it("answers a replay while a long queue of events is stored: the read waits for one slice, not the whole queue", async () => {
      const url = await fx.cluster.createDatabase();
      const d = await startTestDaemon({ env: { AGENTD_DATABASE_URL: url } });
      try {
        const id = await d.createSession();
        const log = d.daemon.services.get(SessionEventLogToken);
        await log.durable();
        const before = log.currentSeq(id);
        // 20,000 deltas queued at once: what a stream faster than the database queues while a write is out.
        for (let i = 0; i < 20_000; i++) log.publish(id, { type: "token", text: `t${i}` } as SessionEvent);
        let allStored = false;
        const stored = log.durable().then(() => {
          allStored = true;
        });
        // A client asks for a replay as soon as the first of them are stored.
        const replayed = new Promise<{ rows: number; allStored: boolean }>((resolve, reject) => {
          const sub = log.subscribe(id, (seq) => {
            if (seq <= before) return;
            sub.dispose();
            log.replay(id, before, 100).then((rows) => resolve({ rows: rows.length, allStored }), reject);
          });
        });
        expect(await replayed).to.deep.equal({ rows: 100, allStored: false });
        await stored;
        expect(log.currentSeq(id)).to.equal(before + 20_000);
      } finally {
        await d.cleanup();
      }
    });

    it("reconnects by itself after the server restarted, and says whether it is connected meanwhile", async () => {
      const url = await fx.cluster.createDatabase();
      const d = await startTestDaemon({ env: { AGENTD_DATABASE_URL: url } });
      try {
        const id = await d.createSession({ title: "kept across a restart" });
        expect((await d.get("/server/status")).body.database).to.deep.include({ kind: "postgres", connected: true });
        await fx.cluster.stop();
        try {
          const during = await d.get("/sessions");
          expect(during.status).to.equal(503);
          expect(during.body.error).to.match(
            /^the database postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is unavailable: /,
          );
          expect((await d.get("/server/status")).body.database.connected).to.equal(false);
        } finally {
          await fx.cluster.start();
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
      const url = await fx.cluster.createDatabase(undefined, { migrated: true });
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
        await fx.cluster.stop();
        try {
          release();
          expect(await ended).to.equal("error");
        } finally {
          await fx.cluster.start();
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
      const url = await fx.cluster.createDatabase();
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
      const url = await fx.cluster.createDatabase();
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
        const refused = `postgres://agentd:s3cret-pw@127.0.0.1:${fx.cluster.port + 1}/nodb`;
        const p = await spawnDaemon(home, { AGENTD_DATABASE_URL: refused }).then(
          () => {
            throw new Error("the daemon started");
          },
          (e: Error) => e,
        );
        expect(p.message).to.contain("cannot use the database postgres://agentd:***@127.0.0.1:");
        expect(p.message).to.match(/ECONNREFUSED/);
        expect(p.message).to.not.contain("s3cret-pw");

        const noDb = fx.cluster.url("no_such_database").replace("postgres@", "postgres:pw-xyz@");
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
      const admin = new pg.Client({ connectionString: fx.cluster.url("postgres") });
      await admin.connect();
      await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
      await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
      await admin.end();
      const url = fx.cluster.url(role).replace("postgres@", `${role}:pw-l@`);
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
