import type { ProjectResources } from "../context.js";
import type { TrustStore } from "../trust.js";
import { listProjectsRoute } from "./list.js";
import { reloadProjectRoute } from "./reload.js";
import type { ProjectRouteDeps } from "./shared.js";
import { getTrustRoute } from "./trust-get.js";
import { setTrustRoute } from "./trust-set.js";

/**
 * The project routes, one per file; the order is the OpenAPI document's. `reload` re-scans the resources and
 * announces the sessions whose trust prompt appeared or went away.
 */
export function projectRoutes(trust: TrustStore, resources: ProjectResources, reload: () => Promise<void>) {
  const deps: ProjectRouteDeps = { trust, resources, reload };
  return [listProjectsRoute(deps), getTrustRoute(deps), setTrustRoute(deps), reloadProjectRoute(deps)];
}
