import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { codeCacheFile, loadWithCodeCache, writeCodeCache } from "../host/code-cache.js";

const BUNDLE_DIR = fileURLToPath(new URL("../bundle/", import.meta.url));

describe("V8 code cache of the pre-bundled CommonJS files (host/code-cache.ts)", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentd-code-cache-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("loads a CommonJS file as require does, with its cache once written, and compiles it when the cache is bad", () => {
    const file = join(dir, "mod.cjs");
    writeFileSync(
      file,
      'const path = require("node:path"); exports.base = path.basename(__filename); exports.twice = (n) => n * 2; module.exports.self = this === exports;',
    );
    const first = loadWithCodeCache(file);
    expect(first.cache).to.equal("none");
    expect(first.exports).to.include({ base: "mod.cjs", self: true });
    expect((first.exports as { twice(n: number): number }).twice(21)).to.equal(42);

    // Each load in a fresh node: within one process V8 reuses its in-memory compilation of the same source.
    writeCodeCache(file);
    expect(loadInChild([file], false)).to.deep.equal([{ cache: "accepted", base: "mod.cjs" }]);
    writeFileSync(codeCacheFile(file), "not a code cache");
    expect(loadInChild([file], false)).to.deep.equal([{ cache: "rejected", base: "mod.cjs" }]);
  });

  it("reads a source that is not ASCII as UTF-8 (an ASCII one as is), ending in a comment, with its cache", () => {
    const [utf8, ascii] = ["utf8", "ascii"].map((name) => join(dir, `${name}.cjs`)) as [string, string];
    writeFileSync(
      utf8,
      'exports.base = "Wärting ✓ 😀"; exports.f = function () { return 1; }; // ends here, no newline',
    );
    writeFileSync(ascii, 'exports.base = "plain"; exports.f = function () { return 1; }; // ends here, no newline');
    for (const file of [utf8, ascii]) writeCodeCache(file);
    expect(loadInChild([utf8, ascii], false)).to.deep.equal([
      { cache: "accepted", base: "Wärting ✓ 😀" },
      { cache: "accepted", base: "plain" },
    ]);
  });

  it("throws ENOENT for a file that is not there (the compiled modules then load from node_modules)", () => {
    expect(() => loadWithCodeCache(join(dir, "absent.cjs")))
      .to.throw()
      .with.property("code", "ENOENT");
  });

  it("writes the caches of every file a run loaded, which later runs accept", () => {
    const files = ["a", "b"].map((name) => {
      const file = join(dir, `${name}.cjs`);
      writeFileSync(
        file,
        `exports.base = ${JSON.stringify(name)}; exports.f = () => ${JSON.stringify(name)}.repeat(2);`,
      );
      return file;
    });
    // A run that loads both and calls a function of each, then writes what it loaded (the build's training run).
    const script = `const { loadWithCodeCache, recordLoadedScripts, writeCodeCaches } = await import(${JSON.stringify(new URL("../host/code-cache.js", import.meta.url).href)});
recordLoadedScripts();
for (const f of ${JSON.stringify(files)}) loadWithCodeCache(f).exports.f();
console.log(JSON.stringify(writeCodeCaches()));`;
    expect(JSON.parse(nodeWithoutOptions(script))).to.deep.equal(files);
    expect(loadInChild(files, false)).to.deep.equal([
      { cache: "accepted", base: "a" },
      { cache: "accepted", base: "b" },
    ]);
  });

  it("loads a sibling `./<name>.cjs` that a file requires as it loaded the file, with its cache, once", () => {
    const [outer, inner] = ["outer", "inner"].map((name) => join(dir, `${name}.cjs`));
    writeFileSync(
      outer as string,
      'exports.base = "outer"; exports.same = require("./inner.cjs") === require("./inner.cjs"); exports.inner = require("./inner.cjs");',
    );
    writeFileSync(inner as string, "globalThis.innerRuns = (globalThis.innerRuns ?? 0) + 1; exports.base = 'inner';");
    writeCodeCache(inner as string);
    const script = `const { loadWithCodeCache, recordLoadedScripts } = await import(${JSON.stringify(new URL("../host/code-cache.js", import.meta.url).href)});
recordLoadedScripts();
const { exports } = loadWithCodeCache(${JSON.stringify(outer)});
const scripts = [...globalThis[Symbol.for("agentd.code-cache")]].map(([f, s]) => [f.split("/").pop(), s.cachedDataRejected]);
console.log(JSON.stringify({ same: exports.same, inner: exports.inner.base, runs: globalThis.innerRuns, scripts }));`;
    expect(JSON.parse(nodeWithoutOptions(script))).to.deep.equal({
      same: true,
      inner: "inner",
      runs: 1,
      // outer.cjs has no cache (V8 then reports none refused); inner.cjs's was taken.
      scripts: [
        ["outer.cjs", null],
        ["inner.cjs", false],
      ],
    });
  });

  it("the build's caches are accepted by a node that set the daemon's V8 flags, as `agentd serve` does", () => {
    const files = readdirSync(BUNDLE_DIR)
      .filter((f) => f.endsWith(".cjs.v8-cache"))
      .map((f) => join(BUNDLE_DIR, f.slice(0, -".v8-cache".length)));
    expect(files.map((f) => f.slice(BUNDLE_DIR.length))).to.include.members([
      "runtime.cjs",
      "vendor-express.cjs",
      "vendor-ajv.cjs",
      "vendor-validators.cjs",
    ]);
    expect(loadInChild(files, true).map((r) => r.cache)).to.deep.equal(files.map(() => "accepted"));
  });

  it("the runtime's cache comes from a training run: it holds far more than the code of loading the runtime", () => {
    const runtime = join(BUNDLE_DIR, "runtime.cjs");
    // The size of a cache made right after the runtime loaded (its modules' top level), under the same flags.
    const script = `(await import(${JSON.stringify(new URL("../host/v8-flags.js", import.meta.url).href)})).setDaemonFlags();
const { readFileSync } = await import("node:fs");
const { createRequire, Module } = await import("node:module");
const { Script } = await import("node:vm");
const file = ${JSON.stringify(runtime)};
const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file });
const module = { exports: {} };
script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, ${JSON.stringify(BUNDLE_DIR)});
console.log(script.createCachedData().length);`;
    const loadOnly = Number(nodeWithoutOptions(script));
    expect(loadOnly).to.be.greaterThan(0);
    expect(statSync(codeCacheFile(runtime)).size).to.be.greaterThan(loadOnly * 1.3);
  });
});

/** Loads each file in a fresh node (with the daemon's V8 flags set first, or not): how V8 used its cache. */
function loadInChild(files: string[], daemonFlags: boolean): Array<{ cache: string; base?: string }> {
  const flags = daemonFlags
    ? `(await import(${JSON.stringify(new URL("../host/v8-flags.js", import.meta.url).href)})).setDaemonFlags();`
    : "";
  const script = `${flags}
const { loadWithCodeCache } = await import(${JSON.stringify(new URL("../host/code-cache.js", import.meta.url).href)});
console.log(JSON.stringify(${JSON.stringify(files)}.map((f) => { const r = loadWithCodeCache(f); return { cache: r.cache, base: r.exports.base }; })));`;
  return JSON.parse(nodeWithoutOptions(script));
}

/** Runs an ES module script in a fresh node without the test run's node options (source maps off): its stdout. */
function nodeWithoutOptions(script: string): string {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return execFileSync(process.execPath, ["--input-type=module", "-e", script], { env, encoding: "utf8" });
}
