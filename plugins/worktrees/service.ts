import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ApiError,
  errorMessage,
  type Logger,
  type ProjectTrust,
  type SessionService,
  type SessionStore,
  type WorktreeDiff,
  type WorktreeInfo,
  type WorktreeMergeOutcome,
  type WorktreeRequest,
  type WorktreeService,
  writePrivateFile,
} from "../../core/index.js";
import {
  addWorktree,
  checkNewBranch,
  checkoutAsChanges,
  checkRoot,
  copyIncluded,
  currentHead,
  mainCheckout,
  removeWorktree,
  resolveCommit,
  stateCommit,
  tryGit,
  worktreePath,
} from "./git-ops.js";
import { diffWorktree, mergeWorktree } from "./merge.js";

export interface WorktreeDeps {
  /** Where worktrees are made (`<home>/worktrees` unless configured). */
  root: string;
  /** The registry file (session id → worktree), read at start-up to clean up after a crash. */
  file: string;
  sessions(): SessionService;
  store(): SessionStore;
  trust(): ProjectTrust | undefined;
  /** Runs the project's `worktree` hook through the project plugin (trust-gated); resolves when it is done. */
  runHook(sessionId: string, wt: WorktreeInfo): Promise<void>;
  log: Logger;
}

/**
 * Session worktrees: made at session creation, `/worktree new` and fork, merged and discarded on request, removed
 * with the session. Every session's worktree is recorded in a registry file before git makes it, so a daemon
 * started after a crash removes the worktrees of sessions that no longer exist. Git changes are serialised.
 */
