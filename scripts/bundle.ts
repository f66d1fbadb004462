/**
 * `npm run build:bundle`: the daemon and its CLI as one ES module file, `dist/host/main.bundle.js` (opt-in; the
 * default entry stays `dist/host/main.js`). Cold start is mostly module loading (typebox alone is ~270 modules);
 * one file halves it. better-sqlite3 (native) and what the code loads through `createRequire` (express, ajv, ...)
 * stay in node_modules, resolved from dist/host like the unbundled build. Third-party plugins that import `agentd`
 * get the unbundled core next to the bundle's own copy (see docs/benchmarks.md).
 */
import { build } from "esbuild";

const outfile = new URL("../host/main.bundle.js", import.meta.url).pathname;
await build({
  entryPoints: [new URL("../host/main.js", import.meta.url).pathname],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The clients (terminal, ACP) are not the daemon: they stay separate modules, loaded only by their commands.
  external: ["better-sqlite3", "../clients/*"],
  // CommonJS dependencies inside an ES module bundle need a `require`.
  banner: {
    js: 'import { createRequire as __agentdCreateRequire } from "node:module"; const require = __agentdCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
console.log(`wrote ${outfile}`);
