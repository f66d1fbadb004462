import { setFlagsFromString } from "node:v8";

/** The flag `agentd serve` sets; exported for the test. */
export const WASM_BASELINE_FLAG = "--liftoff-only";

/**
 * Keeps WebAssembly at V8's baseline compiler (Liftoff) in the daemon. The only WebAssembly the daemon runs is the
 * HTTP parser (llhttp) of node's fetch, compiled at its first use (listing models, verifying a provider, the web
 * tools; a turn's model requests go over node:http): V8's optimizing compile of it
 * allocates ~30 MiB of compiler memory that stays in the process's RSS (~8-9 MiB after it is freed), for no
 * measurable CPU per streamed token (docs/benchmarks.md, issue 16). Read when a module is compiled, so it can be set
 * here, at the start of `serve()`. A user who passes WebAssembly flags of their own (node's arguments or
 * NODE_OPTIONS: any naming `wasm` or `liftoff`) keeps V8's default. Returns whether the flag was set.
 */
export function keepWasmBaseline(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const flags = [...execArgv.filter((a) => a.startsWith("-")), ...(nodeOptions ?? "").split(/\s+/)];
  if (flags.some((a) => a.includes("wasm") || a.includes("liftoff"))) return false;
  setFlagsFromString(WASM_BASELINE_FLAG);
  return true;
}
