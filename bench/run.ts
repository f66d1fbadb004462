/**
 * `npm run bench`: the daemon against the fake OpenAI-compatible provider, every figure next to a baseline measured
 * in the same run (the provider read directly, a trivial route, 10 instead of 10,000 rows, the store plugin alone...).
 * Prints tables and a summary; asserts no thresholds. Exits 1 only if a section failed or tokens were lost.
 */
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { VERSION } from "../host/daemon.js";
import { startFakeProvider } from "../testing/fake-provider.js";
import { type BootResult, bootBench, printBoot } from "./boot.js";
import { printGoals } from "./goals.js";
import { indexGrowthBench, printIndexGrowth } from "./index-growth.js";
import { now } from "./lib/clock.js";
import { bootDaemon, removeTempDirs, tempDir } from "./lib/daemon.js";
import { int, mib, ms, printTable, signedMs, summarize } from "./lib/stats.js";
import { type ProcessResult, processBench } from "./process.js";
import { printSandbox, type SandboxResult, sandboxBench } from "./sandbox.js";
import {
  printScale,
  printWholeRead,
  type ScaleResult,
  scaleBench,
  type WholeReadResult,
  wholeReadBench,
} from "./scale.js";
import { printSearch, type SearchResult, searchBench } from "./search.js";
import { type AppendResult, appendBench, type ListResult, listBench, printAppend, printList } from "./storage.js";
import { printSingle, type SingleStreamResult, singleStream } from "./streaming.js";
import { type LoadResult, manyStreams, printLoad } from "./streaming-load.js";
import { printTeam, type TeamResult, teamBench } from "./team.js";
import { printTeamLoad, teamLoadBench } from "./team-load.js";
import { printTeamStore, teamStoreBench } from "./team-store.js";
import { printTerminal, type TerminalResult, terminalBench } from "./terminal.js";
import { printTtft, type TtftCase, ttftCase } from "./ttft.js";
import { printWebUi, type WebUiResult, webUiBench } from "./web-ui.js";

const TOKENS = 2000;
const GAP_MS = 1;
const TTFT_REPS = 15;
const LIST_REPS = 20;

const t0 = now();
const failures: string[] = [];

/** BENCH_ONLY=0,1-2,3,4a,4b,4c,4d,5,6,7,8,9,10,11,12 runs only the sections whose number is listed (for quick comparisons). */
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());

async function section<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (only && !only.includes(name.split(".")[0] as string)) return undefined;
  try {
    return await fn();
  } catch (err) {
    failures.push(`${name}: ${(err as Error).stack ?? String(err)}`);
    console.log(`\n${name}: FAILED: ${(err as Error).message}`);
    return undefined;
  }
}

const cpu = cpus();
console.log("agentd benchmark");
console.log(
  `node ${process.version}, ${process.platform}/${process.arch}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? "?"}), ` +
    `${mib(totalmem())} MiB RAM, agentd ${VERSION}`,
);
const load1 = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(" ");
console.log(`load average at start: ${load1()} (other work on the machine skews every figure; compare within a run)`);
console.log(
  "Sections 1-2: daemon, fake provider and client on one thread; section 3: provider and clients on worker threads.",
);

const fake = await startFakeProvider();
const cwd = tempDir("agentd-bench-cwd-");

let single: SingleStreamResult[] = [];
let ttft: TtftCase[] = [];
let load: LoadResult | undefined;
let loadPaced: LoadResult | undefined;
let fanout: LoadResult | undefined;
let boot: BootResult | undefined;
let list: ListResult | undefined;
let append: AppendResult | undefined;
let web: WebUiResult | undefined;
let proc: ProcessResult | undefined;

await section("0. processes", async () => {
  proc = await processBench(cwd, Number(process.env.BENCH_RUNS ?? 3));
});

