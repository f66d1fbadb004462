import { defineRoute, SessionIdParams, T, WorktreeInfoSchema } from "../../../core/index.js";
import type { Worktrees } from "../service.js";
import { tags } from "./shared.js";

const WorktreeDiffSchema = T.Object(
  {
    worktree: WorktreeInfoSchema,
    files: T.Array(
      T.Object({ path: T.String(), status: T.String({ description: "A (added), M (modified) or D (deleted)" }) }),
    ),
    patch: T.String({ description: "Unified diff against the base (cut at 512 KiB)" }),
    truncated: T.Boolean(),
  },
  { title: "WorktreeDiff" },
);

export function getWorktreeRoute(w: Worktrees) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/worktree",
    operationId: "getSessionWorktree",
    summary: "The session's worktree and its diff against the base (409 when it has none)",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: { 200: WorktreeDiffSchema },
    handler: async ({ params }) => ({ body: await w.diff(params.id) }),
  });
}
