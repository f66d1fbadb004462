import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { git as runGit, withDirInside } from "../../core/index.js";

export interface FileListing {
  /** Paths relative to the listed root, "/"-separated, files only (symbolic links included, never followed). */
  files: string[];
  /** The walk stopped at the file cap. */
  truncated: boolean;
  source: "git" | "walk";
}

const GIT_MAX_BYTES = 256 * 1024 * 1024;
const GIT_TIMEOUT_MS = 120_000;

/** core's git runner; a failure to run (no git, too much output) is "not usable" (-1), an abort rejects. */
async function git(args: string[], cwd: string, signal: AbortSignal): Promise<{ code: number; stdout: string }> {
  const r = await runGit(cwd, args, { signal, maxBytes: GIT_MAX_BYTES, timeoutMs: GIT_TIMEOUT_MS });
  if (signal.aborted) throw signal.reason;
  return r.truncated || r.timedOut ? { code: -1, stdout: "" } : { code: r.code, stdout: r.stdout };
}

/**
 * Inside a git work tree the index plus untracked-but-not-ignored files are exactly "the project" (git applies
 * every .gitignore, .git/info/exclude and the global excludes). Elsewhere, or when `root` itself is ignored (the
 * model asked for node_modules/x on purpose), a walk applies the .gitignore files found below `root`.
 */
export async function listFiles(root: string, signal: AbortSignal, maxFiles: number): Promise<FileListing> {
  const inside = await git(["rev-parse", "--is-inside-work-tree"], root, signal);
  if (inside.code === 0 && inside.stdout.trim() === "true") {
    const ls = await git(["ls-files", "--cached", "--others", "--exclude-standard", "-z"], root, signal);
    if (ls.code === 0) {
      const files = [...new Set(ls.stdout.split("\0").filter((f) => f !== ""))];
      const ignoredRoot = files.length === 0 && (await git(["check-ignore", "-q", "--", "."], root, signal)).code === 0;
      if (!ignoredRoot) {
        const truncated = files.length > maxFiles;
        return { files: truncated ? files.slice(0, maxFiles) : files, truncated, source: "git" };
      }
    }
  }
  return walk(root, signal, maxFiles);
}

interface Rules {
  /** Directory of the .gitignore, relative to the walk root ("" for the root). */
  base: string;
  ig: Ignore;
}

function isIgnored(stack: Rules[], rel: string, isDir: boolean): boolean {
  // The deepest .gitignore that has an opinion wins, as in git (a nested "!keep.log" re-includes).
  for (let i = stack.length - 1; i >= 0; i--) {
    const rules = stack[i];
    if (!rules) continue;
    const local = rules.base === "" ? rel : rel.slice(rules.base.length + 1);
    const result = rules.ig.test(isDir ? `${local}/` : local);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

async function walk(root: string, signal: AbortSignal, maxFiles: number): Promise<FileListing> {
  const files: string[] = [];
  const visit = async (dirRel: string, inherited: Rules[]): Promise<boolean> => {
    signal.throwIfAborted();
    const dirAbs = dirRel === "" ? root : path.join(root, dirRel);
    // Listed through the opened directory, verified inside the root: a directory swapped for a link is skipped.
    const entries = await withDirInside([root], dirAbs, (d) => readdir(d.path, { withFileTypes: true })).catch(
      () => [],
    );
    let stack = inherited;
    if (entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const text = await readFile(path.join(dirAbs, ".gitignore"), "utf8").catch(() => "");
      stack = [...inherited, { base: dirRel, ig: ignore().add(text) }];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name === ".git") continue;
      const rel = dirRel === "" ? e.name : `${dirRel}/${e.name}`;
      const isDir = e.isDirectory();
      if (isIgnored(stack, rel, isDir)) continue;
      if (isDir) {
        if (!(await visit(rel, stack))) return false;
      } else if (e.isFile() || e.isSymbolicLink()) {
        if (files.length >= maxFiles) return false;
        files.push(rel);
      }
    }
    return true;
  };
  const complete = await visit("", []);
  return { files, truncated: !complete, source: "walk" };
}

/**
 * A glob filter over root-relative paths (picomatch). A pattern without "/" matches the file name at any depth
 * ("*.ts" finds src/a/b.ts), like .gitignore and ripgrep; a pattern with "/" is anchored at the root.
 */
export function compileGlob(pattern: string): (rel: string) => boolean {
  const clean = pattern.replace(/^\.\//, "");
  return picomatch(clean, { dot: true, basename: !clean.includes("/") });
}