await section("1-2. streaming and TTFT", async () => {
  const bd = await bootDaemon({ providerUrl: fake.url });
  try {
    await singleStream(fake, bd, cwd, "warm-up", 300, 0);
    single = [
      await singleStream(fake, bd, cwd, `paced ${GAP_MS} ms`, TOKENS, GAP_MS),
      await singleStream(fake, bd, cwd, "full speed", TOKENS, 0),
    ];
    printSingle(single);
    ttft = [
      await ttftCase(fake, bd, cwd, "fresh session", 0, TTFT_REPS),
      await ttftCase(fake, bd, cwd, "1,000 messages", 1000, TTFT_REPS),
    ];
    printTtft(ttft, TTFT_REPS);
  } finally {
    await bd.cleanup();
  }
});

await section("3. load", async () => {
  load = await manyStreams(cwd, { sessions: 20, clientsPerSession: 10, n: TOKENS, gapMs: GAP_MS });
  printLoad(load);
  if (load.lost > 0 || load.duplicates > 0 || load.errors.length > 0) {
    const what = `${int(load.lost)} missing, ${int(load.duplicates)} duplicated, ${load.errors.length} client errors`;
    console.log(`\n!!! TOKENS LOST: ${what} !!!`);
    failures.push("3. load: tokens lost");
  }
  // The same at a realistic model speed (100 tokens/s per session), to show the daemon when it is not saturated.
  loadPaced = await manyStreams(cwd, { sessions: 20, clientsPerSession: 10, n: 500, gapMs: 10 });
  printLoad(loadPaced);
  if (loadPaced.lost > 0 || loadPaced.duplicates > 0 || loadPaced.errors.length > 0) {
    console.log(`\n!!! TOKENS LOST: ${int(loadPaced.lost)} missing, ${int(loadPaced.duplicates)} duplicated !!!`);
    failures.push("3. load (10 ms): tokens lost");
  }
  // Fan-out: one session watched by 1,000 clients, 500-token turns at 2 ms/token (issue 27), through a fresh
  // `agentd serve` as clients meet it: its first turn, then a second.
  fanout = await manyStreams(cwd, { sessions: 1, clientsPerSession: 1000, n: 500, gapMs: 2, spawn: true, turns: 2 });
  printLoad(fanout);
  if (fanout.lost > 0 || fanout.duplicates > 0 || fanout.errors.length > 0) {
    console.log(`\n!!! TOKENS LOST: ${int(fanout.lost)} missing, ${int(fanout.duplicates)} duplicated !!!`);
    failures.push("3. load (fan-out): tokens lost");
  }
});

await section("4a. boot", async () => {
  boot = await bootBench(5);
  printBoot(boot);
});
await section("4b. list", async () => {
  list = await listBench(cwd, 10_000, LIST_REPS);
  printList(list, LIST_REPS);
});
await section("4c. append", async () => {
  append = await appendBench(cwd, 10_000, 300);
  printAppend(append);
});

await section("4d. index growth", async () => {
  printIndexGrowth(await indexGrowthBench(20_000));
});

let terminal: TerminalResult | undefined;
await section("5. terminal client", async () => {
  const bd = await bootDaemon({ providerUrl: fake.url });
  try {
    terminal = await terminalBench(fake, bd, cwd);
    printTerminal(terminal);
  } finally {
    await bd.cleanup();
  }
});

await section("6. web UI", async () => {
  const bd = await bootDaemon({ providerUrl: fake.url });
  try {
    web = await webUiBench(fake, bd, cwd, 5);
    printWebUi(web);
  } finally {
    await bd.cleanup();
  }
});

let search: SearchResult | undefined;
/** Interleaved trials per query in section 7 (a glob call takes ~0.1 s: three left its median at the noise's mercy). */
const SEARCH_REPS = 7;
await section("7. search", async () => {
  search = await searchBench(join(process.cwd(), "node_modules"), SEARCH_REPS);
  printSearch(search, SEARCH_REPS);
});

const scales: ScaleResult[] = [];
let wholeRead: WholeReadResult | undefined;
await section("8. scale", async () => {
  const big = Number(process.env.BENCH_SESSIONS ?? 100_000);
  for (const store of ["sqlite", "postgres"] as const) {
    const r = await scaleBench(cwd, 1000, big, store);
    printScale(r);
    scales.push(r);
  }
  wholeRead = await wholeReadBench(cwd, 10_000, 10);
  printWholeRead(wholeRead);
});

