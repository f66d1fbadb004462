import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, usage, words } from "../env.js";

export function mcpCommand(env: CommandEnv): SlashCommand {
  return {
    name: "mcp",
    description: "List the MCP servers, or reconnect one: /mcp [list|reconnect <name>]",
    takesArgs: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const mcp = env.mcp();
      if (!mcp) return { message: "MCP is not available (the mcp plugin is not loaded)", servers: [] };
      const [sub, name] = words(inv.args);
      if (sub === "reconnect") {
        if (!name) throw usage("/mcp reconnect <server>");
        const server = mcp.list().find((s) => s.name === name);
        if (!server || !mcp.reconnect(name, server.project)) throw ApiError.badRequest(`Unknown MCP server "${name}"`);
        return { message: `Reconnecting ${name}`, servers: mcp.list() };
      }
      if (sub && sub !== "list") throw usage("/mcp [list|reconnect <name>]");
      const servers = mcp.list();
      return { message: servers.length ? `${servers.length} MCP server(s)` : "No MCP servers configured", servers };
    },
  };
}
