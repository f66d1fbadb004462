import { expect } from "chai";
import { runCrashCycles } from "./support/stress/crash.js";
import { runSeed } from "./support/stress/rng.js";

/** The short crash suite (`npm run stress` runs 100 cycles): one SIGKILL at each kind of point, then checks. */
describe("stress (short): SIGKILL during turns, restart, nothing lost", function () {
  this.timeout(120_000);

  it("keeps every acknowledged message, one end per accepted turn and a sound store", async () => {
    const seed = runSeed();
    const stats = await runCrashCycles({ cycles: 6, seed });
    expect(stats.cycles, `seed ${seed}`).to.equal(6);
    expect(stats.lostMessages).to.equal(0);
    expect(stats.lostAnnounced, stats.losses.join("\n")).to.equal(0);
    expect(stats.integrityFailures).to.equal(0);
    // At least the after-202, streaming, tool and compaction kills interrupted a running turn.
    expect(stats.recoveredEnds).to.be.at.least(4);
  });

  // A client that was shown a message complete, with its number, may rely on it: it is durable before it leaves.
  for (const store of ["sqlite", "async"] as const) {
    it(`stores every message a live client was shown before it is shown (${store} store)`, async function () {
      this.timeout(300_000);
      const seed = runSeed();
      const stats = await runCrashCycles({ cycles: 8, seed, store, points: ["announced"] });
      expect(stats.announcedChecked, `seed ${seed}`).to.be.at.least(8);
      expect(stats.lostAnnounced, `seed ${seed}: ${stats.losses.join("\n")}`).to.equal(0);
      expect(stats.lostMessages, `seed ${seed}`).to.equal(0);
    });
  }

  it("ends a turn killed the instant after its 202 (the recovery marker is durable before the 202)", async () => {
    const stats = await runCrashCycles({ cycles: 2, seed: runSeed(), points: ["after-202"] });
    expect(stats.recoveredEnds).to.equal(2);
  });
});
