import type { AnyRoute } from "../../../core/index.js";
import { createSessionRoute } from "./create.js";
import { deleteSessionRoute } from "./delete.js";
import { eventHistoryRoute } from "./event-history.js";
import { exportSessionRoute } from "./export.js";
import { forkSessionRoute } from "./fork.js";
import { getSessionRoute } from "./get.js";
import { sessionHistoryRoute } from "./history.js";
import { importSessionRoute } from "./import.js";
import { listSessionsRoute } from "./list.js";
import { pinSessionRoute } from "./pin.js";
import { renameSessionRoute } from "./rename.js";
import { shareSessionRoute } from "./share.js";
import type { SessionRouteDeps } from "./shared.js";
import { unloadSessionRoute } from "./unload.js";
import { unshareSessionRoute } from "./unshare.js";

export type { SessionRouteDeps } from "./shared.js";

/** The session routes, one per file; the order is the OpenAPI document's. */
export function sessionRoutes(deps: SessionRouteDeps): AnyRoute[] {
  return [
    listSessionsRoute(deps),
    createSessionRoute(deps),
    getSessionRoute(deps),
    sessionHistoryRoute(deps),
    unloadSessionRoute(deps),
    deleteSessionRoute(deps),
    forkSessionRoute(deps),
    renameSessionRoute(deps),
    pinSessionRoute(deps),
    shareSessionRoute(deps),
    unshareSessionRoute(deps),
    eventHistoryRoute(deps),
    exportSessionRoute(deps),
    importSessionRoute(deps),
  ];
}
