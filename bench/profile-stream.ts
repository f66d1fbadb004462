/**
 * A profiling aid, not part of `npm run bench`: one daemon, `PROFILE_TOKENS` one-token chunks at full speed to
 * `PROFILE_CLIENTS` SSE clients, repeated `PROFILE_ROUNDS` times. Run under `node --cpu-prof` to see where the
 * daemon's per-token time goes: `node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/profile-stream.js`.
 */
import { performance } from "node:perf_hooks";
import { startFakeProvider } from "../testing/fake-provider.js";
import { now } from "./lib/clock.js";
import { bootDaemon, removeTempDirs, tempDir } from "./lib/daemon.js";
import { newReception, recordTurn, stampedTurn } from "./lib/streams.js";

const n = Number(process.env.PROFILE_TOKENS ?? 20_000);
const clients = Number(process.env.PROFILE_CLIENTS ?? 1);
const rounds = Number(process.env.PROFILE_ROUNDS ?? 3);

const fake = await startFakeProvider();
const cwd = tempDir("agentd-prof-cwd-");
const bd = await bootDaemon({ providerUrl: fake.url });
try {
  for (let r = 0; r < rounds; r++) {
    const id = await bd.api.createSession({ cwd });
    const sse = await Promise.all(Array.from({ length: clients }, () => bd.api.sse(`/sessions/${id}/events`)));
    await Promise.all(sse.map((c) => c.waitForType("status")));
    const t = stampedTurn(n, 0);
    fake.script(t.turn);
    const recs = sse.map(() => newReception(n));
    const done = sse.map((c, i) => recordTurn(c, recs[i] as ReturnType<typeof newReception>, { trim: true }));
    const elu = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const t0 = now();
    await bd.api.post(`/sessions/${id}/chat`, { text: "go" });
    await Promise.all(done);
    const busy = performance.eventLoopUtilization(elu).active;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log(
      `round ${r}: ${n} tokens x ${clients} clients in ${(now() - t0).toFixed(0)} ms, busy ${busy.toFixed(0)} ms, ` +
        `cpu ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / n).toFixed(1)} µs/token, provider and client included)`,
    );
    for (const c of sse) c.close();
  }
} finally {
  await bd.cleanup();
  await fake.close();
  await removeTempDirs();
}
