/**
 * Part of `npm run build`, after tsc: the daemon, the plugin SDK and the test harness as one CommonJS file,
 * `dist/bundle/runtime.cjs`, loaded with a V8 code cache. The three entry points are the files tsc compiled from
 * `bundle/*.ts` (plain re-exports of the modules), overwritten in place by small ES modules that re-export their
 * part of the one runtime (`runtime.js` loads it):
 * - `daemon.js`: what the compiled CLI's `agentd serve` loads (host/main.ts; the launcher loads the runtime itself);
 * - `sdk.js`: the `agentd` package export (package.json "exports"), what a third-party plugin imports;
 * - `testing.js`: the `agentd/testing` export.
 * One runtime for all three, so a plugin that imports `agentd` next to the bundled daemon gets the daemon's own
 * modules (one instance of every class and token). Cold start is mostly loading code: the runtime is one file instead
 * of ~600 modules (typebox alone is ~270; docs/benchmarks.md, issue 16), and CommonJS because node 20 keeps no
 * compiled code of an ES module: `runtime.js` loads the file through node:vm with the code cache that a training run
 * of the build wrote (host/code-cache.ts, scripts/code-cache-training.ts), so V8 neither parses it nor compiles the
 * functions a start, a first request and a first turn run (docs/benchmarks.md, issue 27). Its dynamic imports
 * (a plugin's entry, the MCP SDK) go through `runtime.js`'s own `import()` (core/import-module.ts).
 * A later bare tsc writes the re-exports again, so `agentd serve` and `agentd` then run the compiled modules,
 * together: never a stale bundle next to fresh modules. better-sqlite3's native addon stays in node_modules;
 * express and ajv (required on first use, host/lazy.ts) and the MCP SDK (imported on a first MCP connection,
 * plugins/mcp/sdk.ts) are pre-bundled into one CommonJS file each beside the bundle. The runtime sits one level under
 * dist/ like every entry's source, so paths relative to a module two levels up (`../../package.json`) stay right.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { RouteRegistryToken } from "../core/registries.js";
import { startDaemon } from "../host/daemon.js";
import { MCP_SDK_MODULES } from "../plugins/mcp/sdk.js";
import { validatorsSource } from "./validators.js";

const outdir = new URL("../bundle", import.meta.url).pathname;
const sources = new URL("../../bundle", import.meta.url).pathname;
const ENTRIES = ["daemon", "sdk", "testing"] as const;
const RUNTIME = join(outdir, "runtime.cjs");

const result = await build({
  // The runtime exports each entry as a namespace (daemon, sdk, testing), plus the hook runtime.js sets. Each entry is
  // its source in bundle/ (export statements only), resolved from dist/bundle: the compiled modules. Read from the
  // source, not the compiled entry, so building twice in a row works.
  stdin: {
    contents: `${ENTRIES.map((e) => `export * as ${e} from "entry:${e}";`).join("\n")}
export { setModuleImporter } from "../core/import-module.js";`,
    resolveDir: outdir,
    sourcefile: "runtime",
    loader: "ts",
  },
  plugins: [
    {
      name: "entries",
      setup(b) {
        b.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice(6), namespace: "entry" }));
        b.onLoad({ filter: /.*/, namespace: "entry" }, (args) => ({
          contents: readFileSync(join(sources, `${args.path}.ts`), "utf8"),
          loader: "ts",
          resolveDir: outdir,
        }));
      },
    },
  ],
  outfile: RUNTIME,
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Comments and whitespace out, names kept: the retained source text is ~1 MiB of idle RSS less; stack traces map
  // back to the TypeScript sources through the map (`node --enable-source-maps`).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  // better-sqlite3's JavaScript is bundled (node's loader resolved and compiled its dozen files at every start: ~0.7
  // MiB of idle RSS) and its native addon named where it is opened (plugins/storage-sqlite/database.ts), so `bindings`,
  // which would look for the addon from the bundle, is never called. cosmiconfig (loaded only when a config file exists);
  // pg (loaded only with a database URL); the clients (terminal, ACP): not the daemon, loaded only by their commands.
  external: ["bindings", "cosmiconfig", "pg", "../clients/*"],
  // The modules locate files next to themselves (`import.meta`); the runtime sits where their chunks sat.
  define: { "import.meta.url": "__agentdUrl", "import.meta.dirname": "__dirname" },
  banner: { js: 'var __agentdUrl = require("node:url").pathToFileURL(__filename).href;' },
  // Any other use of `import.meta` would be empty in CommonJS: fail the build instead.
  logOverride: { "empty-import-meta": "error" },
  logLevel: "warning",
  metafile: true,
});
// The CommonJS dependency trees the daemon requires on first use (host/lazy.ts), each pre-bundled into one file:
// express is ~50 modules to resolve, stat, read and compile at the first request, ajv with ajv-formats ~100. One
// file each is read and compiled instead (docs/benchmarks.md, issue 27). ajv and ajv-formats share one file, so the
// formats plugin works on the same code generator as the Ajv it is added to.
// The built-in routes' validators as code (scripts/validators.ts), from the routes of a daemon started on a
// temporary home with nothing configured: its built-in plugins and the host. Written into the bundle's directory
// (so its requires of ajv's runtime and ajv-formats resolve), bundled below into vendor-validators.cjs, then removed.
const validatorsFile = join(outdir, "validators-source.cjs");
{
  const home = mkdtempSync(join(tmpdir(), "agentd-build-"));
  try {
    const daemon = await startDaemon({
      home,
      port: 0,
      env: { HOME: home, PATH: process.env.PATH ?? "", AGENTD_LOG_LEVEL: "warn" },
    });
    try {
      const routes = daemon.services.get(RouteRegistryToken);
      writeFileSync(
        validatorsFile,
        validatorsSource(routes.entries(), () => true),
      );
    } finally {
      await daemon.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
// The MCP SDK (the mcp plugin's sdk.ts imports this file on its first connection) with zod and its own Ajv: ~0.5 MiB
// of source that would otherwise sit in the runtime, in every daemon's memory.
const VENDOR_ENTRIES: Record<string, string> = {
  express: 'module.exports = require("express");',
  ajv: 'module.exports = { ajv: require("ajv"), formats: require("ajv-formats") };',
  mcp: `module.exports = [${MCP_SDK_MODULES.map((m) => `require("${m}")`).join(", ")}];`,
};
/**
 * The file a stand-in (below) loads its module from, beside vendor-express.cjs: `vendor-<name>.cjs`, one of the vendor
 * entries. In express's own file, these modules' code (iconv-lite's tables, mime-db's types: 3/4 of it) was read,
 * and their functions that the build's training run compiled were deserialised, at every daemon's first request.
 */
const standInFile = (name: string) => `./vendor-${name}.cjs`;
/** A module whose `functions` require the module `name` (from its own file, `standInFile`) on their first call. */
const onFirstCall = (name: string, functions: string[]) => `let real;
const load = () => (real ??= require(${JSON.stringify(standInFile(name))}));
for (const name of ${JSON.stringify(functions)}) exports[name] = (...a) => load()[name](...a);`;

/**
 * Modules express's tree requires when it loads, though the daemon calls their functions only on some requests or
 * never: each importer matching `requirers` gets the stand-in `source` instead (the `stand-ins` plugin below), so a
 * daemon's first request does not wait for them to load, and a daemon that never calls them never holds them.
 */
const STAND_INS: Record<string, { requirers: RegExp; source: string }> = {
  // express re-exports body-parser's four parsers; the daemon creates its parsers on the first request with a body
  // (`onFirstUse`, host/lazy.ts): read.js, raw-body, iconv-lite, qs...
  "body-parser": {
    requirers: /\/express\/lib\/express\.js$/,
    source: onFirstCall("body-parser", ["json", "raw", "text", "urlencoded"]),
  },
  // express's `res.type`, `res.set("Content-Type", ...)`, `req.is`/`req.accepts` with an extension and `send` look
  // types up here; loading it builds its maps from mime-db's ~2,500 types. The API writes its own `Content-Type`
  // headers (host/http/server.ts).
  "mime-types": {
    requirers: /\/node_modules\/(express|type-is|accepts|send)\//,
    source: onFirstCall("mime-types", ["charset", "contentType", "extension", "lookup"]),
  },
  // express's "extended" query parser; the daemon's is "simple".
  qs: { requirers: /\/express\/lib\/utils\.js$/, source: onFirstCall("qs", ["parse", "stringify"]) },
  // Every module of express's tree makes its logger when it loads. debug reads `DEBUG` once, when it loads: without
  // it, every logger debug makes is off. The stand-in then makes loggers that are off without loading debug (tty,
  // supports-color, its formatters); with `DEBUG` set, it is debug.
  debug: {
    requirers: /\/node_modules\//,
    source: `const off = () => {};
off.enabled = false;
off.extend = () => off;
module.exports = process.env.DEBUG ? require(${JSON.stringify(standInFile("debug"))}) : () => off;`,
  },
};
// Each stand-in's real module: a vendor entry of its own (`standInFile`).
for (const name of Object.keys(STAND_INS)) VENDOR_ENTRIES[name] = `module.exports = require(${JSON.stringify(name)});`;
const vendor = await build({
  entryPoints: {
    ...Object.fromEntries(Object.keys(VENDOR_ENTRIES).map((name) => [`vendor-${name}`, `entry:${name}`])),
    "vendor-validators": validatorsFile,
  },
  plugins: [
    {
      name: "vendor-entries",
      setup(b) {
        b.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice(6), namespace: "vendor" }));
        // The generated source requires `ajv/dist/...` and `ajv-formats/dist/...`: from the project's node_modules.
        b.onLoad({ filter: /.*/, namespace: "vendor" }, (args) => ({
          contents: VENDOR_ENTRIES[args.path],
          loader: "js",
          resolveDir: new URL("../..", import.meta.url).pathname,
        }));
      },
    },
    {
      name: "stand-ins",
      setup(b) {
        b.onResolve({ filter: new RegExp(`^(${Object.keys(STAND_INS).join("|")})$`) }, (args) =>
          STAND_INS[args.path]?.requirers.test(args.importer)
            ? { path: args.path, namespace: "stand-in", pluginData: args.resolveDir }
            : undefined,
        );
        // The stand-ins' own files are loaded at run time (host/code-cache.ts), not bundled into express's.
        b.onResolve({ filter: /^\.\/vendor-[\w-]+\.cjs$/ }, (args) => ({ path: args.path, external: true }));
        b.onLoad({ filter: /.*/, namespace: "stand-in" }, (args) => ({
          contents: STAND_INS[args.path]?.source,
          loader: "js",
          resolveDir: args.pluginData as string,
        }));
      },
    },
  ],
  outdir,
  outExtension: { ".js": ".cjs" },
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
  metafile: true,
});
// Inside the runtime, `import()` fails (node:vm gives a script no module loader of its own, see host/code-cache.ts):
// it imports ES modules through the one in core/import-module.ts, which runtime.js sets. Any other dynamic import
// fails the build, but for the openai SDK's import of node:crypto where `globalThis.crypto` is missing (node < 19).
const literalImports = (
  Object.entries(result.metafile.outputs).find(([f]) => f.endsWith("runtime.cjs"))?.[1].imports ?? []
)
  .filter((i) => i.kind === "dynamic-import" && i.path !== "node:crypto")
  .map((i) => i.path);
