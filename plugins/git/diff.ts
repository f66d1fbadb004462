import { lstat, readFile, readlink } from "node:fs/promises";
import path from "node:path";
import { ApiError } from "../../core/index.js";
import { emptyTree, type GitResult, git, gitComplaint, headCommit, repoRoot, splitZ } from "./git.js";
import { addedFileHunk, type Hunk, type LineBudget, type ParsedChunk, parseChunk, splitPatch } from "./patch.js";

export type FileStatus = "added" | "modified" | "deleted" | "renamed" | "copied" | "untracked";

export interface DiffFile {
  /** Relative to the session directory, "/"-separated. */
  path: string;
  /** The previous path of a renamed or copied file. */
  oldPath?: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Hunks were cut (line budget, output cap) or left out (large or numerous untracked files). */
  truncated: boolean;
  hunks: Hunk[];
}

export interface DiffGroups {
  untracked: string[];
  added: string[];
  modified: string[];
  deleted: string[];
  renamed: string[];
}

export interface WorkingTreeDiff {
  files: DiffFile[];
  groups: DiffGroups;
  truncated: boolean;
  /** The session directory is not inside a git work tree (or git is not installed). */
  noRepo?: true;
  /** Why noRepo, when git itself is missing. */
  reason?: string;
  /** Changed files left out of `files` and `groups` past the file cap (`truncated` is set too). */
  omittedFiles?: number;
  /** The repository's top level. */
  root?: string;
  /** false in a repository without commits (everything is compared with the empty tree). */
  hasCommits?: boolean;
}

export interface DiffLimits {
  /** Patch output bytes read from git at most. */
  maxBytes: number;
  /** Hunk lines returned at most, over all files. */
  maxLines: number;
  maxLineChars: number;
  /** Files listed at most (tracked changes first, then untracked files). */
  maxFiles: number;
  /** Untracked files whose content is shown at most (the rest are listed without hunks). */
  maxUntrackedFiles: number;
  /** Untracked files larger than this are listed without hunks. */
  maxUntrackedFileBytes: number;
  timeoutMs: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxBytes: 8 * 1024 * 1024,
  maxLines: 20_000,
  maxLineChars: 4000,
  maxFiles: 5000,
  maxUntrackedFiles: 200,
  maxUntrackedFileBytes: 512 * 1024,
  timeoutMs: 15_000,
};

/** The daemon's own per-project files are not the user's changes. */
const PATHSPEC = ["--", ".", ":(exclude).agentd"];

const emptyGroups = (): DiffGroups => ({ untracked: [], added: [], modified: [], deleted: [], renamed: [] });

interface Change {
  status: FileStatus;
  path: string;
  oldPath?: string;
}

/** `git diff --name-status -z`: `M\0path\0`, `R100\0old\0new\0`, `C75\0old\0new\0`. */
export function parseNameStatus(out: string): Change[] {
  const t = splitZ(out);
  const changes: Change[] = [];
  for (let i = 0; i < t.length; ) {
    const code = (t[i++] as string)[0];
    if (code === "R" || code === "C") {
      const oldPath = t[i++] as string;
      changes.push({ status: code === "R" ? "renamed" : "copied", oldPath, path: t[i++] as string });
    } else {
      const status: FileStatus = code === "A" ? "added" : code === "D" ? "deleted" : "modified";
      changes.push({ status, path: t[i++] as string });
    }
  }
  return changes;
}

/** `git diff --numstat -z`: `add\tdel\tpath\0`, renames `add\tdel\t\0old\0new\0`; binary files count `-`. */
export function parseNumstat(out: string): Array<{ additions: number; deletions: number; binary: boolean }> {
  const t = splitZ(out);
  const rows: Array<{ additions: number; deletions: number; binary: boolean }> = [];
  for (let i = 0; i < t.length; ) {
    const [add = "", del = "", p = ""] = (t[i++] as string).split("\t");
    if (p === "") i += 2;
    const binary = add === "-" || del === "-";
    rows.push({ additions: binary ? 0 : Number(add) || 0, deletions: binary ? 0 : Number(del) || 0, binary });
  }
  return rows;
}

function check(r: GitResult, what: string): void {
  if (r.code !== 0 && !r.truncated) throw new ApiError(503, `git ${what} failed: ${gitComplaint(r)}`);
}

/**
 * The working tree (staged and unstaged changes, untracked files) against HEAD, or against the empty tree in a
 * repository without commits. Paths are relative to `cwd` and limited to it (a session in a subdirectory of a
 * repository sees its own subtree). Renames are detected (`-M`), so `git mv` shows as one renamed file.
 */
