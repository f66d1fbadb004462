import type { AnyRoute } from "../../../core/index.js";
import { listMcpServersRoute } from "./list.js";
import { sessionMcpServersRoute } from "./session-servers.js";
import type { McpRouteDeps } from "./shared.js";

export { McpServerStatusSchema } from "./shared.js";

/** The MCP routes, one per file; the order is the OpenAPI document's. */
export function mcpRoutes(deps: McpRouteDeps): AnyRoute[] {
  return [listMcpServersRoute(deps), sessionMcpServersRoute(deps)];
}
