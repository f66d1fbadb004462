import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { type DaemonProcess, makeTempHome, spawnDaemon, startTestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLER = fileURLToPath(new URL("../scripts/bundle.js", import.meta.url));
const BUNDLE_DIR = fileURLToPath(new URL("../bundle/", import.meta.url));
const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));

/**
 * A third-party plugin in its own folder: `agentd` is its dependency (node_modules/agentd links to this package, as
 * `agentd plugin install` does), so `import "agentd"` goes through package.json "exports". Its route reports whether
 * the daemon's event bus is an instance of the `EventBus` class it imported: only true if both run the same modules.
 */
function writeProbePlugin(dir: string): void {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "agentd"), "dir");
  const manifest = { id: "probe", version: "1.0.0", description: "identity probe", capabilities: ["routes"] };
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "agentd-probe", version: "1.0.0", type: "module", main: "index.js", agentd: manifest }),
  );
  writeFileSync(
    join(dir, "index.js"),
    `import { ApiError, definePlugin, defineRoute, defineTool, SessionServiceToken, ToolRegistryToken, T } from "agentd";
export default definePlugin({
  manifest: ${JSON.stringify(manifest)},
  register(ctx) {
    ctx.tools.add(defineTool({
      name: "probe",
      description: "answers probed",
      parameters: T.Object({}),
      readOnly: true,
      execute: async () => ({ content: "probed" }),
    }));
    ctx.routes.add(defineRoute({
      method: "GET",
      path: "/identity",
      operationId: "identity",
      summary: "which modules the plugin shares with the daemon",
      responses: { 200: T.Object({ sdk: T.String(), sameClasses: T.Boolean(), tools: T.Array(T.String()) }) },
      handler: async () => {
        const tools = ctx.services.get(ToolRegistryToken);
        // The daemon's session service throws the daemon's ApiError: the same class only when the modules are shared.
        const sameClasses = await ctx.services.get(SessionServiceToken).require("missing").then(() => false, (err) => err instanceof ApiError);
        return { body: {
          sdk: import.meta.resolve("agentd"),
          sameClasses,
          tools: tools.list().map((t) => t.name),
        } };
      },
    }));
  },
});
`,
  );
}

