/**
 * Part of `npm run build`: the terminal client as an ES module bundle, `dist/clients/terminal.bundle/`, which
 * `agentd chat|run|sessions|attach` load instead of the separate modules (host/main.ts). Its start-up is
 * mostly module loading (Ink, React, the layout engine: hundreds of files); one file per lazy part loads several
 * times faster. Code splitting keeps the dynamic imports lazy: the UI loads only for `chat` on a terminal, the
 * Markdown renderer (marked, marked-terminal, the highlighter) only after the first screen. React is built for
 * production (no development checks); Ink's devtools (`DEV=true` only) are left out. The bundle sits two levels
 * under dist/ like clients/api/, so relative paths (the daemon's entry for a background start) stay the same.
 */
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const outdir = new URL("../clients/terminal.bundle", import.meta.url).pathname;

/**
 * Ink's own string-width (the package's, not the older copies other packages nest) imported through the client's
 * fast path for its own glyphs (clients/terminal/ui/string-width.ts), which imports the real one.
 */
const fastWidth = fileURLToPath(new URL("../clients/terminal/ui/string-width.js", import.meta.url));
const inksWidth = fileURLToPath(import.meta.resolve("string-width"));
const stringWidthFastPath: Plugin = {
  name: "string-width-fast-path",
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.importer === fastWidth || args.pluginData === "real") return undefined;
      const real = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: "real" });
      return real.path === inksWidth ? { path: fastWidth } : real;
    });
  },
};
await build({
  entryPoints: [new URL("../clients/terminal/commands.js", import.meta.url).pathname],
  outdir,
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minifySyntax: true,
  define: { "process.env.NODE_ENV": '"production"' },
  // Imported by Ink only when DEV=true (React devtools); not a dependency of agentd.
  external: ["react-devtools-core"],
  // CommonJS dependencies inside an ES module bundle need a `require`.
  banner: {
    js: 'import { createRequire as __agentdCreateRequire } from "node:module"; const require = __agentdCreateRequire(import.meta.url);',
  },
  plugins: [stringWidthFastPath],
  logLevel: "warning",
});
console.log(`wrote ${outdir}`);
