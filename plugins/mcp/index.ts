import {
  ApiError,
  definePlugin,
  defineRoute,
  McpManagerToken,
  McpServersToken,
  optional,
  type PluginContext,
  ProjectTrustToken,
  SandboxToken,
  SessionIdParams,
  SessionServiceToken,
  SettingsToken,
  T,
} from "../../core/index.js";
import { McpManager } from "./manager.js";

export type { McpServerConfig, ParsedServers, ServerEntry } from "./config.js";
export { loadProjectServers, parseServers, projectConfigPath } from "./config.js";
export type { ToolSink } from "./connection.js";
export { DEFAULT_CONNECTION_OPTIONS, McpManager, type McpManagerDeps } from "./manager.js";

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

/** One manager per plugin context: a process can run several daemons (tests), so no module-level singleton. */
const managers = new WeakMap<PluginContext, McpManager>();

export default definePlugin({
  manifest: {
    id: "mcp",
    version: "1.0.0",
    description: "MCP client: tools of configured MCP servers (stdio and Streamable HTTP) as mcp_<server>_<tool>",
    capabilities: ["routes", "secrets", "process", "network"],
    provides: [McpManagerToken.id, McpServersToken.id],
  },
  deps: {
    settings: SettingsToken,
    sessions: SessionServiceToken,
    trust: optional(ProjectTrustToken),
    sandbox: optional(SandboxToken),
  },
  register(ctx) {
    const { deps } = ctx;
    const manager = new McpManager({
      tools: ctx.tools,
      home: ctx.home,
      log: ctx.log,
      trust: () => deps.trust,
      sandbox: () => deps.sandbox,
      options: { clientVersion: deps.settings.version ?? "1.0.0" },
    });
    managers.set(ctx, manager);
    ctx.services.provide(McpManagerToken, manager);
    ctx.services.provide(
      McpServersToken,
      Object.freeze({
        list: () => manager.list(),
        reconnect: (name: string, project?: string) => manager.reconnect(name, project),
      }),
    );
    ctx.routes.add(
      defineRoute({
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
      }),
    );
    ctx.routes.add(
      defineRoute({
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
          const rec = await deps.sessions.require(params.id);
          const { statuses, error } = manager.setSessionServers(rec.id, body.mcpServers, rec.cwd);
          if (error) throw ApiError.badRequest(error);
          return { body: statuses };
        },
      }),
    );
    ctx.events.on("session.deleted", ({ sessionId }) => void manager.forgetSession(sessionId));
  },
  start(ctx) {
    const manager = managers.get(ctx);
    if (!manager) return;
    const raw = ctx.deps.settings.raw.mcpServers;
    // Not awaited: connections run in the background so readiness never waits for an MCP server.
    void manager.setGlobalServers(raw);
    const trust = ctx.deps.trust;
    if (trust) {
      ctx.onDispose(
        trust.onChange((root) => {
          if (trust.isTrusted(root)) manager.ensureProject(root);
          else void manager.forgetProject(root);
        }),
      );
      // A trusted project's servers connect when one of its sessions is created or runs a turn.
      ctx.onDispose(ctx.events.on("session.created", ({ session }) => manager.ensureProject(session.cwd)));
      ctx.onDispose(ctx.events.on("turn.started", ({ cwd }) => manager.ensureProject(cwd)));
      ctx.onDispose(ctx.events.on("resources.reload", ({ cwd }) => manager.ensureProject(cwd, { reload: true })));
    }
  },
  async stop(ctx) {
    await managers.get(ctx)?.stop();
  },
});
