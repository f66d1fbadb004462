import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { builtinSource } from "../host/plugin-sources.js";
import storageSqlite from "../plugins/storage-sqlite/index.js";
import { now, sleep } from "./lib/clock.js";
import { AGENTD_BIN, bootDaemon, tempDir } from "./lib/daemon.js";
import { mib, ms, printTable, type Summary, summarize } from "./lib/stats.js";

export interface BootResult {
  inProcess: { all: Summary; storeOnly: Summary };
  cold: { agentd: Summary; agentdRss: number[]; bare: Summary; bareRss: number[] };
  reps: number;
}

/** startDaemon() until listening, in this process (modules already loaded): all built-ins vs the store alone. */
async function inProcess(reps: number, withPlugins: boolean): Promise<Summary> {
  const times: number[] = [];
  for (let i = -1; i < reps; i++) {
    const bd = await bootDaemon(withPlugins ? {} : { builtins: [builtinSource(storageSqlite)] });
    if (i >= 0) times.push(bd.bootMs);
    await bd.cleanup();
  }
  return summarize(times);
}

function rssOf(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Spawns a process and times it until `readyFile` exists (polled every 2 ms); then reads its idle RSS. */
async function coldStart(args: string[], readyFile: string): Promise<{ ms: number; rss: number }> {
  const env: NodeJS.ProcessEnv = { AGENTD_LOG_LEVEL: "warn" };
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
  const t0 = now();
  const child: ChildProcess = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    while (!existsSync(readyFile)) {
      if (child.exitCode !== null) throw new Error(`process exited before it was ready: ${err}`);
      if (now() - t0 > 15_000) throw new Error(`not ready within 15 s: ${err}`);
      await sleep(2);
    }
    const t = now() - t0;
    await sleep(300);
    return { ms: t, rss: rssOf(child.pid) };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** The baseline process: plain node listening on a port, then writing a file as agentd writes server.json. */
const BARE = [
  'const fs = require("fs");',
  'require("http").createServer((q, s) => s.end()).listen(0, "127.0.0.1", function () {',
  "  fs.writeFileSync(process.argv[1], JSON.stringify(this.address()));",
  "});",
].join("\n");

export async function bootBench(reps: number): Promise<BootResult> {
  const all = await inProcess(reps, true);
  const storeOnly = await inProcess(reps, false);
  const agentd: number[] = [];
  const agentdRss: number[] = [];
  const bare: number[] = [];
  const bareRss: number[] = [];
  for (let i = 0; i < reps; i++) {
    const home = tempDir("agentd-bench-cold-");
    const a = await coldStart([AGENTD_BIN, "serve", "--port", "0", "--home", home], join(home, "server.json"));
    agentd.push(a.ms);
    agentdRss.push(a.rss);
    const b = await coldStart(["-e", BARE, join(home, "bare.json")], join(home, "bare.json"));
    bare.push(b.ms);
    bareRss.push(b.rss);
  }
  return {
    inProcess: { all, storeOnly },
    cold: { agentd: summarize(agentd), agentdRss, bare: summarize(bare), bareRss },
    reps,
  };
}

export function printBoot(r: BootResult): void {
  const rss = (xs: number[]) => mib(summarize(xs).p50);
  printTable(
    `4a. Boot to listening (ms, p50/max of ${r.reps} after a warm-up; RSS idle 300 ms after ready)`,
    ["what", "p50", "max", "idle RSS MiB"],
    [
      ["in-process startDaemon, all built-in plugins", ms(r.inProcess.all.p50), ms(r.inProcess.all.max), ""],
      [
        "in-process startDaemon, storage-sqlite only (baseline)",
        ms(r.inProcess.storeOnly.p50),
        ms(r.inProcess.storeOnly.max),
      ],
      [
        "cold `agentd serve` process to server.json",
        ms(r.cold.agentd.p50),
        ms(r.cold.agentd.max),
        rss(r.cold.agentdRss),
      ],
      ["cold bare node http server to file (baseline)", ms(r.cold.bare.p50), ms(r.cold.bare.max), rss(r.cold.bareRss)],
    ],
    [
      "in-process: modules already loaded, so this is config + plugins + listen; cold: includes node start and module loading.",
    ],
  );
}
