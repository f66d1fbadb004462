import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { ApiError, errorMessage, type Logger } from "../../core/index.js";
import {
  CheckpointStates,
  type Entry,
  type FileChanges,
  type RedoState,
  type SessionState,
} from "./checkpoint-state.js";
import { GitError, git } from "./git.js";
import {
  commitStaged,
  ensureShadowRepo,
  type ShadowGit,
  Skip,
  shadowGit,
  stagedChangesTo,
  stageWorkTree,
} from "./shadow-repo.js";

export type { Entry, FileChanges, RedoState } from "./checkpoint-state.js";

export interface CheckpointOptions {
  /** false: turns are still tracked (so /undo drops messages) but no file snapshot is taken. */
  enabled: boolean;
  /** Above this many files in the working directory, checkpoints are turned off for the session. */
  maxFiles: number;
  /** Files larger than this are left out of checkpoints (and so not restored by /undo). */
  maxFileBytes: number;
  /** Budget of one snapshot; a slower one is skipped and turns checkpoints off for the session. */
  timeoutMs: number;
  /** Checkpoints kept per session (the oldest are dropped). */
  keep: number;
}

export const DEFAULT_CHECKPOINT_OPTIONS: CheckpointOptions = {
  enabled: true,
  maxFiles: 20_000,
  maxFileBytes: 10 * 1024 * 1024,
  timeoutMs: 30_000,
  keep: 50,
};

export interface UndoOutcome {
  /** seq of the dropped turn's first user message (messages from it on are to be removed). */
  seq: number;
  filesRestored: boolean;
  created: string[];
  modified: string[];
  deleted: string[];
  /** Why files were not restored, when they were not. */
  note?: string;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Per-turn file checkpoints for /undo, in a shadow git repository per session (`<dir>/<session>/repo`), with the
 * session's working directory as its work tree. Works whether or not the project is a git repository, honours
 * .gitignore files, and never touches the project's own index or history. A snapshot is taken once per turn,
 * before its first file-changing tool runs; restoring checks the snapshot's tree out and removes files created
 * since.
 */
export class Checkpoints {
  private readonly states: CheckpointStates;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly inflight = new WeakMap<Entry, Promise<void>>();

  constructor(
    private readonly dir: () => string,
    private readonly opts: CheckpointOptions,
    private readonly log: Logger,
    /** Tells the session why a checkpoint was skipped. */
    private readonly notify: (sessionId: string, message: string) => void,
  ) {
    this.states = new CheckpointStates(dir, log, (id) => this.locks.has(id));
  }

  /** A turn started with its first user message at `seq`. */
  begin(sessionId: string, seq: number): void {
    if (!SAFE_ID.test(sessionId)) return;
    const state = this.state(sessionId);
    state.entries.push({ seq, at: new Date().toISOString() });
    state.redo = undefined; // a new turn: what a rewind dropped is gone for good
    const dropped = state.entries.splice(0, Math.max(0, state.entries.length - this.opts.keep));
    // Written off the chat path, once the turn's request has gone: a snapshot (the first file-changing tool) awaits
    // the write of its own state.
    void this.states.save(sessionId, state, { soon: true });
    const refs = dropped.flatMap((e) => (e.commit ? [`refs/checkpoints/${e.seq}`] : []));
    if (refs.length) {
      const repo = this.repoDir(sessionId);
      void this.locked(sessionId, async () => {
        for (const ref of refs) await git(["--git-dir", repo, "update-ref", "-d", ref]).catch(() => "");
        // Objects only the dropped checkpoints used go away once git's own thresholds are reached.
        await git(["--git-dir", repo, "gc", "--auto", "--quiet"], { timeoutMs: this.opts.timeoutMs }).catch(() => "");
      });
    }
  }

  /** The turn that /undo would drop, if any. */
  last(sessionId: string): { seq: number; hasFiles: boolean } | undefined {
    if (!SAFE_ID.test(sessionId)) return undefined;
    const e = this.state(sessionId).entries.at(-1);
    return e && { seq: e.seq, hasFiles: e.commit !== undefined };
  }

  /** Takes the current turn's snapshot if it has none yet. Never rejects; resolves when the snapshot exists. */
  snapshot(sessionId: string, cwd: string): Promise<void> {
    if (!SAFE_ID.test(sessionId)) return Promise.resolve();
    const state = this.state(sessionId);
    const entry = state.entries.at(-1);
    if (!entry || entry.commit || entry.skipped) return Promise.resolve();
    if (!this.opts.enabled) {
      entry.skipped = "file checkpoints are turned off in the config";
      return this.states.save(sessionId, state);
    }
    let p = this.inflight.get(entry);
    if (!p) {
      p = this.locked(sessionId, () => this.take(sessionId, cwd, state, entry));
      this.inflight.set(entry, p);
    }
    return p;
  }

