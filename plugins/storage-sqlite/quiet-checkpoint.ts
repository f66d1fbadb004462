import type Database from "better-sqlite3";
import { monotonicMs } from "../../core/clock.js";
import { TimedWork } from "./timed-work.js";

/** How long the store goes without a write before its WAL is checkpointed. */
const QUIET_MS = 100;

/**
 * Checkpoints the WAL once the store has gone quiet, so that a commit seldom has to.
 *
 * Left to SQLite, a commit that finds the WAL over 1,000 pages checkpoints it itself (`wal_autocheckpoint`): it syncs
 * the WAL, copies its pages into the database and syncs that, on the event loop, in the middle of whatever turn is
 * streaming; and the first commit after a complete checkpoint starts the WAL over and syncs its header. Streams paused
 * for those syncs (0.2-15 ms each here; docs/benchmarks.md, issue 27). Here, QUIET_MS after the last write, a passive
 * checkpoint runs, and when it took the whole WAL, a write that changes nothing (the schema version rewritten) starts
 * the WAL over at once, so its header is synced then too. The next turn's commits then append to an empty WAL. SQLite's
 * own checkpoint stays for writes that never pause. What is durable, and when, does not change: a checkpoint and a
 * restart sync exactly as they would inside a commit.
 */
export class QuietCheckpoint {
  private readonly work = new TimedWork(() => this.check());
  /** When the last write came (`monotonicMs`). */
  private last = 0;

  constructor(private readonly db: Database.Database) {}

  /** A write was committed (or is about to be). */
  wrote(): void {
    this.last = monotonicMs();
    this.work.start(QUIET_MS);
  }

  /** Resolves once no checkpoint is due: the one after the last write ran (or the store closed). */
  checkpointed(): Promise<void> {
    return this.work.idle();
  }

  close(): void {
    this.work.close();
  }

  private check(): void {
    const quiet = monotonicMs() - this.last;
    if (quiet < QUIET_MS) {
      this.work.again(QUIET_MS - quiet);
      return;
    }
    try {
      const [r] = this.db.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number; checkpointed: number }>;
      if (r && r.log > 0 && r.checkpointed === r.log) {
        this.db.pragma(`user_version = ${this.db.pragma("user_version", { simple: true }) as number}`);
      }
    } catch {
      // Busy or failing: the next quiet moment tries again, and SQLite's own checkpoint still bounds the WAL.
    }
    this.work.done();
  }
}
