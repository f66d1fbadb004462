/**
 * A profiling aid, not part of `npm run bench`: section 3's load (provider and clients on worker threads, the
 * daemon alone on the main thread). `node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/profile-load.js`;
 * LOAD_SESSIONS, LOAD_CLIENTS, LOAD_TOKENS, LOAD_GAP_MS tune it.
 */
import { removeTempDirs, tempDir } from "./lib/daemon.js";
import { manyStreams, printLoad } from "./streaming-load.js";

const env = (k: string, d: number) => Number(process.env[k] ?? d);
const r = await manyStreams(tempDir("agentd-prof-cwd-"), {
  sessions: env("LOAD_SESSIONS", 20),
  clientsPerSession: env("LOAD_CLIENTS", 10),
  n: env("LOAD_TOKENS", 2000),
  gapMs: env("LOAD_GAP_MS", 1),
});
printLoad(r);
await removeTempDirs();
