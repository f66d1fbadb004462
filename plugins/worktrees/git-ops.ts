import { copyFile, lstat, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import {
  AGENTD_GIT_IDENTITY,
  ApiError,
  type GitResult,
  gitComplaint,
  git as runGit,
  splitZ,
} from "../../core/index.js";

/** A repository's own hooks (post-checkout, pre-commit, post-merge) are its code: never run by agentd's git calls. */
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];
const MAX_BYTES = 64 * 1024 * 1024;
/** Untracked files copied in from `.agentd/worktree-include`, at most. */
const MAX_INCLUDED = 10_000;

export interface RunOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** git in `cwd` without repository hooks; the raw result (look at `code`). */
export function tryGit(cwd: string, args: string[], opts: RunOptions = {}): Promise<GitResult> {
  return runGit(cwd, [...NO_HOOKS, ...args], {
    timeoutMs: opts.timeoutMs ?? 60_000,
    maxBytes: MAX_BYTES,
    env: opts.env,
  });
}

export class GitFailure extends Error {}

/** git in `cwd`; resolves with stdout, rejects with a GitFailure naming the command and git's complaint. */
export async function git(cwd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const r = await tryGit(cwd, args, opts);
  if (r.code !== 0 || r.truncated) throw new GitFailure(`git ${args[0]} failed: ${gitComplaint(r)}`);
  return r.stdout;
}

/** The user's identity when git has one, else agentd's (commits in a repository with no identity configured). */
export async function identity(cwd: string): Promise<Record<string, string>> {
  const r = await tryGit(cwd, ["var", "GIT_COMMITTER_IDENT"]);
  return r.code === 0 ? {} : { ...AGENTD_GIT_IDENTITY };
}

/** The main checkout of the repository containing `cwd`; 400 outside git (or in a bare repository). */
export async function mainCheckout(cwd: string): Promise<string> {
  const r = await tryGit(cwd, ["worktree", "list", "--porcelain", "-z"]);
  if (r.missing) throw ApiError.badRequest("git is not installed");
  if (r.code !== 0) throw ApiError.badRequest(`Not inside a git repository: ${cwd}`);
  const first = splitZ(r.stdout);
  const path = first[0]?.startsWith("worktree ") ? first[0].slice(9) : undefined;
  if (!path || first.includes("bare")) throw ApiError.badRequest(`Not inside a git work tree: ${cwd}`);
  return path;
}

/** Where each branch is checked out (`refs/heads/x` → worktree path). */
export async function checkedOut(repo: string): Promise<Map<string, string>> {
  const out = await git(repo, ["worktree", "list", "--porcelain", "-z"]);
  const map = new Map<string, string>();
  let path = "";
  for (const line of splitZ(out)) {
    if (line.startsWith("worktree ")) path = line.slice(9);
    else if (line.startsWith("branch ")) map.set(line.slice(7), path);
  }
  return map;
}

export async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await tryGit(repo, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`])).code === 0;
}

/** 400 unless `branch` is a new branch name git accepts. */
export async function checkNewBranch(repo: string, branch: string): Promise<void> {
  const valid = !branch.startsWith("-") && (await tryGit(repo, ["check-ref-format", "--branch", branch])).code === 0;
  if (!valid) throw ApiError.badRequest(`git refuses the branch name: ${branch}`);
  if (await branchExists(repo, branch)) throw ApiError.badRequest(`The branch already exists: ${branch}`);
}

/** The commit a name stands for; 400 when it names none. */
export async function resolveCommit(cwd: string, rev: string): Promise<string> {
  if (rev.startsWith("-")) throw ApiError.badRequest(`Not a branch or commit of the repository: ${rev}`);
  const r = await tryGit(cwd, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`]);
  if (r.code !== 0) throw ApiError.badRequest(`Not a branch or commit of the repository: ${rev}`);
  return r.stdout.trim();
}

