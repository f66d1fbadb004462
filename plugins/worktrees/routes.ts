import { type AnyRoute, defineRoute, SessionIdParams, T, WorktreeInfoSchema } from "../../core/index.js";
import type { Worktrees } from "./service.js";

const BranchField = T.String({ minLength: 1, maxLength: 200, description: "Default agentd/<session id>" });

export const WorktreeRequestSchema = T.Object(
  {
    branch: T.Optional(BranchField),
    base: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Branch or commit (default HEAD)" })),
  },
  { title: "WorktreeRequest", additionalProperties: false },
);

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

export function worktreeRoutes(w: Worktrees): AnyRoute[] {
  const tags = ["worktrees"];
  return [
    defineRoute({
      method: "GET",
      path: "/sessions/:id/worktree",
      operationId: "getSessionWorktree",
      summary: "The session's worktree and its diff against the base (409 when it has none)",
      tags,
      params: SessionIdParams,
      errors: [409],
      responses: { 200: WorktreeDiffSchema },
      handler: async ({ params }) => ({ body: await w.diff(params.id) }),
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: "DELETE",
      path: "/sessions/:id/worktree",
      operationId: "discardSessionWorktree",
      summary: "Remove the worktree and its branch; the session goes back to the main checkout (/worktree discard)",
      tags,
      params: SessionIdParams,
      errors: [409],
      responses: { 200: T.Object({ ok: T.Literal(true), cwd: T.String() }, { title: "WorktreeDiscarded" }) },
      handler: async ({ params }) => ({ body: { ok: true as const, ...(await w.discard(params.id)) } }),
    }),
  ];
}
