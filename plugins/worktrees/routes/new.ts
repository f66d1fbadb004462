import { defineRoute, SessionIdParams, T, WorktreeInfoSchema } from "../../../core/index.js";
import type { Worktrees } from "../service.js";
import { tags } from "./shared.js";

const BranchField = T.String({ minLength: 1, maxLength: 200, description: "Default agentd/<session id>" });

export const WorktreeRequestSchema = T.Object(
  {
    branch: T.Optional(BranchField),
    base: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Branch or commit (default HEAD)" })),
  },
  { title: "WorktreeRequest", additionalProperties: false },
);

export function newWorktreeRoute(w: Worktrees) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/worktree",
    operationId: "newSessionWorktree",
    summary: "Move an idle session into a new worktree (/worktree new)",
    description:
      "400 outside git and for a branch git refuses or one that exists; 409 while a turn runs or when the session " +
      "already has a worktree. Nothing is created when it fails.",
    tags,
    params: SessionIdParams,
    body: WorktreeRequestSchema,
    bodyRequired: false,
    errors: [409],
    responses: { 200: T.Object({ worktree: WorktreeInfoSchema }, { title: "WorktreeCreated" }) },
    handler: async ({ params, body }) => ({ body: { worktree: await w.moveToNew(params.id, body ?? {}) } }),
  });
}
