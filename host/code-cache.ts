import { closeSync, fstatSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
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

// Not imported: node's ES module view of node:buffer reads every export when it is made, which loads node:buffer's
// `File` (after the daemon's V8 flags, so compiled from source: host/v8-flags.ts).
const { isAscii } = process.getBuiltinModule("node:buffer");

/** A CommonJS module's source is compiled as the function `require` would make of it, with these around it. */
const HEAD = "(function (exports, require, module, __filename, __dirname) { ";
const TAIL = "\n});";

/** The bytes of `fd` at `at`, up to `length` of them: how many were read. */
function readInto(fd: number, buf: Buffer, at: number, length: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, at + done, length - done, done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * A file's source, wrapped (HEAD, the source, TAIL), and its code cache when there is one, read into one buffer: the
 * source at HEAD's length (the wrapped source is one string, which V8 compiles without first copying it into a flat
 * one, as it must a concatenation), then, once the source is decoded, the cache at its start. Each page of a new block
 * costs a fault on its first write (~13 us each on a small VM: ~3 ms per MiB), and this reuses them: the runtime's load
 * took ~15 ms less (docs/benchmarks.md, issue 27). An ASCII source (the build's files) is decoded as Latin-1, which
 * skips the UTF-8 decoder.
 */
function readScript(file: string, withCache: boolean): { source: string; cachedData?: Buffer } {
  const fd = openSync(file, "r");
  let cacheFd: number | undefined;
  try {
    try {
      if (withCache) cacheFd = openSync(codeCacheFile(file), "r");
    } catch {
      cacheFd = undefined;
    }
    const size = fstatSync(fd).size;
    const cacheSize = cacheFd === undefined ? 0 : fstatSync(cacheFd).size;
    const buf = Buffer.allocUnsafeSlow(Math.max(HEAD.length + size + TAIL.length, cacheSize));
    buf.write(HEAD, 0, "latin1");
    const end = HEAD.length + readInto(fd, buf, HEAD.length, size);
    const wrapped = buf.subarray(0, buf.write(TAIL, end, "latin1") + end);
    const source = wrapped.toString(isAscii(wrapped) ? "latin1" : "utf8");
    if (cacheFd === undefined) return { source };
    return { source, cachedData: buf.subarray(0, readInto(cacheFd, buf, 0, cacheSize)) };
  } finally {
    closeSync(fd);
    if (cacheFd !== undefined) closeSync(cacheFd);
  }
}

/** Compiles a source that {@link readScript} read (wrapped). */
function compile(file: string, source: string, cachedData?: Buffer): Script {
  // No `import()` inside: node's loader for such scripts is experimental, and lost once V8 takes the code cache. The
  // runtime imports ES modules through core/import-module.ts (checked by scripts/bundle.ts).
  const script = new Script(source, { filename: file, cachedData });
  registry[LOADED]?.set(file, script);
  return script;
}

/** Runs a compiled CommonJS module (the function HEAD and TAIL make of it) as `require` would; its `module.exports`. */
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
 * load, the validators: one file each, see scripts/bundle.ts) with the V8 code cache the build wrote for it: V8 then
 * neither parses the source nor compiles the functions that ran when the cache was made (node 20 has no compile cache
 * of its own). A cache V8 refuses (another node version, other V8 flags: `NODE_OPTIONS`) is ignored and the source
 * compiled, as `require` would. With source maps on, `require` loads it. Throws ENOENT when the file is not there.
 */
export function loadWithCodeCache(file: string): { exports: unknown; cache: CodeCacheUse } {
  // Node maps stack traces through source maps (`--enable-source-maps`) only in what its own loader compiled.
  if (process.sourceMapsEnabled) return { exports: createRequire(file)(file), cache: "none" };
  const { source, cachedData } = readScript(file, true);
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
  const script = compile(file, readScript(file, false).source);
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
