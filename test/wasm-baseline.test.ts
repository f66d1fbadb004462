import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";

const run = promisify(execFile);
const MODULE = new URL("../host/wasm-baseline.js", import.meta.url).href;

/**
 * A fresh node that applies the setting (or not), then makes one fetch to a local server, which compiles node's HTTP
 * parser (WebAssembly), and reports V8's peak of allocated compiler memory.
 */
async function afterFirstFetch(nodeArgs: string[]): Promise<{ applied: boolean; peakMiB: number; body: string }> {
  const script = `
    import { createServer } from "node:http";
    import { getHeapStatistics } from "node:v8";
    const { keepWasmBaseline } = await import(${JSON.stringify(MODULE)});
    const applied = keepWasmBaseline();
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
    const { keepWasmBaseline } = await import("../host/wasm-baseline.js");
    expect(keepWasmBaseline([], "--no-liftoff-only")).to.equal(false);
  });
});
