import { lstat, rename } from "node:fs/promises";
import path from "node:path";
import {
  ApiError,
  defineRoute,
  isInside,
  SessionIdParams,
  type SessionService,
  T,
  withDirInside,
} from "../../../core/index.js";
import { checkBareName, fsError, relativeTo, resolveEntry, resolveExisting, segmentsOf } from "../paths.js";
import { sessionRoots, tags } from "../session-fs.js";

export function renameSessionFileRoute(sessions: () => SessionService) {
  const { requireRoot } = sessionRoots(sessions);
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/fs/rename",
    operationId: "renameSessionFile",
    summary: "Rename or move a file or directory inside the session directory; never overwrites (409)",
    tags,
    params: SessionIdParams,
    body: T.Object(
      {
        path: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "The entry to rename" })),
        from: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "Alias of path" })),
        name: T.Optional(T.String({ minLength: 1, maxLength: 255, description: "New name in the same directory" })),
        to: T.Optional(
          T.String({ minLength: 1, maxLength: 4096, description: "New path (relative to the session directory)" }),
        ),
      },
      { additionalProperties: false, title: "FsRenameRequest", description: "Give path (or from), and name or to" },
    ),
    errors: [409],
    responses: {
      200: T.Object(
        { ok: T.Literal(true), from: T.String(), path: T.String({ description: "The new relative path" }) },
        {
          title: "FsRenameResult",
        },
      ),
    },
    handler: async ({ params, body }) => {
      const { root, aliases } = await requireRoot(params.id);
      const source = body.path ?? body.from;
      if (!source) throw ApiError.badRequest('Give the entry to rename in "path"');
      if ((body.name === undefined) === (body.to === undefined)) {
        throw ApiError.badRequest('Give exactly one of "name" (same directory) or "to" (a new relative path)');
      }
      const src = await resolveEntry(root, segmentsOf(source, aliases), source);
      let dstParent: string;
      let dstName: string;
      if (body.name !== undefined) {
        dstParent = src.parent;
        dstName = checkBareName(body.name);
      } else {
        const to = body.to as string;
        const dsegs = segmentsOf(to, aliases);
        const last = dsegs.at(-1);
        if (last === undefined) throw ApiError.badRequest("Invalid destination: the session directory itself");
        dstName = checkBareName(last);
        dstParent = await resolveExisting(root, dsegs.slice(0, -1), to);
      }
      const dst = path.join(dstParent, dstName);
      if (dst === src.abs) throw ApiError.badRequest("The destination is the entry itself");
      if (src.stats.isDirectory() && isInside(src.abs, dstParent)) {
        throw ApiError.badRequest("Cannot move a directory into itself");
      }
      const shownDst = relativeTo(root, dst);
      // Both parents are opened and verified; the move goes through their descriptors (core/confined-fs).
      await withDirInside([root], src.parent, (from) =>
        withDirInside([root], dstParent, async (into) => {
          const exists = await lstat(into.at(dstName)).then(
            () => true,
            () => false,
          );
          if (exists) throw ApiError.conflict(`Already exists: ${shownDst}`);
          await rename(from.at(src.name), into.at(dstName));
        }),
      ).catch((err) => {
        throw err instanceof ApiError ? err : fsError(err, shownDst);
      });
      return { body: { ok: true as const, from: relativeTo(root, src.abs), path: shownDst } };
    },
  });
}