let sandbox: SandboxResult | undefined;
await section("9. sandbox", async () => {
  sandbox = await sandboxBench(40);
  printSandbox(sandbox);
});

let team: TeamResult | undefined;
await section("10. team", async () => {
  team = await teamBench(fake, cwd, TOKENS, GAP_MS);
  printTeam(team);
  const lost = 3 * TOKENS - team.received.sqlite - team.received.onA - team.received.onB;
  if (lost > 0 || team.duplicates > 0) {
    console.log(`\n!!! TOKENS LOST: ${int(lost)} missing, ${int(team.duplicates)} duplicated !!!`);
    failures.push("10. team: tokens lost");
  }
});

await section("11. team store", async () => {
  printTeamStore(await teamStoreBench(cwd, 200, 100));
});

await section("12. team load", async () => {
  const r = await teamLoadBench(fake, cwd, { daemons: 3, sessions: 20, clients: 10, n: 200, gapMs: 2 });
  printTeamLoad(r);
  const lost = r.sqlite.expected - r.sqlite.received + r.postgres.expected - r.postgres.received;
  const dup = r.sqlite.duplicates + r.postgres.duplicates;
  if (lost > 0 || dup > 0) {
    console.log(`\n!!! TOKENS LOST: ${int(lost)} missing, ${int(dup)} duplicated !!!`);
    failures.push("12. team load: tokens lost");
  }
});

await fake.close();
await removeTempDirs();

/* ---------- summary ---------- */
const rows: string[][] = [];
const pair = (a: number, b: number) => `${ms(a)} / ${ms(b)}`;
const plus = (a: number, b: number) => `+${ms(a)} / +${ms(b)}`;
for (const r of single) {
  const d = r.direct.latency;
  const s = r.daemon.latency;
  rows.push([`${r.label}: added per-token latency p50 / p99`, pair(d.p50, d.p99), plus(s.p50 - d.p50, s.p99 - d.p99)]);
  rows.push([`${r.label}: throughput (tokens/s)`, int(r.direct.tokensPerSec), int(r.daemon.tokensPerSec)]);
  rows.push([
    `${r.label}: main-thread busy ms for the turn`,
    int(r.busyMs.direct),
    `+${int(r.busyMs.daemon - r.busyMs.direct)}`,
  ]);
}
for (const c of ttft) rows.push([`TTFT p50, ${c.label}`, ms(c.direct.total.p50), ms(c.daemon.total.p50)]);
for (const l of [load, loadPaced, fanout]) {
  if (!l) continue;
  const tag = `load ${l.sessions}x${l.clientsPerSession}, ${l.gapMs} ms${l.spawned ? " (agentd serve)" : ""}`;
  const [d, s] = [l.direct.latency, l.daemon.latency];
  rows.push([`${tag}: per-token latency p50 / p99`, pair(d.p50, d.p99), pair(s.p50, s.p99)]);
  if (l.daemon.later) {
    rows.push([`${tag}: later turns, p50 / p99`, pair(d.p50, d.p99), pair(l.daemon.later.p50, l.daemon.later.p99)]);
  }
  rows.push([
    `${tag}: TTFT p50 / p99`,
    pair(l.direct.ttfb.p50, l.direct.ttfb.p99),
    pair(l.daemon.ttft.p50, l.daemon.ttft.p99),
  ]);
  rows.push([`${tag}: tokens delivered`, int(l.expected), `${int(l.received)} (lost ${int(l.lost)})`]);
  rows.push([`${tag}: RSS before -> after (MiB)`, "", `${mib(l.mem.rssBefore)} -> ${mib(l.mem.rssAfter)}`]);
}
if (boot) {
  rows.push([
    "boot in-process (baseline: storage plugin only)",
    ms(boot.inProcess.storeOnly.p50),
    ms(boot.inProcess.all.p50),
  ]);
  rows.push(["cold start to server.json (baseline: bare node)", ms(boot.cold.bare.p50), ms(boot.cold.agentd.p50)]);
}
for (const r of list?.rows.slice(1) ?? [])
  rows.push([`${r.label}: 10 vs 10,000 sessions`, ms(r.small.p50), ms(r.big.p50)]);
