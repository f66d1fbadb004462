/**
 * One monotonic clock for every thread of the benchmark: milliseconds since a shared origin, from
 * `process.hrtime.bigint()` (process-wide, unlike `performance.now()` whose origin differs per worker thread).
 */
let origin = process.hrtime.bigint();

export function clockOrigin(): string {
  return origin.toString();
}

/** Used by worker threads so their stamps are comparable with the main thread's. */
export function setClockOrigin(value: string): void {
  origin = BigInt(value);
}

export function now(): number {
  return Number(process.hrtime.bigint() - origin) / 1e6;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
