import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { importModule } from "../../core/import-module.js";

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

/** The SDK from node_modules (the compiled modules; a build without `vendor-mcp.cjs`). */
async function fromNodeModules(): Promise<McpSdk> {
  const [client, stdio, http, types] = await Promise.all([
    importModule<typeof import("@modelcontextprotocol/sdk/client/index.js")>(
      "@modelcontextprotocol/sdk/client/index.js",
    ),
    importModule<typeof import("@modelcontextprotocol/sdk/client/stdio.js")>(
      "@modelcontextprotocol/sdk/client/stdio.js",
    ),
    importModule<typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js")>(
      "@modelcontextprotocol/sdk/client/streamableHttp.js",
    ),
    importModule<typeof import("@modelcontextprotocol/sdk/types.js")>("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
  };
}

/**
 * The SDK (with its schema libraries, zod and Ajv, the heaviest dependency of the daemon) is loaded when the first
 * MCP server connects, not at boot: most daemons have none configured. The build bundles it into one file beside the
 * daemon's runtime (`dist/bundle/vendor-mcp.cjs`, scripts/bundle.ts), outside the runtime: its source would otherwise
 * stay in every daemon's memory (~0.5 MiB). The compiled modules have no such file beside them and import it from
 * node_modules.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= importModule<{ default: McpSdk }>(new URL("./vendor-mcp.cjs", import.meta.url).href)
    .then(
      (m) => m.default,
      (err: NodeJS.ErrnoException) => {
        if (err.code !== "ERR_MODULE_NOT_FOUND") throw err;
        return fromNodeModules();
      },
    )
    .then((sdk) => {
      loaded = sdk;
      return sdk;
    });
  return loading;
}

/** The SDK if it has been loaded (every MCP error comes from a loaded SDK). */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
