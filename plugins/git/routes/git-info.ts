import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ApiError, defineRoute, type SessionService, T } from "../../../core/index.js";
import { gitInfo } from "../info.js";

/** What GET /git-info uses: the sessions, and whether a directory lies where it may be inspected. */
export interface GitInfoDeps {
  sessions: () => SessionService;
  permitted: (dir: string) => Promise<boolean>;
}

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

export function gitInfoRoute({ sessions, permitted }: GitInfoDeps) {
  return defineRoute({
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
  });
}
