import type { ApiClient } from "../../testing/daemon.js";
import { now } from "./clock.js";
import { type Summary, summarize } from "./stats.js";

/** Calls before the timed ones, dropped. */
export const WARMUP = 5;

export interface Timed {
  s: Summary;
  /** The answer's length (characters), and its text (the last call's). */
  bytes: number;
  text: string;
  /** The bench process's CPU per call. */
  cpu: Summary;
}

/** GET `path` WARMUP + `reps` times: p50 and the bench process's CPU per call, the answer's length and text. */
export async function timeGet(api: ApiClient, path: string, reps: number): Promise<Timed> {
  return (await timeGets([[api, path]], reps))[0] as Timed;
}

/** The same for several targets, one call to each in turn, so that each meets the same client and machine. */
export async function timeGets(targets: Array<[ApiClient, string]>, reps: number): Promise<Timed[]> {
  const runs = targets.map(() => ({ times: [] as number[], cpus: [] as number[], text: "" }));
  for (let i = -WARMUP; i < reps; i++) {
    for (const [k, [api, path]] of targets.entries()) {
      const run = runs[k] as (typeof runs)[number];
      const c0 = process.cpuUsage();
      const t0 = now();
      const res = await api.get(path);
      const t = now() - t0;
      const c = process.cpuUsage(c0);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 200)}`);
      run.text = res.text;
      if (i < 0) continue;
      run.cpus.push((c.user + c.system) / 1000);
      run.times.push(t);
    }
  }
  return runs.map((r) => ({ s: summarize(r.times), bytes: r.text.length, text: r.text, cpu: summarize(r.cpus) }));
}