  /**
   * Restores the files of the last turn's checkpoint and pops it. Throws 409 when files created since would be
   * removed and `force` is not set. Returns undefined when there is nothing to undo.
   */
  undo(sessionId: string, cwd: string, force: boolean): Promise<UndoOutcome | undefined> {
    if (!SAFE_ID.test(sessionId)) return Promise.resolve(undefined);
    return this.locked(sessionId, async () => {
      const state = this.state(sessionId);
      const entry = state.entries.at(-1);
      if (!entry) return undefined;
      const out: UndoOutcome = { seq: entry.seq, filesRestored: false, created: [], modified: [], deleted: [] };
      if (entry.commit) await this.restore(sessionId, cwd, entry.commit, force, out);
      else if (entry.skipped) {
        out.note = `files were not restored: no checkpoint was taken for this turn (${entry.skipped})`;
      }
      state.entries.pop();
      state.redo = undefined;
      await this.states.save(sessionId, state);
      return out;
    });
  }

  private async restore(
    sessionId: string,
    cwd: string,
    commit: string,
    force: boolean,
    out: UndoOutcome,
  ): Promise<void> {
    const deadline = Date.now() + this.opts.timeoutMs;
    const g = this.gitIn(sessionId, cwd, deadline);
    try {
      Object.assign(out, await this.diffTo(sessionId, cwd, commit, deadline));
      if (out.created.length && !force) {
        throw ApiError.conflict(
          `Undo would delete ${out.created.length} file(s) created since this turn started (${preview(out.created)}). ` +
            "Send /undo --force to undo anyway.",
          { code: "undo_needs_force", createdFiles: out.created },
        );
      }
      await g(["read-tree", "--reset", "-u", commit]);
      await g(["update-ref", "-d", `refs/checkpoints/${out.seq}`]).catch(() => "");
      out.filesRestored = true;
    } catch (err) {
      if (err instanceof GitError) {
        throw ApiError.conflict(`Undo could not restore the files: ${err.message}`, { code: "undo_failed" });
      }
      throw err;
    }
  }

  /**
   * The snapshot holding the files as they were before the turn user message `seq` started: that turn's, or the
   * next one's when the turns in between changed no file. undefined: no tool changed a file since (nothing to
   * restore). 409 when the checkpoint is gone (pruned, or never taken); `startsTurn` false: `seq` opened no turn.
   */
  checkpointFor(sessionId: string, seq: number): { commit?: string; startsTurn: boolean } {
    const entries = SAFE_ID.test(sessionId) ? this.state(sessionId).entries : [];
    const at = entries.findIndex((e) => e.seq === seq);
    if (at < 0) {
      const first = entries[0];
      if (!first || seq < first.seq) {
        throw ApiError.conflict(
          `The file checkpoint of that turn is no longer kept (only the last ${this.opts.keep} turns have one)` +
            "; rewind the conversation only, or pick a later message",
          { code: "checkpoint_pruned" },
        );
      }
      return { startsTurn: false };
    }
    for (const e of entries.slice(at)) {
      if (e.commit) return { commit: e.commit, startsTurn: true };
      if (e.skipped) {
        throw ApiError.conflict(`The files cannot be restored: no checkpoint was taken for a turn (${e.skipped})`, {
          code: "checkpoint_missing",
        });
      }
    }
    return { startsTurn: true };
  }

  /** The files that restoring `commit` would change (created: files removed by it). */
  changesTo(sessionId: string, cwd: string, commit: string): Promise<FileChanges> {
    return this.locked(sessionId, () => this.diffTo(sessionId, cwd, commit, Date.now() + this.opts.timeoutMs));
  }

  /** Snapshots the working directory now (for /redo); 409 when it cannot. */
  capture(sessionId: string, cwd: string, label: string): Promise<string> {
    return this.locked(sessionId, async () => {
      const deadline = Date.now() + this.opts.timeoutMs;
      const g = this.gitIn(sessionId, cwd, deadline);
      try {
        await ensureShadowRepo(this.repoDir(sessionId));
        await this.stage(g, sessionId, cwd, this.state(sessionId), false, deadline);
        return await commitStaged(g, label, "refs/checkpoints/redo");
      } catch (err) {
        throw ApiError.conflict(`Could not take a checkpoint of the files first: ${errorMessage(err)}`, {
          code: "checkpoint_failed",
        });
      }
    });
  }

  /** Makes the working directory match `commit` (files created since are removed); 409 when git fails. */
  restoreFiles(sessionId: string, cwd: string, commit: string): Promise<FileChanges> {
    return this.locked(sessionId, async () => {
      const deadline = Date.now() + this.opts.timeoutMs;
      try {
        const changes = await this.diffTo(sessionId, cwd, commit, deadline);
        await this.gitIn(sessionId, cwd, deadline)(["read-tree", "--reset", "-u", commit]);
        return changes;
      } catch (err) {
        if (err instanceof GitError) {
          throw ApiError.conflict(`Could not restore the files: ${err.message}`, { code: "restore_failed" });
        }
        throw err;
      }
    });
  }

