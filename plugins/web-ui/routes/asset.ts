import { extname } from "node:path";
import { ApiError, defineRoute, T } from "../../../core/index.js";
import { TYPES, WEB_UI_CSP, type WebBundle } from "../bundle.js";

export function webUiAssetRoute({ load, assets }: WebBundle) {
  return defineRoute({
    method: "GET",
    path: "/assets/:file",
    page: true,
    operationId: "webUiAsset",
    summary: "A content-hashed asset of the web UI",
    params: T.Object({ file: T.String({ pattern: "^[A-Za-z0-9._-]{1,200}$" }) }),
    responses: { 200: { description: "The file", contentType: "application/octet-stream", schema: T.String() } },
    handler: ({ params }) => {
      try {
        load();
      } catch {
        throw new ApiError(503, "The web UI is not built (run `npm run build`)");
      }
      const bytes = assets.get(params.file);
      if (!bytes) throw ApiError.notFound("No such asset");
      return {
        bytes,
        contentType: TYPES[extname(params.file)] ?? "application/octet-stream",
        headers: {
          "Cache-Control": "private, max-age=31536000, immutable",
          "Content-Security-Policy": WEB_UI_CSP,
        },
      };
    },
  });
}
