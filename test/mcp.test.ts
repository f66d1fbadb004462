import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { expect } from "chai";
import {
  type AnyRoute,
  type Disposable,
  FileDocuments,
  McpManagerToken,
  type McpServerStatus,
  type PluginContext,
  type ProjectTrust,
  ProjectTrustToken,
  pluginDocuments,
  Registry,
  type RouteRequest,
  type ServiceToken,
  SettingsToken,
  silentLogger,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  toDisposable,
} from "../core/index.js";
import mcpPlugin, { loadProjectServers, McpManager, type McpManagerDeps, parseServers } from "../plugins/mcp/index.js";
import { mapCallResult } from "../plugins/mcp/results.js";
import { ToolNames, toolName } from "../plugins/mcp/tool-names.js";
import { makeToolContext } from "../testing/plugin-harness.js";
import { createFixtureServer, PIXEL_PNG } from "./fixtures/mcp-server.js";
import { SANDBOX_OFF } from "./support/unconfined-shell.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));

function stdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE], ...extra };
}

function toolCtx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return makeToolContext({ sessionId: "s1", cwd: process.cwd(), signal });
}

interface Harness {
  manager: McpManager;
  tools: Registry<ToolDefinition>;
  call(name: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
  server(name: string, project?: string): McpServerStatus | undefined;
  /** Resolves when `pred` holds, re-checked on every status change (the guard only turns a hang into a message). */
  until(what: string, pred: (list: McpServerStatus[]) => boolean): Promise<void>;
}

function harness(deps: Partial<McpManagerDeps> = {}): Harness {
  const tools = new Registry<ToolDefinition>("tool", (t) => t.name);
  const manager = new McpManager({
    tools: { add: (t) => tools.add("mcp", t) },
    home: tmpdir(),
    options: { connectTimeoutMs: 10_000, reconnect: { attempts: 3, baseDelayMs: 20, maxDelayMs: 100 } },
    // The manager's own behaviour; project servers in the real sandbox are tested in test/project-mcp.test.ts.
    sandbox: () => SANDBOX_OFF,
    ...deps,
  });
  return {
    manager,
    tools,
    async call(name, args = {}, signal) {
      const tool = tools.get(name);
      if (!tool)
        throw new Error(
          `no tool ${name}; have ${tools
            .list()
            .map((t) => t.name)
            .join(", ")}`,
        );
      return tool.execute(args, toolCtx(signal));
    },
    server: (name, project) => manager.list().find((s) => s.name === name && s.project === project),
    until(what, pred) {
      if (pred(manager.list())) return Promise.resolve();
      return new Promise((resolve, reject) => {
        let sub: Disposable | undefined;
        const guard = setTimeout(() => {
          sub?.dispose();
          reject(new Error(`timed out waiting for ${what}; status: ${JSON.stringify(manager.list())}`));
        }, 15_000);
        sub = manager.onChange(() => {
          if (!pred(manager.list())) return;
          clearTimeout(guard);
          sub?.dispose();
          resolve();
        });
      });
    },
  };
}

const stateOf = (h: Harness, name: string, state: McpServerStatus["state"], project?: string) =>
  h.until(`${name} ${state}`, () => h.server(name, project)?.state === state);

describe("mcp plugin", () => {
  describe("config", () => {
    it("accepts stdio and http entries and reports each invalid one with a reason", () => {
      const parsed = parseServers(
        {
          ok: { command: "node", args: ["x.js"], env: { A: "1" }, cwd: "sub", alwaysAllow: ["x"] },
          web: { url: "https://example.test/mcp", headers: { Authorization: "Bearer x" }, timeoutMs: 5000 },
          numeric: { command: 42 },
          ftp: { url: "ftp://example.test" },
          empty: {},
          sse: { type: "sse" },
          both: { command: "x", url: "http://x" },
          text: "node server.js",
          badEnv: { command: "x", env: { A: 1 } },
        },
        "/base",
      );
      const byName = new Map(parsed.servers.map((s) => [s.name, s]));
      expect(byName.get("ok")?.config).to.deep.include({ transport: "stdio", command: "node", cwd: "/base/sub" });
      expect(byName.get("web")?.config).to.deep.include({ transport: "http", timeoutMs: 5000 });
      expect(byName.get("numeric")?.invalid).to.match(/command must be string/);
      expect(byName.get("ftp")?.invalid).to.equal("url must start with http:// or https://");
      expect(byName.get("empty")?.invalid).to.match(/needs command \(stdio\) or url \(http\)/);
      expect(byName.get("sse")?.invalid).to.match(/legacy SSE/);
      expect(byName.get("both")?.invalid).to.match(/not both/);
      expect(byName.get("text")?.invalid).to.match(/must be an object/);
      expect(byName.get("badEnv")?.invalid).to.match(/env\.A must be string/);
      expect(parseServers([1, 2], "/").error).to.match(/must be an object/);
    });

    it("loads project servers from .agentd/mcp.json and reports a malformed file", () => {
      const root = mkdtempSync(join(tmpdir(), "agentd-mcp-project-"));
      try {
        expect(loadProjectServers(root)).to.deep.equal({ servers: [] });
        mkdirSync(join(root, ".agentd"));
        writeFileSync(join(root, ".agentd", "mcp.json"), "{ not json");
        expect(loadProjectServers(root).error).to.match(/not valid JSON/);
        writeFileSync(
          join(root, ".agentd", "mcp.json"),
          JSON.stringify({ mcpServers: { p: { command: "x", cwd: "." } } }),
        );
        expect(loadProjectServers(root).servers[0]?.config).to.deep.include({ command: "x", cwd: root });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });

  describe("naming and results", () => {
    it("sanitises names to [a-zA-Z0-9_-], caps them at 64 characters and dedupes collisions", () => {
      expect(toolName("my.server", "get weather/now")).to.equal("mcp_my_server_get_weather_now");
      const names = new ToolNames();
      const taken = new Set(["mcp_x_t"]);
      const add = (n: string) => {
        if (taken.has(n)) throw new Error(`tool "${n}" is already contributed`);
        taken.add(n);
        return toDisposable(() => taken.delete(n));
      };
      expect(names.register("x", "t", add).name).to.equal("mcp_x_t_2");
      const long = "s".repeat(80);
      const first = names.register(long, "tool", add);
      const second = names.register(long, "tool", add);
      expect(first.name).to.have.length(64);
      expect(second.name).to.have.length(64).and.match(/_2$/);
      second.dispose();
      expect(names.register(long, "tool", add).name).to.equal(second.name);
    });

    it("maps content parts: text joined, images as data URLs, other parts summarised", () => {
      const r = mapCallResult(
        {
          content: [
            { type: "text", text: "one" },
            { type: "image", data: PIXEL_PNG, mimeType: "image/png" },
            { type: "audio", data: "AAAA", mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
            { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/zip" } },
          ],
        },
        { server: "s", tool: "t" },
      );
      expect(r.isError).to.equal(undefined);
      expect(r.content).to.equal(
        "one\n[image image/png]\n[audio audio/wav, 3 bytes]\n[resource file:///a.txt]\ninside\n" +
          "[resource file:///b.bin (application/zip, 3 bytes)]",
      );
      expect(r.images).to.deep.equal([{ dataUrl: `data:image/png;base64,${PIXEL_PNG}` }]);
      expect(mapCallResult({ content: [], structuredContent: { n: 1 } }, { server: "s", tool: "t" }).content).to.equal(
        '{"n":1}',
      );
    });
  });

  describe("stdio servers", () => {
    let h: Harness;
    const secretKey = "AGENTD_MCP_TEST_SECRET";

    before(async () => {
      process.env[secretKey] = "daemon-secret-value";
      h = harness();
      await h.manager.setGlobalServers({ fixture: stdio({ env: { FIXTURE_VAR: "from-config" } }) });
      await stateOf(h, "fixture", "connected");
    });
    after(async () => {
      delete process.env[secretKey];
      await h.manager.stop();
    });

    it("registers every tool as mcp_<server>_<tool> with the server's schema, not read-only", () => {
      const status = h.server("fixture");
      expect(status).to.deep.include({ scope: "global", transport: "stdio", state: "connected" });
      expect(status?.tools).to.include.members([
        "mcp_fixture_echo",
        "mcp_fixture_add",
        "mcp_fixture_fail",
        "mcp_fixture_slow",
        "mcp_fixture_dotted_name_tool",
      ]);
      const echo = h.tools.get("mcp_fixture_echo");
      expect(echo?.description).to.equal("[fixture] Echoes the text");
      expect(echo?.readOnly).to.equal(false);
      const schema = echo?.parameters as unknown as Record<string, unknown>;
      expect(schema.type).to.equal("object");
      expect(schema).to.not.have.property("$schema");
      expect(schema.properties).to.have.property("text");
      expect(schema.required).to.deep.equal(["text"]);
    });

    it("calls tools and maps their results", async () => {
      expect((await h.call("mcp_fixture_echo", { text: "hello" })).content).to.equal("hello");
      const sum = await h.call("mcp_fixture_add", { a: 2, b: 3 });
      expect(sum).to.deep.include({ content: "5" });
      expect(sum.isError).to.equal(undefined);
      const pic = await h.call("mcp_fixture_picture");
      expect(pic.content).to.equal('a pixel\n[image image/png]\n[resource link file:///pixel.png "pixel"]');
      expect(pic.images?.[0]?.dataUrl).to.equal(`data:image/png;base64,${PIXEL_PNG}`);
    });

    it("maps an isError result to execution_failed", async () => {
      const r = await h.call("mcp_fixture_fail");
      expect(r.isError).to.equal(true);
      expect(r.content).to.contain("boom: the fixture failed on purpose");
      expect(r.error).to.deep.include({ code: "execution_failed", retryable: false });
      expect(r.error?.suggestedFix).to.be.a("string").and.not.empty;
    });

    it("passes only safe defaults plus the entry's env to the server process", async () => {
      expect((await h.call("mcp_fixture_env", { name: "FIXTURE_VAR" })).content).to.equal("from-config");
      expect((await h.call("mcp_fixture_env", { name: secretKey })).content).to.equal("(unset)");
      expect((await h.call("mcp_fixture_env", { name: "PATH" })).content).to.equal(process.env.PATH);
    });

    it("returns promptly with an aborted result when the call is aborted, and the server stays usable", async () => {
      const ac = new AbortController();
      const started = Date.now();
      const pending = h.call("mcp_fixture_slow", { ms: 30_000 }, ac.signal);
      setTimeout(() => ac.abort(), 100);
      const r = await pending;
      expect(Date.now() - started).to.be.lessThan(10_000);
      expect(r.error).to.deep.include({ code: "aborted", retryable: false });
      expect(h.server("fixture")?.state).to.equal("connected");
      expect((await h.call("mcp_fixture_echo", { text: "still here" })).content).to.equal("still here");
    });

    it("refreshes the tool list on tools/list_changed", async () => {
      await h.call("mcp_fixture_add_tool", { name: "late" });
      await h.until("the new tool", () => h.server("fixture")?.tools.includes("mcp_fixture_late") ?? false);
      expect((await h.call("mcp_fixture_late")).content).to.equal("late ran");
      expect(h.tools.has("mcp_fixture_echo")).to.equal(true);
    });
  });

  describe("failures", () => {
    let h: Harness;
    afterEach(async () => h.manager.stop());

    it("reports a missing command as failed while other servers work", async () => {
      h = harness();
      await h.manager.setGlobalServers({ ok: stdio(), broken: { command: "/nonexistent/agentd-mcp-nope" } });
      await h.manager.whenSettled();
      expect(h.server("broken")).to.deep.include({ state: "failed", tools: [] });
      expect(h.server("broken")?.error).to.match(/could not connect: .*ENOENT/);
      expect(h.server("ok")?.state).to.equal("connected");
      expect((await h.call("mcp_ok_echo", { text: "x" })).content).to.equal("x");
    });

    it("lists invalid and disabled entries without connecting them", async () => {
      h = harness();
      await h.manager.setGlobalServers({ ok: stdio(), bad: { url: "nope" }, off: stdio({ disabled: true }) });
      await stateOf(h, "ok", "connected");
      expect(h.server("bad")).to.deep.include({ state: "failed", transport: "http", tools: [] });
      expect(h.server("bad")?.error).to.match(/^invalid configuration: url must start with/);
      expect(h.server("off")).to.deep.include({ state: "disabled", tools: [] });
    });

    it("times out a call after the server's timeoutMs", async () => {
      h = harness();
      await h.manager.setGlobalServers({ t: stdio({ timeoutMs: 300 }) });
      await stateOf(h, "t", "connected");
      const r = await h.call("mcp_t_slow", { ms: 10_000 });
      expect(r.error).to.deep.include({ code: "timeout", retryable: true });
      expect(r.content).to.contain("300 ms");
    });

    it("returns unavailable when the server dies, then reconnects with the same tool names", async () => {
      h = harness();
      await h.manager.setGlobalServers({ c: stdio() });
      await stateOf(h, "c", "connected");
      const before = h.server("c")?.tools;
      const r = await h.call("mcp_c_crash");
      expect(r.error).to.deep.include({ code: "unavailable", retryable: true });
      await stateOf(h, "c", "connected");
      expect(h.server("c")?.tools).to.deep.equal(before);
      expect((await h.call("mcp_c_echo", { text: "back" })).content).to.equal("back");
    });

    it("removes the tools of a server that stays down after bounded retries", async () => {
      const dir = mkdtempSync(join(tmpdir(), "agentd-mcp-once-"));
      h = harness();
      try {
        await h.manager.setGlobalServers({ once: stdio({ env: { MCP_FIXTURE_ONCE: join(dir, "marker") } }) });
        await stateOf(h, "once", "connected");
        const during = h.until("reconnecting", () => /reconnecting/.test(h.server("once")?.error ?? ""));
        await h.call("mcp_once_crash");
        await during;
        await h.until("final failure", () => h.server("once")?.state === "failed" && !h.server("once")?.tools.length);
        expect(h.server("once")?.error).to.match(/refusing to start a second time/);
        expect(h.tools.list().filter((t) => t.name.startsWith("mcp_once_"))).to.deep.equal([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("dedupes tool names of servers whose names sanitise alike", async () => {
      h = harness();
      await h.manager.setGlobalServers({ "a.b": stdio(), a_b: stdio() });
      await h.until("both connected", (l) => l.every((s) => s.state === "connected"));
      expect([...h.server("a.b")!.tools, ...h.server("a_b")!.tools]).to.include.members([
        "mcp_a_b_echo",
        "mcp_a_b_echo_2",
      ]);
    });
  });

  describe("streamable HTTP servers", () => {
    let http: Server;
    let url: string;
    let h: Harness;

    before(async () => {
      http = createServer((req, res) => {
        if (req.headers.authorization !== "Bearer test-token-123") {
          res.writeHead(401, { "content-type": "text/plain" }).end("unauthorized");
          return;
        }
        // Stateless: a fresh server and transport per request.
        const server = createFixtureServer({ stdio: false });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        server
          .connect(transport)
          .then(() => transport.handleRequest(req, res))
          .catch(() => res.destroy());
      });
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    });
    after(async () => {
      await h?.manager.stop();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });

    it("connects with the configured headers and calls tools; a refused server fails without leaking headers", async () => {
      h = harness();
      await h.manager.setGlobalServers({
        web: { url, headers: { Authorization: "Bearer test-token-123" } },
        wrong: { url, headers: { Authorization: "Bearer wrong-token-456" } },
      });
      await h.manager.whenSettled();
      expect(h.server("web")).to.deep.include({ transport: "http", state: "connected" });
      expect((await h.call("mcp_web_echo", { text: "over http" })).content).to.equal("over http");
      expect((await h.call("mcp_web_add", { a: 40, b: 2 })).content).to.equal("42");
      expect(h.server("wrong")?.state).to.equal("failed");
      expect(h.server("wrong")?.error).to.be.a("string").and.not.contain("wrong-token-456");
    });
  });

  describe("project servers", () => {
    let root: string;
    let h: Harness;
    const trusted = new Set<string>();
    const trust: ProjectTrust = {
      projectRoot: (cwd) => cwd,
      isTrusted: (cwd) => trusted.has(cwd),
      list: () => [],
      pins: () => undefined,
      set: () => {
        throw new Error("not used");
      },
      onChange: () => toDisposable(() => {}),
    };

    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), "agentd-mcp-proj-"));
      mkdirSync(join(root, ".agentd"));
      writeFileSync(join(root, ".agentd", "mcp.json"), JSON.stringify({ mcpServers: { proj: stdio() } }));
      h = harness({ trust: () => trust });
    });
    afterEach(async () => {
      trusted.clear();
      await h.manager.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it("connects a trusted project's servers only, and closes them when forgotten", async () => {
      expect(h.manager.ensureProject(root)).to.deep.equal([]);
      expect(h.manager.list()).to.deep.equal([]);
      trusted.add(root);
      const started = h.manager.ensureProject(root);
      expect(started.map((s) => [s.name, s.scope, s.project])).to.deep.equal([["proj", "project", root]]);
      await stateOf(h, "proj", "connected", root);
      expect(h.manager.ensureProject(root)[0]?.state).to.equal("connected");
      expect((await h.call("mcp_proj_echo", { text: "p" })).content).to.equal("p");
      await h.manager.forgetProject(root);
      expect(h.manager.list()).to.deep.equal([]);
      expect(h.tools.has("mcp_proj_echo")).to.equal(false);
    });
  });

  describe("plugin", () => {
    it("does not wait for connections in start, serves GET /mcp/servers and closes servers in stop", async () => {
      const { ctx, tools, routes, services } = fakeContext({
        mcpServers: { slowpoke: stdio({ env: { MCP_FIXTURE_DELAY_MS: "500" } }) },
      });
      mcpPlugin.register(ctx);
      const manager = services.get(McpManagerToken.id) as McpManager;
      await mcpPlugin.start?.(ctx);
      // start has returned while the server is still in its handshake.
      expect(manager.list().map((s) => s.state)).to.deep.equal(["connecting"]);
      await new Promise<void>((resolve) => {
        const sub = manager.onChange(() => {
          if (manager.list()[0]?.state !== "connected") return;
          sub.dispose();
          resolve();
        });
      });
      expect(tools.has("mcp_slowpoke_echo")).to.equal(true);
      const route = routes.get("GET /mcp/servers");
      const res = await route?.handler({} as RouteRequest);
      expect((res as { body: McpServerStatus[] }).body[0]).to.deep.include({ name: "slowpoke", state: "connected" });
      await mcpPlugin.stop?.(ctx);
      expect(manager.list()).to.deep.equal([]);
      expect(tools.list()).to.deep.equal([]);
    });
  });
});

/** The slice of a plugin context the mcp plugin uses, backed by real registries. */
function fakeContext(raw: Record<string, unknown>) {
  const tools = new Registry<ToolDefinition>("tool", (t) => t.name);
  const routes = new Registry<AnyRoute>("route", (r) => `${r.method} ${r.path}`);
  const services = new Map<string, unknown>([[SettingsToken.id, { version: "test", raw }]]);
  const get = <T>(token: ServiceToken<T>) => services.get(token.id) as T | undefined;
  const disposables: Disposable[] = [];
  const point = <T>(reg: Registry<T>) => ({ add: (item: T) => reg.add("mcp", item) });
  const ctx = {
    id: "mcp",
    manifest: mcpPlugin.manifest,
    log: silentLogger,
    options: {},
    home: tmpdir(),
    dataDir: () => tmpdir(),
    documents: () => pluginDocuments(() => new FileDocuments(tmpdir()), "mcp"),
    routes: point(routes),
    tools: point(tools),
    personas: { add: () => toDisposable(() => {}) },
    themes: { add: () => toDisposable(() => {}) },
    commands: { add: () => toDisposable(() => {}) },
    providers: { add: () => toDisposable(() => {}) },
    services: {
      provide<T>(token: ServiceToken<T>, value: T) {
        services.set(token.id, value);
        return toDisposable(() => services.delete(token.id));
      },
      provideClass() {
        throw new Error("not used");
      },
      get<T>(token: ServiceToken<T>): T {
        const v = get(token);
        if (v === undefined) throw new Error(`no service ${token.id}`);
        return v;
      },
      tryGet: get,
    },
    deps: { settings: services.get(SettingsToken.id) },
    events: { on: () => toDisposable(() => {}) },
    onDispose: (d: Disposable | (() => void)) => disposables.push(typeof d === "function" ? toDisposable(d) : d),
  } satisfies PluginContext;
  expect(get(ProjectTrustToken)).to.equal(undefined);
  return { ctx, tools, routes, services };
}
