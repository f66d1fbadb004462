/**
 * `npm run stress`: the full stress suites (the test suite runs a short version of each). Prints each suite's
 * figures as JSON and exits non-zero when one fails its promise. `npm run stress -- fuzz crash` runs only those;
 * STRESS_SEED replays a run.
 */
import { startTestDaemon } from "../../../testing/daemon.js";
import { runAuthMatrix } from "./auth-matrix.js";
import { runCrashCycles } from "./crash.js";
import { runFuzz } from "./fuzz.js";
import { runRaces } from "./races.js";
import { runSeed } from "./rng.js";
import { runSlowConsumers } from "./slow.js";

const MB = 1024 * 1024;
const mb = (n: number) => Math.round((n / MB) * 10) / 10;

type Suite = () => Promise<{ ok: boolean; figures: Record<string, unknown> }>;

const seed = runSeed();

const suites: Record<string, Suite> = {
  async fuzz() {
    const s = await runFuzz({ requests: Number(process.env.STRESS_FUZZ_REQUESTS ?? 100_000), seed, concurrency: 8 });
    // The start band: RSS after warm-up, plus 64 MiB or a half of it, whichever is larger.
    const band = s.rssStart + Math.max(64 * MB, s.rssStart / 2);
    const ok = s.failureCount === 0 && s.healthFailures === 0 && s.rssEnd <= band;
    return {
      ok,
      figures: {
        ...s,
        rssStart: mb(s.rssStart),
        rssMid: mb(s.rssMid),
        rssPeak: mb(s.rssPeak),
        rssEnd: mb(s.rssEnd),
        rssBand: mb(band),
        rssGrowthPer10k: mb(s.rssGrowthPer10k),
        heapStart: mb(s.heapStart),
        heapEnd: mb(s.heapEnd),
      },
    };
  },
  async crash() {
    const s = await runCrashCycles({ cycles: Number(process.env.STRESS_CRASH_CYCLES ?? 100), seed });
    return { ok: s.lostMessages === 0 && s.lostAnnounced === 0 && s.integrityFailures === 0, figures: { seed, ...s } };
  },
  async auth() {
    const d = await startTestDaemon();
    try {
      const r = await runAuthMatrix(d.baseUrl, d.token, await d.createSession());
      return { ok: r.allowed.length === 0, figures: { ...r } };
    } finally {
      await d.cleanup();
    }
  },
  async races() {
    const s = await runRaces(Number(process.env.STRESS_RACE_ROUNDS ?? 1000));
    return { ok: s.totalEscapes === 0, figures: { ...s } };
  },
  async slow() {
    const s = await runSlowConsumers({ clients: 50, messageBytes: 6_000_000 });
    const ok = s.fastClientEnded && s.caughtUpExactly === s.clients && s.peakRss <= s.bound;
    return { ok, figures: { ...s, baselineRss: mb(s.baselineRss), peakRss: mb(s.peakRss), bound: mb(s.bound) } };
  },
};

const wanted = process.argv.slice(2).filter((a) => a in suites);
let failed = false;
for (const name of wanted.length ? wanted : Object.keys(suites)) {
  const t0 = Date.now();
  try {
    const { ok, figures } = await (suites[name] as Suite)();
    if (!ok) failed = true;
    console.log(
      JSON.stringify({ suite: name, ok, seconds: Math.round((Date.now() - t0) / 1000), ...figures }, null, 1),
    );
  } catch (err) {
    failed = true;
    console.log(JSON.stringify({ suite: name, ok: false, error: String((err as Error)?.stack ?? err) }));
  }
}
process.exit(failed ? 1 : 0);
