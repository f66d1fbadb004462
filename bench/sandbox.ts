/**
 * Section 9: what the sandbox adds to a command. `/bin/bash -c "echo hi"` spawned as the bash tool spawns it,
 * unconfined and through bubblewrap with the arguments the sandbox plugin builds (the default confinement, a
 * repository as working directory), interleaved run by run, from spawn to exit.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { commandEnv } from "../core/sandbox.js";
import { bwrapArgs, confinementOf } from "../plugins/sandbox/bwrap.js";
import { now } from "./lib/clock.js";
import { tempDir } from "./lib/daemon.js";
import { ms, printTable, type Summary, summarize } from "./lib/stats.js";

export interface SandboxResult {
  runs: number;
  bare: Summary;
  confined: Summary;
}

function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const t = now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve(now() - t) : reject(new Error(`${file} exited ${code}`))));
  });
}

export async function sandboxBench(runs: number): Promise<SandboxResult> {
  const bwrap = process.env.AGENTD_BWRAP ?? "bwrap";
  const home = tempDir("agentd-bench-sbx-home-");
  const cwd = join(tempDir("agentd-bench-sbx-"), "repo");
  mkdirSync(cwd);
  execFileSync("git", ["init", "-q", cwd]);
  const env = commandEnv(process.env);
  const argv = ["/bin/bash", "-c", "echo hi"];
  const confinement = confinementOf(home, {});
  const bare: number[] = [];
  const confined: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const b = await run(argv[0] as string, argv.slice(1), cwd, env);
    const c = await run(bwrap, bwrapArgs(confinement, { argv, cwd, network: false }), cwd, env);
    if (i >= 3) {
      bare.push(b);
      confined.push(c);
    }
  }
  return { runs, bare: summarize(bare), confined: summarize(confined) };
}

export function printSandbox(r: SandboxResult): void {
  printTable(
    `9. sandbox: \`echo hi\` from spawn to exit, ${r.runs} runs interleaved (3 warm-up runs dropped)`,
    ["", "unconfined", "bubblewrap", "added"],
    [
      ["p50", ms(r.bare.p50), ms(r.confined.p50), `+${ms(r.confined.p50 - r.bare.p50)}`],
      ["mean", ms(r.bare.mean), ms(r.confined.mean), `+${ms(r.confined.mean - r.bare.mean)}`],
      ["p99", ms(r.bare.p99), ms(r.confined.p99), `+${ms(r.confined.p99 - r.bare.p99)}`],
    ],
    ["goal: a sandboxed echo adds at most 15 ms"],
  );
}
