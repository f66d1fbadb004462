import { setFlagsFromString } from "node:v8";

/** A V8 setting `agentd serve` makes for the daemon, unless the user's node options already speak of it. */
export interface DaemonV8Flag {
  flag: string;
  /** A node option (arguments or NODE_OPTIONS, `_` read as `-`) that contains one of these is the user's choice. */
  userOwned: string[];
}

/**
 * Keeps V8's young generation at its initial size (1 MiB semi-spaces). By default V8 grows it to 16 MiB semi-spaces
 * while the modules load and under a streamed turn: ~10 MiB of idle RSS and ~25-30 MiB after long turns that never
 * come back, for no measurable CPU per turn (docs/benchmarks.md, issue 16). `--max-semi-space-size` only works at
 * process start (and the `agentd` bin cannot pass node flags without a re-exec), but the growth factor is read on
 * every growth, so it can be set before the daemon's modules load.
 */
export const YOUNG_GENERATION: DaemonV8Flag = { flag: "--semi-space-growth-factor=1", userOwned: ["semi-space"] };

/**
 * Keeps WebAssembly at V8's baseline compiler (Liftoff). The only WebAssembly the daemon runs is the HTTP parser
 * (llhttp) of node's fetch, compiled at its first use: V8's optimizing compile of it allocates ~30 MiB of compiler
 * memory that stays in the process's RSS (~8-9 MiB after it is freed), for no measurable CPU per streamed token
 * (docs/benchmarks.md, issue 16). Read when a module is compiled.
 */
export const WASM_BASELINE: DaemonV8Flag = { flag: "--liftoff-only", userOwned: ["wasm", "liftoff"] };

/**
 * Puts V8 in its memory-saving mode (a heap that grows less eagerly and is collected sooner, smaller compilation
 * budgets). Under streamed turns the daemon's live heap stays small (~17 MiB after 20 long turns) while V8 grows the
 * heap it keeps around it: with this setting RSS after 20 / 150 long turns went from ~103 / ~114 to ~89 / ~89 MiB,
 * for ~4-6 ms more CPU per 2,000-token turn (docs/benchmarks.md, issue 16). Read at run time.
 */
export const OPTIMIZE_FOR_SIZE: DaemonV8Flag = { flag: "--optimize-for-size", userOwned: ["optimize-for-size"] };

/** Sets `f` unless the user's node options speak of it. Returns whether it was set. */
export function setDaemonFlag(
  f: DaemonV8Flag,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const options = [...execArgv.filter((a) => a.startsWith("-")), ...(nodeOptions ?? "").split(/\s+/)];
  if (options.some((a) => f.userOwned.some((word) => a.replaceAll("_", "-").includes(word)))) return false;
  setFlagsFromString(f.flag);
  return true;
}

/**
 * Node's own modules that `agentd serve` loads on its way to `server.json`: the HTTP server, what pino (worker_threads)
 * and sonic-boom (assert) require, what `listen` loads (dns, cluster), node:vm for the runtime's code cache,
 * timers/promises and fs/promises. Node compiles its modules with the code cache built into it, which V8 takes only
 * under the flags it was made with: loaded after `--liftoff-only` and `--optimize-for-size` are set, each is compiled
 * from source (~15-20 ms of a cold start). One that is not listed still loads, only slower; test/v8-flags.test.ts
 * checks the list.
 */
const BOOT_MODULES = [
  "node:http",
  "node:assert",
  "node:worker_threads",
  "node:dns",
  "node:cluster",
  "node:timers/promises",
  "node:vm",
  // Node's ES module loader loads it for itself; the launcher (scripts/bundle-launcher.ts) starts without that loader.
  "node:fs/promises",
] as const;

/**
 * The daemon's V8 settings, made at the start of `serve()`: before its modules load, which grow the young generation
 * first. Node's modules the start needs are loaded in between (BOOT_MODULES).
 */
export function setDaemonFlags(): void {
  setDaemonFlag(YOUNG_GENERATION);
  for (const m of BOOT_MODULES) process.getBuiltinModule(m);
  for (const f of [WASM_BASELINE, OPTIMIZE_FOR_SIZE]) setDaemonFlag(f);
}

/**
 * The client commands' V8 setting (the terminal client, `agentd acp`, and status, stop, open and token --rotate, which
 * ask the daemon who it is): WebAssembly at the baseline compiler, as in the daemon. A client's first fetch compiles
 * node's HTTP parser (llhttp), which V8 then optimises on a background thread, and a process that is done waits for
 * that compile before it exits: ~100-200 ms of every `agentd run` on a 2-CPU machine, and CPU taken from the first
 * screen of `agentd chat` (docs/benchmarks.md, section 5). Node's fetch (undici, which holds the parser) is loaded
 * first, while node's code cache still matches V8's flags: loaded after them, it would be compiled from source (~40
 * ms).
 */
export function setClientFlags(): void {
  void globalThis.Headers; // node's lazy getter loads undici
  setDaemonFlag(WASM_BASELINE);
}
