import { defineRoute, T } from "../../../core/index.js";
import { type McpRouteDeps, McpServerStatusSchema } from "./shared.js";

export function listMcpServersRoute({ manager }: McpRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/mcp/servers",
    operationId: "listMcpServers",
    summary: "MCP servers with their connection state and registered tools",
    description:
      "Global servers (config key `mcpServers`) and the servers of trusted projects that have been opened " +
      "(`<project>/.agentd/mcp.json`). Invalid entries are listed as failed with the reason.",
    tags: ["mcp"],
    responses: { 200: T.Array(McpServerStatusSchema) },
    handler: () => ({ body: manager.list() }),
  });
}
