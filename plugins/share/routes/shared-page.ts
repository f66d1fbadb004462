import { ApiError, defineRoute, T } from "../../../core/index.js";
import { SHARE_CSP } from "../page.js";
import type { ShareRouteDeps } from "./shared.js";

export function sharedPageRoute({ store, page }: ShareRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/shared/:token",
    page: true,
    operationId: "getSharedSessionPage",
    summary: "The read-only HTML page of a shared session (no authentication; 404 once revoked)",
    description:
      "Browser transport rather than an API resource: a self-contained page under a strict " +
      "Content-Security-Policy (no script but the one that shows local times). System prompts are not shown and " +
      "local paths are shortened.",
    tags: ["share"],
    auth: "public",
    params: T.Object({ token: T.String({ pattern: "^[A-Za-z0-9_-]{16,128}$", description: "The share token" }) }),
    responses: { 200: { description: "HTML page", contentType: "text/html", schema: T.String() } },
    handler: async ({ params }) => {
      const rec = await store().findByShareToken(params.token);
      if (!rec) throw ApiError.notFound("This shared session does not exist or is no longer shared");
      const html = await page(rec, rec.meta.shareToolResults === true, false);
      return {
        html,
        headers: { "Content-Security-Policy": SHARE_CSP, "X-Robots-Tag": "noindex, nofollow" },
      };
    },
  });
}
