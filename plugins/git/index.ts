import { realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import {
  ApiError,
  definePlugin,
  defineRoute,
  HostInfoToken,
  isInside,
  SessionIdParams,
  SessionServiceToken,
  type Static,
  T,
} from "../../core/index.js";
import { DEFAULT_DIFF_LIMITS, type DiffLimits, workingTreeDiff } from "./diff.js";
import { gitInfo } from "./info.js";

export { DEFAULT_DIFF_LIMITS, type DiffFile, type DiffLimits, type WorkingTreeDiff, workingTreeDiff } from "./diff.js";
export { emptyTree, type GitOptions, type GitResult, git, gitComplaint, headCommit, repoRoot, splitZ } from "./git.js";
export { type GitInfo, gitInfo, redactUrl } from "./info.js";
export { type DiffLine, type Hunk, parseChunk, splitPatch } from "./patch.js";

export const GitOptionsSchema = T.Object(
  {
    roots: T.Optional(
      T.Array(T.String({ minLength: 1, pattern: "^/" }), {
        description:
          "Directories GET /git-info may inspect besides session working directories " +
          "(default: the user's home directory and the daemon's default working directory)",
      }),
    ),
    maxDiffBytes: T.Optional(
      T.Integer({
        minimum: 1024,
        description: `Patch bytes read from git per diff (default ${DEFAULT_DIFF_LIMITS.maxBytes})`,
      }),
    ),
    maxDiffLines: T.Optional(
      T.Integer({ minimum: 1, description: `Hunk lines returned per diff (default ${DEFAULT_DIFF_LIMITS.maxLines})` }),
    ),
    maxDiffFiles: T.Optional(
      T.Integer({ minimum: 1, description: `Files listed per diff (default ${DEFAULT_DIFF_LIMITS.maxFiles})` }),
    ),
  },
  { additionalProperties: false },
);
export type GitPluginOptions = Static<typeof GitOptionsSchema>;

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

const Nullable = <S extends ReturnType<typeof T.String>>(s: S) => T.Optional(T.Union([s, T.Null()]));
const GitInfoSchema = T.Object(
  {
    isGit: T.Boolean(),
    cwd: T.String(),
    root: T.Optional(T.String()),
    hasCommits: T.Optional(T.Boolean()),
    branch: Nullable(T.String()),
    detached: T.Optional(T.Boolean()),
    head: Nullable(T.String()),
    upstream: Nullable(T.String()),
    ahead: T.Optional(T.Union([T.Integer(), T.Null()])),
    behind: T.Optional(T.Union([T.Integer(), T.Null()])),
    dirty: T.Optional(
      T.Object({ staged: T.Integer(), unstaged: T.Integer(), untracked: T.Integer(), conflicted: T.Integer() }),
    ),
    clean: T.Optional(T.Boolean()),
    remotes: T.Optional(T.Array(T.Object({ name: T.String(), url: T.String({ description: "Credentials removed" }) }))),
    lastCommit: T.Optional(
      T.Union([T.Object({ sha: T.String(), subject: T.String(), author: T.String(), date: T.String() }), T.Null()]),
    ),
    statusError: T.Optional(T.String({ description: "Why dirty/clean are missing (git status failed)" })),
  },
  { title: "GitInfo" },
);

/**
 * Git state of a directory (`GET /git-info`) and the working-tree diff of a session (`GET /sessions/{id}/diff`).
 * The helpers (`git(cwd, args)`, `workingTreeDiff`, `gitInfo`...) are exported for other plugins to reuse.
 */
export default definePlugin({
  manifest: {
    id: "git",
    version: "1.0.0",
    description: "Git state of a directory and the working-tree diff of a session",
    requires: ["session-store"],
    capabilities: ["routes", "filesystem", "process"],
    configSchema: GitOptionsSchema,
  },
  deps: {
    sessions: SessionServiceToken,
    host: HostInfoToken,
  },
  register(ctx) {
    const options = ctx.options;
    const sessions = () => ctx.deps.sessions;
    const limits: DiffLimits = {
      ...DEFAULT_DIFF_LIMITS,
      ...(options.maxDiffBytes ? { maxBytes: options.maxDiffBytes } : {}),
      ...(options.maxDiffLines ? { maxLines: options.maxDiffLines } : {}),
      ...(options.maxDiffFiles ? { maxFiles: options.maxDiffFiles } : {}),
    };

    const permitted = async (dir: string): Promise<boolean> => {
      const configured = options.roots ?? [homedir(), ctx.deps.host.defaultCwd];
      for (const c of configured) {
        const real = await realpath(c).catch(() => undefined);
        if (real && isInside(real, dir)) return true;
      }
      // Session directories are stored resolved, so a lexical check is enough (an index lookup per ancestor).
      return sessions().inSessionDirectory(dir);
    };

    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/git-info",
        operationId: "getGitInfo",
        summary: "Git state of a directory: branch, HEAD, upstream ahead/behind, dirty counts, remotes",
        description:
          "The directory must lie inside a session's working directory or a configured root " +
          "(pluginOptions.git.roots; default: the user's home and the daemon's default working directory), else 400. " +
          "A directory outside any work tree, or one that does not exist, answers {isGit:false, cwd}.",
        tags: ["git"],
        query: T.Object({
          cwd: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "Absolute directory" })),
          session: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Use this session's directory" })),
        }),
        responses: { 200: GitInfoSchema },
        handler: async ({ query, signal }) => {
          let dir: string;
          if (query.session) {
            dir = (await sessions().require(query.session)).cwd;
          } else {
            const cwd = query.cwd?.trim();
            if (!cwd || cwd === "sandbox") return { body: { isGit: false, cwd: cwd ?? "" } };
            if (cwd.includes("\0") || !path.isAbsolute(cwd)) {
              throw ApiError.badRequest(`cwd must be an absolute path: ${cwd}`);
            }
            const real = await realpath(cwd).catch(() => undefined);
            if (!real) return { body: { isGit: false, cwd } };
            if (!(await permitted(real))) throw ApiError.badRequest(`cwd is outside the permitted directories: ${cwd}`);
            dir = real;
          }
          const st = await stat(dir).catch(() => undefined);
          if (!st?.isDirectory()) return { body: { isGit: false, cwd: dir } };
          return { body: await gitInfo(dir, { signal }) };
        },
      }),
    );

    ctx.routes.add(
      defineRoute({
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
      }),
    );
  },
});
