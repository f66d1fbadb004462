import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, type Logger, writePrivateFileAsync } from "../../core/index.js";

/** One turn: the seq of its first user message and, once a file-changing tool ran, the snapshot taken before. */
export interface Entry {
  seq: number;
  at: string;
  commit?: string;
  /** Why no snapshot exists although one was needed. */
  skipped?: string;
}

/** What `/redo` puts back after a rewind: the files as they were before it, and the messages and turns it dropped. */
export interface RedoState {
  restore: "both" | "code" | "conversation";
  fromSeq: number;
  /** The snapshot taken just before the rewind (code and both). */
  commit?: string;
  /** The dropped messages, in order (conversation and both). */
  messages?: unknown[];
  entries?: Entry[];
}

export interface FileChanges {
  created: string[];
  modified: string[];
  deleted: string[];
}

export interface SessionState {
  entries: Entry[];
  redo?: RedoState;
  /** Files known to the shadow index (an upper bound, recounted when it crosses the limit). */
  files: number;
  /** Set when the working directory is too large: later turns do not try again. */
  disabled?: string;
}

/** Sessions whose state stays in memory at most (the least recently used are read from their file again). */
const MAX_KEPT_STATES = 256;

/**
 * The checkpoint state of each session (`<dir>/<session>/state.json`): read on first use, kept in memory for the
 * MAX_KEPT_STATES sessions used last, written asynchronously with one writer per session. A state leaves memory only
 * when it is on disk as it is (no write of it runs) and nothing holds it across a wait (`busy`: a snapshot, an undo
 * or a restore of the session runs): every change is saved as it is made, so its file reads back the same. Before
 * this bound, every session that ever ran a turn kept its state for the daemon's life (docs/benchmarks.md, issue 27).
 */
export class CheckpointStates {
  private readonly states = new Map<string, SessionState>();
  /** State files being written: one writer per session, which rewrites while the state changed meanwhile. */
  private readonly writes = new Map<string, { dirty: boolean; done: Promise<void> }>();

  constructor(
    private readonly dir: () => string,
    private readonly log: Logger,
    /** Whether an operation holding the session's state across a wait runs. */
    private readonly busy: (sessionId: string) => boolean,
  ) {}

  /** The states in memory now. */
  get kept(): number {
    return this.states.size;
  }

  get(sessionId: string): SessionState {
    let s = this.states.get(sessionId);
    if (s) {
      // The most recently used last: the first ones are dropped first.
      this.states.delete(sessionId);
      this.states.set(sessionId, s);
    } else {
      s = { entries: [], files: 0 };
      const file = join(this.dir(), sessionId, "state.json");
      // A new session has no file: checked first, since a failed read (an exception with a stack) costs more.
      if (existsSync(file)) {
        try {
          const raw = JSON.parse(readFileSync(file, "utf8")) as Partial<SessionState>;
          if (Array.isArray(raw.entries)) s.entries = raw.entries.filter((e) => typeof e?.seq === "number");
          if (typeof raw.files === "number") s.files = raw.files;
          if (typeof raw.disabled === "string") s.disabled = raw.disabled;
          if (raw.redo && typeof raw.redo.fromSeq === "number") s.redo = raw.redo;
        } catch {
          // an unreadable file: start empty
        }
      }
      this.states.set(sessionId, s);
      this.drop();
    }
    return s;
  }

  /** Drops the least recently used states beyond MAX_KEPT_STATES that are on disk as they are and not in use. */
  private drop(): void {
    let looked = 0;
    for (const id of this.states.keys()) {
      if (this.states.size <= MAX_KEPT_STATES || looked++ >= 16) return;
      if (!this.writes.has(id) && !this.busy(id)) this.states.delete(id);
    }
  }

  /**
   * Persists the session's state; resolves once the state as it is now is on disk. Saves that come while a write
   * runs are folded into one more write. A session forgotten meanwhile is not written back. `soon`: the write starts
   * once this run of the event loop is over (a turn's start), and counts as running from now on.
   */
  save(sessionId: string, state: SessionState, opts?: { soon?: boolean }): Promise<void> {
    const running = this.writes.get(sessionId);
    if (running) {
      running.dirty = true;
      return running.done;
    }
    const w = { dirty: true, done: Promise.resolve() };
    this.writes.set(sessionId, w);
    w.done = (async () => {
      try {
        if (opts?.soon) await new Promise<void>((resolve) => setImmediate(resolve));
        while (w.dirty && this.states.get(sessionId) === state) {
          w.dirty = false;
          await this.write(sessionId, state);
        }
      } finally {
        this.writes.delete(sessionId);
      }
    })();
    return w.done;
  }

  /** Forgets the session's state (its files are being removed); resolves once no write of it runs any more. */
  async forget(sessionId: string): Promise<void> {
    this.states.delete(sessionId);
    await this.writes.get(sessionId)?.done;
  }

  /** The writes running now. */
  running(): Promise<void>[] {
    return [...this.writes.values()].map((w) => w.done);
  }

  private async write(sessionId: string, state: SessionState): Promise<void> {
    try {
      await writePrivateFileAsync(join(this.dir(), sessionId, "state.json"), JSON.stringify(state));
    } catch (err) {
      this.log.warn({ sessionId, err: errorMessage(err) }, "could not persist checkpoints");
    }
  }
}
