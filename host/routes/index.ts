import type { AnyRoute } from "../../core/routes.js";
import { openApiRoute } from "./openapi.js";
import { serverIdentityRoute } from "./server-identity.js";
import { serverStatusRoute } from "./server-status.js";
import { sessionEventsRoute } from "./session-events.js";
import { sessionFeedRoute } from "./session-feed.js";
import type { HostRouteDeps } from "./shared.js";

export type { HostInfo, HostRouteDeps } from "./shared.js";

/** Routes that are the host itself, one per file: its description, its status and the event streams. */
export function hostRoutes(deps: HostRouteDeps): AnyRoute[] {
  return [
    openApiRoute(deps),
    serverStatusRoute(deps),
    serverIdentityRoute(deps),
    sessionFeedRoute(deps),
    sessionEventsRoute(deps),
  ];
}