export async function workingTreeDiff(cwd: string, limits: DiffLimits, signal?: AbortSignal): Promise<WorkingTreeDiff> {
  const opts = { timeoutMs: limits.timeoutMs, signal };
  const root = await repoRoot(cwd, opts);
  if (!root) {
    const probe = await git(cwd, ["--version"], { timeoutMs: 5000 });
    const out: WorkingTreeDiff = { files: [], groups: emptyGroups(), truncated: false, noRepo: true };
    if (probe.missing) out.reason = "git is not installed";
    return out;
  }
  const head = await headCommit(cwd, opts);
  const base = head ?? (await emptyTree(cwd, opts));
  const common = ["diff", base, "-M", "--no-ext-diff", "--no-textconv", "--relative", "--ignore-submodules=dirty"];
  const [names, nums, patch, others] = await Promise.all([
    git(cwd, [...common, "--name-status", "-z", ...PATHSPEC], opts),
    git(cwd, [...common, "--numstat", "-z", ...PATHSPEC], opts),
    git(cwd, [...common, "-p", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "-U3", ...PATHSPEC], {
      ...opts,
      maxBytes: limits.maxBytes,
    }),
    git(cwd, ["ls-files", "--others", "--exclude-standard", "-z", ...PATHSPEC], opts),
  ]);
  check(names, "diff");
  check(nums, "diff --numstat");
  check(patch, "diff -p");
  check(others, "ls-files");

  const budget: LineBudget = { remaining: limits.maxLines, maxLineChars: limits.maxLineChars };
  const changes = parseNameStatus(names.stdout);
  const stats = parseNumstat(nums.stdout);
  const chunks = splitPatch(patch.stdout);
  const files = trackedFiles(changes.slice(0, limits.maxFiles), stats, chunks, patch.truncated, budget);
  const untracked = splitZ(others.stdout);
  const room = Math.max(0, limits.maxFiles - files.length);
  files.push(...(await untrackedFiles(cwd, untracked.slice(0, room), limits, budget)));
  const omitted = Math.max(0, changes.length - limits.maxFiles) + Math.max(0, untracked.length - room);

  const groups = emptyGroups();
  for (const f of files) {
    const g = f.status === "copied" ? "added" : f.status;
    groups[g].push(f.path);
  }
  const out: WorkingTreeDiff = {
    files,
    groups,
    truncated: patch.truncated || omitted > 0 || files.some((f) => f.truncated),
    root,
    hasCommits: head !== undefined,
  };
  if (omitted > 0) out.omittedFiles = omitted;
  return out;
}

function trackedFiles(
  changes: Change[],
  stats: ReturnType<typeof parseNumstat>,
  chunks: string[][],
  outputCut: boolean,
  budget: LineBudget,
): DiffFile[] {
  const byHeader = new Map<string, number>();
  for (const [i, c] of chunks.entries()) byHeader.set(c[0] as string, i);
  return changes.map((c, i) => {
    // The three outputs come from one diff queue, so they line up; the header check guards against a change
    // on disk between the calls. git quotes a header only for names with control characters, quotes or "\".
    const expected = `diff --git a/${c.oldPath ?? c.path} b/${c.path}`;
    let at = byHeader.get(expected);
    if (at === undefined && chunks[i]?.[0]?.startsWith('diff --git "')) at = i;
    const lines = at === undefined ? undefined : chunks[at];
    const cut = outputCut && at === chunks.length - 1;
    const parsed: ParsedChunk | undefined = lines ? parseChunk(lines, budget, cut) : undefined;
    const st = stats[i] ?? { additions: 0, deletions: 0, binary: false };
    const file: DiffFile = {
      path: c.path,
      status: c.status,
      additions: st.additions,
      deletions: st.deletions,
      binary: st.binary || (parsed?.binary ?? false),
      truncated: parsed ? parsed.truncated : !st.binary && st.additions + st.deletions > 0,
      hunks: parsed?.hunks ?? [],
    };
    if (c.oldPath !== undefined) file.oldPath = c.oldPath;
    return file;
  });
}

async function untrackedFiles(
  cwd: string,
  paths: string[],
  limits: DiffLimits,
  budget: LineBudget,
): Promise<DiffFile[]> {
  const files: DiffFile[] = [];
  for (const [i, p] of paths.entries()) {
    const file: DiffFile = {
      path: p,
      status: "untracked",
      additions: 0,
      deletions: 0,
      binary: false,
      truncated: false,
      hunks: [],
    };
    files.push(file);
    if (p.endsWith("/")) continue; // a nested repository: listed, not diffed
    if (i >= limits.maxUntrackedFiles) {
      file.truncated = true;
      continue;
    }
    const content = await readUntracked(path.join(cwd, p), limits.maxUntrackedFileBytes);
    if (content === "too-large") {
      file.truncated = true;
      continue;
    }
    if (content === undefined) continue;
    if (content.includes(0)) {
      file.binary = true;
      continue;
    }
    const { hunk, lines, truncated } = addedFileHunk(content.toString("utf8"), budget);
    file.additions = lines;
    file.truncated = truncated;
    if (hunk) file.hunks.push(hunk);
  }
  return files;
}

/** A file's bytes, or a symbolic link's target (what git would record); undefined when it vanished. */
async function readUntracked(abs: string, maxBytes: number): Promise<Buffer | "too-large" | undefined> {
  const st = await lstat(abs).catch(() => undefined);
  if (!st) return undefined;
  if (st.isSymbolicLink()) return Buffer.from(await readlink(abs).catch(() => ""), "utf8");
  if (!st.isFile()) return undefined;
  if (st.size > maxBytes) return "too-large";
  return readFile(abs).catch(() => undefined);
}
