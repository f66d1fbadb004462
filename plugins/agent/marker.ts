import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** A turn that was running: its session, and the last event sequence number given out when it started. */
export interface RunningTurn {
  id: string;
  after: number;
  /** The team id of the daemon that ran it, when its store is shared (its leases are let go at the next start). */
  owner?: string;
}

/**
 * The crash-recovery marker: which sessions have a turn running. Written synchronously at the two moments it
 * matters: before a turn's 202 leaves (so a crash right after it still finds the turn) and after a turn's `end` is
 * stored (so recovery never ends a turn twice; it also checks the log for an `end` after `after`).
 *
 * One `pwrite` at offset 0 of a descriptor kept open, padded with spaces to the longest content written so far (JSON
 * allows trailing whitespace), never truncated: a write of a few bytes either happened or not when the process dies,
 * like the write-then-rename it replaces (which cost an mkdir, open, write, close and rename, ~1-2 ms on a loaded
 * disk, on the path of every turn's first token).
 */
export class MarkerFile {
  private fd: number | undefined;
  private size = 0;

  constructor(readonly file: string) {}

  write(turns: RunningTurn[]): void {
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
        this.fd = openSync(this.file, constants.O_RDWR | constants.O_CREAT, 0o600);
        this.size = fstatSync(this.fd).size;
      }
      const json = JSON.stringify(turns);
      const buf = Buffer.from(json.length < this.size ? json.padEnd(this.size) : json);
      writeSync(this.fd, buf, 0, buf.length, 0);
      this.size = Math.max(this.size, buf.length);
    } catch {
      // The home went away (tests removing it) or the disk is full: the log check at recovery still holds.
      this.close();
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = undefined;
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
      out.push({ id: x.id, after, ...(typeof x.owner === "string" ? { owner: x.owner as string } : {}) });
    }
  }
  return out;
}
