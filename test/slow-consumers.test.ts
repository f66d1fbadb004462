import { expect } from "chai";
import { runSlowConsumers } from "./support/stress/slow.js";

/** The short slow-consumer suite (`npm run stress` runs 50 clients and a 6 MB answer). */
describe("stress (short): stalled SSE clients during a large turn", function () {
  this.timeout(120_000);

  it("keeps memory within the documented bound, serves the live client, and catches every stalled one up exactly", async () => {
    const stats = await runSlowConsumers({ clients: 10, messageBytes: 1_500_000 });
    expect(stats.fastClientEnded).to.equal(true);
    expect(stats.caughtUpExactly).to.equal(10);
    expect(stats.peakRss, JSON.stringify(stats)).to.be.at.most(stats.bound);
  });
});
