import { existsSync } from "node:fs";
import { appendFile, lstat, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { FileChanges } from "./checkpoint-state.js";
import { GitError, git, gitPaths, nulList } from "./git.js";

/**
 * The git plumbing of file checkpoints: a shadow repository per session (bare, `<dir>/<session>/repo`) whose work
 * tree is the session's working directory, so the project's own index and history are never touched.
 */

/** A snapshot that cannot be taken; `disable`: the working directory is too large to try again. */
export class Skip extends Error {
  constructor(
    message: string,
    readonly disable: boolean,
  ) {
    super(message);
  }
}

/** git in the shadow repository and the working directory, every call within one deadline. */
export type ShadowGit = (args: string[]) => Promise<string>;

export function shadowGit(repo: string, cwd: string, deadline: number): ShadowGit {
  return (args: string[]) => {
    const left = deadline - Date.now();
    if (left <= 0) return Promise.reject(new GitError("the snapshot took too long", "timeout"));
    return git(["--git-dir", repo, "--work-tree", cwd, ...args], { cwd, timeoutMs: left });
  };
}

export async function ensureShadowRepo(repo: string): Promise<void> {
  if (existsSync(join(repo, "HEAD"))) return;
  await mkdir(repo, { recursive: true });
  await git(["init", "--bare", "--quiet", repo], { timeoutMs: 10_000 });
  // Line endings stay byte-exact; embedded repositories are recorded as links without advice on stderr.
  await appendFile(
    join(repo, "config"),
    "[core]\n\tautocrlf = false\n\tsafecrlf = false\n\tfsmonitor = false\n[advice]\n\taddEmbeddedRepo = false\n",
  );
  await mkdir(join(repo, "info"), { recursive: true });
}

/** A gitignore pattern matching exactly one path (anchored, glob characters escaped). */
function exactPattern(rel: string): string | undefined {
  if (/[\n\r]/.test(rel)) return undefined;
  return `/${rel.replace(/[\\*?[\]]/g, "\\$&").replace(/ +$/, (s) => "\\ ".repeat(s.length))}`;
}

export interface StageLimits {
  maxFiles: number;
  maxFileBytes: number;
}

/**
 * Stages the working directory into the shadow index, leaving out files over the size limit. `counted.files` is the
 * running count of files the index knows (an upper bound, recounted when it crosses the limit); with `enforce`, more
 * than `maxFiles` throws a disabling {@link Skip}.
 */
export async function stageWorkTree(
  g: ShadowGit,
  repo: string,
  cwd: string,
  counted: { files: number },
  limits: StageLimits,
  enforce: boolean,
  deadline: number,
): Promise<void> {
  const listNew = (limit: number) =>
    gitPaths(["--git-dir", repo, "--work-tree", cwd, "ls-files", "-z", "--others", "--exclude-standard"], {
      cwd,
      timeoutMs: Math.max(1, deadline - Date.now()),
      limit,
    });
  let listed = await listNew(enforce ? Math.max(0, limits.maxFiles - counted.files) : Number.MAX_SAFE_INTEGER);
  if (listed.overLimit && counted.files > 0) {
    // The running count only grows (deletions are not subtracted): recount before giving up.
    counted.files = nulList(await g(["ls-files", "-z", "--cached"])).length;
    listed = await listNew(Math.max(0, limits.maxFiles - counted.files));
  }
  if (listed.overLimit) throw new Skip(`the working directory has more than ${limits.maxFiles} files`, true);
  const big: string[] = [];
  for (const rel of listed.paths) {
    const st = await lstat(join(cwd, rel)).catch(() => undefined);
    if (st?.isFile() && st.size > limits.maxFileBytes) {
      const pattern = exactPattern(rel);
      if (pattern) big.push(pattern);
    }
  }
  if (big.length) await appendFile(join(repo, "info", "exclude"), `${big.join("\n")}\n`);
  await g(["add", "-A"]);
  counted.files += listed.paths.length - big.length;
}

/** Commits the staged tree and points `ref` at it; returns the commit. */
export async function commitStaged(g: ShadowGit, label: string, ref: string): Promise<string> {
  const tree = (await g(["write-tree"])).trim();
  const commit = (await g(["commit-tree", "--no-gpg-sign", "-m", label, tree])).trim();
  await g(["update-ref", ref, commit]);
  return commit;
}

/** What restoring `commit` would change in the staged working directory (created: files it would remove). */
export async function stagedChangesTo(g: ShadowGit, commit: string): Promise<FileChanges> {
  const out: FileChanges = { created: [], modified: [], deleted: [] };
  const changes = nulList(await g(["diff-index", "--cached", "-z", "--name-status", "--no-renames", commit]));
  for (let i = 0; i + 1 < changes.length; i += 2) {
    const [status, path] = [changes[i] as string, changes[i + 1] as string];
    (status === "A" ? out.created : status === "D" ? out.deleted : out.modified).push(path);
  }
  return out;
}
