/**
 * The terminal client (section 5): `agentd run` for a one-token answer against bare node plus the provider's own
 * time; `agentd chat` attached to a running daemon, time to its first screen in tmux against a bare node program
 * printing one word in tmux; streaming 2,000 tokens through the interactive client: its CPU per 1,000 tokens and
 * how far its screen trails a plain SSE client at the end of the stream.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clientEnv } from "../test/support/cli.js";
import type { FakeProvider, Step } from "../test/support/fake-provider.js";
import { hasTmux, TmuxPane } from "../test/support/tmux.js";
import { now } from "./lib/clock.js";
import { AGENTD_BIN, type BenchDaemon } from "./lib/daemon.js";
import { ms, printTable, type Summary, summarize } from "./lib/stats.js";

const MODULES = fileURLToPath(new URL("../clients/terminal/", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../clients/terminal.bundle/", import.meta.url));

export interface TerminalResult {
  run: { agentd: Summary; bareNode: Summary; provider: Summary };
  chat?: { agentd: Summary; bareNode: Summary };
  /** CPU ms of loading what `agentd chat` needs for its first screen (the commands and the UI), in a fresh node. */
  load?: { modules: Summary; bundle: Summary };
  stream?: { tokens: number; cpuMsPer1000: number; cpuMsIdleTurn: number; lagMs: number };
}

function timedProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.once("exit", (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

/** CPU time (ms) a fresh node spends importing `files` in order (the process's own start-up not included). */
function loadCpu(files: string[]): Promise<number> {
  const code = `const c0 = process.cpuUsage(); for (const f of ${JSON.stringify(files)}) await import(f); const c = process.cpuUsage(c0); process.stdout.write(String((c.user + c.system) / 1000));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.once("exit", (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

/** The first screen's modules: the commands and the UI, as separate modules and as the bundle's chunks. */
async function loadingCpu(reps: number): Promise<TerminalResult["load"]> {
  const startChunk = existsSync(BUNDLE) ? readdirSync(BUNDLE).find((f) => /^start-.*\.js$/.test(f)) : undefined;
  if (!startChunk) return undefined;
  const modules: number[] = [];
  const bundle: number[] = [];
  for (let i = 0; i < reps; i++) {
    modules.push(await loadCpu([join(MODULES, "commands.js"), join(MODULES, "ui/start.js")]));
    bundle.push(await loadCpu([join(BUNDLE, "commands.js"), join(BUNDLE, startChunk)]));
  }
  return { modules: summarize(modules), bundle: summarize(bundle) };
}

async function providerOneToken(fake: FakeProvider): Promise<number> {
  fake.script({ steps: [{ content: "ok" }] });
  const t0 = now();
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
  return now() - t0;
}

/** Time until the pane shows `marker`, polling the screen (tmux's own start-up is in both figures). */
async function firstScreen(argv: string[], marker: string, cwd: string): Promise<number> {
  const t0 = now();
  const pane = await TmuxPane.start(argv, { cwd, width: 100, height: 30 });
  try {
    await pane.waitFor(marker, 20_000);
    return now() - t0;
  } finally {
    await pane.kill();
  }
}

/** Streams `n` tokens (realistic Markdown: lines and paragraphs) through `agentd chat`; its CPU time and lag. */
async function streamThroughChat(
  fake: FakeProvider,
  bd: BenchDaemon,
  cwd: string,
  n: number,
): Promise<{ cpuMs: number; lagMs: number }> {
  const id = await bd.api.createSession({ cwd });
  const steps: Step[] = [];
  for (let i = 1; i <= n; i++) steps.push({ content: i % 60 === 0 ? "word.\n\n" : i % 12 === 0 ? "word\n" : "word " });
  steps.push({ content: "DONE-MARK" });
  fake.script({ steps });
  const sse = await bd.api.sse(`/sessions/${id}/events`);
  const stats = join(cwd, `stats-${id}.json`);
  const pane = await TmuxPane.start([process.execPath, AGENTD_BIN, "--home", bd.home, "chat", "--session", id, "go"], {
    cwd,
    env: { AGENTD_CLIENT_STATS: stats },
  });
  try {
    await sse.waitFor((f) => f.json?.type === "end", 60_000);
    const tEnd = now();
    await pane.waitFor("DONE-MARK", 60_000);
    const lagMs = now() - tEnd;
    await pane.keys("C-c");
    await pane.keys("C-c");
    await pane.waitForExit(20_000);
    for (let i = 0; i < 100 && !existsSync(stats); i++) await new Promise((r) => setTimeout(r, 20));
    const { cpuMs } = JSON.parse(readFileSync(stats, "utf8")) as { cpuMs: number };
    rmSync(stats, { force: true });
    return { cpuMs, lagMs };
  } finally {
    sse.close();
    await pane.kill();
  }
}

export async function terminalBench(
  fake: FakeProvider,
  bd: BenchDaemon,
  cwd: string,
  reps = 5,
): Promise<TerminalResult> {
  const env = clientEnv();
  const run: number[] = [];
  const bare: number[] = [];
  const provider: number[] = [];
  for (let i = 0; i < reps; i++) {
    bare.push(await timedProcess([process.execPath, "-e", "0"], env));
    provider.push(await providerOneToken(fake));
    fake.script({ steps: [{ content: "ok" }] });
    run.push(await timedProcess([process.execPath, AGENTD_BIN, "--home", bd.home, "run", "--cwd", cwd, "hi"], env));
  }
  const result: TerminalResult = {
    run: { agentd: summarize(run), bareNode: summarize(bare), provider: summarize(provider) },
  };
  result.load = await loadingCpu(reps);
  if (!hasTmux()) return result;
  const chat: number[] = [];
  const bareScreen: number[] = [];
  for (let i = 0; i < reps; i++) {
    bareScreen.push(
      await firstScreen(
        [process.execPath, "-e", "process.stdout.write('ready'); setInterval(() => {}, 1000)"],
        "ready",
        cwd,
      ),
    );
    chat.push(
      await firstScreen([process.execPath, AGENTD_BIN, "--home", bd.home, "chat", "--cwd", cwd], "ask anything", cwd),
    );
  }
  result.chat = { agentd: summarize(chat), bareNode: summarize(bareScreen) };
  // A client's whole CPU is mostly its start (~0.8-1.4 s here, moving by ~100 ms from run to run): the per-token
  // figure is the median of three differences between a 2,000-token and a one-token session, run alternately.
  const idle: number[] = [];
  const per1000: number[] = [];
  const lag: number[] = [];
  for (let i = 0; i < 3; i++) {
    const one = await streamThroughChat(fake, bd, cwd, 1);
    const full = await streamThroughChat(fake, bd, cwd, 2000);
    idle.push(one.cpuMs);
    per1000.push((full.cpuMs - one.cpuMs) / 2);
    lag.push(full.lagMs);
  }
  result.stream = {
    tokens: 2000,
    cpuMsIdleTurn: summarize(idle).p50,
    cpuMsPer1000: summarize(per1000).p50,
    lagMs: summarize(lag).p50,
  };
  return result;
}

export function printTerminal(r: TerminalResult): void {
  const rows: string[][] = [
    [
      "agentd run, one-token answer, end to end (baseline: bare node + provider)",
      `${ms(r.run.bareNode.p50)} + ${ms(r.run.provider.p50)}`,
      `${ms(r.run.agentd.p50)} (+${ms(r.run.agentd.p50 - r.run.bareNode.p50 - r.run.provider.p50)})`,
    ],
  ];
  if (r.chat)
    rows.push([
      "agentd chat, first screen in tmux (baseline: bare node printing a word)",
      ms(r.chat.bareNode.p50),
      `${ms(r.chat.agentd.p50)} (+${ms(r.chat.agentd.p50 - r.chat.bareNode.p50)})`,
    ]);
  if (r.load)
    rows.push([
      "agentd chat first screen's modules: load CPU (baseline: unbundled modules)",
      ms(r.load.modules.p50),
      `${ms(r.load.bundle.p50)} (bundle)`,
    ]);
  if (r.stream) {
    rows.push([
      "agentd chat CPU per 1,000 streamed tokens (baseline: a one-token turn's total)",
      ms(r.stream.cpuMsIdleTurn),
      ms(r.stream.cpuMsPer1000),
    ]);
    rows.push(["agentd chat screen behind an SSE client at the end of 2,000 tokens", "", ms(r.stream.lagMs)]);
  }
  printTable(
    "5. terminal client (medians; bars: first screen <= 300 ms, run <= 250 ms over the provider, <= 100 ms CPU per 1,000 tokens)",
    ["figure", "baseline", "agentd"],
    rows,
    [
      "The screen is read by polling tmux (a few ms per read), so screen figures carry that granularity.",
      "CPU per 1,000 tokens: median of 3 differences between a 2,000-token and a one-token session, run alternately.",
    ],
  );
}
