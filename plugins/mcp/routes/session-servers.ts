import { ApiError, defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type McpRouteDeps, McpServerStatusSchema } from "./shared.js";

export function sessionMcpServersRoute({ manager, sessions }: McpRouteDeps) {
  return defineRoute({
    method: "PUT",
    path: "/sessions/:id/mcp-servers",
    operationId: "setSessionMcpServers",
    summary: "Set the MCP servers of one session (an editor's); their tools are offered to that session only",
    description:
      "Same format as the config key `mcpServers` (`{<name>: {command, args, env, cwd}}` or `{<name>: {url, " +
      "headers}}`); relative paths resolve against the session's working directory. Replaces the session's " +
      "previous set (`{}` closes them all); servers connect in the background, so the answer usually says " +
      "`connecting`. Not persisted: gone when the daemon restarts or the session is deleted.",
    tags: ["mcp"],
    params: SessionIdParams,
    body: T.Object(
      {
        mcpServers: T.Unsafe<Record<string, Record<string, unknown>>>({
          type: "object",
          description:
            "Server name -> server entry (checked like the config key; invalid entries are listed as failed)",
          additionalProperties: { type: "object", additionalProperties: true },
          maxProperties: 50,
        }),
      },
      { title: "SessionMcpServers", additionalProperties: false },
    ),
    responses: { 200: T.Array(McpServerStatusSchema) },
    handler: async ({ params, body }) => {
      const rec = await sessions().require(params.id);
      const { statuses, error } = manager.setSessionServers(rec.id, body.mcpServers, rec.cwd);
      if (error) throw ApiError.badRequest(error);
      return { body: statuses };
    },
  });
}
