import { loadWithCodeCache } from "./code-cache.js";

/** What `dist/bundle/runtime.cjs` exports (scripts/bundle.ts): each entry's part, and the hook for `import()`. */
export interface BundledRuntime {
  daemon: Record<string, unknown>;
  sdk: Record<string, unknown>;
  testing: Record<string, unknown>;
  setModuleImporter(importer: (url: string) => Promise<unknown>): void;
}

/** On `globalThis`: the launcher (`dist/host/cli.cjs`) has its own copy of this module next to `runtime.js`'s. */
const registry = globalThis as Record<symbol, BundledRuntime | undefined>;
const RUNTIME = Symbol.for("agentd.runtime");

/**
 * The daemon's bundled runtime, loaded with its code cache the first time it is asked for in this process, by
 * `runtime.js` (the package's ES module entries) or by the `agentd` command's launcher: one runtime per process, so
 * a plugin that imports `agentd` gets the very modules the daemon runs. `importer` is the `import()` the runtime's
 * dynamic imports go through (a script that node:vm compiled has none: core/import-module.ts).
 */
export function bundledRuntime(file: string, importer: (url: string) => Promise<unknown>): BundledRuntime {
  let runtime = registry[RUNTIME];
  if (!runtime) {
    runtime = loadWithCodeCache(file).exports as BundledRuntime;
    runtime.setModuleImporter(importer);
    registry[RUNTIME] = runtime;
  }
  return runtime;
}
