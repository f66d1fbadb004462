import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { spawnDaemon } from "../testing/daemon.js";
import { clientEnv } from "./support/cli.js";

/** The daemon's V8 settings (host/v8-flags.ts), each checked in a fresh node. */
const run = promisify(execFile);
const MODULE = new URL("../host/v8-flags.js", import.meta.url).href;

/** A fresh node that applies the cap (or not), allocates ~200 MiB with survivors, and reports new space. */
async function newSpaceMiB(nodeArgs: string[]): Promise<{ capped: boolean; newSpace: number }> {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    const { setDaemonFlag, YOUNG_GENERATION } = await import(${JSON.stringify(MODULE)});
    const capped = setDaemonFlag(YOUNG_GENERATION);
    const kept = [];
    for (let r = 0; r < 100; r++) {
      const batch = [];
      for (let i = 0; i < 20000; i++) batch.push({ s: "x" + i + "-" + r, n: [i] });
      if (r % 5 === 0) kept.push(batch.slice(0, 4000));
    }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    console.log(JSON.stringify({ capped, newSpace: space.space_size / 1048576, kept: kept.length }));
  `;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const { stdout } = await run(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], { env });
  return JSON.parse(stdout) as { capped: boolean; newSpace: number };
}

describe("agentd serve: young generation kept small", () => {
  it("keeps V8's new space at its initial size under an allocation burst that grows it by default", async () => {
    const capped = await newSpaceMiB([]);
    expect(capped.capped).to.equal(true);
    expect(capped.newSpace).to.be.at.most(2);
    // Control: with a semi-space size of the user's own, the cap is not applied and V8 grows new space.
    const own = await newSpaceMiB(["--max-semi-space-size=16"]);
    expect(own.capped).to.equal(false);
    expect(own.newSpace).to.be.greaterThan(4);
  });

  it("leaves a semi-space setting given in NODE_OPTIONS alone", async () => {
    const { setDaemonFlag, YOUNG_GENERATION } = await import("../host/v8-flags.js");
    expect(setDaemonFlag(YOUNG_GENERATION, [], "--max-semi-space-size=4")).to.equal(false);
  });
});

/**
 * A fresh node that applies the setting (or not), then makes one fetch to a local server, which compiles node's HTTP
 * parser (WebAssembly), and reports V8's peak of allocated compiler memory.
 */
async function afterFirstFetch(nodeArgs: string[]): Promise<{ applied: boolean; peakMiB: number; body: string }> {
  const script = `
    import { createServer } from "node:http";
    import { getHeapStatistics } from "node:v8";
    const { setDaemonFlag, WASM_BASELINE } = await import(${JSON.stringify(MODULE)});
    const applied = setDaemonFlag(WASM_BASELINE);
    const server = createServer((req, res) => res.end("ok"));
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const body = await (await fetch("http://127.0.0.1:" + server.address().port + "/")).text();
    server.close();
    await new Promise((r) => setTimeout(r, 200)); // background compile jobs
    console.log(JSON.stringify({ applied, body, peakMiB: getHeapStatistics().peak_malloced_memory / 1048576 }));
    process.exit(0);
  `;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const { stdout } = await run(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], { env });
  return JSON.parse(stdout) as { applied: boolean; peakMiB: number; body: string };
}

describe("agentd serve: WebAssembly kept at the baseline compiler", () => {
  it("compiles node's HTTP parser without V8's optimizing compiler and its ~30 MiB of compiler memory", async () => {
    const r = await afterFirstFetch([]);
    expect(r.applied).to.equal(true);
    expect(r.body).to.equal("ok");
    expect(r.peakMiB).to.be.below(12);
  });

  it("leaves WebAssembly flags of the user's own alone", async () => {
    const own = await afterFirstFetch(["--wasm-dynamic-tiering"]);
    expect(own.applied).to.equal(false);
    expect(own.body).to.equal("ok");
    const { setDaemonFlag, WASM_BASELINE } = await import("../host/v8-flags.js");
    expect(setDaemonFlag(WASM_BASELINE, [], "--no-liftoff-only")).to.equal(false);
  });
});

/** A fresh node that applies the setting (or not), churns through ~100 MiB keeping ~15 MiB live, reports its heap. */
async function heapAfterChurn(nodeArgs: string[]): Promise<{ applied: boolean; totalMiB: number }> {
  const script = `
    import { getHeapStatistics } from "node:v8";
    const { setDaemonFlag, OPTIMIZE_FOR_SIZE } = await import(${JSON.stringify(MODULE)});
    const applied = setDaemonFlag(OPTIMIZE_FOR_SIZE);
    let kept = [];
    for (let r = 0; r < 60; r++) {
      const batch = [];
      for (let i = 0; i < 20000; i++) batch.push({ s: "x" + i + "-" + r, n: [i] });
      kept.push(batch);
      if (kept.length > 10) kept.shift();
    }
    kept = null;
    console.log(JSON.stringify({ applied, totalMiB: getHeapStatistics().total_heap_size / 1048576 }));
  `;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const { stdout } = await run(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], { env });
  return JSON.parse(stdout) as { applied: boolean; totalMiB: number };
}

describe("agentd serve: V8 optimised for size", () => {
  it("keeps the heap V8 holds around a churning workload much smaller", async () => {
    const small = await heapAfterChurn([]);
    expect(small.applied).to.equal(true);
    // Control: the user's own choice is kept, and V8's default grows the heap well beyond.
    const own = await heapAfterChurn(["--no-optimize-for-size"]);
    expect(own.applied).to.equal(false);
    expect(small.totalMiB).to.be.below(55);
    expect(own.totalMiB).to.be.above(small.totalMiB + 15);
  });

  it("leaves the flag alone when NODE_OPTIONS names it", async () => {
    const { setDaemonFlag, OPTIMIZE_FOR_SIZE } = await import("../host/v8-flags.js");
    expect(setDaemonFlag(OPTIMIZE_FOR_SIZE, [], "--optimize_for_size")).to.equal(false);
  });
});

describe("agentd serve: node's modules compiled from node's code cache", () => {
  it("loads every node module of its start before the flags that make V8 refuse that cache (BOOT_MODULES)", async () => {
    // `agentd serve` with a preloaded hook that notes where node's module list stood when the first flag that changes
    // V8's flag hash was set, and on SIGUSR2 writes the node modules loaded since.
    const dir = mkdtempSync(join(tmpdir(), "agentd-boot-modules-"));
    const hook = join(dir, "hook.cjs");
    const out = join(dir, "modules.json");
    writeFileSync(
      hook,
      `const fs = require("node:fs");
const v8 = require("node:v8");
const set = v8.setFlagsFromString;
let from;
v8.setFlagsFromString = (flag) => {
  if (from === undefined && !flag.startsWith("--semi-space")) from = process.moduleLoadList.length;
  return set(flag);
};
process.on("SIGUSR2", () => {
  const loaded = process.moduleLoadList.slice(from).filter((m) => m.startsWith("NativeModule "));
  fs.writeFileSync(${JSON.stringify(`${out}.tmp`)}, JSON.stringify({ flagged: from !== undefined, loaded }));
  fs.renameSync(${JSON.stringify(`${out}.tmp`)}, ${JSON.stringify(out)});
});`,
    );
    const home = join(dir, "home");
    const daemon = await spawnDaemon(home, {
      NODE_OPTIONS: `--require ${hook}`,
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    });
    try {
      // Before any request (the first one starts the warm-up, which loads more).
      daemon.child.kill("SIGUSR2");
      // Another process writes it: poll the file, within a bound.
      for (let i = 0; i < 400 && !existsSync(out); i++) await new Promise((r) => setTimeout(r, 25));
      expect(JSON.parse(readFileSync(out, "utf8"))).to.deep.equal({ flagged: true, loaded: [] });
    } finally {
      daemon.child.kill("SIGTERM");
      await daemon.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("client commands: WebAssembly kept at the baseline compiler", () => {
  it("sets it before their first fetch, with node's fetch loaded from node's code cache first", async () => {
    // A preloaded hook notes, when the flag is set, whether undici (node's fetch) was already loaded; at exit it
    // writes what it saw. Without the flag, V8 optimises node's HTTP parser on a background thread that the
    // process waits for at exit (host/v8-flags.ts, setClientFlags).
    const dir = mkdtempSync(join(tmpdir(), "agentd-client-flags-"));
    const hook = join(dir, "hook.cjs");
    const out = join(dir, "seen.json");
    writeFileSync(
      hook,
      `const fs = require("node:fs");
const v8 = require("node:v8");
const set = v8.setFlagsFromString;
let seen = { flagged: false };
v8.setFlagsFromString = (flag) => {
  if (flag === "--liftoff-only")
    seen = { flagged: true, undiciFirst: process.moduleLoadList.includes("NativeModule internal/deps/undici/undici") };
  return set(flag);
};
process.on("exit", () => fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify(seen)));`,
    );
    const home = join(dir, "home");
    const daemon = await spawnDaemon(home, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    const main = new URL("../host/main.js", import.meta.url).pathname;
    try {
      for (const args of [["status"], ["sessions", "--json"]]) {
        rmSync(out, { force: true });
        const env = clientEnv({ NODE_OPTIONS: `--require ${hook}` });
        const { stdout } = await run(process.execPath, [main, "--home", home, ...args], { env });
        expect(stdout, args.join(" ")).to.match(args[0] === "status" ? /running: pid/ : /^\[/);
        expect(JSON.parse(readFileSync(out, "utf8")), args.join(" ")).to.deep.equal({
          flagged: true,
          undiciFirst: true,
        });
      }
    } finally {
      daemon.child.kill("SIGTERM");
      await daemon.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
