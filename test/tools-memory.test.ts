import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type MessageHit,
  type SessionRecord,
  type SessionStore,
  SessionStoreToken,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../core/index.js";
import memoryPlugin, {
  createMemoryTool,
  createSessionHistoryTool,
  MemoryStore,
  toFtsQuery,
} from "../plugins/tools-memory/index.js";
import { makeToolContext, registerPlugin } from "../testing/plugin-harness.js";

const PROJECT = "/work/project-a";
const OTHER = "/work/project-b";

function toolCtx(overrides: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({ sessionId: "current", cwd: PROJECT, ...overrides });
}

function ok(result: ToolResult): string {
  expect(result.isError, result.content).to.not.equal(true);
  return result.content;
}

function failed(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}

describe("tools-memory: memory", () => {
  let dir: string;
  let store: MemoryStore;
  let memory: ReturnType<typeof createMemoryTool>;
  const inA = toolCtx();
  const inB = toolCtx({ cwd: OTHER });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agentd-memory-"));
    store = MemoryStore.open(join(dir, "memory.db"));
    memory = createMemoryTool(() => store);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("saves, searches, lists and deletes notes", async () => {
    expect(ok(await memory.execute({ operation: "save", content: "Tests run with npm test" }, inA))).to.equal(
      `Saved note #1 (project ${PROJECT}).`,
    );
    expect(
      ok(await memory.execute({ operation: "save", content: "User prefers tabs", scope: "global" }, inA)),
    ).to.equal("Saved note #2 (global).");
    ok(await memory.execute({ operation: "save", content: "Project B runs tests with make check" }, inB));

    const found = ok(await memory.execute({ query: "tests" }, inA));
    expect(found).to.match(/^1 note match "tests":\n#1 \[this project, \d{4}-\d\d-\d\d\] Tests run with npm test$/);

    const everywhere = ok(await memory.execute({ query: "tests running", scope: "all" }, inA));
    expect(everywhere.split("\n").slice(1)).to.have.length(2);
    expect(everywhere.split("\n")[1]).to.contain("#1 [this project");
    expect(everywhere).to.contain(`#3 [project ${OTHER}`);

    const listed = ok(await memory.execute({ operation: "list" }, inA));
    expect(listed.split("\n")).to.deep.equal([
      "2 notes (scope project, newest first):",
      listed.split("\n")[1],
      listed.split("\n")[2],
    ]);
    expect(listed.split("\n")[1]).to.match(/^#1 \[this project/);
    expect(listed.split("\n")[2]).to.match(/^#2 \[global/);
    expect(ok(await memory.execute({ operation: "list", scope: "global" }, inB)))
      .to.contain("#2 [global")
      .and.not.contain("#3");

    expect(ok(await memory.execute({ operation: "delete", id: 1 }, inA))).to.equal(
      "Deleted note #1: Tests run with npm test",
    );
    expect(ok(await memory.execute({ query: "tests" }, inA))).to.equal('No notes match "tests" (scope project).');
    expect(failed(await memory.execute({ operation: "delete", id: 1 }, inA))).to.include({ code: "not_found" });
  });

  it("finds word forms through the porter stemmer and ranks notes matching more words first", async () => {
    await memory.execute({ operation: "save", content: "The test scripts live in ops/" }, inA);
    await memory.execute({ operation: "save", content: "Tests need the staging VPN and the signing key" }, inA);
    const found = ok(await memory.execute({ query: "testing keys" }, inA));
    expect(found.split("\n")[1]).to.contain("#2");
    expect(found.split("\n")[2]).to.contain("#1");
  });

  it("does not store the same note twice in the same place", async () => {
    await memory.execute({ operation: "save", content: "Use pnpm" }, inA);
    const again = await memory.execute({ operation: "save", content: "  Use pnpm  " }, inA);
    expect(ok(again)).to.equal(`Already saved as note #1 (project ${PROJECT}).`);
    expect(ok(await memory.execute({ operation: "save", content: "Use pnpm" }, inB))).to.contain("Saved note #2");
  });

  it("answers hostile or odd FTS queries without throwing", async () => {
    await memory.execute({ operation: "save", content: 'He said "quote" and NEAR(x) a*b -c ^d col:val' }, inA);
    const hostile = [
      '"',
      '""',
      'a" OR b',
      "NEAR(",
      ")(",
      "*",
      "col:val",
      "-c",
      "^",
      "AND",
      "OR OR",
      "x'; DROP TABLE notes; --",
      "🙂",
      'quote"',
    ];
    for (const query of hostile) {
      const result = await memory.execute({ query }, inA);
      expect(result.isError, `${query}: ${result.content}`).to.not.equal(true);
    }
    expect(ok(await memory.execute({ query: 'quote"' }, inA))).to.contain("#1");
    expect(ok(await memory.execute({ query: "col:val" }, inA))).to.contain("#1");
    expect(toFtsQuery('a"b  c')).to.equal('"a""b" OR "c"');
    expect(toFtsQuery("   ")).to.equal(undefined);
  });

  it("refuses incomplete arguments with invalid_arguments", async () => {
    const cases = [
      { operation: "save" as const },
      { operation: "save" as const, content: "   " },
      { operation: "save" as const, content: "x", scope: "all" as const },
      { operation: "search" as const },
      { operation: "delete" as const },
    ];
    for (const args of cases) {
      expect(failed(await memory.execute(args, inA)), JSON.stringify(args)).to.include({ code: "invalid_arguments" });
    }
  });

  it("keeps notes across a re-open, and two connections can write to the same file", async () => {
    await memory.execute({ operation: "save", content: "Remember the migration order" }, inA);
    const second = MemoryStore.open(join(dir, "memory.db"));
    try {
      const saves = await Promise.all([
        memory.execute({ operation: "save", content: "from the first connection" }, inA),
        createMemoryTool(() => second).execute({ operation: "save", content: "from the second connection" }, inA),
      ]);
      expect(saves.map(ok)).to.have.members([
        `Saved note #2 (project ${PROJECT}).`,
        `Saved note #3 (project ${PROJECT}).`,
      ]);
    } finally {
      second.close();
    }
    store.close();
    store = MemoryStore.open(join(dir, "memory.db"));
    expect(ok(await memory.execute({ query: "migration" }, inA))).to.contain("#1");
    expect(ok(await memory.execute({ operation: "list" }, inA))).to.match(/^3 notes/);
  });
});

describe("tools-memory: session_history", () => {
  const hits: MessageHit[] = [
    {
      sessionId: "current",
      sessionTitle: "This one",
      seq: 4,
      role: "user",
      snippet: "how do we deploy",
      createdAt: "2026-03-01T10:00:00.000Z",
    },
    {
      sessionId: "s-old",
      sessionTitle: "Deploy pipeline",
      seq: 7,
      role: "assistant",
      snippet: "We deploy   with\n the [deploy] script",
      createdAt: "2026-02-10T09:30:12.000Z",
    },
    {
      sessionId: "s-other",
      sessionTitle: null,
      seq: 2,
      role: "user",
      snippet: "deploy to staging",
      createdAt: "2026-01-05T08:00:00.000Z",
    },
  ];

  /** The part of SessionStore the tool uses, honouring the options like the SQLite store does. */
  function fakeStore(data: MessageHit[]) {
    const calls: Array<{ query: string; opts: Parameters<SessionStore["searchMessages"]>[1] }> = [];
    const store: Pick<SessionStore, "searchMessages"> = {
      searchMessages(query, opts) {
        calls.push({ query, opts });
        return data.filter((h) => h.sessionId !== opts?.excludeSessionId).slice(0, opts?.limit ?? 50);
      },
    };
    return { store, calls };
  }

  it("formats hits with title, session id, date, role and snippet, leaving out the current session", async () => {
    const { store, calls } = fakeStore(hits);
    const tool = createSessionHistoryTool(() => store);
    const text = ok(await tool.execute({ query: "deploy" }, toolCtx()));
    expect(calls).to.deep.equal([{ query: "deploy", opts: { excludeSessionId: "current", limit: 10 } }]);
    expect(text).to.equal(
      [
        '2 messages of earlier sessions in any project match "deploy":',
        '[1] "Deploy pipeline" (session s-old) · 2026-02-10 09:30 UTC · assistant',
        "    We deploy with the [deploy] script",
        "[2] (session s-other) · 2026-01-05 08:00 UTC · user",
        "    deploy to staging",
      ].join("\n"),
    );
  });

  it("drops the current session even when a store ignores excludeSessionId", async () => {
    const careless: Pick<SessionStore, "searchMessages"> = { searchMessages: () => hits };
    const text = ok(await createSessionHistoryTool(() => careless).execute({ query: "deploy", limit: 5 }, toolCtx()));
    expect(text).to.not.contain("session current");
    expect(text).to.match(/^2 messages/);
  });

  it("filters to this project when the store can tell sessions' working directories", async () => {
    const { store: base, calls } = fakeStore(hits);
    const cwd: Record<string, string> = { "s-old": OTHER, "s-other": PROJECT };
    const store = {
      ...base,
      getSession: (id: string) => ({ id, cwd: cwd[id] }) as SessionRecord,
    };
    const tool = createSessionHistoryTool(() => store);
    const text = ok(await tool.execute({ query: "deploy", limit: 3 }, toolCtx()));
    expect(calls[0]?.opts?.limit).to.equal(15);
    expect(text).to.match(/^1 message of earlier sessions in this project match "deploy":/);
    expect(text).to.contain("session s-other").and.not.contain("s-old");
    const global = ok(await tool.execute({ query: "deploy", scope: "global" }, toolCtx()));
    expect(global).to.contain("s-old").and.contain("s-other");
  });

  it("says so when nothing matches, and suggests the global scope within a project", async () => {
    const { store } = fakeStore([]);
    const text = ok(await createSessionHistoryTool(() => store).execute({ query: "kubernetes" }, toolCtx()));
    expect(text).to.equal('No messages of earlier sessions in any project match "kubernetes". Try other words.');
    const scoped = { ...store, getSession: () => undefined };
    const inProject = ok(await createSessionHistoryTool(() => scoped).execute({ query: "kubernetes" }, toolCtx()));
    expect(inProject).to.contain('in this project match "kubernetes". Try scope "global"');
  });

  it("answers unavailable without a store and execution_failed when the search throws", async () => {
    const none = await createSessionHistoryTool(() => undefined).execute({ query: "x" }, toolCtx());
    expect(failed(none)).to.include({ code: "unavailable" });
    const broken: Pick<SessionStore, "searchMessages"> = {
      searchMessages: () => {
        throw new Error("fts5: syntax error");
      },
    };
    const result = await createSessionHistoryTool(() => broken).execute({ query: "x" }, toolCtx());
    expect(failed(result)).to.include({ code: "execution_failed" });
    expect(result.content).to.contain("fts5: syntax error");
  });
});

describe("tools-memory: plugin", () => {
  it("declares its needs, adds both read-only tools and opens the database only on first use", async () => {
    const home = mkdtempSync(join(tmpdir(), "agentd-memory-plugin-"));
    const dataDir = join(home, "plugins-data", "tools-memory");
    const store: Pick<SessionStore, "searchMessages"> = { searchMessages: () => [] };
    let harness: ReturnType<typeof registerPlugin> | undefined;
    try {
      expect(memoryPlugin.manifest).to.include({ id: "tools-memory", version: "1.0.0" });
      expect(memoryPlugin.manifest.requires).to.deep.equal(["session-store"]);
      expect(memoryPlugin.manifest.capabilities).to.deep.equal(["storage"]);
      harness = registerPlugin(memoryPlugin, { home, services: { [SessionStoreToken.id]: store } });
      const { tools } = harness;
      expect(tools.map((t) => [t.name, t.readOnly])).to.deep.equal([
        ["memory", true],
        ["session_history", true],
      ]);
      expect(existsSync(join(dataDir, "memory.db"))).to.equal(false);
      const [memory, history] = tools as [ToolDefinition, ToolDefinition];
      ok(await memory.execute({ operation: "save", content: "kept" }, toolCtx()));
      expect(existsSync(join(dataDir, "memory.db"))).to.equal(true);
      expect(ok(await history.execute({ query: "x" }, toolCtx()))).to.match(/^No messages/);
    } finally {
      harness?.dispose();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