export class Worktrees implements WorktreeService {
  private readonly map = new Map<string, WorktreeInfo>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: WorktreeDeps) {
    this.map = readRegistry(deps.file);
  }

  info(sessionId: string): WorktreeInfo | undefined {
    return this.map.get(sessionId);
  }

  create(sessionId: string, cwd: string, request: WorktreeRequest): Promise<WorktreeInfo> {
    return this.serial(() => this.make(sessionId, cwd, request));
  }

  fork(fromSessionId: string, sessionId: string): Promise<WorktreeInfo | undefined> {
    const src = this.map.get(fromSessionId);
    if (!src) return Promise.resolve(undefined);
    return this.serial(async () => {
      const state = await stateCommit(src.path, `agentd: state of session ${fromSessionId} when forked`);
      const head = await currentHead(src.path);
      const wt = await this.make(sessionId, src.path, { base: head.commit }, src.base);
      try {
        if (state.committed) await checkoutAsChanges(wt.path, state.commit);
        await copyIncluded(src.repository, src.path, wt.path);
      } catch (err) {
        await this.drop(sessionId);
        throw ApiError.badRequest(`Could not copy the source worktree's state: ${errorMessage(err)}`);
      }
      return wt;
    });
  }

  async ready(sessionId: string): Promise<void> {
    const wt = this.map.get(sessionId);
    if (!wt) return;
    try {
      await this.deps.runHook(sessionId, wt);
    } catch (err) {
      this.deps.log.warn({ err, sessionId }, "worktree hook failed");
    }
  }

  remove(sessionId: string): Promise<void> {
    if (!this.map.has(sessionId)) return Promise.resolve();
    return this.serial(() => this.drop(sessionId)).catch((err) =>
      this.deps.log.warn({ err, sessionId }, "could not remove a worktree"),
    );
  }

  async moveToNew(sessionId: string, request: WorktreeRequest): Promise<WorktreeInfo> {
    const rec = await this.deps.sessions().require(sessionId);
    this.assertIdle(sessionId);
    if (this.map.has(sessionId)) {
      throw ApiError.conflict("The session already works in a worktree: merge or discard it first", {
        code: "has_worktree",
      });
    }
    if (rec.isSandbox) throw ApiError.badRequest("A sandbox session cannot have a worktree");
    const wt = await this.serial(() => this.make(sessionId, rec.cwd, request));
    try {
      await this.deps.sessions().update(sessionId, { cwd: wt.path });
    } catch (err) {
      await this.remove(sessionId);
      throw err;
    }
    await this.ready(sessionId);
    return wt;
  }

  async merge(sessionId: string): Promise<WorktreeMergeOutcome> {
    const wt = await this.require(sessionId);
    return this.serial(() => {
      this.assertIdle(sessionId);
      return mergeWorktree(wt, sessionId);
    });
  }

  async discard(sessionId: string): Promise<{ cwd: string }> {
    const wt = await this.require(sessionId);
    this.assertIdle(sessionId);
    await this.serial(() => this.drop(sessionId));
    await this.deps.sessions().update(sessionId, { cwd: wt.repository });
    return { cwd: wt.repository };
  }

  async diff(sessionId: string): Promise<WorktreeDiff> {
    return diffWorktree(await this.require(sessionId));
  }

  /** Removes the worktrees of sessions that no longer exist (a crash between deleting a session and its worktree). */
  async cleanup(): Promise<number> {
    let removed = 0;
    const repos = new Set<string>();
    for (const [id, wt] of [...this.map]) {
      repos.add(wt.repository);
      if (await this.deps.store().getSession(id)) continue;
      await this.drop(id);
      removed++;
    }
    for (const repo of repos) if (existsSync(repo)) await tryGit(repo, ["worktree", "prune"]);
    return removed;
  }

  /* ---------- internals ---------- */

  private async make(
    sessionId: string,
    cwd: string,
    request: WorktreeRequest,
    inheritedBase?: string,
  ): Promise<WorktreeInfo> {
    const repo = await mainCheckout(cwd);
    checkRoot(repo, this.deps.root);
    const branch = request.branch ?? `agentd/${sessionId}`;
    await checkNewBranch(repo, branch);
    const start = request.base
      ? { name: request.base, commit: await resolveCommit(cwd, request.base) }
      : await currentHead(cwd);
    let path = worktreePath(this.deps.root, repo, sessionId);
    for (let n = 2; existsSync(path); n++) path = `${worktreePath(this.deps.root, repo, sessionId)}-${n}`;
    const wt: WorktreeInfo = { path, branch, base: inheritedBase ?? start.name, repository: repo };
    // Recorded first: a crash from here on leaves an entry the next start-up cleans up.
    this.map.set(sessionId, wt);
    this.save();
    try {
      await addWorktree(repo, path, branch, start.commit);
    } catch (err) {
      this.map.delete(sessionId);
      this.save();
      throw err;
    }
    try {
      await copyIncluded(repo, repo, path);
    } catch (err) {
      await this.drop(sessionId);
      throw ApiError.badRequest(`Could not copy the files of .agentd/worktree-include: ${errorMessage(err)}`);
    }
    // The worktree is the same project: it has the trust decision of its repository.
    const trust = this.deps.trust();
    if (trust?.isTrusted(repo) && !trust.isTrusted(path)) await trust.set(path, true);
    return wt;
  }

  private async drop(sessionId: string): Promise<void> {
    const wt = this.map.get(sessionId);
    if (!wt) return;
    await removeWorktree(wt.repository, wt.path, wt.branch);
    this.map.delete(sessionId);
    this.save();
  }

  private async require(sessionId: string): Promise<WorktreeInfo> {
    await this.deps.sessions().require(sessionId);
    const wt = this.map.get(sessionId);
    if (!wt) throw ApiError.conflict("The session has no worktree (/worktree new makes one)", { code: "no_worktree" });
    return wt;
  }

  private assertIdle(sessionId: string): void {
    if (this.deps.sessions().turnController.status(sessionId) === "running") {
      throw ApiError.conflict("A turn is running in this session; wait for it or abort it first", {
        code: "agent_running",
      });
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private save(): void {
    try {
      writePrivateFile(this.deps.file, JSON.stringify(Object.fromEntries(this.map), null, 1));
    } catch (err) {
      this.deps.log.warn({ err }, "could not write the worktree registry");
    }
  }
}

function readRegistry(file: string): Map<string, WorktreeInfo> {
  const map = new Map<string, WorktreeInfo>();
  if (!existsSync(file)) return map;
  try {
    const raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, Partial<WorktreeInfo>>;
    for (const [id, w] of Object.entries(raw)) {
      if (typeof w?.path === "string" && typeof w.branch === "string" && typeof w.repository === "string") {
        map.set(id, { path: w.path, branch: w.branch, base: String(w.base ?? ""), repository: w.repository });
      }
    }
  } catch {
    // an unreadable registry: nothing to clean up
  }
  return map;
}

export const registryFile = (dataDir: string) => join(dataDir, "worktrees.json");
