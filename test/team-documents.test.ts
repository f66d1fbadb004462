import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import pg from "pg";
import { definePlugin, defineRoute, FileDocuments, pluginDocuments, T } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider.js";
import { pgCluster } from "./support/postgres.js";
import { startTeam } from "./support/team.js";

/** Asks `probe` again until it answers true (another daemon applies a change when its doorbell rings). */
async function eventually(what: string, probe: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A plugin that keeps one note in its own documents (ctx.documents()), behind two routes. */
const notes = definePlugin({
  manifest: { id: "notes", version: "1.0.0", description: "keeps a note", capabilities: ["routes", "storage"] },
  register(ctx) {
    ctx.routes.add(
      defineRoute({
        method: "PUT",
        path: "/note",
        operationId: "put",
        summary: "Keeps the note",
        body: T.Object({ text: T.String() }),
        responses: { 200: T.Object({ ok: T.Literal(true) }) },
        handler: async ({ body }) => {
          await ctx.documents().update("note.json", () => JSON.stringify({ text: body.text }));
          return { body: { ok: true as const } };
        },
      }),
    );
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/note",
        operationId: "get",
        summary: "The note",
        responses: { 200: T.Object({ text: T.Union([T.String(), T.Null()]) }) },
        handler: async () => {
          const doc = await ctx.documents().read("note.json");
          return { body: { text: doc === undefined ? null : (JSON.parse(doc) as { text: string }).text } };
        },
      }),
    );
  },
});
const notesSource = { ...builtinSource(notes), origin: "config" as const, spec: "./notes" };

const DOCUMENTS = ["settings.json", "permissions.json", "trust.json", "plugins-data/settings/appearance.json"];

/**
 * The daemons' documents on a team: the user's settings, the saved approval rules and the trust decisions live in
 * the database, so a decision made through one daemon holds on every daemon, and none is kept in a home.
 */