for (const r of list?.rows.slice(1) ?? [])
  rows.push([`${r.label}, agentd serve (baseline: same bytes, bare node)`, ms(r.bare.p50), ms(r.spawned.p50)]);
if (wholeRead) {
  rows.push([
    `a ${int(wholeRead.messages)}-message session read whole, agentd serve (baseline: same bytes, bare node)`,
    ms(wholeRead.wholeBare.p50),
    ms(wholeRead.whole.p50),
  ]);
}
if (sandbox) {
  rows.push(["sandboxed `echo` p50 (baseline: unconfined)", ms(sandbox.bare.p50), ms(sandbox.confined.p50)]);
}
if (append) {
  rows.push(["appendMessage p50: at 10 vs at 10,000 messages", ms(append.small.p50), ms(append.big.p50)]);
  rows.push(["contextMessages p50: at 10 vs at 10,000 messages", ms(append.readSmall.p50), ms(append.readBig.p50)]);
  rows.push(["contextMessages p50, first read: at 10 vs 10,000", ms(append.coldSmall.p50), ms(append.coldBig.p50)]);
}
for (const scale of scales) {
  const { small, big } = scale.figures;
  const tag = `${int(scale.small)} vs ${int(scale.big)} sessions (${scale.store})`;
  rows.push([`restart to ready: ${tag}`, ms(small.ready.p50), ms(big.ready.p50)]);
  rows.push([`GET /sessions?limit=50: ${tag}`, ms(small.list.p50), ms(big.list.p50)]);
  rows.push([`GET /sessions?q=common word: ${tag}`, ms(small.common.p50), ms(big.common.p50)]);
  rows.push([`GET /sessions?q=rare word: ${tag}`, ms(small.rare.p50), ms(big.rare.p50)]);
}
if (team) {
  rows.push([
    "team: per-token latency p99, client on A / on B (goal: B <= A + 10)",
    ms(team.onA.p99),
    `${ms(team.onB.p99)} (${signedMs(team.onB.p99 - team.onA.p99)})`,
  ]);
}
for (const r of search?.rows ?? []) rows.push([`search: ${r.label} (baseline: rg)`, ms(r.rg), ms(r.tool)]);
if (terminal) {
  const t = terminal;
  rows.push([
    "agentd run, one token: bare node + provider / agentd",
    ms(t.run.bareNode.p50 + t.run.provider.p50),
    ms(t.run.agentd.p50),
  ]);
  if (t.chat)
    rows.push(["agentd chat first screen (tmux): bare node / agentd", ms(t.chat.bareNode.p50), ms(t.chat.agentd.p50)]);
  if (t.stream) rows.push(["agentd chat CPU ms per 1,000 tokens", "", ms(t.stream.cpuMsPer1000)]);
}
if (web) {
  rows.push(["web UI: first-page JavaScript + CSS, gzip (KB)", "", (web.firstPageGzip / 1024).toFixed(1)]);
  rows.push(["web UI: 1,000-message session, latest messages painted p50", "", ms(summarize(web.openWarm).p50)]);
  rows.push(["web UI: 2,000 tokens, long tasks > 50 ms / longest", "", `${web.longTasks} / ${ms(web.longestTaskMs)}`]);
}
printTable("Summary (ms unless stated)", ["figure", "baseline", "agentd"], rows, [
  `node ${process.version}, ${cpu.length} CPUs, load average at end ${load1()}, total run ${((now() - t0) / 1000).toFixed(1)} s`,
]);

printGoals({ proc, load, loadPaced, fanout, list });

if (failures.length) {
  console.log(`\n${failures.length} problem(s):`);
  for (const f of failures) console.log(`- ${f}`);
  process.exitCode = 1;
}
