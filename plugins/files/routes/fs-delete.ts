import { rm } from "node:fs/promises";
import {
  ApiError,
  defineRoute,
  OkSchema,
  SessionIdParams,
  type SessionService,
  T,
  withDirInside,
} from "../../../core/index.js";
import { fsError, resolveEntry, segmentsOf } from "../paths.js";
import { PathQuery, sessionRoots, tags } from "../session-fs.js";

export function deleteSessionFileRoute(sessions: () => SessionService) {
  const { requireRoot } = sessionRoots(sessions);
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/fs",
    operationId: "deleteSessionFile",
    summary: "Delete a file or directory (recursively) inside the session directory",
    description:
      "A symbolic link is removed itself, never what it points to. The session directory itself cannot be deleted.",
    tags,
    params: SessionIdParams,
    query: T.Object({ path: PathQuery("Relative to the session directory", true) }),
    responses: { 200: OkSchema },
    handler: async ({ params, query }) => {
      const { root, aliases } = await requireRoot(params.id);
      const entry = await resolveEntry(root, segmentsOf(query.path, aliases), query.path);
      if (entry.abs === root) throw ApiError.badRequest("Refusing to delete the session directory itself");
      // Removed through the opened parent: a parent swapped for a link meanwhile is caught, not followed.
      await withDirInside([root], entry.parent, (d) => rm(d.at(entry.name), { recursive: true, force: false })).catch(
        (err) => {
          throw fsError(err, query.path);
        },
      );
      return { body: { ok: true as const } };
    },
  });
}
