import { createToken } from "./tokens.js";

export type McpState = "connecting" | "connected" | "failed" | "disabled";

export type McpScope = "global" | "project" | "session";

/** One MCP server as other plugins and clients see it: never its configured header or env values. */
export interface McpServerStatus {
  name: string;
  scope: McpScope;
  /** The project root, for project servers. */
  project?: string;
  /** The session, for servers an editor gave one session (PUT /sessions/{id}/mcp-servers). */
  sessionId?: string;
  transport: "stdio" | "http" | "unknown";
  state: McpState;
  /** Why the server failed (or is reconnecting); never contains configured env or header values. */
  error?: string;
  /** The agentd tool names registered for this server. */
  tools: string[];
}

/** What other plugins may do with MCP servers (the `mcp` plugin provides it): their status and reconnect. */
export interface McpServers {
  list(): McpServerStatus[];
  /** Reconnects a server by name (a project server with its root); false when there is none. */
  reconnect(name: string, project?: string): boolean;
}
export const McpServersToken = createToken<McpServers>("mcp-servers");

/**
 * The MCP manager itself (the `mcp` plugin): it holds the servers' configs, with their header and env values, so
 * only plugins holding `secrets` get it.
 */
export interface McpManagerService extends McpServers {
  /** Replaces the global servers (the config key `mcpServers`'s value). */
  setGlobalServers(raw: unknown): Promise<void>;
  /** Connects the servers of the trusted project of `cwd` (once; again with `reload`). */
  ensureProject(cwd: string, opts?: { reload?: boolean }): McpServerStatus[];
  /** Replaces one session's servers (an editor's); `error` says what was invalid. */
  setSessionServers(sessionId: string, raw: unknown, baseDir: string): { statuses: McpServerStatus[]; error?: string };
  /** Reconnects every server with its current config. */
  reload(globalRaw?: unknown): Promise<void>;
  /** Resolves when no server is connecting. */
  whenSettled(): Promise<void>;
}
export const McpManagerToken = createToken<McpManagerService>("mcp-manager", { capability: "secrets" });
