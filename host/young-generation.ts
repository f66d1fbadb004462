import { setFlagsFromString } from "node:v8";

/** The flag `agentd serve` sets; exported for the test. */
export const YOUNG_GENERATION_FLAG = "--semi-space-growth-factor=1";

/**
 * Keeps V8's young generation at its initial size (1 MiB semi-spaces) in the daemon. By default V8 grows it to
 * 16 MiB semi-spaces while the modules load and under a streamed turn: ~10 MiB of idle RSS and ~25-30 MiB after
 * long turns that never come back, for no measurable CPU per turn (docs/benchmarks.md, issue 16).
 * `--max-semi-space-size` only works at process start (and the `agentd` bin cannot pass node flags without a
 * re-exec), but the growth factor is read on every growth, so it can be set here, before the daemon's modules load.
 * A user who sets semi-space flags of their own (node's arguments or NODE_OPTIONS) keeps V8's growth and their size.
 * Returns whether the flag was set.
 */
export function capYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  if ([...execArgv, nodeOptions ?? ""].some((a) => a.includes("semi-space"))) return false;
  setFlagsFromString(YOUNG_GENERATION_FLAG);
  return true;
}
