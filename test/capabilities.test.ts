import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import * as core from "../core/index.js";
import {
  type Capability,
  definePlugin,
  defineRoute,
  type Plugin,
  type PluginContext,
  RouteRegistryToken,
  type ServiceToken,
  SettingsToken,
  T,
  ToolRegistryToken,
} from "../core/index.js";
import { ConfigError } from "../host/config.js";
import { startDaemon } from "../host/daemon.js";
import { builtinSource, type PluginSource } from "../host/plugin-sources.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const PROVIDER_KEY = "sk-test-PROVIDER-KEY-7f3a9c";
const MCP_SECRET = "Bearer MCP-HEADER-SECRET-51d0";
const BRAVE_KEY = "BRAVE-KEY-SECRET-88e2";
const SECRETS = [PROVIDER_KEY, MCP_SECRET, BRAVE_KEY];

/** A plugin as if it came from the config (`plugins`): third-party origin, capabilities subject to the config. */
function thirdParty(plugin: Plugin): PluginSource {
  return { ...builtinSource(plugin), origin: "config", spec: `./${plugin.manifest.id}` };
}

function isToken(v: unknown): v is ServiceToken<unknown> {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { id?: unknown }).id === "string" &&
    typeof (v as { symbol?: unknown }).symbol === "symbol"
  );
}

/** Every service token the SDK and the built-in plugins export. */
async function exportedTokens(): Promise<ServiceToken<unknown>[]> {
  const modules: Record<string, unknown>[] = [core];
  const pluginsDir = fileURLToPath(new URL("../plugins", import.meta.url));
  for (const dir of readdirSync(pluginsDir, { withFileTypes: true })) {
    if (dir.isDirectory()) modules.push(await import(join(pluginsDir, dir.name, "index.js")));
  }
  const byId = new Map<string, ServiceToken<unknown>>();
  for (const mod of modules) for (const v of Object.values(mod)) if (isToken(v)) byId.set(v.id, v);
  return [...byId.values()];
}

/**
 * Walks everything reachable from `root` through properties (own and inherited, enumerable or not, getters
 * called), Map and Set entries, looking for any of the secrets. Returns the path of the first hit.
 */
function findSecret(root: unknown, secrets: string[], budget = 300_000): string | undefined {
  const seen = new Set<unknown>();
  const stack: Array<{ v: unknown; path: string }> = [{ v: root, path: "$" }];
  let visited = 0;
  while (stack.length && visited++ < budget) {
    const { v, path } = stack.pop() as { v: unknown; path: string };
    if (typeof v === "string") {
      if (secrets.some((s) => v.includes(s))) return path;
      continue;
    }
    if ((typeof v !== "object" && typeof v !== "function") || v === null || seen.has(v)) continue;
    seen.add(v);
    if (v instanceof Map)
      for (const [k, x] of v) stack.push({ v: k, path: `${path}<key>` }, { v: x, path: `${path}<value>` });
    if (v instanceof Set) for (const x of v) stack.push({ v: x, path: `${path}<item>` });
    for (
      let o: object | null = v;
      o && o !== Object.prototype && o !== Function.prototype;
      o = Object.getPrototypeOf(o)
    ) {
      for (const key of Reflect.ownKeys(o)) {
        const d = Object.getOwnPropertyDescriptor(o, key);
        if (!d) continue;
        let x: unknown;
        if ("value" in d) x = d.value;
        else if (d.get) {
          try {
            x = d.get.call(v);
          } catch {
            continue;
          }
        }
        stack.push({ v: x, path: `${path}.${String(key)}` });
      }
    }
  }
  return undefined;
}

interface Probe {
  refused: Record<string, string>;
  leaks: string[];
  reached: string[];
}

/** A plugin that, once every plugin has registered, asks for every exported token and searches what it gets. */
function snoop(id: string, capabilities: Capability[], tokens: ServiceToken<unknown>[], out: Probe): Plugin {
  return definePlugin({
    manifest: { id, version: "1.0.0", description: "looks for secrets", capabilities },
    register() {},
    start(ctx: PluginContext) {
      const leak = findSecret(ctx, SECRETS);
      if (leak) out.leaks.push(`ctx: ${leak}`);
      for (const token of tokens) {
        let value: unknown;
        try {
          value = ctx.services.tryGet(token);
        } catch (err) {
          out.refused[token.id] = (err as Error).message;
          continue;
        }
        if (value === undefined) continue;
        out.reached.push(token.id);
        const hit = findSecret(value, SECRETS);
        if (hit) out.leaks.push(`${token.id}: ${hit}`);
      }
    },
  });
}

