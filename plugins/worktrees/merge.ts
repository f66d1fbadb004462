import { ApiError, splitZ, type WorktreeDiff, type WorktreeInfo, type WorktreeMergeOutcome } from "../../core/index.js";
import { branchExists, checkedOut, git, identity, stateCommit, tryGit } from "./git-ops.js";

const MAX_PATCH = 512 * 1024;

/** Paths with uncommitted changes (untracked included) in a checkout. */
async function dirtyPaths(cwd: string): Promise<Set<string>> {
  const out = await git(cwd, ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"]);
  return new Set(splitZ(out).map((e) => e.slice(3)));
}

async function changedPaths(cwd: string, from: string, to: string): Promise<string[]> {
  return splitZ(await git(cwd, ["diff", "--name-only", "-z", "--no-renames", from, to, "--"]));
}

async function isAncestor(cwd: string, a: string, b: string): Promise<boolean> {
  return (await tryGit(cwd, ["merge-base", "--is-ancestor", a, b])).code === 0;
}

/**
 * Merges the worktree's branch, with its uncommitted work committed first, into its base branch. Everything that
 * can refuse is decided before anything changes: conflicts (computed with `git merge-tree`, nothing checked out),
 * a base that is not a branch, and uncommitted changes of the base's checkout to the paths the merge touches. Only
 * then does the base branch move (a fast-forward of its checkout, which touches the merged paths only) and the
 * worktree's branch take the commit of its work.
 */
export async function mergeWorktree(wt: WorktreeInfo, sessionId: string): Promise<WorktreeMergeOutcome> {
  const { repository: repo, base } = wt;
  if (!(await branchExists(repo, base))) {
    throw ApiError.conflict(`The base ${base} is not a branch: there is nothing to merge into`, {
      code: "base_not_branch",
    });
  }
  const state = await stateCommit(wt.path, `agentd: work of session ${sessionId}`);
  const baseRef = `refs/heads/${base}`;
  const baseCommit = (await git(repo, ["rev-parse", baseRef])).trim();
  if (await isAncestor(repo, state.commit, baseCommit)) {
    if (state.committed) await git(wt.path, ["reset", "--quiet", state.commit]);
    return { merged: false, fastForward: false, commit: baseCommit, committed: state.committed, files: [] };
  }
  let target = state.commit;
  const fastForward = await isAncestor(repo, baseCommit, state.commit);
  if (!fastForward) {
    const r = await tryGit(repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", baseCommit, target]);
    const lines = r.stdout.split("\n").filter(Boolean);
    if (r.code === 1) {
      const paths = [...new Set(lines.slice(1))];
      throw ApiError.conflict(
        `Merging ${wt.branch} into ${base} conflicts in ${paths.length} file(s): ${paths.join(", ")}`,
        {
          code: "merge_conflict",
          paths,
        },
      );
    }
    if (r.code !== 0 || !lines[0]) throw ApiError.conflict(`git merge-tree failed: ${r.stderr.trim()}`);
    const message = `Merge branch '${wt.branch}' into ${base} (agentd session ${sessionId})`;
    target = (
      await git(repo, ["commit-tree", "--no-gpg-sign", "-p", baseCommit, "-p", state.commit, "-m", message, lines[0]], {
        env: await identity(repo),
      })
    ).trim();
  }
  const files = await changedPaths(repo, baseCommit, target);
  const checkout = (await checkedOut(repo)).get(baseRef);
  if (checkout) {
    const dirty = await dirtyPaths(checkout);
    const clash = files.filter((f) => dirty.has(f));
    if (clash.length) {
      throw ApiError.conflict(
        `${checkout} has uncommitted changes to ${clash.length} file(s) the merge would change: ${clash.join(", ")}`,
        { code: "checkout_dirty", paths: clash },
      );
    }
    await git(checkout, ["merge", "--ff-only", "--quiet", "--no-edit", target]);
  } else {
    await git(repo, ["update-ref", "-m", `agentd: merge ${wt.branch}`, baseRef, target, baseCommit]);
  }
  if (state.committed) await git(wt.path, ["reset", "--quiet", state.commit]);
  return { merged: true, fastForward, commit: target, committed: state.committed, files };
}

/** What the worktree changes against its base (from their merge base), uncommitted and new files included. */
export async function diffWorktree(wt: WorktreeInfo): Promise<WorktreeDiff> {
  const state = await stateCommit(wt.path, "agentd: diff");
  const baseRev = (await branchExists(wt.repository, wt.base)) ? `refs/heads/${wt.base}` : wt.base;
  const from = (await git(wt.path, ["merge-base", baseRev, state.commit])).trim();
  const status = splitZ(await git(wt.path, ["diff", "--name-status", "-z", "--no-renames", from, state.commit, "--"]));
  const files: WorktreeDiff["files"] = [];
  for (let i = 0; i + 1 < status.length; i += 2)
    files.push({ status: status[i] as string, path: status[i + 1] as string });
  const r = await tryGit(wt.path, ["diff", "--no-color", "--no-ext-diff", from, state.commit, "--"]);
  const truncated = r.stdout.length > MAX_PATCH;
  return { worktree: wt, files, patch: truncated ? r.stdout.slice(0, MAX_PATCH) : r.stdout, truncated };
}
