import { expect } from "chai";
import { runFuzz } from "./support/stress/fuzz.js";
import { runSeed } from "./support/stress/rng.js";

/** The short fuzz suite (`npm run stress` sends 100,000 requests). */
describe("stress (short): requests generated from the served OpenAPI document", function () {
  this.timeout(120_000);

  it("never answers 5xx or hangs, and the daemon stays healthy", async () => {
    const seed = runSeed();
    const stats = await runFuzz({ requests: 2000, seed, concurrency: 4 });
    expect(stats.failures, `seed ${seed}: ${JSON.stringify(stats.failures, null, 1)}`).to.deep.equal([]);
    expect(stats.healthFailures).to.equal(0);
    expect(stats.requests).to.equal(2000);
  });
});
