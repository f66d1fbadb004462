/**
 * A profiling aid, not part of `npm run bench`: section 2 (time to first token) with many repetitions, to run
 * under `node --cpu-prof`. PROFILE_REPS (default 200) and PROFILE_HISTORY (default 0: a fresh session per turn).
 */
import { startFakeProvider } from "../testing/fake-provider.js";
import { bootDaemon, removeTempDirs, tempDir } from "./lib/daemon.js";
import { printTtft, ttftCase } from "./ttft.js";

const reps = Number(process.env.PROFILE_REPS ?? 200);
const history = Number(process.env.PROFILE_HISTORY ?? 0);
const fake = await startFakeProvider();
const bd = await bootDaemon({ providerUrl: fake.url });
try {
  const c = await ttftCase(
    fake,
    bd,
    tempDir("agentd-prof-cwd-"),
    history ? `${history} messages` : "fresh",
    history,
    reps,
  );
  printTtft([c], reps);
} finally {
  await bd.cleanup();
  await fake.close();
  await removeTempDirs();
}
