import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname, join } from "node:path";
import { Script } from "node:vm";

/** Whether V8 used the code cache of a file loaded by {@link loadWithCodeCache}. */
export type CodeCacheUse = "accepted" | "rejected" | "none";

/** The code cache of `file`, written by the build beside it. */
export const codeCacheFile = (file: string) => `${file}.v8-cache`;

/**
 * The scripts loaded in this process, by file, once {@link recordLoadedScripts} was called (the build's training
 * run), so that {@link writeCodeCaches} can write their caches after it; a daemon keeps none. On `globalThis`: the
 * bundle has its own copy of this module (which loads express and the validators) next to the compiled one (which
 * loads the bundle).
 */
const registry = globalThis as Record<symbol, Map<string, Script> | undefined>;
const LOADED = Symbol.for("agentd.code-cache");

/** From now on, keep each script loaded in this process for {@link writeCodeCaches}. */
export function recordLoadedScripts(): void {
  registry[LOADED] ??= new Map();
}

function compile(file: string, source: string, cachedData?: Buffer): Script {
  // No `import()` inside: node's loader for such scripts is experimental, and lost once V8 takes the code cache. The
  // runtime imports ES modules through core/import-module.ts (checked by scripts/bundle.ts).
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  registry[LOADED]?.set(file, script);
  return script;
}

/** Runs a compiled CommonJS module (`Module.wrap`'s function) as `require` would; its `module.exports`. */
function run(script: Script, file: string): unknown {
  const module = { exports: {} as unknown };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, requireFrom(file), module, file, dirname(file));
  return module.exports;
}

/** A sibling file required as `./<name>.cjs`, as the build's stand-ins require the module they stand for. */
const SIBLING = /^\.\/[\w.-]+\.cjs$/;
/** The siblings loaded so far, by file: each runs once, like a module in require's cache. */
const siblings = new Map<string, unknown>();

/**
 * The `require` of a file loaded here: node's, but a sibling `./<name>.cjs` is loaded as the file itself was, with its
 * code cache (scripts/bundle.ts puts the modules express's tree loads on first use in files of their own).
 */
function requireFrom(file: string): NodeJS.Require {
  const req = createRequire(file);
  const sibling = (id: string): unknown => {
    const path = join(dirname(file), id);
    if (!siblings.has(path)) siblings.set(path, loadWithCodeCache(path).exports);
    return siblings.get(path);
  };
  return Object.assign((id: string) => (SIBLING.test(id) ? sibling(id) : req(id)), req);
}

/**
 * Loads a CommonJS file the build generated beside the bundle (the runtime, express and the modules its stand-ins
 * load, the validators: one file each, see scripts/bundle.ts) with the V8 code cache the build wrote for it: V8 then neither parses the source nor compiles
 * the functions that ran when the cache was made (node 20 has no compile cache of its own). A cache V8 refuses
 * (another node version, other V8 flags: `NODE_OPTIONS`) is ignored and the source compiled, as `require` would.
 * With source maps on, `require` loads it. Throws ENOENT when the file is not there.
 */
export function loadWithCodeCache(file: string): { exports: unknown; cache: CodeCacheUse } {
  // The cache and the source are each read into one buffer of their size, the cache first. glibc gives such a large
  // block a mapping of its own, until one has been freed: it then serves blocks up to that size from its heap, where
  // memory freed stays resident. V8's deserialising of the cache allocates and frees blocks of that order: with the
  // source's reading (a buffer doubled to ~2 MiB, freed) before it, ~2 MiB of them stayed in RSS.
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(codeCacheFile(file));
  } catch {
    cachedData = undefined;
  }
  const source = readFileSync(file).toString("utf8");
  // Node maps stack traces through source maps (`--enable-source-maps`) only in what its own loader compiled.
  if (process.sourceMapsEnabled) return { exports: createRequire(file)(file), cache: "none" };
  const script = compile(file, source, cachedData);
  const cache = cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
  return { exports: run(script, file), cache };
}

function writeCache(file: string, script: Script): void {
  const tmp = `${codeCacheFile(file)}.tmp`;
  writeFileSync(tmp, script.createCachedData());
  renameSync(tmp, codeCacheFile(file));
}

/**
 * Writes the code cache of `file` (the build, in a node started with the daemon's V8 flags: V8 accepts a cache only
 * under the flags it was made with). Made after the module ran, so it holds the functions loading it compiled.
 */
export function writeCodeCache(file: string): void {
  const script = compile(file, readFileSync(file, "utf8"));
  run(script, file);
  writeCache(file, script);
}

/**
 * Writes the code cache of every file loaded since {@link recordLoadedScripts} (the build's training run: a daemon
 * that booted, answered requests and ran a turn, so the caches hold every function that compiled). Returns the files.
 */
export function writeCodeCaches(): string[] {
  const loaded = registry[LOADED] ?? new Map<string, Script>();
  for (const [file, script] of loaded) writeCache(file, script);
  return [...loaded.keys()];
}
