import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";

/** Whether V8 used the code cache of a file loaded by {@link loadWithCodeCache}. */
export type CodeCacheUse = "accepted" | "rejected" | "none";

/** The code cache of `file`, written by the build beside it. */
export const codeCacheFile = (file: string) => `${file}.v8-cache`;

function compile(file: string, cachedData?: Buffer): Script {
  return new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData });
}

/** Runs a compiled CommonJS module (`Module.wrap`'s function) as `require` would; its `module.exports`. */
function run(script: Script, file: string): unknown {
  const module = { exports: {} as unknown };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/**
 * Loads a CommonJS file the build generated beside the bundle (express, the validators: one file each, see
 * scripts/bundle.ts) with the V8 code cache the build wrote for it: V8 then neither parses the source nor compiles
 * the functions that ran when the cache was made (node 20 has no compile cache of its own). A cache V8 refuses
 * (another node version, other V8 flags: `NODE_OPTIONS`) is ignored and the source compiled, as `require` would.
 * Throws ENOENT when the file is not there.
 */
export function loadWithCodeCache(file: string): { exports: unknown; cache: CodeCacheUse } {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(codeCacheFile(file));
  } catch {
    cachedData = undefined;
  }
  const script = compile(file, cachedData);
  const cache = cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
  return { exports: run(script, file), cache };
}

/**
 * Writes the code cache of `file` (the build, in a node started with the daemon's V8 flags: V8 accepts a cache only
 * under the flags it was made with). Made after the module ran, so it holds the functions loading it compiled.
 */
export function writeCodeCache(file: string): void {
  const script = compile(file);
  run(script, file);
  const tmp = `${codeCacheFile(file)}.tmp`;
  writeFileSync(tmp, script.createCachedData());
  renameSync(tmp, codeCacheFile(file));
}
