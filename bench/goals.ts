/**
 * The figures of issue 16, each next to its baseline of the same run (the bare relay process, or 10 sessions for the
 * list) and its goal, with whether the goal is met. Nothing is asserted: the table reports.
 */

import { mib, ms, printTable } from "./lib/stats.js";
import { med, PACED_GAP_MS, type ProcessResult, type RunFigures } from "./process.js";
import type { ListResult } from "./storage.js";
import type { LoadResult } from "./streaming-load.js";

export interface GoalInputs {
  proc?: ProcessResult;
  load?: LoadResult;
  loadPaced?: LoadResult;
  /** One session, 1,000 clients, 2 ms/token (issue 27). */
  fanout?: LoadResult;
  list?: ListResult;
}

const yes = (ok: boolean) => (ok ? "met" : "NOT met");
const slash = (xs: number[], f: (v: number) => string = ms) => xs.map(f).join(" / ");

export function printGoals(g: GoalInputs): void {
  const rows: string[][] = [];
  const p = g.proc;
  if (p) {
    const R = (f: (r: RunFigures) => number) => med(p.relay, f);
    const D = (f: (r: RunFigures) => number) => med(p.daemon, f);
    const cold = [R((r) => r.coldMs), D((r) => r.coldMs)] as const;
    const build = p.bundled ? "bundle" : "compiled modules, no bundle";
    rows.push([
      `cold start, spawn -> first answered request (${build})`,
      ms(cold[0]),
      ms(cold[1]),
      `<= ${ms(cold[0] + 120)} (relay + 120)`,
      yes(cold[1] <= cold[0] + 120),
    ]);
    const rr = [R((r) => r.rssIdle), R((r) => r.rssAfterLong), R((r) => r.rssAfterAll)];
    const dr = [D((r) => r.rssIdle), D((r) => r.rssAfterLong), D((r) => r.rssAfterAll)];
    const mb = 1024 * 1024;
    rows.push([
      "RSS MiB idle (after the first request) / after 20 long turns / after 150 turns",
      slash(rr, mib),
      slash(dr, mib),
      `<= ${mib((rr[0] as number) + 27 * mb)} (relay + 27) / 100 / 110`,
      yes(
        (dr[0] as number) <= (rr[0] as number) + 27 * mb &&
          (dr[1] as number) <= 100 * mb &&
          (dr[2] as number) <= 110 * mb,
      ),
    ]);
    const first = [R((r) => r.firstTurnAddedTtft), D((r) => r.firstTurnAddedTtft)] as const;
    rows.push([
      "first turn of a fresh process, added TTFT",
      ms(first[0]),
      ms(first[1]),
      `<= ${ms(first[0] + 10)} (relay + 10)`,
      yes(first[1] <= first[0] + 10),
    ]);
    const fresh = [R((r) => r.freshAddedTtft), D((r) => r.freshAddedTtft)] as const;
    const hist = D((r) => r.historyAddedTtft);
    rows.push([
      "fresh session / 1,000 messages, added TTFT",
      ms(fresh[0]),
      slash([fresh[1], hist]),
      `<= ${ms(fresh[0] + 2)} (relay + 2)`,
      yes(fresh[1] <= fresh[0] + 2 && hist <= fresh[0] + 2),
    ]);
    for (const [label, pick] of [
      ["full speed, per-token latency p50 / p99, first long turn", (r: RunFigures) => r.firstLong],
      ["same, long turns 11-20 of a warm process", (r: RunFigures) => r.warm],
    ] as const) {
      const a = [R((r) => pick(r).p50), R((r) => pick(r).p99)] as [number, number];
      const b = [D((r) => pick(r).p50), D((r) => pick(r).p99)] as [number, number];
      rows.push([
        label,
        slash(a),
        slash(b),
        `<= ${slash(a.map((v) => 2 * v))} (2 x relay)`,
        yes(b[0] <= 2 * a[0] && b[1] <= 2 * a[1]),
      ]);
    }
    const pa = [R((r) => r.paced.p50), R((r) => r.paced.p99)] as [number, number];
    const pd = [D((r) => r.paced.p50), D((r) => r.paced.p99)] as [number, number];
    rows.push([
      `paced, ${PACED_GAP_MS} ms/token: per-token latency p50 / p99, a warm process`,
      slash(pa),
      slash(pd),
      `p99 <= ${ms(pa[1] + 1)} (relay + 1)`,
      yes(pd[1] <= pa[1] + 1),
    ]);
    const dl = [D((r) => r.directFirstLong.p50), D((r) => r.directFirstLong.p99)];
    const dw = [D((r) => r.directWarm.p50), D((r) => r.directWarm.p99)];
    rows.push(["  (provider read directly, same runs: first / warm)", slash(dl), slash(dw), "", ""]);
    const cpu = [R((r) => r.cpuWarm), D((r) => r.cpuWarm)] as const;
    const cpuFirst = [R((r) => r.cpuFirstLong), D((r) => r.cpuFirstLong)] as const;
    rows.push(["process CPU per 2,000-token turn, warm", ms(cpu[0]), ms(cpu[1]), "<= 50", yes(cpu[1] <= 50)]);
    rows.push([
      "same, first long turn",
      ms(cpuFirst[0]),
      ms(cpuFirst[1]),
      `<= ${ms(1.25 * cpuFirst[0])} (1.25 x relay)`,
      yes(cpuFirst[1] <= 1.25 * cpuFirst[0]),
    ]);
    const cpuReq = [R((r) => r.cpuFirstRequest), D((r) => r.cpuFirstRequest)];
    const cpuTurn = [R((r) => r.cpuFirstTurn), D((r) => r.cpuFirstTurn)];
    rows.push([
      "process CPU, first request / first (3-token) turn",
      slash([cpuReq[0] as number, cpuTurn[0] as number]),
      slash([cpuReq[1] as number, cpuTurn[1] as number]),
      "",
      "",
    ]);
  }
  for (const [l, goal] of [
    [g.load, 40],
    [g.loadPaced, 10],
    [g.fanout, 50],
  ] as const) {
    if (!l) continue;
    const base = l.relay?.latency ?? l.direct.latency;
    const ok = l.lost === 0 && l.duplicates === 0;
    const later = l.daemon.later;
    // A spawned daemon's RSS is its own (in process it would be the bench's too): the fan-out's goal is 250 MiB.
    const rssOk = !l.spawned || l.mem.peakRss <= 250 * 1024 * 1024;
    rows.push([
      `${l.sessions} sessions x ${l.clientsPerSession} clients, ${l.gapMs} ms/token: per-token p50 / p99` +
        (later ? " (a fresh `agentd serve`: first turn; second turn)" : "") +
        (l.spawned ? `; daemon peak RSS ${mib(l.mem.peakRss)} MiB` : ""),
      slash([base.p50, base.p99]) +
        (l.relayBatched
          ? `; writing once per client and tick: ${slash([l.relayBatched.latency.p50, l.relayBatched.latency.p99])}`
          : ""),
      slash([l.daemon.latency.p50, l.daemon.latency.p99]) + (later ? `; ${slash([later.p50, later.p99])}` : ""),
      `p99 <= ${goal}, all tokens once${l.spawned ? ", RSS <= 250" : ""}`,
      yes(Math.max(l.daemon.latency.p99, later?.p99 ?? 0) <= goal && ok && rssOk) +
        (ok ? "" : " (tokens lost/duplicated)"),
    ]);
  }
  if (g.list) {
    const goals: Record<string, number> = {
      "GET /sessions (plain array, all)": 30,
      "GET /sessions?limit=50": 5,
      "GET /sessions?q=delta&limit=50": 20,
    };
    for (const r of g.list.rows) {
      const goal = goals[r.label];
      if (goal === undefined) continue;
      rows.push([
        `${r.label} at ${g.list.count.toLocaleString("en-US")} sessions (agentd serve)`,
        `${ms(r.bare.p50)} (the same bytes from a bare node:http)`,
        `${ms(r.spawned.p50)} (in process ${ms(r.big.p50)})`,
        `<= ${goal}`,
        yes(r.spawned.p50 <= goal),
      ]);
    }
  }
  printTable(
    "Issue 16 figures (ms unless stated; medians over fresh processes; added = minus the provider read directly)",
    ["figure", "bare relay", "agentd", "goal", ""],
    rows,
    [
      p
        ? `relay and daemon are child processes, ${p.runs} fresh ones each, run alternately; load uses the in-process daemon` +
          " (the fan-out a fresh `agentd serve`) with provider and clients on worker threads (baseline: the relay" +
          " process if measured, else direct reads)."
        : "section 0 (processes) not run.",
      "Timings move with the machine's load (see load average); compare the two columns, not runs.",
    ],
  );
}
