import { execFile, spawn } from "node:child_process";

const MAX_BUFFER = 64 * 1024 * 1024;

/** The environment for git without the caller's GIT_* variables (they would redirect it to another repository). */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "agentd",
    GIT_AUTHOR_EMAIL: "agentd@localhost",
    GIT_COMMITTER_NAME: "agentd",
    GIT_COMMITTER_EMAIL: "agentd@localhost",
  };
}

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: "missing" | "timeout" | "failed",
  ) {
    super(message);
    this.name = "GitError";
  }
}

/** Runs git with an argument array (never a shell); resolves with stdout. */
export function git(args: string[], opts: { cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args,
      { cwd: opts.cwd, env: gitEnv(), timeout: opts.timeoutMs ?? 30_000, maxBuffer: MAX_BUFFER, encoding: "utf8" },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string };
        if (e.code === "ENOENT") return reject(new GitError("git is not installed", "missing"));
        if (e.killed || e.signal === "SIGTERM")
          return reject(new GitError(`git ${args[0] ?? ""} timed out`, "timeout"));
        const why = (stderr || e.message).trim().split("\n").slice(-3).join(" ");
        reject(new GitError(`git ${args.find((a) => !a.startsWith("-")) ?? ""} failed: ${why}`, "failed"));
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/**
 * Runs a git command printing NUL-separated paths and stops it once more than `limit` arrived, so counting a huge
 * directory (a home directory as working directory) costs only what the limit allows.
 */
export function gitPaths(
  args: string[],
  opts: { cwd: string; timeoutMs: number; limit: number },
): Promise<{ paths: string[]; overLimit: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd: opts.cwd, env: gitEnv(), stdio: ["ignore", "pipe", "pipe"] });
    const paths: string[] = [];
    let rest = "";
    let stderr = "";
    let overLimit = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, opts.timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (overLimit) return;
      const parts = (rest + chunk).split("\0");
      rest = parts.pop() ?? "";
      for (const p of parts) if (p) paths.push(p);
      if (paths.length > opts.limit) {
        overLimit = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(err.code === "ENOENT" ? new GitError("git is not installed", "missing") : err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (overLimit) return resolve({ paths, overLimit });
      if (timedOut) return reject(new GitError(`git ${args[0] ?? ""} timed out`, "timeout"));
      if (code !== 0)
        return reject(new GitError(`git ls-files failed: ${stderr.trim().split("\n").slice(-3).join(" ")}`, "failed"));
      if (rest) paths.push(rest);
      resolve({ paths, overLimit: false });
    });
  });
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
