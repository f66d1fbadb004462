import { ApiError, defineRoute, T } from "../../../core/index.js";
import { page, WEB_UI_CSP, type WebBundle, type WebManifest } from "../bundle.js";

export function webUiPageRoute({ load }: WebBundle) {
  return defineRoute({
    method: "GET",
    path: "/",
    page: true,
    operationId: "webUiPage",
    summary: "The web UI",
    responses: { 200: { description: "HTML page", contentType: "text/html", schema: T.String() } },
    handler: () => {
      let m: WebManifest;
      try {
        m = load();
      } catch {
        throw new ApiError(503, "The web UI is not built (run `npm run build`)");
      }
      return { html: page(m), headers: { "Content-Security-Policy": WEB_UI_CSP } };
    },
  });
}
