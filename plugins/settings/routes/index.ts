import type { AnyRoute } from "../../../core/index.js";
import { getAppearanceRoute } from "./appearance-get.js";
import { setAppearanceRoute } from "./appearance-set.js";
import { configRoute } from "./config.js";
import { reasoningOptionsRoute } from "./reasoning-options.js";
import { sessionReasoningOptionsRoute } from "./session-reasoning-options.js";
import type { SettingsRouteDeps } from "./shared.js";

export { publicBaseUrl } from "./config.js";
export type { SettingsRouteDeps } from "./shared.js";

/** The settings routes, one per file; the order is the OpenAPI document's. */
export function settingsRoutes(deps: SettingsRouteDeps): AnyRoute[] {
  return [
    configRoute(deps),
    getAppearanceRoute(deps),
    setAppearanceRoute(deps),
    reasoningOptionsRoute(deps),
    sessionReasoningOptionsRoute(deps),
  ];
}
