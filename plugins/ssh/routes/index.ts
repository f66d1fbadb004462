import type { AnyRoute } from "../../../core/index.js";
import { addHostRoute } from "./add-host.js";
import { addKeyRoute } from "./add-key.js";
import type { SshRouteDeps } from "./shared.js";

/** The ssh routes, one per file; the order is the OpenAPI document's. */
export function sshRoutes(deps: SshRouteDeps): AnyRoute[] {
  return [addKeyRoute(deps), addHostRoute(deps)];
}
