import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import type { Worktrees } from "../service.js";
import { tags } from "./shared.js";

export function discardWorktreeRoute(w: Worktrees) {
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/worktree",
    operationId: "discardSessionWorktree",
    summary: "Remove the worktree and its branch; the session goes back to the main checkout (/worktree discard)",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: { 200: T.Object({ ok: T.Literal(true), cwd: T.String() }, { title: "WorktreeDiscarded" }) },
    handler: async ({ params }) => ({ body: { ok: true as const, ...(await w.discard(params.id)) } }),
  });
}
