import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";

const run = promisify(execFile);
const MODULE = new URL("../host/optimize-for-size.js", import.meta.url).href;

/** A fresh node that applies the setting (or not), churns through ~100 MiB keeping ~15 MiB live, reports its heap. */
async function heapAfterChurn(nodeArgs: string[]): Promise<{ applied: boolean; totalMiB: number }> {
  const script = `
    import { getHeapStatistics } from "node:v8";
    const { optimizeForSize } = await import(${JSON.stringify(MODULE)});
    const applied = optimizeForSize();
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
    const { optimizeForSize } = await import("../host/optimize-for-size.js");
    expect(optimizeForSize([], "--optimize_for_size")).to.equal(false);
  });
});
