import { AGENTD_GIT_IDENTITY, type GitResult, gitComplaint, git as runGit } from "../../core/index.js";

const MAX_BYTES = 64 * 1024 * 1024;

/** Commits in the shadow repository are agentd's, whatever the user's git identity. */
const AUTHOR_ENV = AGENTD_GIT_IDENTITY;

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: "missing" | "timeout" | "failed",
  ) {
    super(message);
    this.name = "GitError";
  }
}

function failure(args: string[], r: GitResult): GitError {
  if (r.missing) return new GitError("git is not installed", "missing");
  if (r.timedOut) return new GitError(`git ${args[0] ?? ""} timed out`, "timeout");
  if (r.truncated) return new GitError(`git ${args[0] ?? ""} printed more than ${MAX_BYTES} bytes`, "failed");
  return new GitError(`git ${args.find((a) => !a.startsWith("-")) ?? ""} failed: ${gitComplaint(r)}`, "failed");
}

/** Runs git (core's runner: argument arrays, bounded, deadline) and resolves with stdout; rejects with a GitError. */
export async function git(
  args: string[],
  opts: { cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<string> {
  const r = await runGit(opts.cwd ?? process.cwd(), args, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    maxBytes: MAX_BYTES,
    env: AUTHOR_ENV,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
  if (r.code !== 0 || r.truncated) throw failure(args, r);
  return r.stdout;
}

/**
 * Runs a git command printing NUL-separated paths and stops it once more than `limit` arrived, so counting a huge
 * directory (a home directory as working directory) costs only what the limit allows.
 */
export async function gitPaths(
  args: string[],
  opts: { cwd: string; timeoutMs: number; limit: number },
): Promise<{ paths: string[]; overLimit: boolean }> {
  let count = 0;
  const r = await runGit(opts.cwd, args, {
    timeoutMs: opts.timeoutMs,
    maxBytes: MAX_BYTES,
    env: AUTHOR_ENV,
    onStdout: (chunk) => {
      for (const byte of chunk) if (byte === 0) count++;
      return count > opts.limit;
    },
  });
  if (r.stopped) return { paths: nulList(r.stdout).slice(0, opts.limit + 1), overLimit: true };
  if (r.code !== 0 || r.truncated) throw failure(args, r);
  return { paths: nulList(r.stdout), overLimit: false };
}

/** Splits NUL-separated git output. */
export function nulList(out: string): string[] {
  return out.split("\0").filter((s) => s.length > 0);
}

export interface RepoInfo {
  cwd: string;
  isGit: boolean;
  branch?: string;
  dirty?: boolean;
  root?: string;
}

/** Git state of a directory for /repo (never throws). */
export async function repoInfo(cwd: string): Promise<RepoInfo> {
  try {
    const root = (await git(["rev-parse", "--show-toplevel"], { cwd, timeoutMs: 5000 })).trim();
    const branch = (
      await git(["rev-parse", "--abbrev-ref", "HEAD"], { cwd, timeoutMs: 5000 }).catch(() => "HEAD")
    ).trim();
    const status = await git(["status", "--porcelain", "-z", "--untracked-files=normal"], {
      cwd,
      timeoutMs: 10_000,
    }).catch(() => "");
    return { cwd, isGit: true, root, branch, dirty: status.length > 0 };
  } catch {
    return { cwd, isGit: false };
  }
}

export interface Worktree {
  path: string;
  branch: string | null;
  head: string | null;
}

/** `git worktree list` of the repository containing `cwd` ([] outside git). */
export async function listWorktrees(cwd: string): Promise<Worktree[]> {
  let out: string;
  try {
    out = await git(["worktree", "list", "--porcelain", "-z"], { cwd, timeoutMs: 5000 });
  } catch {
    return [];
  }
  const trees: Worktree[] = [];
  let cur: Worktree | undefined;
  for (const line of nulList(out)) {
    if (line.startsWith("worktree ")) {
      cur = { path: line.slice(9), branch: null, head: null };
      trees.push(cur);
    } else if (cur && line.startsWith("HEAD ")) cur.head = line.slice(5);
    else if (cur && line.startsWith("branch ")) cur.branch = line.slice(7).replace(/^refs\/heads\//, "");
  }
  return trees;
}
