import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";

const run = promisify(execFile);
const MODULE = new URL("../host/young-generation.js", import.meta.url).href;

/** A fresh node that applies the cap (or not), allocates ~200 MiB with survivors, and reports new space. */
async function newSpaceMiB(nodeArgs: string[]): Promise<{ capped: boolean; newSpace: number }> {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    const { capYoungGeneration } = await import(${JSON.stringify(MODULE)});
    const capped = capYoungGeneration();
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
    const { capYoungGeneration } = await import("../host/young-generation.js");
    expect(capYoungGeneration([], "--max-semi-space-size=4")).to.equal(false);
  });
});
