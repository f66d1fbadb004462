import { type SessionService, T } from "../../../core/index.js";
import type { McpManager } from "../manager.js";

/** What the MCP routes use. */
export interface McpRouteDeps {
  manager: McpManager;
  sessions: () => SessionService;
}

export const McpServerStatusSchema = T.Object(
  {
    name: T.String(),
    scope: T.Union([T.Literal("global"), T.Literal("project"), T.Literal("session")]),
    project: T.Optional(T.String({ description: "Project root, for project servers" })),
    sessionId: T.Optional(T.String({ description: "The session, for servers given to one session" })),
    transport: T.Union([T.Literal("stdio"), T.Literal("http"), T.Literal("unknown")]),
    state: T.Union([T.Literal("connecting"), T.Literal("connected"), T.Literal("failed"), T.Literal("disabled")]),
    error: T.Optional(T.String()),
    tools: T.Array(T.String(), { description: "Registered tool names (mcp_<server>_<tool>)" }),
  },
  { title: "McpServerStatus" },
);
