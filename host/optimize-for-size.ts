import { setFlagsFromString } from "node:v8";

/** The flag `agentd serve` sets; exported for the test. */
export const OPTIMIZE_FOR_SIZE_FLAG = "--optimize-for-size";

/**
 * Puts V8 in its memory-saving mode in the daemon (`--optimize-for-size`: a heap that grows less eagerly and is
 * collected sooner, smaller compilation budgets). Under streamed turns the daemon's live heap stays small (~17 MiB
 * after 20 long turns) while V8 grows the heap it keeps around it: with this setting RSS after 20 / 150 long turns
 * went from ~103 / ~114 to ~89 / ~89 MiB, for ~4-6 ms more CPU per 2,000-token turn (docs/benchmarks.md, issue 16).
 * Read at run time, so it is set at the start of `serve()`. A user who passes the flag themselves (node's arguments,
 * e.g. `--no-optimize-for-size`) keeps their choice. Returns whether the flag was set.
 */
export function optimizeForSize(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const flags = [...execArgv.filter((a) => a.startsWith("-")), ...(nodeOptions ?? "").split(/\s+/)];
  if (flags.some((a) => a.replaceAll("_", "-").includes("optimize-for-size"))) return false;
  setFlagsFromString(OPTIMIZE_FOR_SIZE_FLAG);
  return true;
}