  /** Drops the turns from `seq` on (their messages are being dropped); returns them. */
  dropFrom(sessionId: string, seq: number): Entry[] {
    const state = this.state(sessionId);
    const at = state.entries.findIndex((e) => e.seq >= seq);
    return at < 0 ? [] : state.entries.splice(at);
  }

  /** Appends turns back (a redo), and persists. */
  restoreEntries(sessionId: string, entries: Entry[]): Promise<void> {
    const state = this.state(sessionId);
    state.entries.push(...entries);
    return this.states.save(sessionId, state);
  }

  /** What /redo would put back (set by a rewind, cleared by the next turn, /undo and /redo). */
  redo(sessionId: string): RedoState | undefined {
    return SAFE_ID.test(sessionId) ? this.state(sessionId).redo : undefined;
  }

  setRedo(sessionId: string, redo: RedoState | undefined): Promise<void> {
    const state = this.state(sessionId);
    state.redo = redo;
    return this.states.save(sessionId, state);
  }

  private async diffTo(sessionId: string, cwd: string, commit: string, deadline: number): Promise<FileChanges> {
    const g = this.gitIn(sessionId, cwd, deadline);
    await this.stage(g, sessionId, cwd, this.state(sessionId), false, deadline);
    return stagedChangesTo(g, commit);
  }

  /** Drops a session's checkpoints (the session was deleted); again after a snapshot still running, if any. */
  forget(sessionId: string): Promise<void> {
    if (!SAFE_ID.test(sessionId)) return Promise.resolve();
    const dir = join(this.dir(), sessionId);
    void this.states.forget(sessionId);
    rmSync(dir, { recursive: true, force: true });
    return this.locked(sessionId, async () => {
      await this.states.forget(sessionId);
      await rm(dir, { recursive: true, force: true });
    }).finally(() => this.locks.delete(sessionId));
  }

  /* ---------- internals ---------- */

  private async take(sessionId: string, cwd: string, state: SessionState, entry: Entry): Promise<void> {
    if (state.disabled) {
      entry.skipped = state.disabled;
      await this.states.save(sessionId, state);
      return;
    }
    try {
      const deadline = Date.now() + this.opts.timeoutMs;
      const g = this.gitIn(sessionId, cwd, deadline);
      await ensureShadowRepo(this.repoDir(sessionId));
      await this.stage(g, sessionId, cwd, state, true, deadline);
      entry.commit = await commitStaged(g, `turn at message ${entry.seq}`, `refs/checkpoints/${entry.seq}`);
    } catch (err) {
      const reason = err instanceof Skip ? err.message : errorMessage(err);
      entry.skipped = reason;
      const disable = err instanceof Skip ? err.disable : err instanceof GitError && err.code !== "failed";
      if (disable) state.disabled = reason;
      this.log.warn({ sessionId, reason }, "file checkpoint skipped");
      this.notify(
        sessionId,
        `No file checkpoint for this turn: ${reason}. /undo will not restore files changed by this turn` +
          (disable ? " (checkpoints are off for this session)." : "."),
      );
    }
    await this.states.save(sessionId, state);
  }

  /** Stages the working directory into the shadow index (see {@link stageWorkTree}). */
  private stage(
    g: ShadowGit,
    sessionId: string,
    cwd: string,
    state: SessionState,
    enforce: boolean,
    deadline: number,
  ): Promise<void> {
    return stageWorkTree(g, this.repoDir(sessionId), cwd, state, this.opts, enforce, deadline);
  }

  /** git bound to the session's shadow repository and working directory, sharing one deadline. */
  private gitIn(sessionId: string, cwd: string, deadline: number): ShadowGit {
    return shadowGit(this.repoDir(sessionId), cwd, deadline);
  }

  private repoDir(sessionId: string): string {
    return join(this.dir(), sessionId, "repo");
  }

  private state(sessionId: string): SessionState {
    return this.states.get(sessionId);
  }

  /** Resolves once no snapshot, restore or state write is running (the daemon stops only after that). */
  async settled(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const writes = this.states.running();
      const pending = [...this.locks.values(), ...writes];
      await Promise.all(pending);
      if (!this.states.running().length && [...this.locks.values()].every((l) => pending.includes(l))) return;
    }
  }

  /** Runs `fn` after the session's earlier operations; the session's entry goes once its last one has settled. */
  private locked<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(sessionId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail: Promise<unknown> = next.then(
      () => this.settle(sessionId, tail),
      () => this.settle(sessionId, tail),
    );
    this.locks.set(sessionId, tail);
    return next;
  }

  private settle(sessionId: string, tail: Promise<unknown>): void {
    if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
  }
}

function preview(paths: string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  return paths.length > 5 ? `${shown}, and ${paths.length - 5} more` : shown;
}
