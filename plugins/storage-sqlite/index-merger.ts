import type Database from "better-sqlite3";
import { TimedWork } from "./timed-work.js";

/** The full-text indexes merged here: messages (written with every message) and titles (with every session). */
const INDEXES = ["messages_fts", "session_titles_fts"];
/** Leaf pages one merge step writes at most: a step takes a few ms at most (docs/benchmarks.md, issue 27). */
const PAGES_PER_STEP = 16;
/** How long after a write the merging starts: the turn that wrote goes on first (its model call, its events). */
const START_AFTER_MS = 20;

/**
 * Merges the full-text indexes' segments a little at a time, between other work, instead of inside a write.
 *
 * Each commit that writes to an FTS5 index adds a segment, and FTS5 merges segments as they pile up. Left to itself
 * (`automerge`) it merges inside the write that found too many, and those merges grow with the index: a message
 * write stopped the event loop, and with it every session's stream, for 50-105 ms once every 1,000-4,000 messages
 * of a 100,000-message database (a session's creation up to 160 ms at 30,000 sessions). Merging inside writes is
 * turned off (a migration sets `automerge = 0`); shortly after a write, merge steps of PAGES_PER_STEP pages per
 * index run, one per timer, until FTS5 reports nothing left. An index reads the same meanwhile: merging only
 * moves entries between segments. FTS5's `crisismerge` still merges inside a write if a level ever gathers 16
 * segments (these steps keep every level below 4).
 */
export class IndexMerger {
  private readonly work = new TimedWork(() => this.step());
  private readonly merges: Database.Statement[];
  private readonly changes: Database.Statement<[], number>;

  constructor(
    db: Database.Database,
    /** Called after each step that merged: it committed, as any write does (a step at the open may find nothing). */
    private readonly stepped: () => void = () => {},
  ) {
    this.merges = INDEXES.map((t) => db.prepare(`INSERT INTO ${t} (${t}, rank) VALUES ('merge', ${PAGES_PER_STEP})`));
    this.changes = db.prepare<[], number>("SELECT total_changes()").pluck();
  }

  /** An index was written to: merge work may be due. */
  wrote(): void {
    this.work.start(START_AFTER_MS);
  }

  /** Resolves once no merge work is left (or the store closed). */
  merged(): Promise<void> {
    return this.work.idle();
  }

  close(): void {
    this.work.close();
  }

  private step(): void {
    let more = false;
    try {
      for (const merge of this.merges) {
        const before = this.changes.get() as number;
        merge.run();
        // FTS5's documented signal: a step that merged anything counts two changes or more.
        if ((this.changes.get() as number) - before >= 2) more = true;
      }
    } catch {
      // The database is busy or failing: the next write tries again, and the index reads the same meanwhile.
      more = false;
    }
    if (more) {
      this.stepped();
      this.work.again(0);
    } else this.work.done();
  }
}
