import { defineRoute, SessionIdParams, type SessionService, T } from "../../../core/index.js";
import { EntryTypeSchema } from "../entries.js";
import { searchFiles } from "../search.js";
import { SEARCH_DEFAULT, SEARCH_MAX, SEARCH_VISITED, sessionRoots, tags } from "../session-fs.js";

export function searchSessionFilesRoute(sessions: () => SessionService) {
  const { rootOf } = sessionRoots(sessions);
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/fs/search",
    operationId: "searchSessionFiles",
    summary: "Find files and directories by name in the session directory",
    description:
      "Case-insensitive substring match on the names of files and of the directories holding them (on the " +
      "relative path when q contains '/'), shallow matches first. Entries ignored by .gitignore, .ignore or the " +
      "global git excludes, .git and symbolic links are skipped. Bounded: `limit` results and 20,000 listed " +
      "files; `truncated` says there is more. Runs on ripgrep when found (see GET /server/status).",
    tags,
    params: SessionIdParams,
    query: T.Object({
      q: T.Optional(T.String({ maxLength: 500 })),
      limit: T.Optional(T.Integer({ minimum: 1, maximum: SEARCH_MAX, description: `Default ${SEARCH_DEFAULT}` })),
    }),
    responses: {
      200: T.Object(
        {
          results: T.Array(T.Object({ path: T.String(), type: EntryTypeSchema }, { title: "FsSearchHit" })),
          truncated: T.Boolean(),
        },
        { title: "FsSearchResults" },
      ),
    },
    handler: async ({ params, query, signal }) => {
      const { root } = await rootOf(params.id);
      const q = query.q?.trim() ?? "";
      if (!root || !q) return { body: { results: [], truncated: false } };
      const limits = { maxResults: query.limit ?? SEARCH_DEFAULT, maxVisited: SEARCH_VISITED };
      return { body: await searchFiles(root, q, limits, signal) };
    },
  });
}
