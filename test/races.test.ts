import { expect } from "chai";
import { runRaces } from "./support/stress/races.js";

/** The short race suite (`npm run stress` runs many more rounds): symlink and directory swaps vs every file op. */
describe("stress (short): symlink and directory swaps during file routes and tools", function () {
  this.timeout(120_000);

  it("never reads, lists or changes anything outside the project", async () => {
    const stats = await runRaces(40);
    expect(stats.total).to.equal(40 * Object.keys(stats.attempts).length);
    expect(stats.escapes, JSON.stringify(stats)).to.deep.equal({});
  });
});