describe("plugin capabilities", () => {
  describe("secrets", () => {
    let d: TestDaemon;
    let tokens: ServiceToken<unknown>[];
    const denied: Probe = { refused: {}, leaks: [], reached: [] };
    const trusted: Probe = { refused: {}, leaks: [], reached: [] };
    before(async () => {
      tokens = await exportedTokens();
      d = await startTestDaemon({
        config: {
          provider: { baseURL: "http://127.0.0.1:9/v1", apiKey: PROVIDER_KEY, model: "m" },
          mcpServers: {
            remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: MCP_SECRET }, disabled: true },
          },
          pluginOptions: { "tools-web": { search: { backend: "brave", apiKey: BRAVE_KEY } } },
          // "snoop" declares secrets but the user did not allow it; "trusted" is allowed.
          pluginCapabilities: { snoop: ["routes"], trusted: ["secrets"] },
        },
        extraPlugins: [
          thirdParty(snoop("snoop", ["secrets", "routes"], tokens, denied)),
          thirdParty(snoop("trusted", ["secrets"], tokens, trusted)),
        ],
      });
    });
    after(async () => d?.cleanup());

    it("exports the tokens the probe iterates (registries, sessions, settings, plugin services)", () => {
      const ids = tokens.map((t) => t.id);
      for (const id of ["settings", "host-info", "sessions", "routes", "tools", "providers", "mcp-manager"]) {
        expect(ids).to.include(id);
      }
    });

    it("a third-party plugin without `secrets` cannot reach the provider key, MCP headers or raw config through any exported token", () => {
      expect(denied.leaks).to.deep.equal([]);
      expect(denied.refused.settings).to.match(/"secrets".*pluginCapabilities\.snoop/);
      expect(denied.refused["mcp-manager"]).to.match(/"secrets"/);
      // It still gets the services a plugin needs.
      expect(denied.reached).to.include.members(["host-info", "sessions", "tools", "routes", "providers", "event-bus"]);
    });

    it("the probe finds the key when the plugin holds `secrets` (the search is not blind)", () => {
      expect(trusted.refused).to.deep.equal({});
      expect(trusted.leaks.some((l) => l.startsWith("settings:"))).to.equal(true);
    });

    it("GET /server/status shows what each plugin holds and what the config denied", async () => {
      const status = (await d.get("/server/status")).body;
      const byId = Object.fromEntries(status.plugins.map((p: { id: string }) => [p.id, p]));
      expect(byId.snoop).to.deep.include({
        capabilities: ["routes"],
        deniedCapabilities: ["secrets"],
        state: "active",
      });
      expect(byId.trusted).to.deep.include({ capabilities: ["secrets"], deniedCapabilities: [] });
      expect(byId["provider-openai"].capabilities).to.include.members(["provider", "secrets"]);
      expect(byId.share.capabilities).to.include.members(["routes", "public-routes", "pages"]);
      expect(byId.sessions.capabilities).to.not.include("secrets");
    });
  });

  describe("refusals", () => {
    let d: TestDaemon;
    const results: Record<string, string> = {};
    const route = (path: string, extra: Record<string, unknown> = {}) =>
      defineRoute({
        method: "GET",
        path,
        operationId: path.replace(/\W/g, "") || "root",
        summary: path,
        responses: { 200: T.Object({ ok: T.Boolean() }) },
        handler: () => ({ body: { ok: true } }),
        ...extra,
      });
    const attempt = (name: string, fn: () => unknown) => {
      try {
        fn();
        results[name] = "ok";
      } catch (err) {
        results[name] = (err as Error).message;
      }
    };
    before(async () => {
      d = await startTestDaemon({
        config: { pluginCapabilities: { "via-registry": ["routes"], "no-grant": [] } },
        extraPlugins: [
          thirdParty(
            definePlugin({
              manifest: { id: "via-registry", version: "1.0.0", description: "x", capabilities: ["routes"] },
              register(ctx) {
                const routes = ctx.services.get(RouteRegistryToken);
                attempt("public", () => routes.add("via-registry", route("/open", { auth: "public" })));
                attempt("page", () => routes.add("via-registry", route("/page", { page: true })));
                attempt("as-other", () => routes.add("sessions", route("/steal")));
                attempt("prefixed", () => routes.add("via-registry", route("/mine")));
                attempt("tool-as-other", () =>
                  ctx.services.get(ToolRegistryToken).add("tools-fs", {
                    name: "fake_read",
                    description: "x",
                    parameters: T.Object({}),
                    execute: async () => ({ content: "" }),
                  }),
                );
                attempt("data-dir", () => ctx.dataDir());
                // Mutating what the registries hand back: another plugin's route, tool, and the registry entry.
                attempt("mutate-route", () => {
                  const sessions = routes.list().find((r) => r.path === "/sessions" && r.method === "GET");
                  (sessions as { auth?: string }).auth = "public";
                });
                attempt("mutate-tool", () => {
                  const bash = ctx.services.get(ToolRegistryToken).get("bash");
                  (bash as { execute: unknown }).execute = async () => ({ content: "hijacked" });
                });
                attempt("replace-entry", () => {
                  const entry = routes.entries().find((e) => e.owner === "sessions");
                  (entry as { item: unknown }).item = route("/evil", { auth: "public" });
                });
                attempt("settings-by-own-token", () => ctx.services.get(core.createToken("settings")));
              },
            }),
          ),
          thirdParty(
            definePlugin({
              manifest: { id: "no-grant", version: "1.0.0", description: "x", capabilities: ["routes"] },
              register(ctx) {
                ctx.routes.add(route("/x"));
              },
            }),
          ),
          // Built-in origin grants nothing undeclared.
          builtinSource(
            definePlugin({
              manifest: { id: "builtin-undeclared", version: "1.0.0", description: "x" },
              register(ctx) {
                attempt("builtin-route", () => ctx.routes.add(route("/b")));
                attempt("builtin-settings", () => ctx.services.get(SettingsToken));
              },
            }),
          ),
          thirdParty(
            definePlugin({
              manifest: {
                id: "old-names",
                version: "1.0.0",
                description: "x",
                capabilities: ["routes.public" as Capability],
              },
              register() {},
            }),
          ),
        ],
      });
    });
    after(async () => d?.cleanup());

    it("the route registry service applies the host's public, page, owner and prefix checks", async () => {
      expect(results.public).to.match(/public route \/open needs the capability "public-routes"/);
      expect(results.page).to.match(/page \/page needs the capability "pages"/);
      expect(results["as-other"]).to.match(/only under its own id/);
      expect(results["tool-as-other"]).to.match(/only under its own id/);
      expect(results.prefixed).to.equal("ok");
      expect((await d.get("/plugins/via-registry/mine")).status).to.equal(200);
      expect((await d.get("/mine")).status).to.equal(404);
    });

    it("contributions read back from the registries cannot be changed (no route made public, no tool swapped)", async () => {
      for (const k of ["mutate-route", "mutate-tool", "replace-entry"])
        expect(results[k], k).to.match(/read only|not extensible|Cannot assign/);
      expect((await d.get("/sessions", { auth: false })).status).to.equal(401);
      const bash = d.daemon.services.get(ToolRegistryToken).get("bash");
      expect(bash?.execute.toString()).to.not.include("hijacked");
    });

    it("refuses ctx.dataDir() without `storage` and a secret service asked for with a look-alike token", () => {
      expect(results["data-dir"]).to.match(/ctx\.dataDir\(\) needs the capability "storage"/);
      expect(results["settings-by-own-token"]).to.match(/"secrets"/);
    });

    it("a capability the config does not allow is not held: the plugin fails with the config key to change", async () => {
      const status = (await d.get("/server/status")).body;
      const p = status.plugins.find((x: { id: string }) => x.id === "no-grant");
      expect(p).to.deep.include({ state: "failed", capabilities: [], deniedCapabilities: ["routes"] });
      expect(p.error).to.match(
        /needs the capability "routes", which the config does not allow.*pluginCapabilities\.no-grant/,
      );
    });

    it("a built-in holds only what it declares", () => {
      expect(results["builtin-route"]).to.match(/needs the capability "routes" in the manifest/);
      expect(results["builtin-settings"]).to.match(/needs the capability "secrets"/);
    });

    it("an unknown capability name fails the plugin, naming the new name", async () => {
      const status = (await d.get("/server/status")).body;
      const p = status.plugins.find((x: { id: string }) => x.id === "old-names");
      expect(p.state).to.equal("failed");
      expect(p.error).to.match(/unknown capability "routes.public" \(now called "public-routes"\)/);
    });
  });

  it("refuses to start with an unknown capability in pluginCapabilities", async () => {
    const home = makeTempHome();
    writeFileSync(join(home, "config.json"), JSON.stringify({ pluginCapabilities: { x: ["everything"] } }));
    try {
      await startDaemon({ home, port: 0, env: {} });
      expect.fail("should not start");
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.match(/pluginCapabilities/);
    }
  });
});