/** The current HEAD of `cwd`: its branch name (or the commit when detached) and commit; 400 without commits. */
export async function currentHead(cwd: string): Promise<{ name: string; commit: string }> {
  const commit = await tryGit(cwd, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (commit.code !== 0) throw ApiError.badRequest("The repository has no commits yet: commit once first");
  const branch = await tryGit(cwd, ["symbolic-ref", "--short", "-q", "HEAD"]);
  const sha = commit.stdout.trim();
  return { name: branch.code === 0 ? branch.stdout.trim() : sha, commit: sha };
}

/** 400 when `root` lies inside the repository's tree (worktrees never live there). */
export function checkRoot(repo: string, root: string): void {
  const rel = relative(repo, root);
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) {
    throw ApiError.badRequest(`The worktree root ${root} is inside the repository ${repo}; configure another one`);
  }
}

/** `<root>/<repo name>-<id>`. */
export function worktreePath(root: string, repo: string, id: string): string {
  const name = basename(repo).replace(/[^A-Za-z0-9._-]/g, "_") || "repo";
  return join(root, `${name}-${id}`);
}

/** Adds the worktree on a new branch at `commit`; on failure removes whatever was made and throws (400). */
export async function addWorktree(repo: string, path: string, branch: string, commit: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const r = await tryGit(repo, ["worktree", "add", "--quiet", "-b", branch, path, commit]);
  if (r.code === 0) return;
  await removeWorktree(repo, path, branch);
  throw ApiError.badRequest(`Could not create the worktree: ${gitComplaint(r)}`);
}

/** Removes a worktree and its branch, whatever is left of them; never rejects. */
export async function removeWorktree(repo: string, path: string, branch: string): Promise<void> {
  await tryGit(repo, ["worktree", "remove", "--force", "--force", path]);
  await rm(path, { recursive: true, force: true }).catch(() => undefined);
  await tryGit(repo, ["worktree", "prune"]);
  if (await branchExists(repo, branch)) await tryGit(repo, ["branch", "-D", "--", branch]);
}

/**
 * A commit of everything in the work tree (uncommitted and new files, .gitignore honoured) on top of HEAD, made
 * through a temporary index so neither the index nor any ref changes; HEAD itself when nothing is uncommitted.
 */
export async function stateCommit(cwd: string, message: string): Promise<{ commit: string; committed: boolean }> {
  const head = (await git(cwd, ["rev-parse", "HEAD"])).trim();
  const index = join(tmpdir(), `agentd-index-${process.pid}-${Date.now().toString(36)}-${Math.random()}`);
  const env = { GIT_INDEX_FILE: index, ...(await identity(cwd)) };
  try {
    await git(cwd, ["read-tree", "HEAD"], { env });
    await git(cwd, ["add", "-A"], { env });
    const tree = (await git(cwd, ["write-tree"], { env })).trim();
    if (tree === (await git(cwd, ["rev-parse", "HEAD^{tree}"])).trim()) return { commit: head, committed: false };
    const commit = (await git(cwd, ["commit-tree", "--no-gpg-sign", "-p", head, "-m", message, tree], { env })).trim();
    return { commit, committed: true };
  } finally {
    await rm(index, { force: true });
  }
}

/** Makes `commit`'s tree the worktree's content as uncommitted changes over HEAD (a fork's starting state). */
export async function checkoutAsChanges(cwd: string, commit: string): Promise<void> {
  await git(cwd, ["read-tree", "-m", "-u", "HEAD", commit]);
  await git(cwd, ["reset", "--quiet"]);
}

/**
 * Copies the untracked files named by `.agentd/worktree-include` (gitignore patterns, e.g. `.env`) of `from`'s
 * repository into the same places under `to`. Regular files only; returns the paths copied.
 */
export async function copyIncluded(repo: string, from: string, to: string): Promise<string[]> {
  const list = join(repo, ".agentd", "worktree-include");
  if (!(await lstat(list).catch(() => undefined))?.isFile()) return [];
  const r = await tryGit(from, ["ls-files", "-z", "--others", "--ignored", "--full-name", `--exclude-from=${list}`]);
  if (r.code !== 0) return [];
  const copied: string[] = [];
  for (const rel of splitZ(r.stdout).slice(0, MAX_INCLUDED)) {
    const src = join(from, rel);
    if (!(await lstat(src).catch(() => undefined))?.isFile()) continue;
    const dest = join(to, rel);
    await mkdir(dirname(dest), { recursive: true });
    await copyFile(src, dest);
    copied.push(rel);
  }
  return copied;
}
