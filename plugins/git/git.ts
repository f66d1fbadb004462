import { type GitOptions, git } from "../../core/index.js";

export { type GitOptions, type GitResult, git, gitComplaint, splitZ } from "../../core/index.js";

/** The work tree state of a directory: inside a repository or not, and its top level. */
export async function repoRoot(cwd: string, opts: GitOptions = {}): Promise<string | undefined> {
  const r = await git(cwd, ["rev-parse", "--is-inside-work-tree", "--show-toplevel"], { timeoutMs: 5000, ...opts });
  if (r.code !== 0) return undefined;
  const [inside, top] = r.stdout.split("\n");
  return inside === "true" && top ? top : undefined;
}

/** HEAD's commit id, or undefined in a repository without commits. */
export async function headCommit(cwd: string, opts: GitOptions = {}): Promise<string | undefined> {
  const r = await git(cwd, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { timeoutMs: 5000, ...opts });
  return r.code === 0 ? r.stdout.trim() || undefined : undefined;
}

/** The id of the empty tree in this repository's hash format (sha1 or sha256). */
export async function emptyTree(cwd: string, opts: GitOptions = {}): Promise<string> {
  const r = await git(cwd, ["hash-object", "-t", "tree", "/dev/null"], { timeoutMs: 5000, ...opts });
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
}
