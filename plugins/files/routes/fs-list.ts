import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { ApiError, defineRoute, SessionIdParams, type SessionService, T, withDirInside } from "../../../core/index.js";
import { byDirThenName, type TypedEntry, typeOf } from "../entries.js";
import { fsError, relativeTo, resolveExisting, segmentsOf } from "../paths.js";
import { FsListing, MAX_LIST, PathQuery, sessionRoots, tags } from "../session-fs.js";

export function listSessionFilesRoute(sessions: () => SessionService) {
  const { rootOf } = sessionRoots(sessions);
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/fs",
    operationId: "listSessionFiles",
    summary: "List one directory of the session's working directory",
    tags,
    params: SessionIdParams,
    query: T.Object({ path: PathQuery('Relative to the session directory (default ".")', false) }),
    responses: { 200: FsListing },
    handler: async ({ params, query }) => {
      const { root, aliases } = await rootOf(params.id);
      if (!root) return { body: { path: ".", entries: [], truncated: false } };
      const shown = query.path || ".";
      const abs = await resolveExisting(root, segmentsOf(shown, aliases), shown);
      const st = await stat(abs).catch((err) => {
        throw fsError(err, shown);
      });
      if (!st.isDirectory()) throw ApiError.badRequest(`Not a directory: ${shown}`);
      const dirents = await withDirInside([root], abs, (d) => readdir(d.path, { withFileTypes: true })).catch((err) => {
        throw fsError(err, shown);
      });
      const visible = dirents.filter((d) => d.name !== ".git");
      const truncated = visible.length > MAX_LIST;
      const shownEntries = truncated ? visible.slice(0, MAX_LIST) : visible;
      const entries: Array<{ name: string } & TypedEntry> = await Promise.all(
        shownEntries.map(async (d) => ({ name: d.name, ...(await typeOf(d, path.join(abs, d.name), [root], true)) })),
      );
      entries.sort(byDirThenName);
      return { body: { path: relativeTo(root, abs), entries, truncated } };
    },
  });
}
