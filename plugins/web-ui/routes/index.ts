import type { AnyRoute } from "../../../core/index.js";
import type { WebBundle } from "../bundle.js";
import { webUiAssetRoute } from "./asset.js";
import { webUiPageRoute } from "./page.js";

/** The web UI's page and assets, one route per file. */
export function webUiRoutes(bundle: WebBundle): AnyRoute[] {
  return [webUiPageRoute(bundle), webUiAssetRoute(bundle)];
}
