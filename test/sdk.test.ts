import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  createToken,
  definePlugin,
  defineTool,
  EventBusToken,
  HostInfoToken,
  LoggerToken,
  optional,
  type Plugin,
  type PluginContext,
  type SlashCommand,
  SyncEventBus,
  T,
  type ToolDefinition,
  ToolFailure,
  type ToolResult,
} from "../core/index.js";
import { builtinSource, type PluginSource } from "../host/plugin-sources.js";
import { toResponse } from "../plugins/commands/dispatch.js";
import { unavailable } from "../plugins/mcp/results.js";
import { createFsTools } from "../plugins/tools-fs/index.js";
import { BackgroundTasks } from "../plugins/tools-shell/tasks.js";
import { createBashTool, DEFAULT_SHELL_LIMITS } from "../plugins/tools-shell/tools.js";
import { createWebFetchTool } from "../plugins/tools-web/fetch-tool.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { startPluginHarness } from "../testing/harness.js";
import { makeToolContext } from "../testing/plugin-harness.js";
import { UNCONFINED_SHELL } from "./support/unconfined-shell.js";

const Params = T.Object({
  name: T.String({ minLength: 1 }),
  times: T.Optional(T.Integer({ minimum: 1, maximum: 3 })),
  shout: T.Boolean({ default: false }),
});

const greet = defineTool({
  name: "greet",
  description: "greets",
  parameters: Params,
  async execute(args) {
    // Compile-time checks: the argument type comes from the schema (these lines fail `tsc` otherwise).
    const name: string = args.name;
    const times: number | undefined = args.times;
    // @ts-expect-error not in the schema
    void args.nope;
    if (name === "fail") throw new ToolFailure("conflict", "cannot greet fail", "Pick another name.", true);
    if (name === "crash") throw new Error("disk on fire");
    const text = `Hello, ${name}!`.repeat(times ?? 1);
    return { content: args.shout ? text.toUpperCase() : text };
  },
});

function call(tool: ToolDefinition, args: unknown, over = {}): Promise<ToolResult> {
  return tool.execute(args as Record<string, unknown>, makeToolContext(over));
}

