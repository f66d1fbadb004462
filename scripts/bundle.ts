/**
 * Part of `npm run build`, after tsc: the daemon and the plugin SDK as one ES module bundle with code splitting, in
 * `dist/bundle/`. Its three entry points are the files tsc compiled from `bundle/*.ts` (plain re-exports of the
 * modules), overwritten in place:
 * - `daemon.js`: what `agentd serve` loads (host/main.ts);
 * - `sdk.js`: the `agentd` package export (package.json "exports"), what a third-party plugin imports;
 * - `testing.js`: the `agentd/testing` export.
 * Code the entries share goes into shared chunks that every entry imports, so a plugin that imports `agentd` next
 * to the bundled daemon gets the daemon's own modules (one instance of every class and token), and dynamic imports
 * (the openai and MCP SDKs, ...) stay lazy, each in its own chunk. Cold start is mostly module loading (typebox
 * alone is ~270 modules): the bundle loads a few files instead of ~600 (docs/benchmarks.md, issue 16).
 * A later bare tsc writes the re-exports again, so `agentd serve` and `agentd` then run the compiled modules,
 * together: never a stale bundle next to fresh modules. better-sqlite3 (native) stays in node_modules; express and
 * ajv (required on first use, host/lazy.ts) are pre-bundled into one CommonJS file each beside the bundle. The chunks sit one level under dist/ like every
 * entry's source, so paths relative to a module two levels up (`../../package.json`) stay right.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { RouteRegistryToken } from "../core/registries.js";
import { startDaemon } from "../host/daemon.js";
import { validatorsSource } from "./validators.js";

const outdir = new URL("../bundle", import.meta.url).pathname;
const sources = new URL("../../bundle", import.meta.url).pathname;
const ENTRIES = ["daemon", "sdk", "testing"];

const result = await build({
  // Each entry is its source in bundle/ (export statements only), resolved from dist/bundle: the compiled modules.
  // Read from the source, not the compiled entry, so building twice in a row works.
  entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, `entry:${e}`])),
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
  outdir,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Comments and whitespace out, names kept: the retained source text of the loaded chunks is ~1 MiB of idle RSS
  // less; stack traces map back to the TypeScript sources through the maps (`node --enable-source-maps`).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  // Native; cosmiconfig (CommonJS, imported dynamically: a split chunk would give it only a default export; loaded
  // only when a config file exists); pg (CommonJS, loaded only with a database URL); the clients (terminal, ACP): not the daemon, loaded only by their commands.
  external: ["better-sqlite3", "cosmiconfig", "pg", "../clients/*"],
  // CommonJS dependencies inside an ES module bundle need a `require`.
  banner: {
    js: 'import { createRequire as __agentdCreateRequire } from "node:module"; const require = __agentdCreateRequire(import.meta.url);',
  },
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
const vendor = await build({
  entryPoints: {
    "vendor-express": "entry:express",
    "vendor-ajv": "entry:ajv",
    "vendor-validators": validatorsFile,
  },
  plugins: [
    {
      name: "vendor-entries",
      setup(b) {
        b.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice(6), namespace: "vendor" }));
        // The generated source requires `ajv/dist/...` and `ajv-formats/dist/...`: from the project's node_modules.
        b.onLoad({ filter: /.*/, namespace: "vendor" }, (args) => ({
          contents:
            args.path === "ajv"
              ? 'module.exports = { ajv: require("ajv"), formats: require("ajv-formats") };'
              : 'module.exports = require("express");',
          loader: "js",
          resolveDir: new URL("../..", import.meta.url).pathname,
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
// Only after a successful build (esbuild writes nothing on failure): the chunks and maps of an earlier bundle (their
// names carry a hash) go; tsc's declarations stay.
const written = new Set(
  [...Object.keys(result.metafile.outputs), ...Object.keys(vendor.metafile.outputs)].map((f) => f.split("/").pop()),
);
for (const f of readdirSync(outdir)) if (!f.endsWith(".d.ts") && !written.has(f)) rmSync(join(outdir, f));
// V8's code cache of each pre-bundled CommonJS file (host/code-cache.ts), written by a node that set the daemon's V8
// flags first, as `agentd serve` does: V8 takes a cache only under the flags it was made with.
const vendorFiles = Object.keys(vendor.metafile.outputs).map((f) => join(outdir, f.split("/").pop() as string));
execFileSync(
  process.execPath,
  [
    "--input-type=module",
    "-e",
    `(await import(${JSON.stringify(new URL("../host/v8-flags.js", import.meta.url).href)})).setDaemonFlags();
const { writeCodeCache } = await import(${JSON.stringify(new URL("../host/code-cache.js", import.meta.url).href)});
for (const f of ${JSON.stringify(vendorFiles)}) writeCodeCache(f);`,
  ],
  { stdio: "inherit" },
);
console.log(`wrote ${outdir}`);
