import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import type { Worktrees } from "../service.js";
import { tags } from "./shared.js";

const MergeResultSchema = T.Object(
  {
    merged: T.Boolean({ description: "false: the base branch already had everything" }),
    fastForward: T.Boolean(),
    commit: T.String({ description: "The base branch's commit after the merge" }),
    committed: T.Boolean({ description: "The worktree's uncommitted work was committed first" }),
    files: T.Array(T.String(), { description: "Paths the merge changed on the base branch" }),
  },
  { title: "WorktreeMergeResult" },
);

export function mergeWorktreeRoute(w: Worktrees) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/worktree/merge",
    operationId: "mergeSessionWorktree",
    summary: "Commit the worktree's work and merge its branch into the base branch (/worktree merge)",
    description:
      'Fast-forward when possible, else a merge commit. 409 with {code: "merge_conflict", paths} on a conflict, ' +
      '{code: "checkout_dirty", paths} when the base\'s checkout has uncommitted changes to the merged paths, and ' +
      "while a turn runs; the repository is left as it was then.",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: { 200: MergeResultSchema },
    handler: async ({ params }) => ({ body: await w.merge(params.id) }),
  });
}
