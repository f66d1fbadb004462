import { createToken } from "./tokens.js";

/** A session's own git worktree (`POST /sessions {worktree}`, `/worktree new`, a fork of a worktree session). */
export interface WorktreeInfo {
  /** The worktree's directory: the session's working directory while it lives. */
  path: string;
  /** The branch checked out in it (default `agentd/<session id>`). */
  branch: string;
  /** What it was branched from, and where `/worktree merge` merges it: a branch name, or a commit when detached. */
  base: string;
  /** The main checkout of the repository. */
  repository: string;
}

export interface WorktreeRequest {
  /** New branch name (default `agentd/<session id>`); 400 when git refuses it or it exists. */
  branch?: string;
  /** Branch or commit to start from (default: the current HEAD of `cwd`). */
  base?: string;
}

/**
 * What the session layer asks of the worktree plugin when it creates and forks sessions. Every method either
 * succeeds or leaves the repository as it was (and then throws an ApiError).
 */
export interface SessionWorktrees {
  /** Creates a worktree of the repository containing `cwd` for session `sessionId` (not stored yet). */
  create(sessionId: string, cwd: string, request: WorktreeRequest): Promise<WorktreeInfo>;
  /** A worktree for the fork `sessionId` of `fromSessionId`, from its current state; undefined when it has none. */
  fork(fromSessionId: string, sessionId: string): Promise<WorktreeInfo | undefined>;
  /** The session is stored: runs the project's `worktree` hook (trust-gated). Never rejects. */
  ready(sessionId: string): Promise<void>;
  /** Removes the worktree and branch of a session that could not be stored. Never rejects. */
  remove(sessionId: string): Promise<void>;
  /** The session's worktree, if it has one. */
  info(sessionId: string): WorktreeInfo | undefined;
}

export interface WorktreeMergeOutcome {
  /** false: the base branch already had everything. */
  merged: boolean;
  fastForward: boolean;
  /** The base branch's new commit. */
  commit: string;
  /** Whether uncommitted work in the worktree was committed first. */
  committed: boolean;
  /** Paths the merge changed on the base branch. */
  files: string[];
}

export interface WorktreeDiff {
  worktree: WorktreeInfo;
  /** Changes against the base (committed and uncommitted, new files included): status A, M or D per path. */
  files: Array<{ path: string; status: string }>;
  patch: string;
  truncated: boolean;
}

/** The worktree plugin's service: the session hooks plus `/worktree new|merge|discard` and the diff. */
export interface WorktreeService extends SessionWorktrees {
  /** Moves an idle session without a worktree into a new one (409 while running or when it has one). */
  moveToNew(sessionId: string, request: WorktreeRequest): Promise<WorktreeInfo>;
  /** Commits the worktree's uncommitted work and merges its branch into the base branch (409 on conflict). */
  merge(sessionId: string): Promise<WorktreeMergeOutcome>;
  /** Removes the worktree and its branch; the session goes back to the main checkout. */
  discard(sessionId: string): Promise<{ cwd: string }>;
  diff(sessionId: string): Promise<WorktreeDiff>;
}

export const WorktreeServiceToken = createToken<WorktreeService>("worktrees");
