/**
 * Part of `npm run build`, after scripts/bundle.ts: the `agentd` command's launcher, `dist/host/cli.cjs`, which the bin
 * (host/agentd.cts) runs. It is the CLI (host/main.ts) with the few modules it imports statically, in one CommonJS
 * file, and `agentd serve` loads the daemon's runtime from it directly (host/bundled-runtime.ts) instead of through
 * `dist/bundle/daemon.js`: a start that goes through no ES module needs no ES module loader. Node's ES module loader
 * and the CLI's seven ES modules (main.js, state.js, files.js, v8-flags.js, daemon.js, runtime.js, code-cache.js) were
 * ~15-35 ms of a cold start and ~35-55 ms of its CPU (docs/benchmarks.md, issue 27). The other dynamic imports of the
 * CLI (the clients, the plugin commands) stay imports of the compiled modules beside it.
 */
import { join } from "node:path";
import { build } from "esbuild";

const hostDir = new URL("../host", import.meta.url).pathname;

await build({
  entryPoints: [join(hostDir, "main.js")],
  outfile: join(hostDir, "cli.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  sourcemap: true,
  // Beside main.js, so the CLI's paths relative to itself (`import.meta.url`) stay right.
  define: { "import.meta.url": "__agentdUrl" },
  banner: {
    js: '// Written by scripts/bundle-launcher.ts (npm run build).\nvar __agentdUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  logOverride: { "empty-import-meta": "error" },
  logLevel: "warning",
  plugins: [
    {
      name: "launcher",
      setup(b) {
        // `serve`'s import of the daemon's entry: the runtime itself, loaded once per process.
        b.onResolve({ filter: /^\.\.\/bundle\/daemon\.js$/ }, () => ({ path: "daemon", namespace: "launcher" }));
        b.onLoad({ filter: /.*/, namespace: "launcher" }, () => ({
          contents: `const { fileURLToPath } = require("node:url");
const { bundledRuntime } = require("./bundled-runtime.js");
const file = fileURLToPath(new URL("../bundle/runtime.cjs", __agentdUrl));
module.exports = bundledRuntime(file, (url) => import(url)).daemon;`,
          loader: "js",
          resolveDir: hostDir,
        }));
        // Every other dynamic import (the clients, the plugin commands) stays one, of the compiled module; the V8
        // flags come first on every path, so they are in the file.
        b.onResolve({ filter: /.*/ }, (args) =>
          args.kind === "dynamic-import" && args.path !== "./v8-flags.js"
            ? { path: args.path, external: true }
            : undefined,
        );
      },
    },
  ],
});
console.log(`wrote ${join(hostDir, "cli.cjs")}`);
