/** What the terminal prints for `/worktree` replies and refusals (a merge conflict names its files). */

interface WorktreeInfo {
  path: string;
  branch: string;
  base: string;
  repository: string;
}

interface ListedWorktree {
  path: string;
  branch: string | null;
}

/** The text of a `/worktree` reply: bare `/worktree` (list) says where the session works, then the repository's list. */
export function worktreeReply(sub: string, data: Record<string, unknown>, message: string): string {
  if (sub !== "list") return message;
  const own = data.session as WorktreeInfo | undefined;
  const trees = Array.isArray(data.worktrees) ? (data.worktrees as ListedWorktree[]) : [];
  const lines = [
    own
      ? `This session works in its own worktree on branch ${own.branch} (base ${own.base}): ${own.path}`
      : "This session works in the main checkout (/worktree new [branch] moves it into a worktree of its own)",
  ];
  if (!trees.length) return [...lines, message].join("\n");
  lines.push(`${message} of the repository:`);
  for (const t of trees) lines.push(`  ${t.path === own?.path ? "●" : "·"} ${t.branch ?? "(detached)"}  ${t.path}`);
  return lines.join("\n");
}

/** A refused command's text; a 409 with paths (a merge conflict, a dirty checkout) lists them one per line. */
export function refusal(error: { error?: string; code?: string; paths?: unknown } | undefined, status: number): string {
  const text = error?.error ?? `HTTP ${status}`;
  const paths = Array.isArray(error?.paths) ? error.paths.map(String) : [];
  if (!paths.length) return text;
  const head =
    error?.code === "merge_conflict"
      ? `merge refused: ${paths.length} file(s) conflict; nothing was changed. Conflicting paths:`
      : error?.code === "checkout_dirty"
        ? `merge refused: the main checkout has uncommitted changes to ${paths.length} file(s) the merge would change:`
        : text;
  return [head, ...paths.map((p) => `  ✗ ${p}`)].join("\n");
}
