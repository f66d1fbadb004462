import { existsSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { isInside } from "../../core/index.js";

/** Read as absent (directories: empty; files: empty) inside the sandbox and refused by the file tools. */
export const DEFAULT_HIDDEN = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.config/gcloud",
  "~/.netrc",
  "~/.docker/config.json",
  "~/.npmrc",
  "~/.pypirc",
  "~/.git-credentials",
  "~/.config/gh",
  "~/.kube",
];

/** Build caches that ordinary work writes (npm, pip, cargo, go...); created when missing. */
export const DEFAULT_WRITABLE = ["~/.npm", "~/.cache"];

export function expandHome(p: string): string {
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return path.join(homedir(), p.slice(2));
  return path.resolve(p);
}

/** The realpath when the path exists, else the path itself (it may appear later). */
export function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

export function isHiddenPath(hidden: readonly string[], abs: string, cwd?: string): boolean {
  return hidden.some((h) => isInside(h, abs) && !(cwd && isInside(h, cwd) && isInside(cwd, abs)));
}

/** Creates a default cache directory (0700) so tools that expect it can write; errors leave it out. */
export function ensureDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The git directories a command in `cwd` writes to when they lie outside `cwd`: the repository's `.git` when `cwd`
 * is below the top level, and for a worktree its own git directory and the common one. Their `config` and `hooks`
 * stay read-only (see `protectedGitPaths`).
 */
export function gitDirsOf(cwd: string): string[] {
  let dir = cwd;
  for (let i = 0; i < 64; i++) {
    const dotGit = path.join(dir, ".git");
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return [real(dotGit)];
    if (st?.isFile()) return worktreeGitDirs(dotGit);
    const parent = path.dirname(dir);
    if (parent === dir) return [];
    dir = parent;
  }
  return [];
}

function worktreeGitDirs(dotGitFile: string): string[] {
  try {
    const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGitFile, "utf8"));
    if (!m) return [];
    const gitDir = real(path.resolve(path.dirname(dotGitFile), m[1].trim()));
    const out = [gitDir];
    const commonFile = path.join(gitDir, "commondir");
    if (existsSync(commonFile)) out.push(real(path.resolve(gitDir, readFileSync(commonFile, "utf8").trim())));
    return out;
  } catch {
    return [];
  }
}

/** Inside a git directory, what would run code outside the sandbox later (hooks, config's hooksPath, fsmonitor). */
export function protectedGitPaths(gitDir: string): string[] {
  return ["config", "hooks"].map((n) => path.join(gitDir, n)).filter((p) => existsSync(p));
}
