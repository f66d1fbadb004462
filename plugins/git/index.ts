import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { definePlugin, HostInfoToken, isInside, SessionServiceToken, type Static, T } from "../../core/index.js";
import { DEFAULT_DIFF_LIMITS, type DiffLimits } from "./diff.js";
import { gitRoutes } from "./routes/index.js";

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

    for (const r of gitRoutes({ sessions, permitted, limits })) ctx.routes.add(r);
  },
});