const computedImports = readFileSync(RUNTIME, "utf8").match(/[^\w$.]import\((?!["'`])/g)?.length ?? 0;
if (literalImports.length > 0 || computedImports !== 1) {
  throw new Error(
    `the runtime imports modules other than through core/import-module.ts: ${literalImports.join(", ") || "-"}; ${computedImports} computed import() (1 expected)`,
  );
}
// The ES modules in front of the runtime: `runtime.js` loads it once per process (host/bundled-runtime.ts, shared
// with the `agentd` command's launcher, scripts/bundle-launcher.ts), each entry re-exports its part under the names
// the entry's source exports.
const parts = createRequire(import.meta.url)(RUNTIME) as Record<(typeof ENTRIES)[number], object>;
const header = "// Written by scripts/bundle.ts (npm run build).\n";
writeFileSync(
  join(outdir, "runtime.js"),
  `${header}import { fileURLToPath } from "node:url";
import { bundledRuntime } from "../host/bundled-runtime.js";
export default bundledRuntime(fileURLToPath(new URL("./runtime.cjs", import.meta.url)), (url) => import(url));
`,
);
for (const e of ENTRIES) {
  writeFileSync(
    join(outdir, `${e}.js`),
    `${header}import runtime from "./runtime.js";\nexport const { ${Object.keys(parts[e]).join(", ")} } = runtime.${e};\n`,
  );
}
// Only after a successful build (esbuild writes nothing on failure): the files of an earlier build that this one
// did not write go (the chunks of the ES module bundle before it, the code caches written below); tsc's
// declarations stay.
const written = new Set([
  ...[...Object.keys(result.metafile.outputs), ...Object.keys(vendor.metafile.outputs)].map((f) => f.split("/").pop()),
  "runtime.js",
  ...ENTRIES.map((e) => `${e}.js`),
]);
for (const f of readdirSync(outdir)) if (!f.endsWith(".d.ts") && !written.has(f)) rmSync(join(outdir, f));
// V8's code caches of the runtime and the pre-bundled CommonJS files (host/code-cache.ts), written by a training run
// in a node that set the daemon's V8 flags first, as `agentd serve` does: V8 takes a cache only under the flags it
// was made with.
// vendor-mcp.cjs has none: the mcp plugin imports it through node's loader, on a daemon's first MCP connection.
const vendorFiles = Object.keys(vendor.metafile.outputs)
  .map((f) => join(outdir, f.split("/").pop() as string))
  .filter((f) => f.endsWith(".cjs") && !f.endsWith("vendor-mcp.cjs"));
execFileSync(process.execPath, [new URL("./code-cache-training.js", import.meta.url).pathname, ...vendorFiles], {
  stdio: "inherit",
});
console.log(`wrote ${outdir}`);
