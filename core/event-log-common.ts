import type { Awaitable } from "./store.js";

/** Deltas: replayable, batched to the store off the hot path, not part of the audit trail. */
export const EPHEMERAL_TYPES: ReadonlySet<string> = new Set(["token", "thinking", "tool_output", "editor_fs_request"]);

let lastMs = 0;
let lastIso = "";
/** `new Date().toISOString()`, formatted at most once per millisecond (deltas arrive many per millisecond). */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export function isPromise<T>(v: Awaitable<T>): v is Promise<T> {
  return typeof (v as Promise<T> | undefined)?.then === "function";
}

/**
 * Drops up to `count` entries, oldest first, that were not used since the last pass and are not `busy` (`drop` is
 * told first); the entries passed over are marked unused for the next pass.
 */
export function evictUntouched<V extends { used: boolean }>(
  map: Map<string, V>,
  count: number,
  busy: (id: string, v: V) => boolean,
  drop: (id: string, v: V) => void,
): void {
  let left = count;
  for (const [id, v] of map) {
    if (left === 0) break;
    if (v.used || busy(id, v)) {
      v.used = false;
      continue;
    }
    drop(id, v);
    map.delete(id);
    left--;
  }
}
