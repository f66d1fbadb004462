/**
 * Milliseconds on a monotonic clock, for durations: what `performance.now()` gives, without the `performance`
 * global, whose first use loads node's perf_hooks (a dozen modules, ~4 ms of a daemon's start: node compiles a
 * module loaded after the daemon set its V8 flags without its own code cache, host/v8-flags.ts).
 */
export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}
