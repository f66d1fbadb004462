import type { PoolClient } from "pg";

/** Runs `fn` on the store's connection (alone, or as one transaction), a broken connection failing with a 503. */
export type Runner = <T>(fn: (c: PoolClient) => Promise<T>) => Promise<T>;

export function placeholders(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ");
}

/**
 * PostgreSQL text cannot hold U+0000. JSON columns never contain one (JSON.stringify escapes it); free text that
 * does (a title, a model's thinking) keeps everything else, the NUL shown as U+FFFD.
 */
export function text<V>(v: V): V {
  return typeof v === "string" && v.includes("\0") ? (v.replaceAll("\0", "\uFFFD") as V) : v;
}
