import type { AnyRoute, DaemonSettings, Provider } from "../../../core/index.js";
import type { ModelCache } from "../model-cache.js";
import { cachedModelsRoute } from "./cached-models.js";
import { listModelsRoute } from "./models.js";
import { setProviderRoute } from "./set-provider.js";
import type { ProviderRouteDeps } from "./shared.js";
import { verifyProviderRoute } from "./verify-provider.js";

/** Routes of the provider plugin (relative to /api/v1), one per file; the order is the OpenAPI document's. */
export function providerRoutes(provider: Provider, cache: ModelCache, settings: () => DaemonSettings): AnyRoute[] {
  const deps: ProviderRouteDeps = { provider, cache, settings };
  return [setProviderRoute(deps), listModelsRoute(deps), cachedModelsRoute(deps), verifyProviderRoute()];
}