describe("team server: settings, approval rules and trust in the database", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let team: TestDaemon[] = [];
  let url: string;
  let project: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    url = await (await pgCluster()).createDatabase(undefined, { migrated: true });
    team = await startTeam(2, url, fake.url);
    project = mkdtempSync(join(tmpdir(), "agentd-team-project-"));
  });
  afterEach(async () => {
    await Promise.all(team.map((d) => d.cleanup()));
    await fake.close();
    rmSync(project, { recursive: true, force: true });
  });

  it("a setting, a rule and a trust decision made on A hold on B at once, and on a daemon started later", async () => {
    const [a, b] = team as [TestDaemon, TestDaemon];
    expect((await a.post("/settings/command", { command: "/turn-cap 20" })).status).to.equal(200);
    const rule = await a.post("/permissions/rules", { scope: "global", action: "allow", pattern: "make test" });
    expect(rule.status).to.equal(201);
    expect((await a.post("/projects/trust", { cwd: project, trusted: true })).status).to.equal(200);
    expect((await a.post("/settings/appearance", { showReasoning: false })).status).to.equal(200);

    const seenBy = async (d: TestDaemon) => {
      await eventually("the setting on another daemon", async () => {
        const cfg = (await d.get("/config")).body;
        return cfg.settings.maxTurnIterations?.source === "settings" && cfg.maxTurnIterations === 20;
      });
      await eventually("the rule on another daemon", async () =>
        (await d.get("/permissions/rules")).body.rules.some((r: { id: string }) => r.id === rule.body.id),
      );
      await eventually(
        "the appearance on another daemon",
        async () => (await d.get("/settings/appearance")).body.showReasoning === false,
      );
      await eventually(
        "the trust decision on another daemon",
        async () => (await d.get(`/projects/trust?cwd=${encodeURIComponent(project)}`)).body.trusted === true,
      );
    };
    await seenBy(b);
    const [c] = (await startTeam(1, url, fake.url)) as [TestDaemon];
    team.push(c);
    await seenBy(c);

    // B takes the decisions back: A follows.
    expect((await b.delete(`/permissions/rules/${rule.body.id}`)).status).to.equal(200);
    expect((await b.post("/projects/trust", { cwd: project, trusted: false })).status).to.equal(200);
    await eventually("the rule gone on A", async () => (await a.get("/permissions/rules")).body.rules.length === 0);
    await eventually(
      "distrust on A",
      async () => (await a.get(`/projects/trust?cwd=${encodeURIComponent(project)}`)).body.trusted === false,
    );
    // Nothing of it is a file in a home: the database holds the documents.
    for (const d of team) for (const name of DOCUMENTS) expect(existsSync(join(d.home, name)), name).to.equal(false);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = (await client.query<{ name: string }>("SELECT name FROM documents ORDER BY name")).rows;
      expect(rows.map((r) => r.name)).to.deep.equal(DOCUMENTS.slice().sort());
    } finally {
      await client.end();
    }
  });

  it("changes made on two daemons at once are all kept", async () => {
    const [a, b] = team as [TestDaemon, TestDaemon];
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? a : b).post("/permissions/rules", { scope: "global", action: "allow", pattern: `tool${i} *` }),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(12).fill(201));
    const patterns = Array.from({ length: 12 }, (_, i) => `tool${i} *`).sort();
    for (const d of [a, b]) {
      await eventually("every rule on each daemon", async () => {
        const rules = (await d.get("/permissions/rules")).body.rules as Array<{ pattern: string }>;
        return JSON.stringify(rules.map((r) => r.pattern).sort()) === JSON.stringify(patterns);
      });
    }
    await Promise.all([
      a.post("/settings/command", { command: "/turn-cap 30" }),
      b.post("/settings/command", { command: "/theme light" }),
    ]);
    for (const d of [a, b]) {
      await eventually("both settings on each daemon", async () => {
        const cfg = (await d.get("/config")).body;
        return cfg.maxTurnIterations === 30 && cfg.theme === "light";
      });
    }
  });

  it("a daemon whose listening connection was cut reads the documents again once it listens again", async () => {
    const [a, b] = team as [TestDaemon, TestDaemon];
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const cut = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN agentd_%'",
      );
      expect(cut.rowCount).to.equal(2);
    } finally {
      await admin.end();
    }
    // Made while B's doorbell may be away: B reads it when it listens again, not from a notification it missed.
    expect((await a.post("/settings/command", { command: "/turn-cap 42" })).status).to.equal(200);
    await eventually("the setting on B", async () => (await b.get("/config")).body.maxTurnIterations === 42);
  });

  it("a plugin's own documents (ctx.documents()) are shared by the team, and are files of its data directory alone", async () => {
    const withNotes = () =>
      startTestDaemon({
        env: { AGENTD_DATABASE_URL: url },
        config: {
          provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" },
          pluginCapabilities: { notes: ["routes", "storage"] },
        },
        extraPlugins: [notesSource],
      });
    const [a, b] = await Promise.all([withNotes(), withNotes()]);
    team.push(a, b);
    expect((await a.request("PUT", "/plugins/notes/note", { text: "from A" })).status).to.equal(200);
    expect((await b.get("/plugins/notes/note")).body).to.deep.equal({ text: "from A" });
    expect(existsSync(join(a.home, "plugins-data", "notes"))).to.equal(false);

    const solo = await startTestDaemon({
      config: { pluginCapabilities: { notes: ["routes", "storage"] } },
      extraPlugins: [notesSource],
    });
    try {
      expect((await solo.get("/plugins/notes/note")).body).to.deep.equal({ text: null });
      expect((await solo.request("PUT", "/plugins/notes/note", { text: "mine" })).status).to.equal(200);
      expect(JSON.parse(readFileSync(join(solo.home, "plugins-data", "notes", "note.json"), "utf8"))).to.deep.equal({
        text: "mine",
      });
    } finally {
      await solo.cleanup();
    }
  });
});

describe("ctx.documents(): a plugin's own documents", () => {
  it("reaches only names under its own prefix", async () => {
    const home = mkdtempSync(join(tmpdir(), "agentd-docs-"));
    try {
      const mine = pluginDocuments(() => new FileDocuments(home), "notes");
      for (const bad of ["../settings.json", "a/b", ".hidden", "", "x".repeat(200)]) {
        let refused = false;
        await mine.read(bad).catch(() => (refused = true));
        expect(refused, bad).to.equal(true);
      }
      await mine.update("n.json", () => "1");
      expect(readFileSync(join(home, "plugins-data", "notes", "n.json"), "utf8")).to.equal("1");
      expect(await pluginDocuments(() => new FileDocuments(home), "other").read("n.json")).to.equal(undefined);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
