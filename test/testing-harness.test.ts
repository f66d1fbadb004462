import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { createToken, definePlugin, defineRoute, defineTool, type Plugin, T } from "../core/index.js";
import { fakeService, startPluginHarness } from "../testing/index.js";

interface Greeter {
  greet(name: string): string;
  farewell(name: string): string;
}
const GreeterToken = createToken<Greeter>("test-greeter");

/** A tool whose arguments are typed by its schema, and a plugin that uses a service it declares. */
const greetTool = (greeter: () => Greeter) =>
  defineTool({
    name: "greet",
    description: "greets, then says goodbye when asked",
    parameters: T.Object({ name: T.String(), leave: T.Optional(T.Boolean()) }),
    execute: async ({ name, leave }) => ({ content: leave ? greeter().farewell(name) : greeter().greet(name) }),
  });
const greeterPlugin = definePlugin({
  manifest: { id: "greeter", version: "1.0.0", description: "uses a greeter", requires: [GreeterToken.id] },
  deps: { greeter: GreeterToken },
  register(ctx) {
    ctx.tools.add(greetTool(() => ctx.deps.greeter));
  },
});

function recorder(calls: string[]): Plugin {
  return definePlugin({
    manifest: {
      id: "recorder",
      version: "1.0.0",
      description: "records its lifecycle",
      capabilities: ["routes", "pages"],
      configSchema: T.Object({ prefix: T.String({ default: ">" }), max: T.Optional(T.Integer({ maximum: 10 })) }),
    },
    register(ctx) {
      calls.push(`register ${ctx.options.prefix}`);
      ctx.events.on("resources.reload", (e) => void calls.push(`reload ${e.cwd}`));
      ctx.tools.add(
        defineTool({
          name: "echo",
          description: "echo",
          parameters: T.Object({ text: T.String() }),
          execute: async ({ text }) => ({ content: `${ctx.options.prefix}${text}` }),
        }),
      );
      ctx.routes.add(
        defineRoute({
          method: "POST",
          path: "/echo",
          operationId: "echo",
          summary: "echo",
          body: T.Object({ text: T.String({ maxLength: 5 }) }, { additionalProperties: false }),
          responses: { 200: T.Object({ text: T.String() }) },
          handler: ({ body }) => ({ body: { text: `${ctx.options.prefix}${body.text}` } }),
        }),
      );
      ctx.routes.add(
        defineRoute({
          method: "GET",
          path: "/page",
          operationId: "page",
          summary: "a page",
          page: true,
          responses: {},
          handler: () => ({ html: "<p>hi</p>" }),
        }),
      );
    },
    start: () => void calls.push("start"),
    stop: () => void calls.push("stop"),
  });
}

describe("agentd/testing: startPluginHarness", () => {
  it("runs register and start with validated options, fires bus events to the plugin, and stop at the end", async () => {
    const calls: string[] = [];
    const h = await startPluginHarness(recorder(calls), { options: { prefix: "#" } });
    h.bus.emit({ type: "resources.reload", cwd: "/w" });
    expect((await h.callTool("echo", { text: "a" })).content).to.equal("#a");
    await h.stop();
    expect(calls).to.deep.equal(["register #", "start", "reload /w", "stop"]);
  });

  it("refuses options that do not match the schema, naming the key", async () => {
    try {
      await startPluginHarness(recorder([]), { options: { max: 99 } });
      expect.fail("should not load");
    } catch (err) {
      expect((err as Error).message).to.match(/pluginOptions\.recorder\.max must be <= 10/);
    }
  });

  it("inject goes through the real HTTP stack: prefix, auth, body validation, pages", async () => {
    const h = await startPluginHarness(recorder([]));
    try {
      expect((await h.inject("POST", "/plugins/recorder/echo", { text: "hi" })).body).to.deep.equal({ text: ">hi" });
      expect((await h.inject("POST", "/plugins/recorder/echo", { text: "too long" })).status).to.equal(400);
      expect((await h.inject("POST", "/plugins/recorder/echo", { text: "x", extra: 1 })).status).to.equal(400);
      expect((await h.inject("POST", "/echo", { text: "hi" })).status).to.equal(404);
      const page = await h.inject("GET", "/plugins/recorder/page", undefined, { page: true });
      expect(page.status).to.equal(200);
      expect(page.text).to.equal("<p>hi</p>");
    } finally {
      await h.stop();
    }
  });

  it("enforces capabilities like the daemon: a denied one is reported in the status", async () => {
    const h = await startPluginHarness(recorder([]), { grant: ["routes"], allowFailure: true });
    try {
      const s = h.status();
      expect(s.state).to.equal("failed");
      expect(s.deniedCapabilities).to.deep.equal(["pages"]);
      expect(s.error).to.match(/page \/page needs the capability "pages"/);
      expect(h.routes).to.deep.equal([]);
    } finally {
      await h.stop();
    }
  });

  it("typed fakes of services and typed tool calls: what the fake leaves out fails, naming it", async () => {
    const h = await startPluginHarness(greeterPlugin, {
      services: [fakeService(GreeterToken, { greet: (name) => `hi ${name}` })],
    });
    try {
      const tool = greetTool(() => h.get(GreeterToken));
      expect((await h.callTool(tool, { name: "Ada" })).content).to.equal("hi Ada");
      const left = await h.callTool(tool, { name: "Ada", leave: true });
      expect(left.isError).to.equal(true);
      expect(left.content).to.include('fake service "test-greeter": farewell is not implemented by the test');
      // @ts-expect-error the tool's schema says name is a string
      await h.callTool(tool, { name: 1 }).catch(() => undefined);
      // @ts-expect-error a fake's methods are the service's
      fakeService(GreeterToken, { greet: (n: number) => String(n) });
      const res = await h.inject<{ tools: unknown[] }>("GET", "/nothing-here");
      expect(res.status).to.equal(404);
    } finally {
      await h.stop();
    }
  });

  it("runs a plugin that states no manifest with its package.json's, or one the test gives, and refuses a mismatch", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentd-harness-pkg-"));
    const manifest = { id: "no-manifest", version: "1.2.3", description: "manifest in package.json", capabilities: [] };
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "no-manifest", agentd: manifest }));
    const plugin = definePlugin({
      options: T.Object({ mark: T.String({ default: "!" }) }),
      register(ctx) {
        ctx.tools.add(
          defineTool({
            name: "shout",
            description: "shouts",
            parameters: T.Object({ text: T.String() }),
            execute: async ({ text }) => ({ content: `${text}${ctx.options.mark} (${ctx.manifest.version})` }),
          }),
        );
      },
    });
    try {
      for (const opts of [{ packageJson: dir }, { packageJson: join(dir, "package.json") }, { manifest }]) {
        const h = await startPluginHarness(plugin, opts);
        try {
          expect(h.status()).to.include({ id: "no-manifest", version: "1.2.3", state: "active" });
          expect((await h.callTool("shout", { text: "hey" })).content).to.equal("hey! (1.2.3)");
        } finally {
          await h.stop();
        }
      }
      // By default ./package.json: here agentd's own, which is no plugin's.
      const none = await startPluginHarness(plugin).catch((err: Error) => err);
      expect(String(none)).to.match(/has no "agentd" manifest.*states no manifest in its code: pass \{ packageJson \}/);
      const stale = definePlugin({ manifest: { ...manifest, version: "1.2.4" }, register() {} });
      const refused = await startPluginHarness(stale, { packageJson: dir }).catch((err: Error) => err);
      expect(String(refused)).to.match(/differs from package\.json's "agentd" key in version \("1\.2\.4" in the code/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
