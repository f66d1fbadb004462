import type { AnyRoute } from "../../../core/index.js";
import { sharePreviewRoute } from "./preview.js";
import type { ShareRouteDeps } from "./shared.js";
import { sharedPageRoute } from "./shared-page.js";

/** The share routes, one per file; the order is the OpenAPI document's. */
export function shareRoutes(deps: ShareRouteDeps): AnyRoute[] {
  return [sharedPageRoute(deps), sharePreviewRoute(deps)];
}
