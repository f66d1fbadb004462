import {
  definePlugin,
  McpManagerToken,
  McpServersToken,
  optional,
  type PluginContext,
  ProjectTrustToken,
  SandboxToken,
  SessionServiceToken,
  SettingsToken,
} from "../../core/index.js";
import { McpManager } from "./manager.js";
import { mcpRoutes } from "./routes/index.js";

export type { McpServerConfig, ParsedServers, ServerEntry } from "./config.js";
export { loadProjectServers, parseServers, projectConfigPath } from "./config.js";
export type { ToolSink } from "./connection.js";
export { DEFAULT_CONNECTION_OPTIONS, McpManager, type McpManagerDeps } from "./manager.js";
export { McpServerStatusSchema } from "./routes/index.js";

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
    for (const r of mcpRoutes({ manager, sessions: () => deps.sessions })) ctx.routes.add(r);
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
