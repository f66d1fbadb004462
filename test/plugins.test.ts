import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { type Capability, definePlugin, defineRoute, type Plugin, T } from "../core/index.js";
import { ToolRegistryToken } from "../core/registries.js";
import { ConfigError } from "../host/config.js";
import { startDaemon } from "../host/daemon.js";
import { FatalPluginError } from "../host/loader.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { makeToolContext } from "../testing/plugin-harness.js";
import { builtHelloExample } from "./support/plugin-package.js";

function plugin(
  id: string,
  extra: Partial<Plugin> & { requires?: string[]; required?: boolean; capabilities?: Capability[] } = {},
): Plugin {
  const { requires, required, capabilities, ...rest } = extra;
  return definePlugin({
    manifest: { id, version: "1.0.0", description: id, requires, required, capabilities },
    register: () => {},
    ...rest,
  });
}

describe("plugin host", () => {
  describe("a third-party plugin (examples/hello-plugin) from the config", () => {
    let d: TestDaemon;
    let example: string;
    before(async () => {
      example = builtHelloExample();
      d = await startTestDaemon({ config: { plugins: [example], pluginCapabilities: { hello: ["routes"] } } });
    });
    after(async () => {
      await d.cleanup();
      rmSync(example, { recursive: true, force: true });
    });

    it("serves its route under /api/v1/plugins/hello, authenticated", async () => {
      const res = await d.get("/plugins/hello/greeting?name=Ada");
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ greeting: "Hello, Ada!" });
      expect((await d.get("/plugins/hello/greeting", { auth: false })).status).to.equal(401);
      expect((await d.get("/plugins/hello/greeting?name=")).status).to.equal(400);
    });

    it("appears in the OpenAPI document and in the plugin status, with its tool registered", async () => {
      const doc = (await d.get("/openapi.json")).body;
      expect(doc.paths).to.have.property("/api/v1/plugins/hello/greeting");
      expect(doc.paths["/api/v1/plugins/hello/greeting"].get.operationId).to.equal("hello_greeting");
      const status = (await d.get("/server/status")).body;
      const hello = status.plugins.find((p: { id: string }) => p.id === "hello");
      expect(hello).to.include({ state: "active", origin: "config" });
      expect(hello.contributions).to.include({ tools: 1, routes: 1 });
      const tool = d.daemon.services.get(ToolRegistryToken).get("hello_greet");
      const out = await tool?.execute({ name: "Bob" }, makeToolContext());
      expect(out?.content).to.equal("Hello, Bob!");
    });
  });

  describe("failure containment", () => {
    let d: TestDaemon;
    const stopped: string[] = [];
    before(async () => {
      d = await startTestDaemon({
        extraPlugins: [
          plugin("throws-in-register", {
            capabilities: ["routes"],
            register(ctx) {
              ctx.routes.add(
                defineRoute({
                  method: "GET",
                  path: "/half-registered",
                  operationId: "half",
                  summary: "added before the failure",
                  responses: { 200: T.Object({}) },
                  handler: () => ({ body: {} }),
                }),
              );
              throw new Error("boom in register");
            },
          }),
          plugin("throws-in-start", { start: () => Promise.reject(new Error("boom in start")) }),
          plugin("needs-missing", { requires: ["no-such-service"] }),
          plugin("needs-failed", { requires: ["throws-in-register"] }),
          plugin("healthy", { stop: () => void stopped.push("healthy") }),
          plugin("Bad Id"),
        ].map(builtinSource),
      });
    });
    after(async () => d.cleanup());

    it("unloads failing plugins, reports them in /server/status, and keeps serving", async () => {
      const status = (await d.get("/server/status")).body;
      const byId = Object.fromEntries(status.plugins.map((p: { id: string }) => [p.id, p]));
      expect(byId["throws-in-register"]).to.include({ state: "failed" });
      expect(byId["throws-in-register"].error).to.match(/boom in register/);
      expect(byId["throws-in-start"].error).to.match(/boom in start/);
      expect(byId["needs-missing"].error).to.match(/no-such-service/);
      expect(byId["needs-failed"].state).to.equal("failed");
      expect(byId["Bad Id"].error).to.match(/invalid plugin id/);
      expect(byId.healthy.state).to.equal("active");
      expect(byId.sessions.state).to.equal("active");
      expect((await d.get("/half-registered")).status).to.equal(404);
      expect((await d.get("/sessions")).status).to.equal(200);
    });
  });

  it("refuses to start when a required plugin fails", async () => {
    const home = makeTempHome();
    const broken = plugin("broken-required", {
      required: true,
      register: () => {
        throw new Error("nope");
      },
    });
    try {
      await startDaemon({ home, port: 0, builtins: [...builtinPlugins, broken].map(builtinSource), env: {} });
      expect.fail("should not start");
    } catch (err) {
      expect(err).to.be.instanceOf(FatalPluginError);
      expect((err as Error).message).to.match(/broken-required/);
    }
  });

  it("stops with a readable message naming the key when the config is invalid", async () => {
    for (const [cfg, re] of [
      [{ server: { port: "eighty" } }, /server\.port/],
      [{ nonsense: true }, /unknown key "nonsense"/],
      [{ logLevel: "loud" }, /logLevel/],
    ] as const) {
      const home = makeTempHome();
      writeFileSync(join(home, "config.json"), JSON.stringify(cfg));
      try {
        await startDaemon({ home, port: 0, env: {} });
        expect.fail("should not start");
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        expect((err as Error).message).to.match(re);
      }
    }
  });
});
