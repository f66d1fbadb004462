import { readFileSync } from "node:fs";
import { writePrivateFile } from "../../core/index.js";

/** A turn that was running: its session, and the last event sequence number given out when it started. */
export interface RunningTurn {
  id: string;
  after: number;
}

/**
 * The crash-recovery marker: which sessions have a turn running. Written synchronously (write-then-rename, a few
 * tens of microseconds for these few bytes) at the two moments it matters: before a turn's 202 leaves (so a crash
 * right after it still finds the turn) and after a turn's `end` is stored (so recovery never ends a turn twice;
 * it also checks the log for an `end` after `after`).
 */
export function writeMarker(file: string, turns: RunningTurn[]): void {
  try {
    writePrivateFile(file, JSON.stringify(turns));
  } catch {
    // The home went away (tests removing it) or the disk is full: the log check at recovery still holds.
  }
}

/** The marker's turns; also reads the older format (an array of session ids). */
export function readMarker(file: string): RunningTurn[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: RunningTurn[] = [];
  for (const x of raw) {
    if (typeof x === "string") out.push({ id: x, after: 0 });
    else if (x && typeof x === "object" && typeof x.id === "string") {
      const after = Number.isSafeInteger(x.after) && x.after >= 0 ? (x.after as number) : 0;
      out.push({ id: x.id, after });
    }
  }
  return out;
}
