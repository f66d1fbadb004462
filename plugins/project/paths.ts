import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { ApiError } from "../../core/index.js";

/** The realpath of an existing absolute directory, or a 400 that says what is wrong. */
export function requireDirectory(cwd: string): string {
  if (!isAbsolute(cwd)) throw ApiError.badRequest(`cwd must be an absolute path: ${cwd}`);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(cwd);
  } catch {
    throw ApiError.badRequest(`cwd does not exist: ${cwd}`);
  }
  if (!st.isDirectory()) throw ApiError.badRequest(`cwd is not a directory: ${cwd}`);
  return realpathSync(cwd);
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/**
 * The git top level of `cwd` (the nearest ancestor holding `.git`, a directory or a worktree/submodule file),
 * else `cwd` itself. Walking the tree finds what `git rev-parse --show-toplevel` finds without spawning git on
 * every model call.
 */
export function findProjectRoot(cwd: string): string {
  const start = realOrResolved(cwd);
  let cur = start;
  for (;;) {
    if (existsSync(join(cur, ".git"))) return cur;
    const parent = dirname(cur);
    if (parent === cur) return start;
    cur = parent;
  }
}

/** True when `file` (after resolving symlinks) lies inside `root`: project files cannot point out of the project. */
export function isConfined(file: string, root: string): boolean {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return false;
  }
  const base = realOrResolved(root);
  return real === base || real.startsWith(base.endsWith(sep) ? base : base + sep);
}