describe("plugin SDK", () => {
  describe("defineTool", () => {
    it("gives execute validated, typed arguments with schema defaults applied", async () => {
      expect((await call(greet, { name: "Ada", times: 2 })).content).to.equal("Hello, Ada!Hello, Ada!");
      expect((await call(greet, { name: "Ada", shout: true })).content).to.equal("HELLO, ADA!");
    });

    it("checks the arguments itself when called directly (not only in the agent loop)", async () => {
      for (const bad of [{}, { name: "" }, { name: 42 }, { name: "x", times: 9 }]) {
        const r = await call(greet, bad);
        expect(r.isError, JSON.stringify(bad)).to.equal(true);
        expect(r.error?.code).to.equal("invalid_arguments");
        expect(r.content).to.match(/^Invalid arguments for greet: /);
      }
    });

    it("turns a thrown ToolFailure into its result and anything else into execution_failed", async () => {
      expect(await call(greet, { name: "fail" })).to.deep.equal({
        content: "cannot greet fail",
        isError: true,
        error: { code: "conflict", retryable: true, suggestedFix: "Pick another name." },
      });
      const crash = await call(greet, { name: "crash" });
      expect(crash.error?.code).to.equal("execution_failed");
      expect(crash.content).to.equal("greet failed: disk on fire");
    });

    it("answers aborted once the turn is aborted", async () => {
      const ac = new AbortController();
      ac.abort();
      expect((await call(greet, { name: "Ada" }, { signal: ac.signal })).error?.code).to.equal("aborted");
    });
  });

  it("every kind of tool fails in one format: a readable content and error {code, retryable, suggestedFix}", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "agentd-sdk-"));
    const tasks = new BackgroundTasks({ maxPerSession: 1, bufferChars: 1000, keepFinished: 1, killGraceMs: 100 });
    const failures: Record<string, ToolResult> = {
      "tools-fs": await call(createFsTools().read, { path: "missing.txt" }, { cwd }),
      "tools-shell": await call(
        createBashTool(DEFAULT_SHELL_LIMITS, tasks, UNCONFINED_SHELL),
        { command: "   " },
        { cwd },
      ),
      "tools-web": await call(createWebFetchTool(), { url: "not a url" }),
      mcp: unavailable("remote", "connection refused"),
      "third-party": await call(greet, { name: "fail" }),
    };
    for (const [who, r] of Object.entries(failures)) {
      expect(r.isError, who).to.equal(true);
      expect(Object.keys(r.error ?? {}).sort(), who).to.deep.equal(["code", "retryable", "suggestedFix"]);
      expect(r.content, who).to.be.a("string").and.not.equal("");
      // The fix is given once, in `error` (the model reads both); the content does not repeat it.
      expect(r.content, who).to.not.include(r.error?.suggestedFix ?? "");
    }
  });

  describe("definePlugin with an options schema", () => {
    let d: TestDaemon;
    const seen: Record<string, unknown> = {};
    const typed = (id: string): Plugin =>
      definePlugin({
        manifest: {
          id,
          version: "1.0.0",
          description: "typed options",
          configSchema: T.Object({
            greeting: T.String({ default: "hi" }),
            limit: T.Optional(T.Integer({ minimum: 1 })),
          }),
        },
        register(ctx) {
          // Compile-time checks: ctx.options has the schema's static type.
          const greeting: string = ctx.options.greeting;
          const limit: number | undefined = ctx.options.limit;
          // @ts-expect-error not in the schema
          void ctx.options.nope;
          seen[id] = { greeting, limit };
        },
      });
    const thirdParty = (p: Plugin): PluginSource => ({
      ...builtinSource(p),
      origin: "config",
      spec: `./${p.manifest.id}`,
    });
    before(async () => {
      d = await startTestDaemon({
        config: { pluginOptions: { "typed-set": { limit: 5 }, "typed-bad": { limit: "five" } } },
        extraPlugins: [
          thirdParty(typed("typed-default")),
          thirdParty(typed("typed-set")),
          thirdParty(typed("typed-bad")),
        ],
      });
    });
    after(async () => d?.cleanup());

    it("hands register the validated options with defaults applied", () => {
      expect(seen["typed-default"]).to.deep.equal({ greeting: "hi", limit: undefined });
      expect(seen["typed-set"]).to.deep.equal({ greeting: "hi", limit: 5 });
    });

    it("does not load a plugin whose options do not match the schema, and says which key is wrong", async () => {
      expect(seen).to.not.have.property("typed-bad");
      const status = (await d.get("/server/status")).body;
      const bad = status.plugins.find((p: { id: string }) => p.id === "typed-bad");
      expect(bad.state).to.equal("failed");
      expect(bad.error).to.match(/pluginOptions\.typed-bad\.limit must be integer/);
    });
  });

  describe("definePlugin with typed deps", () => {
    interface Counter {
      next(): number;
    }
    const CounterToken = createToken<Counter>("test-counter");
    const provider = definePlugin({
      manifest: { id: "counter", version: "1.0.0", description: "provides a counter", provides: [CounterToken.id] },
      register(ctx) {
        let n = 0;
        ctx.services.provide(CounterToken, { next: () => ++n });
      },
    });

    it("hands declared services typed in ctx.deps, after their providers, and refuses undeclared ones", async () => {
      const seen: Record<string, unknown> = {};
      const user = definePlugin({
        manifest: { id: "counter-user", version: "1.0.0", description: "uses it" },
        deps: { counter: CounterToken, bus: EventBusToken, extra: optional(createToken<string>("not-provided")) },
        register(ctx) {
          // Compile-time checks: each key has its token's type.
          const n: number = ctx.deps.counter.next();
          const extra: string | undefined = ctx.deps.extra;
          // @ts-expect-error the bus is not a counter
          void ctx.deps.bus.next;
          seen.n = n;
          seen.extra = extra;
          seen.bus = ctx.deps.bus instanceof SyncEventBus;
          try {
            ctx.services.get(LoggerToken);
          } catch (err) {
            seen.undeclared = (err as Error).message;
          }
        },
      });
      // The user is listed first; its required dep orders it after the provider.
      const h = await startPluginHarness(provider, { plugins: [user], origin: "builtin" });
      try {
        expect(user.manifest.requires).to.include.members(["test-counter", "event-bus"]);
        expect(seen).to.deep.include({ n: 1, extra: undefined, bus: true });
        expect(seen.undeclared).to.match(/"logger" is not declared in the plugin's deps/);
      } finally {
        await h.stop();
      }
    });

    it("resolves an optional dep once its provider is there, and disposes the plugin's container at unload", async () => {
      let late:
        | PluginContext<Record<string, unknown>, { counter: Counter | undefined; host: { version: string } }>
        | undefined;
      const user = definePlugin({
        manifest: { id: "early-user", version: "1.0.0", description: "works without a counter" },
        deps: { counter: optional(CounterToken), host: HostInfoToken },
        register(ctx) {
          late = ctx;
        },
      });
      // The user registers first (an optional dep does not order it): the counter comes after.
      const h = await startPluginHarness(user, { plugins: [provider], origin: "builtin" });
      if (!late) throw new Error("not registered");
      const ctx = late;
      expect(ctx.deps.counter?.next()).to.equal(1);
      expect(ctx.deps.host.version).to.equal("test");
      await h.stop();
      // Required deps were resolved and kept; the container itself resolves nothing more.
      expect(ctx.deps.host.version).to.equal("test");
      expect(() => ctx.services.get(CounterToken)).to.throw(/disposed/);
    });

    it("meets a dep on a host service even where a failing plugin has the same id", async () => {
      // A plugin named like the host's bus token: its failure must not fail the plugins that declare the bus.
      const namesake = definePlugin({
        manifest: { id: "event-bus", version: "1.0.0", description: "fails" },
        register() {},
        start() {
          throw new Error("broken on purpose");
        },
      });
      const d = await startTestDaemon({ extraPlugins: [builtinSource(namesake)] });
      try {
        const status = (await d.get("/server/status")).body;
        const state = (id: string) => status.plugins.find((p: { id: string }) => p.id === id)?.state;
        expect(state("event-bus")).to.equal("failed");
        // agent, commands and worktrees declare EventBusToken ("event-bus"): still loaded.
        for (const id of ["agent", "commands", "worktrees"]) expect(state(id), id).to.equal("active");
      } finally {
        await d.cleanup();
      }
    });

    it("fails a plugin whose required dep nobody provides, naming it", async () => {
      const lonely = definePlugin({
        manifest: { id: "lonely", version: "1.0.0", description: "needs a counter" },
        deps: { counter: CounterToken },
        register() {},
      });
      const h = await startPluginHarness(lonely, { allowFailure: true });
      try {
        expect(h.status().state).to.equal("failed");
        expect(h.status().error).to.match(/requires "test-counter"/);
      } finally {
        await h.stop();
      }
    });
  });

  it("types a slash command's answer: text, or {message, ...data}; anything else does not compile", async () => {
    const count: SlashCommand = {
      name: "count",
      description: "counts",
      run: ({ args }) => ({ message: `${args.length} characters`, length: args.length }),
    };
    const text: SlashCommand = { name: "hi", description: "greets", run: async () => "hello" };
    const silent: SlashCommand = { name: "noop", description: "does nothing", run: () => undefined };
    const wrong: SlashCommand = {
      name: "wrong",
      description: "answers a number",
      // @ts-expect-error a bare number is not a command result (answer text or an object)
      run: () => 42,
    };
    expect(wrong.name).to.equal("wrong");
    expect(toResponse("count", await count.run({ sessionId: undefined, args: "abc" }))).to.deep.equal({
      ok: true,
      command: "/count",
      result: "3 characters",
      message: "3 characters",
      data: { length: 3 },
    });
    expect(toResponse("hi", await text.run({ sessionId: undefined, args: "" })).result).to.equal("hello");
    expect(toResponse("noop", await silent.run({ sessionId: undefined, args: "" })).result).to.equal("/noop done");
  });
});
