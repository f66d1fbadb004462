/** Small statistics and plain-text tables for the benchmark report. */

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function summarize(values: Iterable<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

export function median(values: Iterable<number>): number {
  return summarize(values).p50;
}

/** Milliseconds with a precision that suits their size. */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

export function signedMs(v: number): string {
  return Number.isFinite(v) && v >= 0 ? `+${ms(v)}` : ms(v);
}

export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

export function int(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a";
}

/** Prints a titled table with right-aligned columns (the first column left-aligned). */
export function printTable(title: string, header: string[], rows: string[][], notes: string[] = []): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  for (const n of notes) console.log(`  ${n}`);
}