describe("bundled build (npm run build: dist/bundle)", () => {
  let fake: FakeProvider;
  let daemon: DaemonProcess | undefined;
  let home: string;
  before(async function () {
    // The bundler and a daemon process: on a loaded 2-core machine this takes far longer than a test.
    this.timeout(180_000);
    // What `npm run build` does after tsc (a focused run after a bare tsc has the re-exports instead).
    await promisify(execFile)(process.execPath, [BUNDLER]);
    fake = await startFakeProvider();
    home = makeTempHome();
    const plugin = join(home, "probe-plugin");
    writeProbePlugin(plugin);
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ plugins: [plugin], pluginCapabilities: { probe: ["routes"] } }),
    );
    daemon = await spawnDaemon(home, {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "k",
      AGENTD_MODEL: "fake-model",
      // Node's module loaders say what they load (stderr): which express, ajv and MCP SDK the daemon runs.
      NODE_DEBUG: "module,esm",
    });
  });
  after(async () => {
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill("SIGTERM");
      await daemon.exited;
    }
    await fake?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("replaces the compiled entry points with the bundle's, which share one runtime", () => {
    for (const entry of ["daemon", "sdk", "testing"]) {
      const text = readFileSync(join(BUNDLE_DIR, `${entry}.js`), "utf8");
      expect(text, entry).to.match(/from ?"\.\/runtime\.js"/);
      expect(text, entry).to.not.match(/from ?"\.\.\//);
    }
  });

  it("runs under `agentd serve` and streams a turn from the provider to an SSE client", async () => {
    const api = daemon?.client;
    if (!api) throw new Error("no daemon");
    const id = await api.createSession({ cwd: home });
    const sse = await api.sse(`/sessions/${id}/events`);
    await sse.waitForType("status");
    fake.script({ steps: [{ content: "Hel" }, { content: "lo" }] });
    expect((await api.post(`/sessions/${id}/chat`, { text: "hi" })).status).to.equal(202);
    await sse.waitForType("end", 15_000);
    sse.close();
    expect(
      sse
        .ofType("token")
        .map((f) => f.json.text)
        .join(""),
    ).to.equal("Hello");
    // Bad input still gets the spec's clear error from the bundled build (validators are compiled lazily).
    const bad = await api.post(`/sessions/${id}/chat`, { nope: 1 });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.have.property("error");
    // express came from its one-file bundle beside the daemon's (loaded with its code cache through node:vm, so the
    // module loader does not list it), not from node_modules' many modules; the built-in routes' validators are
    // precompiled, so nothing loaded Ajv.
    const loaded = daemon?.stderr() ?? "";
    expect(loaded).to.include("MODULE");
    expect(loaded).to.not.match(/node_modules\/(express|body-parser|ajv)\//);
    // better-sqlite3's JavaScript is the runtime's too; only its native addon loads from node_modules, by its path
    // (the `bindings` package, which would search for it from the bundle's folder, is never loaded).
    expect(loaded).to.not.match(/node_modules\/(better-sqlite3\/lib|bindings)\//);
    expect(loaded).to.match(/load "[^"]*node_modules\/better-sqlite3\/build\/Release\/better_sqlite3\.node"/);
    // The runtime runs as a node:vm script: the probe plugin's entry was imported through the runtime's loader, not
    // through node's experimental loader for such scripts, which warns.
    expect(loaded).to.not.include("ExperimentalWarning");
  });

  it("bundles express with body-parser loaded on its first use, not with express (a first GET does not load it)", async () => {
    // body-parser is the one module of express's tree that needs node:zlib (to inflate bodies): whether zlib is
    // loaded tells whether body-parser is. In a fresh node, as the daemon's first request loads express.
    const script = `const loaded = () => process.moduleLoadList.includes("NativeModule zlib");
const express = require(${JSON.stringify(join(BUNDLE_DIR, "vendor-express.cjs"))});
const before = loaded();
const parse = express.json();
console.log(JSON.stringify([before, loaded(), typeof parse]));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", script]);
    expect(JSON.parse(stdout)).to.deep.equal([false, true, "function"]);
  });

  it("keeps the modules express loads on first use out of express's file: each is a file of its own, with its code cache", async () => {
    // Read and deserialised at every daemon's first request, they were 3/4 of express's file (iconv-lite, mime-db).
    const express = readFileSync(join(BUNDLE_DIR, "vendor-express.cjs"), "utf8");
    for (const m of ["body-parser", "iconv-lite", "mime-types", "mime-db", "qs", "debug"]) {
      expect(express).to.not.include(`node_modules/${m}/`);
    }
    // As the daemon loads them (host/code-cache.ts), under its V8 flags: the caches the build wrote are taken.
    const script = `(await import(${JSON.stringify(new URL("../host/v8-flags.js", import.meta.url).href)})).setDaemonFlags();
const { loadWithCodeCache, recordLoadedScripts } = await import(${JSON.stringify(new URL("../host/code-cache.js", import.meta.url).href)});
recordLoadedScripts();
const express = loadWithCodeCache(${JSON.stringify(join(BUNDLE_DIR, "vendor-express.cjs"))}).exports;
const parse = express.json();
const scripts = [...globalThis[Symbol.for("agentd.code-cache")]];
console.log(JSON.stringify([typeof parse, scripts.map(([f, s]) => [f.split("/").pop(), s.cachedDataRejected])]));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    expect(JSON.parse(stdout)).to.deep.equal([
      "function",
      [
        ["vendor-express.cjs", false],
        ["vendor-body-parser.cjs", false],
      ],
    ]);
  });

  it("starts without node:https, tls, zlib, dns/promises, perf_hooks or BlockList; an https provider's warm-up loads https", async () => {
    // In a fresh node, the bundled daemon as `agentd serve` starts it; its first request starts the warm-up.
    const script = `import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDaemon } from ${JSON.stringify(pathToFileURL(join(BUNDLE_DIR, "daemon.js")).href)};
const MODULES = ["https", "tls", "zlib", "dns/promises", "perf_hooks", "internal/blocklist"];
const loaded = () => MODULES.filter((m) => process.moduleLoadList.includes("NativeModule " + m));
const home = mkdtempSync(join(tmpdir(), "agentd-lazy-builtins-"));
const env = { ...process.env, OPENAI_BASE_URL: "https://127.0.0.1:9/v1", OPENAI_API_KEY: "k" };
const daemon = await startDaemon({ home, port: 0, env });
const atStart = loaded();
const res = await fetch(daemon.url + "/api/v1/sessions", { headers: { authorization: "Bearer " + daemon.info.token } });
await res.text();
// The warm-up's end is not observable from here: wait for https to appear, within a bound.
for (let i = 0; i < 200 && !loaded().includes("https"); i++) await new Promise((r) => setTimeout(r, 25));
console.log(JSON.stringify({ atStart, status: res.status, https: loaded().includes("https") }));
await daemon.stop();
rmSync(home, { recursive: true, force: true });`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    expect(JSON.parse(stdout)).to.deep.equal({ atStart: [], status: 200, https: true });
  });

  it("bundles express with mime-types, qs and debug loaded only when called (DEBUG unset), and working when they are", async () => {
    // Precise coverage tells which modules of the bundle ran: esbuild names each CommonJS module's function by its path
    // (relative to the project, or to where node_modules really is).
    const script = `const inspector = require("node:inspector");
const session = new inspector.Session();
session.connect();
const post = (method, params) => new Promise((ok, fail) => session.post(method, params, (e, r) => (e ? fail(e) : ok(r))));
const MODULES = { mime: "node_modules/mime-types/index.js", qs: "node_modules/qs/lib/index.js", debug: "node_modules/debug/src/index.js" };
const FILE = ${JSON.stringify(join(BUNDLE_DIR, "vendor-express.cjs"))};
// Each in a file of its own beside express's, which its stand-in requires.
const source = ["mime-types", "qs", "debug"]
  .map((f) => require("node:fs").readFileSync(${JSON.stringify(BUNDLE_DIR)} + "/vendor-" + f + ".cjs", "utf8"))
  .join("");
// A function V8 never compiled is not in the coverage: it never ran.
async function ran() {
  const { result } = await post("Profiler.takePreciseCoverage");
  const fns = result.flatMap((s) => s.functions);
  const out = {};
  for (const [k, name] of Object.entries(MODULES)) {
    if (!source.includes(name + '"(')) throw new Error("not in the bundle: " + name);
    out[k] = fns.some((fn) => fn.functionName.endsWith(name) && fn.ranges[0].count > 0);
  }
  return out;
}
(async () => {
  await post("Profiler.enable");
  await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  const express = require(FILE);
  const app = express();
  app.get("/plain", (req, res) => res.end("plain"));
  app.get("/typed", (req, res) => res.type("html").send("<p>typed</p>"));
  app.get("/query", (req, res) => res.json(req.query));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const base = "http://127.0.0.1:" + server.address().port;
  const plain = await (await fetch(base + "/plain")).text();
  const afterPlain = await ran();
  const typed = await fetch(base + "/typed");
  const contentType = typed.headers.get("content-type");
  await typed.text();
  app.set("query parser", "extended");
  const query = await (await fetch(base + "/query?a[b]=1")).json();
  console.log(JSON.stringify({ plain, afterPlain, contentType, query, afterAll: await ran() }));
  server.close();
  session.disconnect();
})();`;
    const env = { ...process.env };
    delete env.DEBUG;
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { env });
    expect(JSON.parse(stdout)).to.deep.equal({
      plain: "plain",
      afterPlain: { mime: false, qs: false, debug: false },
      contentType: "text/html; charset=utf-8",
      query: { a: { b: "1" } },
      afterAll: { mime: true, qs: true, debug: false },
    });
    // With DEBUG set, express's loggers are debug's own, and they log.
    const debugged = await promisify(execFile)(process.execPath, ["-e", script], {
      env: { ...env, DEBUG: "express:*" },
    });
    expect(JSON.parse(debugged.stdout).afterPlain.debug).to.equal(true);
    expect(debugged.stderr).to.match(/express:application/);
  });

  it("connects an MCP server through the SDK bundled beside the runtime (vendor-mcp.cjs), not node_modules", async () => {
    const api = daemon?.client;
    if (!api) throw new Error("no daemon");
    const id = await api.createSession({ cwd: home });
    const put = await api.request("PUT", `/sessions/${id}/mcp-servers`, {
      mcpServers: { fx: { command: process.execPath, args: [MCP_FIXTURE] } },
    });
    expect(put.status, put.text).to.equal(200);
    // The server connects in the background: poll its status as a client would.
    type Server = { name: string; state?: string; tools?: string[]; error?: string };
    let server: Server | undefined;
    for (let i = 0; i < 300 && server?.state !== "connected" && server?.state !== "failed"; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      server = ((await api.get("/mcp/servers")).body as Server[]).find((s) => s.name === "fx");
    }
    expect(server?.state, server?.error).to.equal("connected");
    expect(server?.tools).to.include("mcp_fx_echo");
    const loaded = daemon?.stderr() ?? "";
    expect(loaded).to.include(pathToFileURL(join(BUNDLE_DIR, "vendor-mcp.cjs")).href);
    expect(loaded).to.not.match(/node_modules\/@modelcontextprotocol\//);
  });

  it("gives a plugin that imports `agentd` the daemon's own modules: its tool and route work, one instance", async () => {
    const api = daemon?.client;
    if (!api) throw new Error("no daemon");
    const res = await api.get("/plugins/probe/identity");
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.sameClasses).to.equal(true);
    expect(res.body.sdk).to.equal(pathToFileURL(join(BUNDLE_DIR, "sdk.js")).href);
    expect(res.body.tools).to.include("probe");
    expect((await api.get("/plugins/probe/identity", { auth: false })).status).to.equal(401);
  });
});

describe("the test process (mocha, the agentd-modules condition of .mocharc.json)", () => {
  it("gives a plugin that imports `agentd` the compiled modules the in-process daemon runs, one instance", async function () {
    // `npx mocha --no-config` leaves the condition out: plugins then get the bundle next to the compiled modules.
    if (!process.execArgv.some((a) => a.includes("agentd-modules"))) this.skip();
    const home = makeTempHome();
    const plugin = join(home, "probe-plugin");
    writeProbePlugin(plugin);
    const d = await startTestDaemon({ home, config: { plugins: [plugin], pluginCapabilities: { probe: ["routes"] } } });
    try {
      const res = await d.get("/plugins/probe/identity");
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.sdk).to.equal(pathToFileURL(join(ROOT, "dist/core/sdk.js")).href);
      expect(res.body.sameClasses).to.equal(true);
      expect(res.body.tools).to.include("probe");
    } finally {
      await d.cleanup();
    }
  });
});

describe("ApiError across module copies", () => {
  it("is recognised when thrown by another copy of core", async () => {
    const own = await import("../core/errors.js");
    // A query string loads a second, separate instance of the same module.
    const other = (await import(`../core/errors.js?copy=${Date.now()}`)) as typeof own;
    const err = other.ApiError.badRequest("bad thing");
    expect(err).to.not.be.instanceOf(own.ApiError);
    expect(own.isApiError(err)).to.equal(true);
    expect(own.isApiError(new Error("plain"))).to.equal(false);
  });
});
