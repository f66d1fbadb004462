import { stat } from "node:fs/promises";
import { defineRoute, SessionIdParams, type SessionService, T } from "../../../core/index.js";
import { type DiffLimits, workingTreeDiff } from "../diff.js";

const LineSchema = T.Object({ type: T.Union([T.Literal("+"), T.Literal("-"), T.Literal(" ")]), content: T.String() });
const HunkSchema = T.Object(
  {
    oldStart: T.Integer(),
    oldLines: T.Integer(),
    newStart: T.Integer(),
    newLines: T.Integer(),
    header: T.String(),
    lines: T.Array(LineSchema),
  },
  { title: "DiffHunk" },
);
const DiffFileSchema = T.Object(
  {
    path: T.String({ description: "Relative to the session directory" }),
    oldPath: T.Optional(T.String()),
    status: T.Union(["added", "modified", "deleted", "renamed", "copied", "untracked"].map((s) => T.Literal(s))),
    additions: T.Integer(),
    deletions: T.Integer(),
    binary: T.Boolean(),
    truncated: T.Boolean(),
    hunks: T.Array(HunkSchema),
  },
  { title: "DiffFile" },
);
const Paths = T.Array(T.String());
const DiffSchema = T.Object(
  {
    files: T.Array(DiffFileSchema),
    groups: T.Object({ untracked: Paths, added: Paths, modified: Paths, deleted: Paths, renamed: Paths }),
    truncated: T.Boolean({ description: "Some hunks were cut or left out to keep the answer bounded" }),
    omittedFiles: T.Optional(T.Integer({ description: "Changed files left out past the file cap" })),
    noRepo: T.Optional(T.Literal(true)),
    reason: T.Optional(T.String()),
    root: T.Optional(T.String()),
    hasCommits: T.Optional(T.Boolean()),
  },
  { title: "WorkingTreeDiff" },
);

export function sessionDiffRoute(sessions: () => SessionService, limits: DiffLimits) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/diff",
    operationId: "getSessionDiff",
    summary: "Working tree vs HEAD of the session directory: staged, unstaged and untracked changes with hunks",
    description:
      "Renames are detected; binary files are marked and have no hunks; in a repository without commits " +
      "everything is compared with the empty tree. Bounded: hunks past pluginOptions.git.maxDiffLines lines or " +
      "maxDiffBytes of patch are left out and `truncated` is set. Outside a work tree: noRepo with empty lists.",
    tags: ["git"],
    params: SessionIdParams,
    errors: [503],
    responses: { 200: DiffSchema },
    handler: async ({ params, signal }) => {
      const rec = await sessions().require(params.id);
      const st = await stat(rec.cwd).catch(() => undefined);
      if (!st?.isDirectory()) {
        const groups = { untracked: [], added: [], modified: [], deleted: [], renamed: [] };
        return { body: { files: [], groups, truncated: false, noRepo: true as const } };
      }
      return { body: await workingTreeDiff(rec.cwd, limits, signal) };
    },
  });
}
