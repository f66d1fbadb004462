import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiClient } from "../testing/daemon.js";
import { tempDir } from "./lib/daemon.js";
import type { Summary } from "./lib/stats.js";
import { type Timed, timeGets, WARMUP } from "./lib/timed-get.js";
import { cpuMsOf, type spawnAgentd, startStaticBytes } from "./process.js";

export interface FloorTimed {
  /** The daemon's answer as the bench's client met it; `cpu`: its CPU per call, warm-ups included (10 ms ticks). */
  served: Summary;
  cpu: number;
  bytes: number;
  /** The same answer from a bare node:http process (lib/static-bytes.ts), called in turn with the daemon. */
  bare: Summary;
}

/**
 * GETs of each path against a spawned `agentd serve`, each call in turn with one to a bare node:http process that
 * sends the daemon's first answer as it is: the floor, what the client's reading and parsing of it costs. In turn, both
 * meet the same client and machine, and the daemon has a gap between its calls, as when a client lists its sessions on
 * opening a page: back to back, a fresh daemon's first listings of 10,000 sessions took 25-40 ms, later ones ~21
 * (docs/benchmarks.md, issue 27).
 */
export async function timeAgainstFloor(
  daemon: Awaited<ReturnType<typeof spawnAgentd>>,
  paths: string[],
  reps: number,
): Promise<FloorTimed[]> {
  const dir = tempDir("agentd-bench-answers-");
  const files: string[] = [];
  for (const path of paths) {
    files.push(join(dir, `${files.length}.json`));
    writeFileSync(files.at(-1) as string, (await daemon.api.get(path)).text);
  }
  const floor = await startStaticBytes(files);
  try {
    const bare = new ApiClient(floor.base, "");
    const out: FloorTimed[] = [];
    for (const [i, path] of paths.entries()) {
      const c0 = cpuMsOf(daemon.child.pid as number);
      const [served, floorTimed] = (await timeGets(
        [
          [daemon.api, path],
          [bare, `${floor.base}/${i}`],
        ],
        reps,
      )) as [Timed, Timed];
      const cpu = (cpuMsOf(daemon.child.pid as number) - c0) / (reps + WARMUP);
      out.push({ served: served.s, cpu, bytes: served.bytes, bare: floorTimed.s });
    }
    return out;
  } finally {
    await floor.stop();
  }
}
