import { ApiError, defineRoute, SessionIdParams, type SessionService, T } from "../../../core/index.js";
import { BinaryResponse, DownloadQueryFields, fileDownload, wantsInline } from "../download.js";
import { resolveExisting, segmentsOf } from "../paths.js";
import { PathQuery, sessionRoots, tags } from "../session-fs.js";

export function downloadSessionFileRoute(sessions: () => SessionService) {
  const { requireRoot } = sessionRoots(sessions);
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/fs/download",
    operationId: "downloadSessionFile",
    summary: "Download a file of the session directory",
    tags,
    params: SessionIdParams,
    query: T.Object({ path: PathQuery("Relative to the session directory", true), ...DownloadQueryFields }),
    responses: { 200: BinaryResponse },
    handler: async ({ params, query, signal }) => {
      const { root, aliases } = await requireRoot(params.id);
      const segs = segmentsOf(query.path, aliases);
      if (segs.length === 0) throw ApiError.badRequest("Not a file: the session directory");
      const abs = await resolveExisting(root, segs, query.path);
      return fileDownload([root], abs, query.path, wantsInline(query.inline), signal);
    },
  });
}
