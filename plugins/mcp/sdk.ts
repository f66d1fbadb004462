import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/** The parts of the MCP SDK the client uses. */
export interface McpSdk {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  getDefaultEnvironment: typeof getDefaultEnvironment;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  McpError: typeof McpError;
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/**
 * The SDK (with its schema library, the heaviest dependency of the daemon) is imported when the first MCP server
 * connects, not at boot: most daemons have none configured.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, stdio, http, types]) => {
    loaded = {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      getDefaultEnvironment: stdio.getDefaultEnvironment,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
      McpError: types.McpError,
    };
    return loaded;
  });
  return loading;
}

/** The SDK if it has been loaded (every MCP error comes from a loaded SDK). */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
