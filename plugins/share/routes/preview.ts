import { ApiError, defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { SHARE_PREVIEW_CSP } from "../page.js";
import type { ShareRouteDeps } from "./shared.js";

export function sharePreviewRoute({ store, page }: ShareRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/share-preview",
    operationId: "previewSharedSessionPage",
    summary: "The page a share link of this session shows (or would show), for its owner to check before sharing",
    tags: ["share"],
    params: SessionIdParams,
    query: T.Object({
      toolResults: T.Optional(
        T.String({ enum: ["1", "0", "true", "false"], description: "1: with tool results (default 0)" }),
      ),
    }),
    responses: { 200: { description: "HTML page", contentType: "text/html", schema: T.String() } },
    handler: async ({ params, query }) => {
      const rec = await store().getSession(params.id);
      if (!rec) throw ApiError.notFound(`Session not found: ${params.id}`);
      const html = await page(rec, query.toolResults === "1" || query.toolResults === "true", true);
      return {
        html,
        headers: { "Content-Security-Policy": SHARE_PREVIEW_CSP, "X-Robots-Tag": "noindex, nofollow" },
      };
    },
  });
}
