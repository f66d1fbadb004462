import { type GitOptions, git, gitComplaint, repoRoot, splitZ } from "./git.js";

export interface GitInfo {
  isGit: boolean;
  cwd: string;
  root?: string;
  hasCommits?: boolean;
  /** The current branch; null when HEAD is detached. */
  branch?: string | null;
  detached?: boolean;
  /** HEAD's commit id; null before the first commit. */
  head?: string | null;
  upstream?: string | null;
  /** Commits ahead of / behind the upstream; null without an upstream. */
  ahead?: number | null;
  behind?: number | null;
  dirty?: { staged: number; unstaged: number; untracked: number; conflicted: number };
  clean?: boolean;
  remotes?: Array<{ name: string; url: string }>;
  lastCommit?: { sha: string; subject: string; author: string; date: string } | null;
  /** Why `dirty`/`clean` are missing (git status failed or took too long). */
  statusError?: string;
}

interface StatusV2 {
  oid?: string;
  head?: string;
  upstream?: string;
  ahead?: number;
  behind?: number;
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
}

/** `git status --porcelain=v2 --branch -z`. A renamed entry ("2 ...") is followed by its original path. */
export function parseStatusV2(out: string): StatusV2 {
  const s: StatusV2 = { staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  const t = splitZ(out);
  for (let i = 0; i < t.length; i++) {
    const rec = t[i] as string;
    if (rec.startsWith("# ")) {
      const [, key, ...rest] = rec.split(" ");
      const value = rest.join(" ");
      if (key === "branch.oid") s.oid = value;
      else if (key === "branch.head") s.head = value;
      else if (key === "branch.upstream") s.upstream = value;
      else if (key === "branch.ab") {
        const m = /^\+(\d+) -(\d+)$/.exec(value);
        if (m) {
          s.ahead = Number(m[1]);
          s.behind = Number(m[2]);
        }
      }
      continue;
    }
    const kind = rec[0];
    if (kind === "?") s.untracked++;
    else if (kind === "u") s.conflicted++;
    else if (kind === "1" || kind === "2") {
      const xy = rec.slice(2, 4);
      if (xy[0] !== ".") s.staged++;
      if (xy[1] !== ".") s.unstaged++;
      if (kind === "2") i++;
    }
  }
  return s;
}

/** A remote URL without credentials (`https://user:token@host/x` → `https://host/x`). */
export function redactUrl(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    if (u.protocol === "ssh:") {
      u.password = "";
      return u.toString();
    }
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

export function parseRemotes(out: string): Array<{ name: string; url: string }> {
  const seen = new Map<string, string>();
  for (const line of out.split("\n")) {
    const m = /^(\S+)\t(.*) \((fetch|push)\)$/.exec(line);
    if (m?.[1] && m[2] !== undefined && !seen.has(m[1])) seen.set(m[1], redactUrl(m[2]));
  }
  return [...seen].map(([name, url]) => ({ name, url }));
}

export async function gitInfo(cwd: string, opts: GitOptions = {}): Promise<GitInfo> {
  const o = { timeoutMs: 5000, ...opts };
  const root = await repoRoot(cwd, o);
  if (!root) return { isGit: false, cwd };
  const [status, remotes, log] = await Promise.all([
    git(
      cwd,
      ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", "--ignore-submodules=dirty"],
      o,
    ),
    git(cwd, ["remote", "-v"], o),
    git(cwd, ["log", "-1", "--format=%H%x00%s%x00%an%x00%aI", "--no-show-signature"], o),
  ]);
  const statusOk = status.code === 0 && !status.truncated;
  const s = parseStatusV2(statusOk ? status.stdout : "");
  const hasCommits = s.oid !== undefined ? s.oid !== "(initial)" : log.code === 0;
  const branch = s.head ?? (await currentBranch(cwd, o));
  const detached = statusOk ? s.head === "(detached)" : hasCommits && branch === undefined;
  const [sha = "", subject = "", author = "", date = ""] = log.code === 0 ? log.stdout.trim().split("\0") : [];
  const info: GitInfo = {
    isGit: true,
    cwd,
    root,
    hasCommits,
    branch: detached || !branch ? null : branch,
    detached,
    head: hasCommits ? (s.oid ?? (sha || null)) : null,
    upstream: s.upstream ?? null,
    ahead: s.upstream ? (s.ahead ?? 0) : null,
    behind: s.upstream ? (s.behind ?? 0) : null,
    remotes: remotes.code === 0 ? parseRemotes(remotes.stdout) : [],
    lastCommit: sha ? { sha, subject, author, date } : null,
  };
  if (statusOk) {
    info.dirty = { staged: s.staged, unstaged: s.unstaged, untracked: s.untracked, conflicted: s.conflicted };
    info.clean = s.staged + s.unstaged + s.untracked + s.conflicted === 0;
  } else {
    info.statusError = status.truncated ? "git status output too large" : gitComplaint(status);
  }
  return info;
}

/** The branch name when status could not tell (it failed or timed out). */
async function currentBranch(cwd: string, opts: GitOptions): Promise<string | undefined> {
  const r = await git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"], opts);
  return r.code === 0 ? r.stdout.trim() || undefined : undefined;
}
